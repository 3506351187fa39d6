"""Snakemake glue of Moazeni (2013) (workflow/rules/moazeni2013/outputs.smk): a chapter's
tables and figures from its cells, in one job, each file written atomically."""

from pathlib import Path

import pandas as pd

from pfresample_studies.moazeni2013 import (
    catalog,
    figures,
    hashtable_figures,
    mddtw_figures,
    speedups,
    tables,
    tv_figures,
)
from pfresample_studies.pipeline import artifacts, evidence, plots
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run


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
    frames["ch3_speedups"] = _ch3_speedups(snakemake, native, native_cell)
    _write(snakemake, log, frames, figures, figures.TITLES, scale, gpus)
    _write_speedups(snakemake, log, frames, "Moazeni (2013) chapter 3: the GPU's speed-ups "
                    "over the document's baseline and over the best CPU code",
                    tables.CH3_KEYS, tables.CH3_BASELINE, tables.CH3_HEADLINE)  # fmt: skip


def _ch3_speedups(snakemake, native, native_cell):
    """Chapter 3's speed-up table: this run's GPU cells where a GPU ran here, else the
    committed GPU cell the rule names (``params.evidence``, via the study's adapter)."""
    best_cell = artifacts.load_npz(snakemake.input.best_cpu)
    mine = artifacts.load_all(snakemake.input.gpu)
    if mine:
        gpu = tables.gpu_strips(tables.order_frame(mine))
        one_host = speedups.same_host(native_cell[1], best_cell[1], *(m for _, m in mine))
        source = speedups.THIS_RUN
    else:
        found = _committed(snakemake, "ch3_speedups")
        if found is None:
            gpu, source = pd.DataFrame(), "none"  # no GPU rows: an empty table
        else:
            gpu = tables.gpu_strips(tables.evidence_gpu_orders(found.frame(), found.device))
            source = speedups.evidence_source(found)
        one_host = False
    return tables.ch3_speedups(gpu, native, best_cell, gpu_source=source, one_host=one_host)


def _committed(snakemake, name):
    """The committed table the rule names for ``name`` (``params.evidence``), or None."""
    path = snakemake.params.evidence.get(name)
    return None if path is None else evidence.describe(path)


def _write_speedups(snakemake, log, frames, title, keys, baseline, headline, **more) -> None:
    """The Markdown twins of the speed-up tables among the rule's outputs (``more``:
    ``speedups.markdown``'s notes and shown columns)."""
    for path in map(Path, snakemake.output):
        if path.suffix == ".md" and path.stem in catalog.SPEEDUP_TABLES:
            text = speedups.markdown(frames[path.stem], title, keys, baseline, headline, **more)
            pipeline_tables.write_text(text, path)
            log.info("%s written", path)


def _write(snakemake, log, frames, module, titles, scale, gpus) -> None:
    """Each CSV of ``frames`` (this machine's rows) and each figure ``module.draw`` makes, to
    the rule's outputs; a figure with GPU rows that did not run here draws the
    committed table the rule names (``params.evidence``, also among its inputs)
    beside them, and every figure records its source (``pipeline.evidence``)."""
    outputs = list(map(Path, snakemake.output))
    for path in outputs:
        if path.suffix == ".csv":
            frame = frames[path.stem].assign(scale=scale)
            pipeline_tables.write_csv(frame, path)
            log.info("%s: %d rows", path, len(frame))
    committed = {name: evidence.describe(path) for name, path in snakemake.params.evidence.items()}
    for name, title in titles.items():
        paths = [p for p in outputs if p.stem == name and p.suffix != ".csv"]
        found, fill = committed.get(name), catalog.fill_command(name)
        theirs = None if found is None else catalog.evidence_rows(name, found.frame())
        if theirs is not None and theirs.empty:
            found = theirs = None
        table = figures.overlaid(frames[name], theirs, found)
        source = evidence.source(len(frames[name]) > 0, [found], fill)
        fig = figures.gather_legends(module.draw(name, table, scale, gpus, found, fill))
        plots.save(fig, paths, title=title, source=source)
        log.info("%s drawn; source: %s", name, source)


def ch4_outputs(snakemake, log):
    cells = artifacts.load_all([*snakemake.input.cpu, *snakemake.input.gpu])
    runs = hashtable_figures.frame(cells)
    scale = cells[0][1]["scale"]
    gpus = sorted({meta["device"] for _, meta in cells if meta.get("backend") == "cuda"})
    frames = hashtable_figures.tables(runs, snakemake.config)
    frames["ch4_speedups"] = _ch4_speedups(snakemake, runs, cells)
    _write(snakemake, log, frames, hashtable_figures, hashtable_figures.TITLES, scale, gpus)
    title = ("Moazeni (2013) chapter 4: the GPU's speed-ups over the document's baseline and "
             "over the best CPU code, a batch")  # fmt: skip
    hf = hashtable_figures
    _write_speedups(snakemake, log, frames, title, hf.CH4_KEYS, hf.CH4_BASELINE, hf.CH4_HEADLINE,
                    notes=hf.ch4_notes(frames["ch4_speedups"]), shown=hf.CH4_SHOWN)  # fmt: skip


def _ch4_speedups(snakemake, runs, cells):
    """Chapter 4's speed-up table: this run's GPU cell (GPU_PH at the top PH, DEK and
    ``mix``) where a GPU ran here, else the committed one-host bench run the rule names
    (``params.evidence``, via the study's adapter, with that host's own ratios beside)."""
    cfg = snakemake.config
    best_cell = artifacts.load_npz(snakemake.input.best_cpu[0])
    top = catalog.ch4_top_tables(cfg)
    doc = hashtable_figures.doc_rows(runs, top, catalog.ch4_cpu_threads(cfg))
    gpu_cells = [(a, m) for a, m in cells if m.get("backend") == "cuda"]
    if gpu_cells:
        gpu = hashtable_figures.gpu_rows(runs, top, int(gpu_cells[0][1]["preload"]))
        one_host = speedups.same_host(best_cell[1], *(m for _, m in cells))
        source = speedups.THIS_RUN
    else:
        found = _committed(snakemake, "ch4_speedups")
        if found is None:
            gpu, source = pd.DataFrame(), "none"
        else:
            gpu = hashtable_figures.evidence_gpu_rows(found.frame(), found.device, found.folder)
            source = speedups.evidence_source(found)
        one_host = False
    return hashtable_figures.ch4_speedups(gpu, doc, best_cell, gpu_source=source,
                                          one_host=one_host)  # fmt: skip


def _devices(cells) -> list[str]:
    return sorted({meta["device"] for _, meta in cells if meta.get("backend") == "cuda"})


def ch5_outputs(snakemake, log):
    cells = artifacts.load_all(snakemake.input.ch5)
    frames = tv_figures.ch5_tables(cells)
    scale = snakemake.params.scale
    gpus = _devices(cells)
    titles = {k: tv_figures.TITLES[k] for k in ("fig45", "reuse")}
    _write(snakemake, log, frames, tv_figures, titles, scale, gpus)


def ch6_outputs(snakemake, log):
    cells = {k: artifacts.load_all(getattr(snakemake.input, k))
             for k in ("cpu", "native", "peer", "gpu")}  # fmt: skip
    frames = tv_figures.ch6_tables(**cells)
    frames["ch6_speedups"] = _ch6_speedups(snakemake, cells)
    scale = cells["cpu"][0][1]["scale"]
    gpus = _devices(cells["gpu"])
    titles = {k: v for k, v in tv_figures.TITLES.items() if k not in ("fig45", "reuse")}
    _write(snakemake, log, frames, tv_figures, titles, scale, gpus)
    title = ("Moazeni (2013) chapter 6: the GPU's speed-ups over the document's baseline and "
             "over the best CPU code, an iteration")  # fmt: skip
    _write_speedups(snakemake, log, frames, title, tv_figures.CH6_KEYS, tv_figures.CH6_BASELINE,
                    tv_figures.CH6_HEADLINE)  # fmt: skip


def _ch6_speedups(snakemake, cells):
    """Chapter 6's speed-up table: this run's GPU cell where a GPU ran here, else Fig 53's
    committed table the rule names (``params.evidence``)."""
    best_cell = artifacts.load_npz(snakemake.input.best_cpu[0])
    if cells["gpu"]:
        gpu = tv_figures.gpu_global_sync(tv_figures.unpack(cells["gpu"], "timing"))
        metas = [m for _, m in cells["native"] + cells["gpu"]]
        one_host, source = speedups.same_host(best_cell[1], *metas), speedups.THIS_RUN
    else:
        found = _committed(snakemake, "ch6_speedups")
        gpu = pd.DataFrame() if found is None else tv_figures.gpu_global_sync(found.frame())
        source = "none" if found is None else speedups.evidence_source(found)
        one_host = False
    return tv_figures.ch6_speedups(gpu, cells["native"], best_cell, gpu_source=source,
                                   one_host=one_host)  # fmt: skip


def ch7_outputs(snakemake, log):
    search = artifacts.load_all(snakemake.input.search)
    timing = artifacts.load_all(snakemake.input.timing)
    choices = artifacts.load_all(snakemake.input.choices)
    frames = mddtw_figures.tables(search, timing, choices)
    frames["ch7_speedups"] = _ch7_speedups(snakemake, timing)
    scale = snakemake.params.scale
    gpus = _devices(search + timing + choices)
    _write(snakemake, log, frames, mddtw_figures, mddtw_figures.TITLES, scale, gpus)
    title = ("Moazeni (2013) chapter 7: the GPU's speed-ups over the document's baseline and "
             "over the best CPU code, the single-dimensional search")  # fmt: skip
    _write_speedups(snakemake, log, frames, title, mddtw_figures.CH7_KEYS,
                    mddtw_figures.CH7_BASELINE, mddtw_figures.CH7_HEADLINE)  # fmt: skip


def _ch7_speedups(snakemake, timing):
    """Chapter 7's speed-up table: this run's timing cell (the kernel alone) where a GPU
    ran here, else the committed one-host bench run the rule names (``params.evidence``:
    the kernel and the top-p task, via the study's adapter)."""
    best_cell = artifacts.load_npz(snakemake.input.best_cpu[0])
    if timing:
        gpu = mddtw_figures.gpu_kernel_rows(tv_figures.unpack(timing, "timing"))
        one_host = speedups.same_host(best_cell[1], *(m for _, m in timing))
        source = speedups.THIS_RUN
    else:
        found = _committed(snakemake, "ch7_speedups")
        if found is None:
            gpu, source = pd.DataFrame(), "none"
        else:
            gpu = mddtw_figures.evidence_gpu_rows(found.frame(), found.device)
            source = speedups.evidence_source(found)
        one_host = False
    return mddtw_figures.ch7_speedups(gpu, best_cell, gpu_source=source, one_host=one_host)


JOBS = {"moazeni2013_ch3_outputs": ch3_outputs, "moazeni2013_ch4_outputs": ch4_outputs,
        "moazeni2013_ch7_outputs": ch7_outputs,
        "moazeni2013_ch5_outputs": ch5_outputs, "moazeni2013_ch6_outputs": ch6_outputs}  # fmt: skip
run(JOBS[snakemake.rule], snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
