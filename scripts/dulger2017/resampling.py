"""Snakemake glue of the resampling rules of Dülger (2017), chapters 2, 5 and 6
(workflow/rules/dulger2017/resampling.smk): one function per rule, chosen by
the rule's name. Each reads its inputs, calls the study
(pfresample_studies.dulger2017) and writes its outputs atomically.

* weight_datasets: results/weights/{dist}/{n}.npz, every N of the grid;
* uphill_ssd_tables: results/tuning/uphill_ssd/{n}.npz;
* resample_cell, resample_ladder_*, resample_variant_*:
  results/resample/{variant}/{dist}.npz (a ladder: one file per rung; a variant:
  one per distribution), from experiments.run_ladder;
* dulger2017_figure: results/tables/dulger2017/{figure}.csv and _sequences.csv,
  then results/figures/dulger2017/{figure}.png, .pdf drawn from them;
* dulger2017_fig2_3: results/figures/dulger2017/fig2_3.png, .pdf.
"""

import os
import time
from collections.abc import Mapping

import numpy as np

from pfresample import backend, tuning
from pfresample.backend import BACKEND_LABELS
from pfresample_studies.dulger2017 import experiments, weights
from pfresample_studies.pipeline import artifacts, devices
from pfresample_studies.pipeline.jobs import provenance, run

# The tables' and figures' modules (pandas, matplotlib, seaborn: about 1.3 s on the
# 2-core machine, 2.6 s of each GPU cell's start on the four-H100 host) are imported
# by the table and figure jobs alone: a cell holds its GPU from its first line.

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake
CLAIM = None

if RULE.startswith("resample_"):
    # On a host with several GPUs a cell job takes one free device for itself (a
    # lock held until it exits) before anything starts CUDA: Snakemake gives local
    # jobs no device ids (pfresample_studies.pipeline.devices).
    CLAIM = devices.pin_job(snakemake.params.devices)  # noqa: F821
    # CuPy's import and the CUDA driver's start happen here, before the job's log
    # starts, so that the overhead report counts them as start-up, not as work.
    backend.cuda_device()


def weight_datasets(snakemake, log):
    """Every weight dataset of one distribution: (sequences, N) float32 per N."""
    dist = snakemake.wildcards.dist
    sequences, seed = snakemake.params.sequences, snakemake.params.seed
    weights.parse_distribution(dist)
    for n, path in zip(snakemake.params.n, snakemake.output, strict=True):
        data = np.empty((sequences, n), dtype=np.float32)
        for s in range(sequences):
            data[s] = weights.generate(dist, n, s, seed, dtype=np.float32)
        metadata = {
            "what": "weight sequences",
            "distribution": dist,
            "n": n,
            "sequences": sequences,
            "seed": seed,
            "dtype": "float32",
            "backend": BACKEND_LABELS["cpu"],
            **provenance(snakemake),
        }
        artifacts.save_npz(path, {"weights": data}, metadata)
        log.info(
            "%s N = %d: %d sequences, mean %.4g, max %.4g",
            dist, n, sequences, data.mean(), data.max(),
        )  # fmt: skip


def uphill_ssd_tables(snakemake, log):
    """SSD(EU(., B)) for B = 0 ... 8191 per N (pfresample.tuning.ssd_table)."""
    metadata = {"backend": BACKEND_LABELS["cpu"], **provenance(snakemake)}
    for n, path in zip(snakemake.params.n, snakemake.output, strict=True):
        start = time.perf_counter()
        table = tuning.ssd_table(n)
        artifacts.save_ssd_table(path, table, n, metadata)
        log.info("N = %d: SSD table of %d entries in %.2f s", n, table.size,
                 time.perf_counter() - start)  # fmt: skip


class LazyWeights(Mapping):
    """N -> (sequences, N) weights, each dataset read only when the cell reaches
    its N, so that a job holds one N's weights at a time."""

    def __init__(self, paths):
        self.paths = paths

    def __getitem__(self, n):
        return artifacts.load_npz(self.paths[n])[0]["weights"]

    def __iter__(self):
        return iter(self.paths)

    def __len__(self):
        return len(self.paths)


def resample_cell(snakemake, log):
    """One cell, every rung of a reduced-B ladder (one file per rung), or one
    variant over several distributions (``resample_jobs: per_variant``: one file
    per distribution)."""
    # The CPU kernels' thread pool uses the threads the job was given (read per call).
    os.environ["PFRESAMPLE_THREADS"] = str(snakemake.threads)
    p = snakemake.params
    if CLAIM is not None:
        log.info("GPU: device %s of %s (waited %.1f s)", CLAIM.device, p.devices, CLAIM.waited_s)
    variants = [experiments.Variant(**v) for v in p.variants]
    dists = getattr(p, "dists", None) or [snakemake.wildcards.dist]
    ssd = {n: artifacts.load_npz(path)[0]["ssd"]
           for n, path in zip(p.n, snakemake.input.ssd, strict=False)}  # fmt: skip
    settings = experiments.CellSettings(**p.settings)
    paths, weights, grid = iter(snakemake.output), list(snakemake.input.weights), len(p.n)
    for i, dist in enumerate(dists):
        files = weights[i * grid : (i + 1) * grid]
        weights_by_n = LazyWeights(dict(zip(p.n, files, strict=True)))
        for arrays, metadata in experiments.run_ladder(variants, dist, weights_by_n, settings, ssd):
            metadata.update(scale=p.scale, **provenance(snakemake))
            artifacts.save_npz(next(paths), arrays, metadata)
            log.info("%s on %s: backend %s, device %s", metadata["variant"]["name"], dist,
                     metadata["backend"], metadata["device"])  # fmt: skip
    if next(paths, None) is not None:
        raise RuntimeError("more outputs than cells: the rule and the script disagree")


def figure(snakemake, log):
    """Figs 5.3-5.14, 6.2-6.22, 6.27 and Table 6.1 (drawn as a table): the tidy
    tables, per weight sequence and averaged over them, then the figure drawn from
    the written averages (read back, so that the figure is the table's)."""
    import pandas as pd

    from pfresample_studies.dulger2017 import figures, tables
    from pfresample_studies.pipeline import plots
    from pfresample_studies.pipeline import tables as pipeline_tables

    p = snakemake.params
    cells = [tables.cell_frame(*artifacts.load_npz(path)) for path in snakemake.input.cells]
    per_sequence, summary = tables.figure_tables(cells, p.spec, p.members)
    pipeline_tables.write_csv(per_sequence, snakemake.output.sequences)
    pipeline_tables.write_csv(summary, snakemake.output.summary)
    log.info("%d cells, %d rows", len(cells), len(summary))
    frame = pd.read_csv(snakemake.output.summary)
    devices_used = ", ".join(sorted(set(frame["device"].dropna().astype(str)))) or "unknown"
    caption = plots.caption(
        backend=f"{p.backend}; device: {devices_used}",
        scale=p.scale,
        detail=f"{p.sequences} weight sequences x K = {p.draws} draws per N",
    )
    fig = figures.dulger2017_figure(frame, p.spec, p.distributions, caption=caption)
    title = f"Dülger (2017) {snakemake.wildcards.figure}: {p.spec['title']}"
    plots.save(fig, [snakemake.output.png, snakemake.output.pdf], title=title)
    log.info("caption: %s", caption)


def weight_histograms(snakemake, log):
    """Fig 2.3: histograms of one weight sequence of each gamma distribution."""
    from pfresample_studies.dulger2017 import figures
    from pfresample_studies.pipeline import plots

    p = snakemake.params
    samples = {}
    for dist, path in zip(p.distributions, snakemake.input.weights, strict=True):
        arrays, meta = artifacts.load_npz(path)
        samples[dist] = arrays["weights"][p.sequence]
        log.info("%s: sequence %d of %s (%d sequences)", dist, p.sequence, path, meta["sequences"])
    caption = plots.caption(
        backend=p.backend, scale=p.scale, n=p.n, detail=f"sequence {p.sequence}, {p.bins} bins"
    )
    fig = figures.weight_histograms(samples, bins=p.bins, caption=caption)
    plots.save(fig, [snakemake.output.png, snakemake.output.pdf], title="Dülger (2017) Fig 2.3")
    log.info("caption: %s", caption)


def job(rule: str):
    """The function of a rule (ladders' and variants' rules are named
    resample_ladder_<name>, resample_variant_<name>)."""
    if rule.startswith("resample_"):
        return resample_cell
    return {
        "weight_datasets": weight_datasets,
        "fig2_3_weight_dataset": weight_datasets,
        "uphill_ssd_tables": uphill_ssd_tables,
        "dulger2017_figure": figure,
        "dulger2017_fig2_3": weight_histograms,
    }[rule]


run(job(RULE), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
