"""Snakemake entry point: one CPU cell of Fig 6.23 from its parts
(results/filter_speedup_parts/...); pfresample_studies.dulger2017.filter_experiments.
merge_filter_parts checks that they hold each run once and puts them together."""

from pfresample_studies.dulger2017 import filter_experiments
from pfresample_studies.pipeline import artifacts as io
from pfresample_studies.pipeline.jobs import provenance, run


def main(snakemake, log):
    parts = [io.load_npz(path) for path in snakemake.input.parts]
    arrays, metadata = filter_experiments.merge_filter_parts(parts)
    metadata.update(**provenance(snakemake))
    io.save_npz(snakemake.output[0], arrays, metadata)
    log.info(
        "%d parts: mean RMSE %.4f, mean %.4f s per run, highest load average %.1f",
        len(parts), arrays["rmse"].mean(), arrays["total_seconds"].mean(),
        metadata["load_average"][0],
    )  # fmt: skip


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
