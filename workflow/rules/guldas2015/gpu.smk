"""Güldaş (2015): the GPU experiment (pfresample_studies.guldas2015.gpu_runs: float32
stability of the log-domain scan and Fig 4.12's SMC-EM at the thesis's N) and its derived
tables (.gpu_tables), target guldas2015_gpu; not in `all`. Glue scripts/guldas2015/gpu.py.

* results/guldas2015/gpu_runs/log32_gpu/runs.csv, smcem_gpu/{fig4_12,mc_trace}.csv and the
  SMC-EM cells, sources.csv: where the cells have a GPU, the sections of
  guldas2015_gpu_runs_sections run here; every file they did not write (all of them without
  a GPU) is the newest committed run's, named in sources.csv;
* results/tables/guldas2015/gpu/{log32_summary,smcem_summary,smcem_slopes}.csv and
  {log32,smcem}.md, each with its gpu_source and cpu_source.
"""

rule guldas2015_gpu_runs:
    """The GPU experiment here where the cells have a GPU, its missing files (all of them
    without one) from the newest committed run, labelled in sources.csv."""
    input:
        # the committed run's marker: a new evidence folder redraws what reads it
        committed=guldas2015_gpu_committed(guldas2015_gpu_tables.GPU_RUN),
        reference=guldas2015_gpu_cpu_files()["reference"],
    output:
        files=guldas2015_gpu_run_files(),
        sources=f"{GULDAS2015_GPU_RUNS}/sources.csv",
    params:
        gpu=bool(CELL_GPUS),
        cfg={k: v for k, v in config.items() if k.startswith("guldas2015_") or k == "seed"},
        base="guldas2015",
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/guldas2015/gpu_runs.log",
    threads: 1
    resources:
        mem_mb=8192,
        gpu=1 if CELL_GPUS else 0,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_GPU_SCRIPT


rule guldas2015_gpu_tables:
    """The GPU experiment's derived tables, each labelled with its sources."""
    input:
        runs=guldas2015_gpu_run_files(),
        sources=f"{GULDAS2015_GPU_RUNS}/sources.csv",
        **guldas2015_gpu_cpu_files(),
    output:
        **{t: f"results/tables/guldas2015/gpu/{t}.csv" for t in guldas2015_gpu_tables.TABLES},
        log32_md="results/tables/guldas2015/gpu/log32.md",
        smcem_md="results/tables/guldas2015/gpu/smcem.md",
    log:
        "results/logs/tables/guldas2015/gpu.log",
    threads: 1
    resources:
        mem_mb=2048,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_GPU_SCRIPT
