"""Snakemake entry point: one resampling cell, results/resample/{variant}/{dist}.npz,
or the cells of every rung of a reduced-B ladder, one file per rung.

Reads the weight datasets of the N grid (one N at a time) and the Uphill SSD
tables, runs pfresample.experiments.run_ladder and writes the summaries with
metadata (pfresample.io.save_npz, atomic, one file per variant).
"""

import os
from collections.abc import Mapping

from _pipeline import provenance, run

from pfresample import backend, devices, experiments, io

# On a host with several GPUs this job takes one free device for itself (a lock
# held until it exits) before anything starts CUDA: Snakemake gives local jobs
# no device ids (pfresample.devices).
CLAIM = devices.pin_job(snakemake.params.devices)  # noqa: F821 -- injected by Snakemake
# CuPy's import and the CUDA driver's start happen here, before the job's log
# starts, so that the overhead report (pfresample.overhead) counts them as
# start-up, not as work.
backend.cuda_device()


class LazyWeights(Mapping):
    """N -> (sequences, N) weights, each dataset read only when the cell reaches
    its N, so that a job holds one N's weights at a time."""

    def __init__(self, paths):
        self.paths = paths

    def __getitem__(self, n):
        return io.load_npz(self.paths[n])[0]["weights"]

    def __iter__(self):
        return iter(self.paths)

    def __len__(self):
        return len(self.paths)


def main(snakemake, log):
    # The CPU kernels' thread pool uses the threads the job was given (read per call).
    os.environ["PFRESAMPLE_THREADS"] = str(snakemake.threads)
    p = snakemake.params
    if CLAIM is not None:
        log.info("GPU: device %s of %s (waited %.1f s)", CLAIM.device, p.devices, CLAIM.waited_s)
    variants = [experiments.Variant(**v) for v in p.variants]
    dist = snakemake.wildcards.dist
    weights = LazyWeights(dict(zip(p.n, snakemake.input.weights, strict=True)))
    tables = {}
    for n, path in zip(p.n, snakemake.input.ssd, strict=False):
        tables[n] = io.load_npz(path)[0]["ssd"]
    settings = experiments.CellSettings(**p.settings)
    cells = experiments.run_ladder(variants, dist, weights, settings, tables)
    for path, (arrays, metadata) in zip(snakemake.output, cells, strict=True):
        metadata.update(scale=p.scale, **provenance(snakemake))
        io.save_npz(path, arrays, metadata)
        log.info(
            "%s on %s: backend %s, device %s",
            metadata["variant"]["name"],
            dist,
            metadata["backend"],
            metadata["device"],
        )


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
