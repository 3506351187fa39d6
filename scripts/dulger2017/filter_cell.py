"""Snakemake entry point: filter cells results/filter/{model}/{variant}/n{n}.npz
(or Fig 6.23's results/filter_speedup/{backend}/..., or one part of a CPU cell
of Fig 6.23 when params.part = [p, P]), one per N of params.n, in the order of
the outputs; pfresample_studies.dulger2017.filter_experiments.run_filter_cell does
the work, pfresample_studies.pipeline.artifacts.save_npz writes each file atomically."""

import os

from pfresample import backend
from pfresample_studies.dulger2017 import experiments, filter_experiments
from pfresample_studies.dulger2017.trajectories import load_trajectories
from pfresample_studies.pipeline import artifacts as io
from pfresample_studies.pipeline import devices
from pfresample_studies.pipeline.jobs import provenance, run

P = snakemake.params  # noqa: F821 -- injected by Snakemake
# On a host with several GPUs this job takes one free device for itself before
# anything starts CUDA (pfresample_studies.pipeline.devices); CPU jobs claim none.
CLAIM = devices.pin_job(P.devices)
if P.settings["backend"] != "cpu":
    backend.cuda_device()  # CuPy's import and the driver's start: start-up, not work


def main(snakemake, log):
    p = snakemake.params
    # A CPU part may reserve more cores than it computes on (filter.smk).
    threads = p.compute_threads if "compute_threads" in p.keys() else snakemake.threads
    os.environ["PFRESAMPLE_THREADS"] = str(threads)
    if CLAIM is not None:
        log.info("GPU: device %s of %s (waited %.1f s)", CLAIM.device, p.devices, CLAIM.waited_s)
    trajectories, _ = load_trajectories(snakemake.input.trajectories)
    variant = experiments.Variant(**p.variant)
    settings = filter_experiments.FilterSettings(**p.settings)
    model = snakemake.wildcards.model
    part = tuple(p.part) if "part" in p.keys() else (0, 1)
    for n, path in zip(p.n, snakemake.output, strict=True):
        arrays, metadata = filter_experiments.run_filter_cell(
            model, p.spec, variant, n, trajectories, settings, part=part
        )
        metadata.update(scale=p.scale, **provenance(snakemake))
        io.save_npz(path, arrays, metadata)
        log.info(
            "N = %d: mean RMSE %.4f, mean %.4f s per run, backend %s, device %s",
            n, arrays["rmse"].mean(), arrays["total_seconds"].mean(),
            metadata["backend"], metadata["device"],
        )  # fmt: skip


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
