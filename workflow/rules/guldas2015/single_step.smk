"""Güldaş (2015) §4.1: the single-step experiments of Figs 4.1-4.8. The grid is
config/studies/guldas2015.yaml; the study's code is
studies/pfresample_studies/guldas2015/ and its glue scripts/guldas2015/single_step.py.

* results/guldas2015/radix2/n{n}.npz: radix-2 butterfly multinomial on T particle
  sets of N (Figs 4.1-4.2), one job per N;
* results/guldas2015/sweep/n{n}.npz: every radix sequence of Figs 4.3-4.4 on the
  same T particle sets, one job;
* results/guldas2015/speed/{target}/n{n}.npz: standard and butterfly multinomial
  and systematic, float32 and float64, timed and on T particle sets (Figs
  4.5-4.8), one job per particle-weight set and N;
* results/tables/guldas2015/{plot}.csv: the tidy table of each figure, and
  radix_timings.csv: every radix sequence timed for the fastest-radix choice;
* results/figures/guldas2015/{plot}.png and .pdf.
"""

GULDAS2015_SCRIPT = "../../../scripts/guldas2015/single_step.py"


wildcard_constraints:
    plot="|".join(guldas2015_catalog.FIGURES),
    target="gaussian|poisson",


rule guldas2015_radix2_cell:
    output:
        "results/guldas2015/radix2/n{n}.npz",
    params:
        cell=guldas2015_cell_params(),
        replicates=config["guldas2015_radix2_replicates"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/guldas2015/radix2/n{n}.log",
    benchmark:
        "results/benchmarks/guldas2015/radix2/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: guldas2015_mem_mb(wildcards.n),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_SCRIPT


rule guldas2015_sweep_cell:
    output:
        "results/guldas2015/sweep/n{n}.npz",
    params:
        cell=guldas2015_cell_params(),
        replicates=config["guldas2015_sweep_replicates"],
        radices=guldas2015_catalog.sweep_radices(config),
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/guldas2015/sweep/n{n}.log",
    benchmark:
        "results/benchmarks/guldas2015/sweep/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: guldas2015_mem_mb(wildcards.n),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_SCRIPT


rule guldas2015_speed_cell:
    output:
        "results/guldas2015/speed/{target}/n{n}.npz",
    params:
        cell=guldas2015_cell_params(),
        replicates=config["guldas2015_speed_replicates"],
        repeats=config["guldas2015_timing_repeats"],
        log32=config["guldas2015_speed_log32"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/guldas2015/speed/{target}/n{n}.log",
    benchmark:
        "results/benchmarks/guldas2015/speed/{target}/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: guldas2015_mem_mb(wildcards.n),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_SCRIPT


rule guldas2015_table:
    input:
        cells=lambda wildcards: guldas2015_table_inputs(wildcards.plot),
    output:
        "results/tables/guldas2015/{plot}.csv",
    params:
        sweep=lambda wildcards: (
            guldas2015_catalog.depth_sweep(config)
            if wildcards.plot == "fig4_3"
            else guldas2015_catalog.mixed_sweep(config)
        ),
    log:
        "results/logs/tables/guldas2015/{plot}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_SCRIPT


rule guldas2015_radix_timings:
    """Every radix sequence timed for the fastest-radix choice of Figs 4.5-4.8."""
    input:
        cells=guldas2015_speed_cells("gaussian") + guldas2015_speed_cells("poisson"),
    output:
        "results/tables/guldas2015/radix_timings.csv",
    log:
        "results/logs/tables/guldas2015/radix_timings.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_SCRIPT


rule guldas2015_figure:
    input:
        table="results/tables/guldas2015/{plot}.csv",
    output:
        png=report(
            "results/figures/guldas2015/{plot}.png",
            caption="../../report/guldas2015.rst",
            category="Güldaş (2015)",
        ),
        pdf="results/figures/guldas2015/{plot}.pdf",
    params:
        scale=SCALE_NOTE,
        limit=guldas2015_catalog.targets(config)["theory"].theorem_3_4_limit(2),
    log:
        "results/logs/figures/guldas2015/{plot}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_SCRIPT
