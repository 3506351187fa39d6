# Every target builds its own virtualenv (.venv) on first use and reinstalls it when
# pyproject.toml changes; nothing needs to be installed beforehand but python3 (with venv).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: help test test-fast test-gpu test-slurm figures lint bench bench-gpu bench-gpu-filter frontier \
	frontier-figure design-map dulger2017-ablation clean

test: $(VENV)/.dev-stamp           ## the README test command (CI runs it)
	$(BIN)/python -m pytest -m "not gpu and not slurm" $(PYTEST_ARGS)

test-fast: $(VENV)/.dev-stamp      ## the inner loop: `make test` without the `slow` tests (under a minute on 2 cores)
	$(BIN)/python -m pytest -q -m "not gpu and not slurm and not slow" $(PYTEST_ARGS)

test-gpu: $(VENV)/.cuda-stamp       ## the CUDA kernels against the CPU reference (needs a GPU)
	$(BIN)/python -m pytest -m gpu $(PYTEST_ARGS)

test-slurm: $(VENV)/.cluster-stamp  ## profiles/slurm on a local one-node SLURM cluster (root: apt-installs slurm-wlm)
	$(BIN)/python -m pytest -m slurm $(PYTEST_ARGS)

figures: $(VENV)/.pipeline-stamp   ## reproduce the thesis figures
	$(BIN)/snakemake --snakefile Snakefile --cores all $(SNAKEMAKE_ARGS)

lint: $(VENV)/.dev-stamp            ## ruff: lint and format check (CI runs it)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(VENV)/.bench-stamp        ## CPU timings vs the particles library
	$(BIN)/python bench/cpu_resamplers.py $(BENCH_ARGS)

bench-gpu: $(VENV)/.cuda-stamp      ## GPU timings vs CuPy, PyTorch, a 1 GiB copy (needs a GPU)
	$(BIN)/python bench/gpu_resamplers.py $(BENCH_ARGS)

bench-gpu-filter: $(VENV)/.cuda-stamp  ## the GPU SIR filter vs the thesis's K40 times (needs a GPU)
	$(BIN)/python bench/gpu_filter.py $(BENCH_ARGS)

frontier: $(VENV)/.cuda-stamp       ## MSE/N against time per call, every method, one run (needs a GPU; peer: BENCH_ARGS=--peer-binary ...)
	$(BIN)/python bench/frontier.py --backend cuda $(BENCH_ARGS)
	$(BIN)/python bench/frontier_figure.py

frontier-figure: $(VENV)/.pipeline-stamp  ## redraw the frontier figure from the committed CSV into results/bench/
	$(BIN)/python bench/frontier_figure.py --csv evidence/2026-11-25-h100-54f66cf/frontier.csv

design-map: $(VENV)/.dev-stamp     ## every resampler in run_filter on 3 models: RMSE, Var log-lik, time a step (CPU, ~25 min)
	$(BIN)/python bench/design_map.py results/bench/design_map_cpu $(BENCH_ARGS)

dulger2017-ablation: $(VENV)/.pipeline-stamp  ## one Dülger filter ablation, paired: ABLATION=uc1_segments ABLATION_ARGS="--log2n 12 --runs 10"
	$(BIN)/python scripts/dulger2017/ablations.py $(ABLATION) $(ABLATION_ARGS)

help:                              ## this list
	@awk -F ':.*## ' '/^[a-z][a-z-]*:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

# Two packages: the library (pyproject.toml: NumPy alone) and the studies (studies/
# pyproject.toml: the pipeline layer and the five studies, with Snakemake, pandas, seaborn,
# PyYAML); dev adds the test and lint tools.
$(VENV)/.pipeline-stamp: pyproject.toml studies/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e . -e ./studies
	touch $@

$(VENV)/.dev-stamp: $(VENV)/.pipeline-stamp
	$(PIP) install --quiet -e '.[dev]' -e ./studies
	touch $@

$(VENV)/.bench-stamp: $(VENV)/.dev-stamp
	$(PIP) install --quiet -e '.[dev,bench]' -e ./studies
	touch $@

$(VENV)/.cluster-stamp: $(VENV)/.dev-stamp
	$(PIP) install --quiet -e '.[dev]' -e './studies[cluster]'
	touch $@

$(VENV)/.cuda-stamp: $(VENV)/.dev-stamp
	$(PIP) install --quiet -e '.[dev,cuda]' -e ./studies
	touch $@
