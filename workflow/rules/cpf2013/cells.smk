"""Gelencsér-Horváth et al. (2013), "Evaluation and results": the cells of Figs 7-12 and
Table 1. The grid is config/studies/cpf2013.yaml; the study's code is
studies/pfresample_studies/cpf2013/ and its glue scripts/cpf2013/cells.py.

* results/cpf2013/trajectories/{cpf_model}.npz: the model's trajectories (growth: 1,000
  of 100 steps; bot: 100 of 24), simulated once and read by every cell of the model;
* results/cpf2013/cpf/{cpf_model}/n{n}_r{r}.npz: the CPF at one configuration (N, r) on
  every trajectory (Figs 7-10, Table 1), one job per (model, N, r);
* results/cpf2013/sir/{cpf_model}/{sir_method}/n{n}.npz: the SIR filter with one global
  resampler at N on the same trajectories (the baselines), one job per (model, method, N);
* results/cpf2013/timing/growth/n{n}.npz: timed runs of the CPF on one trajectory of the
  growth model at every radius, each kernel of cpf2013_timing_kernels in the default and
  (GPU) fast-math builds, and of the SIR baselines of cpf2013_timing_baselines (Figs 11-12),
  one job per N;
* results/cpf2013/best_cpu/growth/n{n}.npz: the CPU sides of ratios 1 and 2 at the timing
  grid's N, every radius: the NumPy CPF on one process (at the paper's N only) and the
  best CPU code (native/cpf_best.c) on cpf2013_best_cpu_threads threads, one job per N,
  holding that many cores; its metadata records the host and the threads;
* results/cpf2013/campaign/trajectories/{cpf_model}.npz: the paired campaign's trajectories
  (cpf2013_campaign_<model>_trajectories, the first of the study's set);
* results/cpf2013/campaign/{cpf_campaign}.npz: one cell of cpf2013_campaign (the CPF or an
  SIR baseline at one configuration, start and kernel) on them, one job a cell.
Every cell but the best-CPU cells runs on `backend` and asks for a GPU where the cells may run on one.
"""

CPF2013_CELLS_SCRIPT = "../../../scripts/cpf2013/cells.py"


wildcard_constraints:
    cpf_model=alternatives(CPF2013_MODELS),
    sir_method=alternatives(config["cpf2013_baselines"]),
    r=r"[1-9][0-9]*",
    cpf_campaign=alternatives(cpf2013_campaign.cells(config)),


rule cpf2013_trajectories:
    output:
        cpf2013_trajectories("{cpf_model}"),
    params:
        seed=config["seed"],
        trajectories=lambda wildcards: cpf2013_catalog.trajectories(config, wildcards.cpf_model),
        steps=lambda wildcards: cpf2013_catalog.steps(config, wildcards.cpf_model),
        scale=SCALE,
    log:
        "results/logs/cpf2013/trajectories/{cpf_model}.log",
    threads: 1
    resources:
        mem_mb=512,
    conda:
        CONDA_ENV
    script:
        CPF2013_CELLS_SCRIPT


rule cpf2013_cpf_cell:
    input:
        trajectories=cpf2013_trajectories("{cpf_model}"),
    output:
        cpf2013_cpf_cell("{cpf_model}", "{n}", "{r}"),
    params:
        cell=cpf2013_cell_params(),
        fast_math=config["cpf2013_fast_math"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/cpf2013/cpf/{cpf_model}/n{n}_r{r}.log",
    benchmark:
        "results/benchmarks/cpf2013/cpf/{cpf_model}/n{n}_r{r}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: cpf2013_mem_mb(wildcards.n, wildcards.cpf_model),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        CPF2013_CELLS_SCRIPT


rule cpf2013_sir_cell:
    input:
        trajectories=cpf2013_trajectories("{cpf_model}"),
    output:
        cpf2013_sir_cell("{cpf_model}", "{sir_method}", "{n}"),
    params:
        cell=cpf2013_cell_params(),
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/cpf2013/sir/{cpf_model}/{sir_method}/n{n}.log",
    benchmark:
        "results/benchmarks/cpf2013/sir/{cpf_model}/{sir_method}/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: cpf2013_mem_mb(wildcards.n, wildcards.cpf_model),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        CPF2013_CELLS_SCRIPT


rule cpf2013_timing_cell:
    input:
        trajectories=cpf2013_trajectories("{cpf_model}"),
    output:
        cpf2013_timing_cell("{cpf_model}", "{n}"),
    params:
        cell=cpf2013_cell_params(),
        radii=cpf2013_catalog.radii(config),
        kernels=cpf2013_catalog.timing_kernels(config),
        baselines=config["cpf2013_timing_baselines"],
        repeats=config["cpf2013_timing_repeats"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/cpf2013/timing/{cpf_model}/n{n}.log",
    benchmark:
        "results/benchmarks/cpf2013/timing/{cpf_model}/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: cpf2013_mem_mb(wildcards.n, wildcards.cpf_model),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        CPF2013_CELLS_SCRIPT


rule cpf2013_best_cpu_cell:
    """The CPU sides of ratios 1 and 2 at one N: the job holds the cores it runs on."""
    input:
        trajectories=cpf2013_trajectories("{cpf_model}"),
    output:
        cpf2013_best_cpu_cell("{cpf_model}", "{n}"),
    params:
        seed=config["seed"],
        setup=cpf2013_catalog.setup(config),
        radii=cpf2013_catalog.radii(config),
        repeats=config["cpf2013_timing_repeats"],
        numpy_n=cpf2013_catalog.numpy_timing_n(config),
        threads=cpf2013_catalog.best_cpu_threads(config),
        scale=SCALE,
    log:
        "results/logs/cpf2013/best_cpu/{cpf_model}/n{n}.log",
    benchmark:
        "results/benchmarks/cpf2013/best_cpu/{cpf_model}/n{n}.tsv"
    threads: cpf2013_catalog.best_cpu_threads(config)
    resources:
        mem_mb=lambda wildcards: cpf2013_mem_mb(wildcards.n, wildcards.cpf_model),
    conda:
        CONDA_ENV
    script:
        CPF2013_CELLS_SCRIPT


rule cpf2013_campaign_trajectories:
    output:
        cpf2013_campaign_trajectories("{cpf_model}"),
    params:
        seed=config["seed"],
        trajectories=lambda wildcards: cpf2013_campaign.trajectories(config, wildcards.cpf_model),
        steps=lambda wildcards: cpf2013_catalog.steps(config, wildcards.cpf_model),
        scale=SCALE,
    log:
        "results/logs/cpf2013/campaign/trajectories/{cpf_model}.log",
    threads: 1
    resources:
        mem_mb=512,
    conda:
        CONDA_ENV
    script:
        CPF2013_CELLS_SCRIPT


rule cpf2013_campaign_cell:
    """One cell of the paired campaign: experiments.cpf_cell or sir_cell as it says."""
    input:
        trajectories=lambda wildcards: cpf2013_campaign_trajectories(
            cpf2013_campaign.cells(config)[wildcards.cpf_campaign]["model"]
        ),
    output:
        cpf2013_campaign_cell("{cpf_campaign}"),
    params:
        spec=lambda wildcards: cpf2013_campaign.cells(config)[wildcards.cpf_campaign],
        seed=config["seed"],
        backend=config["backend"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/cpf2013/campaign/{cpf_campaign}.log",
    benchmark:
        "results/benchmarks/cpf2013/campaign/{cpf_campaign}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: cpf2013_mem_mb(
            cpf2013_campaign.cells(config)[wildcards.cpf_campaign]["n"],
            cpf2013_campaign.cells(config)[wildcards.cpf_campaign]["model"],
        ),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        CPF2013_CELLS_SCRIPT
