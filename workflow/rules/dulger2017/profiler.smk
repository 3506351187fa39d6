"""Dülger (2017) profiler results: Tables 5.3-5.5 (L1 hit ratio, kernel time,
speed-ups of Metropolis-C1/C2 with L1 caching of global loads on and off) and
Figs 6.24-6.26 (global load sectors per request, SM efficiency of the Uphill
family; eq. 2.28's blocks and 32-thread blocks), measured with Nsight Compute.
The study's code is studies/pfresample_studies/dulger2017/profiler.py, its glue
scripts/dulger2017/profiler.py (and profile_cell.py, the profiled program).

Not part of `all`: the target needs ncu and a GPU. Without ncu on PATH the
job says so and fails before writing anything.

* results/dulger2017/profiler/plan.json: the cells, the device and ncu's version;
* ncu_{l2,l1,nc}.csv: ncu's raw --csv report of each build's cells;
* profiler.csv, profiler.md: the tables beside the thesis's numbers;
* fig6_24_26.png: Figs 6.24-6.26.
"""

from pfresample_studies.dulger2017 import profiler as dulger2017_profiler_study

PROFILER_KEYS = [k for k in config if k.startswith("profiler_")] + ["seed", "variants", "segment_bytes"]


rule dulger2017_profiler:
    """Tables 5.3-5.5 and Figs 6.24-6.26 under Nsight Compute (needs ncu)."""
    output:
        plan=f"results/dulger2017/profiler/{dulger2017_profiler_study.PLAN}",
        other=[
            f"results/dulger2017/profiler/{name}"
            for name in dulger2017_profiler_study.OUTPUTS
            if name != dulger2017_profiler_study.PLAN
        ],
    params:
        cfg={k: config[k] for k in PROFILER_KEYS},
        devices=GPU_DEVICES,
        scale=SCALE_NOTE,
    log:
        "results/logs/dulger2017/profiler.log",
    benchmark:
        "results/benchmarks/dulger2017/profiler.tsv"
    threads: 1
    resources:
        mem_mb=4096,
        gpu=1,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/dulger2017/profiler.py"
