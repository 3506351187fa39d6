"""Snakemake glue of Gelencsér-Horváth et al. (2013) (workflow/rules/cpf2013/outputs.smk):
one function per rule, chosen by the rule's name. Each reads the cells, calls the study
(pfresample_studies.cpf2013.tables, .figures) and writes its outputs atomically.

* cpf2013_table: results/tables/cpf2013/{cpf_fig}.csv;
* cpf2013_table1: results/tables/cpf2013/table1.csv and .md;
* cpf2013_baselines: results/tables/cpf2013/baselines.csv;
* cpf2013_speedup: results/tables/cpf2013/speedup.csv and .md;
* cpf2013_paired: results/tables/cpf2013/paired.csv and claims.csv;
* cpf2013_figure: results/figures/cpf2013/{cpf_fig}.png, .pdf;
* cpf2013_campaign_tables: results/tables/cpf2013/campaign/*.csv (runs: .csv.gz).
"""

import gzip

import pandas as pd

from pfresample_studies.cpf2013 import campaign, catalog, figures, tables, targets
from pfresample_studies.cpf2013 import paired as paired_stats
from pfresample_studies.pipeline import artifacts, evidence
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run, save_figure_of_table

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake


def _scale(frame, cells):
    frame["scale"] = cells[0][1]["scale"]
    return frame


def table(snakemake, log):
    figure, inputs = snakemake.wildcards.cpf_fig, snakemake.input
    trajectories = None
    if inputs.trajectories:
        model = catalog.TRAJECTORY_FIGURES[figure]
        trajectories = targets.load_set(model, inputs.trajectories[0])
    cpf, sir = artifacts.load_all(inputs.cpf), artifacts.load_all(inputs.sir)
    frame = tables.figure_table(figure, trajectories=trajectories, cpf=cpf, sir=sir)
    pipeline_tables.write_csv(_scale(frame, cpf), snakemake.output[0])
    log.info("%d rows from %d cells", len(frame), len(cpf) + len(sir))


def table1(snakemake, log):
    cells = artifacts.load_all(snakemake.input.cpf)
    configurations = snakemake.params.configurations
    frame = tables.table1(catalog.PUBLISHED_TABLE1, cells, configurations)
    pipeline_tables.write_csv(_scale(frame, cells), snakemake.output.csv)
    pipeline_tables.write_text(tables.table1_markdown(frame), snakemake.output.md)
    log.info("%d published rows, %d measured", len(catalog.PUBLISHED_TABLE1), len(configurations))


def baselines(snakemake, log):
    cpf, sir = artifacts.load_all(snakemake.input.cpf), artifacts.load_all(snakemake.input.sir)
    errors = pd.concat(
        [tables.error_table([c for c in cpf + sir if c[1]["model"] == m]) for m in targets.MODELS],
        ignore_index=True,
    )
    frame = tables.baselines_table(errors)
    pipeline_tables.write_csv(_scale(frame, cpf), snakemake.output[0])
    log.info("%d baseline rows", len(frame))


def speedup(snakemake, log):
    inputs = snakemake.input
    timing, best = artifacts.load_all(inputs.timing), artifacts.load_all(inputs.best)
    found = evidence.describe(inputs.evidence[0]) if inputs.evidence else None
    frame = tables.speedup_table(timing, best, snakemake.params.kernel, found)
    pipeline_tables.write_csv(_scale(frame, best), snakemake.output.csv)
    pipeline_tables.write_text(tables.speedup_markdown(frame), snakemake.output.md)
    log.info("%d rows; GPU side: %s; one host: %d of %d rows", len(frame),
             "; ".join(sorted({str(s) for s in frame["gpu_source"].dropna() if s})) or "none",
             int(frame["one_host"].sum()), len(frame))  # fmt: skip


def paired(snakemake, log):
    cells = artifacts.load_all(snakemake.input.cpf) + artifacts.load_all(snakemake.input.sir)
    frame = paired_stats.paired_table(cells)
    claims = paired_stats.claims_table(frame)
    scale = cells[0][1]["scale"]
    pipeline_tables.write_csv(frame.assign(scale=scale), snakemake.output.paired)
    pipeline_tables.write_csv(claims.assign(scale=scale), snakemake.output.claims)
    log.info("%d paired rows, %d claim rows", len(frame), len(claims))


def campaign_tables(snakemake, log):
    cells = artifacts.load_all(snakemake.input.cells)
    frames = campaign.campaign_tables(cells)
    scale = cells[0][1]["scale"]
    for name, frame in frames.items():
        frame = frame.assign(scale=scale)
        if name == "runs":  # one row per cell and trajectory: gzipped, six digits

            def write(tmp, frame=frame):
                with gzip.open(tmp, "wt", compresslevel=9) as f:
                    frame.to_csv(f, index=False, float_format="%.6g")

            artifacts.write_atomically(snakemake.output.runs, write)
        else:
            pipeline_tables.write_csv(frame, snakemake.output[name])
    log.info("%d cells (%d distinct), %d paired rows, %d claim rows", len(cells),
             frames["runs"].groupby(["model", "filter", "method", "n", "radius", "setup",
                                     "precision", "neighbourhood", "fast_math"],
                                    dropna=False).ngroups,
             len(frames["paired"]), len(frames["claims"]))  # fmt: skip


def figure(snakemake, log):
    plot = snakemake.wildcards.cpf_fig
    save_figure_of_table(snakemake, log, plot, figures.draw, catalog.TITLES)


def job(rule: str):
    return {
        "cpf2013_table": table,
        "cpf2013_table1": table1,
        "cpf2013_baselines": baselines,
        "cpf2013_speedup": speedup,
        "cpf2013_paired": paired,
        "cpf2013_figure": figure,
        "cpf2013_campaign_tables": campaign_tables,
    }[rule]


run(job(RULE), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
