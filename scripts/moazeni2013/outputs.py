"""Snakemake glue of Moazeni (2013) (workflow/rules/moazeni2013/outputs.smk): chapter 3's
tables and figures from its cells, in one job, each file written atomically."""

from pathlib import Path

from pfresample.pipeline import artifacts, plots
from pfresample.pipeline import tables as pipeline_tables
from pfresample.pipeline.jobs import run
from pfresample.studies.moazeni2013 import figures, tables


def ch3_outputs(snakemake, log):
    gpu_cells = artifacts.load_all([*snakemake.input.gpu, *snakemake.input.other_gpu])
    orders = tables.order_frame(artifacts.load_all(snakemake.input.orders) + gpu_cells)
    native_cell = artifacts.load_npz(snakemake.input.native)
    native = tables.native_frame(native_cell)
    scale = native_cell[1]["scale"]
    gpus = sorted({meta["device"] for _, meta in gpu_cells})
    frames = {
        "fig12": tables.fig12(artifacts.load_all(snakemake.input.fig12)),
        "fig18": tables.fig18(orders),
        "table1": tables.table1(orders),
        "table3": tables.table3(orders),
        "fig13": tables.fig13(orders),
        "fig15": tables.fig15(orders),
        "fig16": tables.fig16(orders, native),
        "fig17": tables.fig17(orders, native),
    }
    for path in map(Path, snakemake.output):
        name = path.stem
        if path.suffix == ".csv":
            frame = frames[name].assign(scale=scale)
            pipeline_tables.write_csv(frame, path)
            log.info("%s: %d rows", path, len(frame))
    for name in figures.TITLES:
        fig = figures.draw(name, frames[name], scale, gpus)
        paths = [p for p in map(Path, snakemake.output) if p.stem == name and p.suffix != ".csv"]
        plots.save(fig, paths, title=figures.TITLES[name])
        log.info("%s drawn", name)


run(ch3_outputs, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
