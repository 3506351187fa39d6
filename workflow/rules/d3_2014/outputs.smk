"""Das, Mazumdar & Banerjee (2014): the tidy tables and figures of Figs 3-6, 10, 11,
Tables 5-7 and the methods table, from the cells of cells.smk; glue scripts/d3_2014/outputs.py.

* results/tables/d3_2014/{fig3,fig4,fig5,fig6,fig11}.csv: the data of each figure;
* results/tables/d3_2014/{table5,table6,table7,methods}.csv, .md: the tables, the
  paper's numbers beside ours (Table 6 is also Fig 10's data);
* results/tables/d3_2014/table5_speedups.csv, .md: Table 5's ratios 1 and 2 -- per (N, GPU
  algorithm, CPU filter) the GPU (this run's, else the newest committed evidence's,
  labelled) over the timing cells' NumPy filter and over the best CPU code on every core,
  saying where each side ran;
* results/figures/d3_2014/{fig3,...,fig11}.png and .pdf;
* results/tables/d3_2014/regimes/{cells,summary,regime_pairs,error_vs_time}.csv: the regime
  experiment (pfresample_studies.d3_2014.regimes.tables), from every cell of the regime grid.
"""

D3_2014_OUTPUTS_SCRIPT = "../../../scripts/d3_2014/outputs.py"


wildcard_constraints:
    d3_fig_table=alternatives(d3_2014_catalog.FIGURE_TABLES),
    d3_table=alternatives(d3_2014_catalog.TABLES),
    d3_fig=alternatives(d3_2014_catalog.FIGURES),


rule d3_2014_figure_table:
    input:
        unpack(lambda wildcards: d3_2014_figure_table_inputs(wildcards.d3_fig_table)),
    output:
        "results/tables/d3_2014/{d3_fig_table}.csv",
    log:
        "results/logs/tables/d3_2014/{d3_fig_table}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        D3_2014_OUTPUTS_SCRIPT


rule d3_2014_table:
    """Tables 5-7 and the methods table: ours and the paper's numbers beside."""
    input:
        unpack(lambda wildcards: d3_2014_table_inputs(wildcards.d3_table)),
    output:
        csv="results/tables/d3_2014/{d3_table}.csv",
        md="results/tables/d3_2014/{d3_table}.md",
    params:
        filters=list(D3_2014_FILTERS),
        table5_n=d3_2014_catalog.table5_n(config),
        table6_n=d3_2014_catalog.table6_n(config),
        threads=d3_2014_catalog.threads(config),
        figure_n=d3_2014_catalog.figure_n(config),
        scale=SCALE,
    log:
        "results/logs/tables/d3_2014/{d3_table}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        D3_2014_OUTPUTS_SCRIPT


rule d3_2014_speedups:
    """Ratios 1 and 2 of Table 5: the GPU (this run's GPU cells, else the newest committed
    best-CPU bench run's) over the timing cells and over the best-CPU cells."""
    input:
        timing=d3_2014_timing_cells(loop=False),  # ratio 1's baselines: systematic, D3
        best=d3_2014_best_cpu_cells(),
        gpu=d3_2014_gpu_cells(d3_2014_catalog.table5_n(config)),
        # where no GPU runs here: the newest committed GPU rows (pipeline.evidence)
        evidence=list(
            committed_tables(
                {
                    k: v
                    for k, v in d3_2014_catalog.EVIDENCE_TABLES.items()
                    if k == d3_2014_catalog.SPEEDUP_TABLE
                }
            ).values()
        ),
    output:
        csv=f"results/tables/d3_2014/{d3_2014_catalog.SPEEDUP_TABLE}.csv",
        md=f"results/tables/d3_2014/{d3_2014_catalog.SPEEDUP_TABLE}.md",
    params:
        table5_n=d3_2014_catalog.table5_n(config),
        algorithms=list(D3_2014_GPU_ALGORITHMS),
        scale=SCALE,
    log:
        "results/logs/tables/d3_2014/table5_speedups.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        D3_2014_OUTPUTS_SCRIPT


rule d3_2014_figure:
    input:
        table=lambda wildcards: "results/tables/d3_2014/"
        + d3_2014_catalog.FIGURE_SOURCES.get(wildcards.d3_fig, wildcards.d3_fig)
        + ".csv",
        # Fig 10 where no GPU runs here: the newest committed GPU run of its rows
        evidence=lambda wildcards: list(
            committed_tables(
                {
                    k: v
                    for k, v in d3_2014_catalog.EVIDENCE_TABLES.items()
                    if k == wildcards.d3_fig
                }
            ).values()
        ),
    output:
        png=report(
            "results/figures/d3_2014/{d3_fig}.png",
            caption="../../report/d3_2014.rst",
            category="Das et al. (2014)",
        ),
        pdf="results/figures/d3_2014/{d3_fig}.pdf",
    params:
        scale=SCALE_NOTE,
    log:
        "results/logs/figures/d3_2014/{d3_fig}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        D3_2014_OUTPUTS_SCRIPT


rule d3_2014_regime_tables:
    """The regime experiment's four tables from its cells, in the grid's order (filter, N,
    regime, trajectory); the summary ranks the filters as d3_2014_regime_filters does."""
    input:
        cells=d3_2014_regime_cells(),
    output:
        **{t: f"results/tables/d3_2014/regimes/{t}.csv" for t in d3_2014_catalog.REGIME_TABLES},
    params:
        filters=list(d3_2014_catalog.regime_filters(config)),
        scale=SCALE,
    log:
        "results/logs/tables/d3_2014/regimes.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        D3_2014_OUTPUTS_SCRIPT


rule d3_2014_threshold_tables:
    """The printed thresholds' two tables from their cells: bias (the regimes in their
    order, then the gamma weights) and fig11 (one row a regime)."""
    input:
        cells=d3_2014_threshold_cells(),
    output:
        **{t: f"results/tables/d3_2014/thresholds/{t}.csv" for t in d3_2014_thresholds.TABLES},
    params:
        scale=SCALE,
    log:
        "results/logs/tables/d3_2014/thresholds.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        D3_2014_OUTPUTS_SCRIPT
