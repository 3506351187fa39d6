"""Snakemake glue of Das, Mazumdar & Banerjee (2014) (workflow/rules/d3_2014/outputs.smk):
one function per rule, chosen by the rule's name. Each reads the cells, calls the study
(pfresample_studies.d3_2014.tables, .figures) and writes its outputs atomically.

* d3_2014_figure_table: results/tables/d3_2014/{fig3,fig4,fig5,fig6,fig11}.csv;
* d3_2014_table: results/tables/d3_2014/{table5,table6,table7,methods}.csv and .md;
* d3_2014_speedups: results/tables/d3_2014/table5_speedups.csv and .md;
* d3_2014_figure: results/figures/d3_2014/{d3_fig}.png, .pdf;
* d3_2014_regime_tables: results/tables/d3_2014/regimes/{cells,summary,regime_pairs,
  error_vs_time}.csv;
* d3_2014_threshold_tables: results/tables/d3_2014/thresholds/{bias,fig11}.csv.
"""

import pandas as pd

from pfresample_studies.d3_2014 import (
    catalog,
    experiments,
    figures,
    regimes,
    tables,
    thresholds,
)
from pfresample_studies.pipeline import artifacts, evidence, plots
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run, save_figure_of_table

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake


def figure_table(snakemake, log):
    figure, inputs = snakemake.wildcards.d3_fig_table, snakemake.input
    (cell,) = artifacts.load_all(inputs.cell)
    if figure in catalog.TRAJECTORY_FIGURES:
        frame = tables.trajectory_table(experiments.load_trajectory(inputs.trajectory[0]), cell)
    elif figure in catalog.SNAPSHOT_FIGURES:
        frame = tables.snapshot_table(cell)
    else:
        frame = tables.fig11_table(cell)
    frame["scale"] = cell[1]["scale"]
    pipeline_tables.write_csv(frame, snakemake.output[0])
    log.info("%s: %d rows", figure, len(frame))


def table(snakemake, log):
    name, inputs, p = snakemake.wildcards.d3_table, snakemake.input, snakemake.params
    gpu = artifacts.load_all(inputs.gpu)
    if name == "methods":
        trajs = [experiments.load_trajectory(path) for path in inputs.trajectories]
        frame = tables.methods_table(artifacts.load_all(inputs.cells), trajs, p.filters)
        text = tables.methods_markdown(frame)
    elif name == "table5":
        frame = tables.table5(artifacts.load_all(inputs.cpu), gpu, p.table5_n)
        text = tables.table5_markdown(frame)
    elif name == "table6":
        frame = tables.table6(gpu, p.table6_n, p.threads)
        text = tables.table6_markdown(frame)
    else:
        frame = tables.table7(gpu, p.figure_n, p.threads)
        text = tables.table7_markdown(frame)
    frame["scale"] = p.scale
    pipeline_tables.write_csv(frame, snakemake.output.csv)
    pipeline_tables.write_text(text, snakemake.output.md)
    log.info("%s: %d rows from %d GPU cells", name, len(frame), len(gpu))


def speedups(snakemake, log):
    inputs, p = snakemake.input, snakemake.params
    found = evidence.describe(inputs.evidence[0]) if inputs.evidence else None
    frame = tables.speedup_table(artifacts.load_all(inputs.timing),
                                 artifacts.load_all(inputs.best), artifacts.load_all(inputs.gpu),
                                 p.table5_n, p.algorithms, found)  # fmt: skip
    text = tables.speedup_markdown(frame)
    frame["scale"] = p.scale
    pipeline_tables.write_csv(frame, snakemake.output.csv)
    pipeline_tables.write_text(text, snakemake.output.md)
    log.info("%d rows; GPU side: %s; one host: %d of %d rows", len(frame),
             "; ".join(sorted({str(s) for s in frame["gpu_source"].dropna() if s})) or "none",
             int(frame["one_host"].sum()), len(frame))  # fmt: skip


def figure(snakemake, log):
    plot = snakemake.wildcards.d3_fig
    if plot != "fig10":
        save_figure_of_table(snakemake, log, plot, figures.draw, catalog.TITLES)
        return
    # Fig 10: this machine's GPU rows, or where none ran here the committed run's (its
    # device, folder, date and commit in the panels' titles and the caption)
    frame = pd.read_csv(snakemake.input.table)
    local = bool(frame["gpu_d3_ms_per_step"].notna().any())
    found = None
    if not local and snakemake.input.evidence:
        found = evidence.describe(snakemake.input.evidence[0])
        frame = figures.committed_fig10(frame, found)
    fill = "run `snakemake --cores all d3_2014` on a machine with a CUDA device"
    fig = figures.draw(plot, frame, snakemake.params.scale)
    source = evidence.source(local, [found], fill)
    plots.save(fig, [snakemake.output.png, snakemake.output.pdf], title=catalog.TITLES[plot],
               source=source)  # fmt: skip
    log.info("%s: %d rows drawn; source: %s", plot, len(frame), source)


def regime_tables(snakemake, log):
    cells = artifacts.load_all(snakemake.input.cells)
    for name, frame in regimes.tables(cells, order=snakemake.params.filters).items():
        frame["scale"] = snakemake.params.scale
        pipeline_tables.write_csv(frame, snakemake.output[name])
        log.info("regimes/%s: %d rows from %d cells", name, len(frame), len(cells))


def threshold_tables(snakemake, log):
    *steps, gamma = artifacts.load_all(snakemake.input.cells)  # the gamma cell is the last
    for name, frame in thresholds.tables(steps, gamma).items():
        frame["scale"] = snakemake.params.scale
        pipeline_tables.write_csv(frame, snakemake.output[name])
        log.info("thresholds/%s: %d rows", name, len(frame))


def job(rule: str):
    return {
        "d3_2014_figure_table": figure_table,
        "d3_2014_table": table,
        "d3_2014_speedups": speedups,
        "d3_2014_figure": figure,
        "d3_2014_regime_tables": regime_tables,
        "d3_2014_threshold_tables": threshold_tables,
    }[rule]


run(job(RULE), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
