"""Resampling cells (Dülger 2017, chapters 5-6): one job per method variant and
weight distribution, the N grid swept inside the job (see docs/DESIGN.md,
"Cells: the N sweep inside the job", for the measured overhead behind that choice).

Each cell draws K offspring sequences from every weight sequence at every N and
writes only summaries (pfresample.experiments.run_cell) to
results/resample/{variant}/{dist}.npz.

The rungs of a reduced-B ladder (Figs 5.11-5.14: Metropolis with B x 0.75 ...
0.0625) differ in B only; one job per ladder and distribution runs them all,
the B sweep inside the job like the N sweep (pfresample.experiments.run_ladder:
on the GPU one pass of the largest B gives every rung). It writes the same
per-variant files.
"""

VARIANTS = catalog_variants(config)
LADDERS = catalog_ladders(VARIANTS)
SINGLE_VARIANTS = [name for name, v in VARIANTS.items() if v.ladder is None]


wildcard_constraints:
    variant="|".join(re.escape(v) for v in SINGLE_VARIANTS),


rule resample_cell:
    input:
        weights=cell_weights,
        ssd=cell_ssd_tables,
    output:
        "results/resample/{variant}/{dist}.npz",
    params:
        variants=lambda wildcards: [VARIANTS[wildcards.variant].as_dict()],
        n=n_grid(),
        devices=GPU_DEVICES,
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


for ladder, rungs in LADDERS.items():

    rule:
        name:
            f"resample_ladder_{ladder}"
        input:
            weights=cell_weights,
            ssd=ssd_tables_for(rungs),
        output:
            [f"results/resample/{rung}/{{dist}}.npz" for rung in rungs],
        params:
            variants=[VARIANTS[rung].as_dict() for rung in rungs],
            n=n_grid(),
            devices=GPU_DEVICES,
            settings=cell_settings(),
            scale=SCALE_NOTE,
        log:
            f"results/logs/resample/{ladder}/{{dist}}.log",
        benchmark:
            f"results/benchmarks/resample/{ladder}/{{dist}}.tsv"
        threads: config["cell_threads"]
        resources:
            mem_mb=lambda wildcards, rungs=rungs: cell_mem_mb(wildcards, len(rungs)),
            gpu=CELL_GPUS,
        conda:
            CONDA_ENV
        script:
            "../../scripts/resample_cell.py"
