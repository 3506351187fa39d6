"""Tidy tables (pandas, CSV) of the cells one figure or table of Dülger (2017) reads:
results/tables/dulger2017/{figure}.csv, one row per variant, distribution and N
(averages over the weight sequences, thesis §6.5), plus the per-sequence rows in
results/tables/dulger2017/{figure}_sequences.csv."""


wildcard_constraints:
    figure="|".join(re.escape(f) for f in config["dulger2017_figures"]),


rule dulger2017_table:
    input:
        cells=lambda wildcards: figure_cells(wildcards.figure),
    output:
        summary="results/tables/dulger2017/{figure}.csv",
        sequences="results/tables/dulger2017/{figure}_sequences.csv",
    params:
        spec=lambda wildcards: config["dulger2017_figures"][wildcards.figure],
        members=lambda wildcards: {
            g: group_members(g)
            for g in config["dulger2017_figures"][wildcards.figure]
            .get("match", {})
            .get("candidates", [])
        },
    log:
        "results/logs/tables/dulger2017/{figure}.log",
    benchmark:
        "results/benchmarks/tables/dulger2017/{figure}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../scripts/dulger2017_table.py"
