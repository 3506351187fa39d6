"""Snakemake glue of Güldaş (2015) §4.1 (workflow/rules/guldas2015/single_step.smk),
and the tables and figures of §4.2-4.3 (Figs 4.9-4.12, cells from filters.py):
one function per rule, chosen by the rule's name. Each reads its inputs, calls
the study (pfresample_studies.guldas2015) and writes its outputs atomically.

* guldas2015_radix2_cell, _sweep_cell, _speed_cell: results/guldas2015/**.npz;
* guldas2015_table: results/tables/guldas2015/{plot}.csv;
* guldas2015_radix_timings: results/tables/guldas2015/radix_timings.csv;
* guldas2015_figure: results/figures/guldas2015/{plot}.png, .pdf.
"""

import math

import pandas as pd

from pfresample import backend
from pfresample.backend import BACKEND_LABELS
from pfresample.models.volatility import ALPHA, SIGMA
from pfresample_studies.guldas2015 import catalog, experiments, figures, tables
from pfresample_studies.pipeline import artifacts, devices, plots
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run, save_cell

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake
CLAIM = None
if RULE.endswith("_cell"):
    # A cell job takes one free GPU for itself before CUDA starts (pipeline.devices).
    CLAIM = devices.pin_job(snakemake.params.devices)  # noqa: F821
    backend.cuda_device()


def radix2_cell(snakemake, log):
    n, p = int(snakemake.wildcards.n), snakemake.params
    target = catalog.targets(snakemake.config)["theory"]
    cell = experiments.radix2_cell(target, n, replicates=p.replicates, log=log, **p.cell)
    save_cell(snakemake, log, *cell, CLAIM)


def sweep_cell(snakemake, log):
    n, p = int(snakemake.wildcards.n), snakemake.params
    target = catalog.targets(snakemake.config)["theory"]
    radices = [tuple(r) for r in p.radices]
    cell = experiments.sweep_cell(target, n, radices, replicates=p.replicates, log=log, **p.cell)
    save_cell(snakemake, log, *cell, CLAIM)


def speed_cell(snakemake, log):
    n, p = int(snakemake.wildcards.n), snakemake.params
    target = catalog.targets(snakemake.config)[snakemake.wildcards.target]
    cell = experiments.speed_cell(
        target, n, replicates=p.replicates, repeats=p.repeats, log32=p.log32, log=log, **p.cell
    )
    save_cell(snakemake, log, *cell, CLAIM)


def table(snakemake, log):
    """A figure's tidy table, with the backend and device of its cells."""
    plot, config = snakemake.wildcards.plot, snakemake.config
    cells = artifacts.load_all(snakemake.input.cells)
    theory = catalog.targets(config)["theory"]
    if plot == "fig4_1":
        frame = tables.histogram_table(cells)
    elif plot == "fig4_2":
        frame = tables.radix2_table(cells, theory)
    elif plot in ("fig4_3", "fig4_4"):
        radices = [tuple(r) for r in snakemake.params.sweep]
        frame = tables.sweep_table(*cells[0], radices, theory)
    elif plot in catalog.FILTER_FIGURES:
        frame = tables.filter_table(cells)
    elif plot == "fig4_11":
        frame = tables.interaction_table(*cells[0])
    elif plot == "fig4_12":
        frame = tables.smcem_table(cells, ALPHA, SIGMA)  # alpha*, sigma* of §4.3.1
    else:
        frame = tables.speed_table(cells, catalog.SPEED_FIGURES[plot][1])
    # Fig 4.12's first cell is its CPU reference: the runs' own backend and device.
    meta = next((m for _, m in cells if m.get("experiment") != "SMC-EM references"), cells[0][1])
    frame["backend"] = BACKEND_LABELS[meta["backend"]]
    frame["device"] = meta["device"]
    frame["scale"] = meta["scale"]
    pipeline_tables.write_csv(frame, snakemake.output[0])
    log.info("%d rows from %d cells", len(frame), len(cells))


def radix_timings(snakemake, log):
    frame = tables.candidates_table(artifacts.load_all(snakemake.input.cells))
    pipeline_tables.write_csv(frame, snakemake.output[0])
    log.info("%d radix sequences timed", len(frame))


def figure(snakemake, log):
    plot, p = snakemake.wildcards.plot, snakemake.params
    frame = pd.read_csv(snakemake.input.table)
    device = f"device {frame['device'].iloc[0]}"
    if plot in catalog.FILTER_FIGURES:
        detail = (f"{int(frame['runs'].iloc[0]):,} runs of {int(frame['steps'].iloc[0])} steps "
                  f"per point, {device}")  # fmt: skip
    elif plot == "fig4_11":
        detail = f"one run per filter, N = {int(frame['n'].iloc[0])}, {device}"
    elif plot == "fig4_12":
        sequences, iterations = int(frame["sequences"].iloc[0]), int(frame["iterations"].iloc[0])
        detail = f"{sequences} sequences, {iterations} EM iterations, {device}"
    else:
        replicates = frame["particle_sets"].iloc[0] if "particle_sets" in frame else None
        if plot == "fig4_1":
            replicates = int(frame.groupby("n").size().iloc[0])
        detail = f"{replicates:,} particle sets per point, {device}"
    caption = plots.caption(backend=frame["backend"].iloc[0], scale=p.scale, detail=detail)
    if plot == "fig4_1":
        fig = figures.radix2_histograms(frame, p.limit, caption)
    elif plot == "fig4_2":
        fig = figures.radix2_lmse(frame, caption)
    elif plot == "fig4_3":
        n = int(frame["n"].iloc[0])
        caption = plots.caption(frame["backend"].iloc[0], p.scale, n, detail)
        fig = figures.radix_sweep(frame, "depth", caption)
    elif plot == "fig4_4":
        n = int(frame["n"].iloc[0])
        caption = plots.caption(frame["backend"].iloc[0], p.scale, n, detail)
        fig = figures.radix_sweep(frame, "log2_first_radix", caption)
    elif plot in catalog.FILTER_FIGURES:
        fig = figures.speed(frame, caption, error="AMSE", column="mse", beside=None)
    elif plot == "fig4_11":
        fig = figures.interaction(frame, caption)
    elif plot == "fig4_12":
        fig = figures.smcem(frame, caption)
    else:
        fig = figures.speed(frame, caption)
    plots.save(fig, [snakemake.output.png, snakemake.output.pdf], title=catalog.TITLES[plot])
    log.info("caption: %s (log2 N from %d)", caption, int(math.log2(frame["n"].min())))


def job(rule: str):
    return {
        "guldas2015_radix2_cell": radix2_cell,
        "guldas2015_sweep_cell": sweep_cell,
        "guldas2015_speed_cell": speed_cell,
        "guldas2015_table": table,
        "guldas2015_radix_timings": radix_timings,
        "guldas2015_figure": figure,
    }[rule]


run(job(RULE), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
