"""Dülger (2017), chapters 2, 5 and 6: weight datasets, the Uphill SSD tables,
the resampling cells, their tidy tables and the figures. The catalog is
config/studies/dulger2017.yaml; the study's code is
studies/pfresample_studies/dulger2017/ and its glue scripts/dulger2017/resampling.py.

* results/weights/{dist}/{n}.npz: `sequences` weight sequences of one
  distribution at one N (thesis §2.5). One job writes every N of the grid for
  one distribution: a job per (distribution, N) spent most of its time starting
  Python (58% of the weight jobs' time on the H200 host, 380 jobs at thesis scale).
* results/tuning/uphill_ssd/{n}.npz: the Uphill SSD table SSD(EU(., B)),
  B = 0 ... 8191 (thesis §6.4), one job for every N of the grid.
* results/resample/{variant}/{dist}.npz: a resampling cell, one job per method
  variant and distribution (`resample_jobs: per_cell`; per_variant, the quick grid:
  one job per variant over its distributions) with the N grid swept inside the job (docs/DESIGN.md,
  "Cells: the N sweep inside the job"); the rungs of a reduced-B ladder
  (Figs 5.11-5.14) differ in B only and one job runs them all (on the GPU one
  pass of the largest B gives every rung), writing the same per-variant files.
* results/tables/dulger2017/{figure}.csv (averages over the weight sequences,
  thesis §6.5), {figure}_sequences.csv (one row per sequence) and
  results/figures/dulger2017/{figure}.png and .pdf, one job per figure.
"""

SCRIPT = "../../../scripts/dulger2017/resampling.py"


wildcard_constraints:
    dist=r"gamma-k[0-9.]+-s[0-9.]+|eq233-y-?[0-9.]+",
    variant="|".join(re.escape(v) for v in SINGLE_VARIANTS),
    figure="|".join(re.escape(f) for f in config["dulger2017_figures"]),



# --- weights -----------------------------------------------------------


rule weight_datasets:
    output:
        [weight_dataset("{dist}", n) for n in n_grid()],
    params:
        n=n_grid(),
        sequences=config["sequences"],
        seed=config["seed"],
    log:
        "results/logs/weights/{dist}.log",
    benchmark:
        "results/benchmarks/weights/{dist}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: weights_mem_mb(max(n_grid())),
    priority: schedule.INPUTS
    conda:
        CONDA_ENV
    script:
        SCRIPT


if config["fig2_3_n"] not in n_grid():

    rule fig2_3_weight_dataset:
        """Fig 2.3's N when the grid does not reach it (the quick grid)."""
        output:
            weight_dataset("{dist}", config["fig2_3_n"]),
        params:
            n=[config["fig2_3_n"]],
            sequences=config["sequences"],
            seed=config["seed"],
        log:
            f"results/logs/weights/{{dist}}/{config['fig2_3_n']}.log",
        benchmark:
            f"results/benchmarks/weights/{{dist}}/{config['fig2_3_n']}.tsv"
        threads: 1
        resources:
            mem_mb=lambda wildcards: weights_mem_mb(config["fig2_3_n"]),
        priority: schedule.INPUTS
        conda:
            CONDA_ENV
        script:
            SCRIPT


# --- tuning ------------------------------------------------------------


rule uphill_ssd_tables:
    output:
        uphill_ssd_tables(),
    params:
        n=n_grid(),
    log:
        "results/logs/tuning/uphill_ssd.log",
    benchmark:
        "results/benchmarks/tuning/uphill_ssd.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: ssd_mem_mb(max(n_grid())),
    priority: schedule.INPUTS
    conda:
        CONDA_ENV
    script:
        SCRIPT


# --- resample ----------------------------------------------------------




if config["resample_jobs"] == "per_cell":

    rule resample_cell:
        input:
            weights=cell_weights,
            ssd=lambda wildcards: ssd_tables_for([wildcards.variant]),
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
        priority: lambda wildcards: resample_priority([wildcards.variant])
        conda:
            CONDA_ENV
        script:
            SCRIPT

else:
    # One job per variant over the distributions its figures need (the quick grid).
    for variant, dists in variant_dists().items():

        rule:
            name:
                variant_rule(variant)
            input:
                weights=[weight_dataset(d, n) for d in dists for n in n_grid()],
                ssd=ssd_tables_for([variant]),
            output:
                [cell_path(variant, d) for d in dists],
            params:
                variants=[VARIANTS[variant].as_dict()],
                dists=dists,
                n=n_grid(),
                devices=GPU_DEVICES,
                settings=cell_settings(),
                scale=SCALE_NOTE,
            log:
                f"results/logs/resample/{variant}/all.log",
            benchmark:
                f"results/benchmarks/resample/{variant}/all.tsv"
            threads: config["cell_threads"]
            resources:
                mem_mb=cell_mem_mb,
                gpu=CELL_GPUS,
            priority: resample_priority([variant])
            conda:
                CONDA_ENV
            script:
                SCRIPT


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
        priority: resample_priority(rungs)
        conda:
            CONDA_ENV
        script:
            SCRIPT


# --- figures -----------------------------------------------------------


rule dulger2017_fig2_3:
    """Fig 2.3: histograms of one weight sequence of each gamma distribution."""
    input:
        weights=fig2_3_weights(),
    output:
        png=report(
            "results/figures/dulger2017/fig2_3.png",
            caption="../../report/fig2_3.rst",
            category="Dülger (2017)",
            subcategory="fig2_3",
        ),
        pdf="results/figures/dulger2017/fig2_3.pdf",
    params:
        distributions=config["gamma_distributions"],
        n=config["fig2_3_n"],
        sequence=config["fig2_3_sequence"],
        bins=config["fig2_3_bins"],
        backend=CPU_BACKEND,
        scale=SCALE_NOTE,
    log:
        "results/logs/figures/dulger2017/fig2_3.log",
    benchmark:
        "results/benchmarks/figures/dulger2017/fig2_3.tsv"
    threads: 1
    resources:
        mem_mb=2048,
    conda:
        CONDA_ENV
    script:
        SCRIPT


rule dulger2017_figure:
    """Figs 5.3-5.14, 6.2-6.22, 6.27 and Table 6.1: the figure's tidy tables
    (averages over the weight sequences and one row per sequence) and the figure
    drawn from them, in one job: a job per table and one per figure spent most of
    their time starting Python and importing pandas
    (evidence/2026-11-26-xeon2-d224ceb/MANIFEST.md)."""
    input:
        cells=lambda wildcards: figure_cells(wildcards.figure),
    output:
        summary="results/tables/dulger2017/{figure}.csv",
        sequences="results/tables/dulger2017/{figure}_sequences.csv",
        png=report(
            "results/figures/dulger2017/{figure}.png",
            caption="../../report/dulger2017_figure.rst",
            category="Dülger (2017)",
            subcategory="{figure}",
        ),
        pdf="results/figures/dulger2017/{figure}.pdf",
    params:
        spec=lambda wildcards: config["dulger2017_figures"][wildcards.figure],
        members=lambda wildcards: {
            g: catalog.group_members(VARIANTS, g)
            for g in config["dulger2017_figures"][wildcards.figure]
            .get("match", {})
            .get("candidates", [])
        },
        distributions=lambda wildcards: figure_distributions(
            config["dulger2017_figures"][wildcards.figure]
        ),
        backend=cell_backend_note(),
        scale=SCALE_NOTE,
        draws=config["draws"],
        sequences=config["sequences"],
    log:
        "results/logs/figures/dulger2017/{figure}.log",
    benchmark:
        "results/benchmarks/figures/dulger2017/{figure}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        SCRIPT
