"""Resampling cells (Dülger 2017, chapters 5-6): one job per method variant and
weight distribution, the N grid swept inside the job (see docs/DESIGN.md,
"Cells: the N sweep inside the job", for the measured overhead behind that choice).

Each cell draws K offspring sequences from every weight sequence at every N and
writes only summaries (pfresample.experiments.run_cell) to
results/resample/{variant}/{dist}.npz.
"""

VARIANTS = catalog_variants(config)


wildcard_constraints:
    variant="|".join(re.escape(v) for v in VARIANTS),


rule resample_cell:
    input:
        weights=cell_weights,
        ssd=cell_ssd_tables,
    output:
        "results/resample/{variant}/{dist}.npz",
    params:
        variant=lambda wildcards: VARIANTS[wildcards.variant].as_dict(),
        n=n_grid(),
        settings=cell_settings(),
        scale=SCALE_NOTE,
    log:
        "results/logs/resample/{variant}/{dist}.log",
    benchmark:
        "results/benchmarks/resample/{variant}/{dist}.tsv"
    threads: config["cell_threads"]
    resources:
        mem_mb=cell_mem_mb,
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        "../../scripts/resample_cell.py"
