"""Das et al. (2014): the GPU experiment (pfresample_studies.d3_2014.gpu_runs) and its
derived tables (.gpu_tables), target d3_2014_gpu; not in `all`. Glue scripts/d3_2014/gpu.py.

* results/d3_2014/gpu_runs/{timing,spread,table7_360s}.csv, regimes/*.csv and sources.csv:
  where the cells have a GPU, the sections of d3_2014_gpu_runs_sections run here; every
  file they did not write (all of them without a GPU) is the newest committed run's,
  named in sources.csv;
* results/tables/d3_2014/gpu/*.csv: Tables 5-7, Fig 10, the spread, the regime bins and
  the per-component D3 at N = 1,000, each with its gpu_source (and cpu_source).
"""

rule d3_2014_gpu_runs:
    """The GPU experiment here where the cells have a GPU, its missing files (all of them
    without one) from the newest committed run, labelled in sources.csv."""
    input:
        # the committed run's marker: a new evidence folder redraws what reads it
        committed=d3_2014_gpu_committed(d3_2014_gpu_tables.GPU_RUN),
    output:
        files=d3_2014_gpu_run_files(),
        sources=f"{D3_2014_GPU_RUNS}/sources.csv",
    params:
        gpu=bool(CELL_GPUS),
        cfg={k: v for k, v in config.items() if k.startswith("d3_2014_") or k == "seed"},
        base="d3_2014",
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/d3_2014/gpu_runs.log",
    threads: 1
    resources:
        mem_mb=4096,
        gpu=1 if CELL_GPUS else 0,
    conda:
        CONDA_ENV
    script:
        D3_2014_GPU_SCRIPT


rule d3_2014_gpu_tables:
    """The GPU experiment's derived tables, each labelled with its sources."""
    input:
        runs=d3_2014_gpu_run_files(),
        sources=f"{D3_2014_GPU_RUNS}/sources.csv",
        cpu=d3_2014_gpu_committed(d3_2014_gpu_tables.CPU_BASELINES),
        n1000=d3_2014_gpu_committed(d3_2014_gpu_tables.COMPONENT_CELLS),
    output:
        **{t: f"results/tables/d3_2014/gpu/{t}.csv" for t in d3_2014_gpu_tables.TABLES},
    log:
        "results/logs/tables/d3_2014/gpu.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        D3_2014_GPU_SCRIPT
