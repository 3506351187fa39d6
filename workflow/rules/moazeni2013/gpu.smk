"""Moazeni (2013): the one-host GPU experiments a doc quotes beyond the chapters' grids, each
a target; none is in `all`. Glue scripts/moazeni2013/gpu_targets.py.

* moazeni2013_ch3_real (pfresample_studies.moazeni2013.real_instances): the 8,192-gon and
  the 8,191-matrix chain on the GPU and the best CPU code, Fig 12 behind delay_ns, the GPU
  cell from n = 64;
* moazeni2013_ch7_fig63 (.fig63_end_to_end): Fig 63's search end to end, GPU and best CPU;
* moazeni2013_ch4_peers (.fair_peers): the hash table beside cuCollections and SlabHash at
  one load factor (runs where the cells have a GPU and the cuCollections driver is built).

Each writes results/moazeni2013/gpu_runs/<experiment>/ with sources.csv: where it ran, the
files it wrote are this run's; every other file (all of them without a GPU) is the newest
committed run's, named in sources.csv (pipeline.gpu_runs). Its tables rule derives
results/tables/moazeni2013/<experiment>/*.csv from them, each with its gpu_source.
"""

rule moazeni2013_ch3_real_runs:
    """Chapter 3's real instances, Fig 12 and the GPU cell here where the cells have a GPU;
    the files not written (all of them without one) from the newest committed run."""
    input:
        committed=moazeni2013_gpu_committed(moazeni2013_real_instances),
    output:
        files=moazeni2013_gpu_run_files("ch3_real", moazeni2013_real_instances),
        sources=f"{MOAZENI2013_GPU_RUNS}/ch3_real/sources.csv",
    params:
        **moazeni2013_gpu_params("ch3_real", "moazeni2013_ch3_real_"),
    log:
        "results/logs/moazeni2013/ch3_real_runs.log",
    threads: moazeni2013_catalog.best_cpu_threads(config)  # the best CPU code on every core
    resources:
        mem_mb=8192,
        gpu=1 if CELL_GPUS else 0,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_GPU_SCRIPT


rule moazeni2013_ch3_real_tables:
    """The real instances' speed-ups over the best CPU code and Fig 12's ratios."""
    input:
        runs=moazeni2013_gpu_run_files("ch3_real", moazeni2013_real_instances),
        sources=f"{MOAZENI2013_GPU_RUNS}/ch3_real/sources.csv",
    output:
        **moazeni2013_gpu_tables("ch3_real", moazeni2013_real_instances),
    log:
        "results/logs/tables/moazeni2013/ch3_real.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_GPU_SCRIPT


rule moazeni2013_ch7_fig63_runs:
    """Fig 63 end to end here where the cells have a GPU; the files not written (all of
    them without one) from the newest committed run."""
    input:
        committed=moazeni2013_gpu_committed(moazeni2013_fig63),
    output:
        files=moazeni2013_gpu_run_files("ch7_fig63", moazeni2013_fig63),
        sources=f"{MOAZENI2013_GPU_RUNS}/ch7_fig63/sources.csv",
    params:
        **moazeni2013_gpu_params("ch7_fig63", "moazeni2013_ch7_fig63_"),
    log:
        "results/logs/moazeni2013/ch7_fig63_runs.log",
    threads: moazeni2013_catalog.best_cpu_threads(config)  # the best CPU code on every core
    resources:
        mem_mb=8192,
        gpu=1 if CELL_GPUS else 0,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_GPU_SCRIPT


rule moazeni2013_ch7_fig63_tables:
    """Fig 63 end to end a case a row: each side's stages, the GPU over the best CPU code."""
    input:
        runs=moazeni2013_gpu_run_files("ch7_fig63", moazeni2013_fig63),
        sources=f"{MOAZENI2013_GPU_RUNS}/ch7_fig63/sources.csv",
    output:
        **moazeni2013_gpu_tables("ch7_fig63", moazeni2013_fig63),
    log:
        "results/logs/tables/moazeni2013/ch7_fig63.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_GPU_SCRIPT


rule moazeni2013_ch4_peers_runs:
    """Chapter 4 beside its public peers here where the cells have a GPU and the
    cuCollections driver is built; else the newest committed run's peers.csv."""
    input:
        committed=moazeni2013_gpu_committed(moazeni2013_fair_peers),
    output:
        files=moazeni2013_gpu_run_files("ch4_peers", moazeni2013_fair_peers),
        sources=f"{MOAZENI2013_GPU_RUNS}/ch4_peers/sources.csv",
    params:
        **moazeni2013_gpu_params("ch4_peers", "moazeni2013_ch4_peers_"),
    log:
        "results/logs/moazeni2013/ch4_peers_runs.log",
    threads: 1
    resources:
        mem_mb=8192,
        gpu=1 if CELL_GPUS else 0,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_GPU_SCRIPT


rule moazeni2013_ch4_peers_tables:
    """The peers run a cell a row (pfresample_studies.moazeni2013.peers_tables)."""
    input:
        runs=moazeni2013_gpu_run_files("ch4_peers", moazeni2013_fair_peers),
        sources=f"{MOAZENI2013_GPU_RUNS}/ch4_peers/sources.csv",
    output:
        **moazeni2013_gpu_tables("ch4_peers", moazeni2013_fair_peers),
    log:
        "results/logs/tables/moazeni2013/ch4_peers.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_GPU_SCRIPT


rule moazeni2013_ch6_tv_draws_runs:
    """Chapter 6's TV solver and scikit-image's over held-out noise draws, each tuned by the
    same rule (pfresample_studies.moazeni2013.tv_draws), on the CPU."""
    output:
        tuning="results/moazeni2013/ch6_tv_draws/tuning.csv",
        draws="results/moazeni2013/ch6_tv_draws/draws.csv",
    params:
        size=config["moazeni2013_ch6_tv_draws_size"],
        tuning=config["moazeni2013_ch6_tv_draws_tuning"],
        evaluation=config["moazeni2013_ch6_tv_draws_evaluation"],
        seed=config["seed"],
    log:
        "results/logs/moazeni2013/ch6_tv_draws_runs.log",
    threads: moazeni2013_catalog.best_cpu_threads(config)
    resources:
        mem_mb=4096,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_GPU_SCRIPT


rule moazeni2013_ch6_tv_draws_summary:
    """Each method's mean RMSE and FA error over the evaluation draws, and the paired
    difference, with their 95 % t intervals."""
    input:
        draws=rules.moazeni2013_ch6_tv_draws_runs.output.draws,
    output:
        "results/tables/moazeni2013/ch6_tv_draws/summary.csv",
    log:
        "results/logs/tables/moazeni2013/ch6_tv_draws.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_GPU_SCRIPT
