# Every target builds its own virtualenv (.venv) on first use and reinstalls it when
# pyproject.toml changes; nothing needs to be installed beforehand but python3 (with venv).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: test test-gpu test-slurm figures lint bench bench-gpu bench-gpu-filter clean

test: $(VENV)/.dev-stamp           ## the README test command (CI runs it)
	$(BIN)/python -m pytest -m "not gpu and not slurm" $(PYTEST_ARGS)

test-gpu: $(VENV)/.cuda-stamp       ## the CUDA kernels against the CPU reference (needs a GPU)
	$(BIN)/python -m pytest -m gpu $(PYTEST_ARGS)

test-slurm: $(VENV)/.cluster-stamp  ## profiles/slurm on a local one-node SLURM cluster (root: apt-installs slurm-wlm)
	$(BIN)/python -m pytest -m slurm $(PYTEST_ARGS)

figures: $(VENV)/.dev-stamp        ## reproduce the thesis figures
	$(BIN)/snakemake --snakefile Snakefile --cores all $(SNAKEMAKE_ARGS)

lint: $(VENV)/.dev-stamp
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(VENV)/.bench-stamp        ## CPU timings vs the particles library
	$(BIN)/python bench/cpu_resamplers.py $(BENCH_ARGS)

bench-gpu: $(VENV)/.cuda-stamp      ## GPU timings vs CuPy, PyTorch, a 1 GiB copy (needs a GPU)
	$(BIN)/python bench/gpu_resamplers.py $(BENCH_ARGS)

bench-gpu-filter: $(VENV)/.cuda-stamp  ## the GPU SIR filter vs the thesis's K40 times (needs a GPU)
	$(BIN)/python bench/gpu_filter.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

$(VENV)/.dev-stamp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev]'
	touch $@

$(VENV)/.bench-stamp: $(VENV)/.dev-stamp
	$(PIP) install --quiet -e '.[dev,bench]'
	touch $@

$(VENV)/.cluster-stamp: $(VENV)/.dev-stamp
	$(PIP) install --quiet -e '.[dev,cluster]'
	touch $@

$(VENV)/.cuda-stamp: $(VENV)/.dev-stamp
	$(PIP) install --quiet -e '.[dev,cuda]'
	touch $@
