"""Gelencsér-Horváth et al. (2013): the GPU experiment (pfresample_studies.cpf2013.gpu_runs:
target cpf2013's cells on the GPU in one process with the device's extras, and the CPU filter
alone on the same host), its derived tables (.gpu_tables) and its figures; target
cpf2013_gpu, not in `all`. Glue scripts/cpf2013/gpu.py.

* results/cpf2013/gpu_runs/tables/*.csv, table1.md, study.json, sources.csv: where the cells
  have a GPU, the sections of cpf2013_gpu_runs_sections run here; every file they did not
  write (all of them without a GPU) is the newest committed run's, named in sources.csv;
* results/tables/cpf2013/gpu/{cpu_speedup,fast_math,scaling,sir_ratio,published}.csv, each
  with its gpu_source;
* results/figures/cpf2013/gpu/{fig7,...,fig12}.png and .pdf: the run's tables drawn by the
  study's figures.draw, their source in the caption and the PNG's Source chunk.
"""

rule cpf2013_gpu_runs:
    """The GPU experiment here where the cells have a GPU, its missing files (all of them
    without one) from the newest committed run, labelled in sources.csv."""
    input:
        # the committed run's marker: a new evidence folder redraws what reads it
        committed=cpf2013_gpu_committed(),
    output:
        files=cpf2013_gpu_run_files(),
        sources=f"{CPF2013_GPU_RUNS}/sources.csv",
    params:
        gpu=bool(CELL_GPUS),
        cfg={k: v for k, v in config.items() if k.startswith("cpf2013_") or k == "seed"},
        base="cpf2013",
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/cpf2013/gpu_runs.log",
    threads: 1
    resources:
        mem_mb=8192,
        gpu=1 if CELL_GPUS else 0,
    conda:
        CONDA_ENV
    script:
        CPF2013_GPU_SCRIPT


rule cpf2013_gpu_tables:
    """The GPU experiment's derived tables, each labelled with its sources."""
    input:
        runs=cpf2013_gpu_run_files(),
        sources=f"{CPF2013_GPU_RUNS}/sources.csv",
    output:
        **{t: f"results/tables/cpf2013/gpu/{t}.csv" for t in cpf2013_gpu_tables.TABLES},
    log:
        "results/logs/tables/cpf2013/gpu.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        CPF2013_GPU_SCRIPT


rule cpf2013_gpu_figure:
    """One figure of the GPU experiment from its table, labelled with the table's source."""
    input:
        table=f"{CPF2013_GPU_RUNS}/tables/{{cpf_fig}}.csv",
        sources=f"{CPF2013_GPU_RUNS}/sources.csv",
    output:
        png="results/figures/cpf2013/gpu/{cpf_fig}.png",
        pdf="results/figures/cpf2013/gpu/{cpf_fig}.pdf",
    log:
        "results/logs/figures/cpf2013/gpu/{cpf_fig}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        CPF2013_GPU_SCRIPT
