"""Snakemake entry point: the trajectory set of one filter model,
results/trajectories/{model}.npz (studies/dulger2017/trajectories.py, atomically)."""

from pfresample_studies.dulger2017 import filter_experiments
from pfresample_studies.dulger2017.trajectories import save_trajectories
from pfresample_studies.pipeline.jobs import provenance, run


def main(snakemake, log):
    p = snakemake.params
    arrays, metadata = filter_experiments.make_trajectories(p.spec, p.trajectories, p.seed)
    metadata.update(model=snakemake.wildcards.model, **provenance(snakemake))
    save_trajectories(snakemake.output[0], arrays, metadata)
    log.info(
        "%s: truth %s, y %s", snakemake.wildcards.model, arrays["truth"].shape, arrays["y"].shape
    )


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
