"""Snakemake entry point: the trajectory set of one filter model,
results/trajectories/{model}.npz (pfresample.trajectories, written atomically)."""

from _pipeline import provenance, run

from pfresample import filter_experiments
from pfresample.trajectories import save_trajectories


def main(snakemake, log):
    p = snakemake.params
    arrays, metadata = filter_experiments.make_trajectories(p.spec, p.trajectories, p.seed)
    metadata.update(model=snakemake.wildcards.model, **provenance(snakemake))
    save_trajectories(snakemake.output[0], arrays, metadata)
    log.info(
        "%s: truth %s, y %s", snakemake.wildcards.model, arrays["truth"].shape, arrays["y"].shape
    )


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
