"""Snakemake entry point: results/tables/dulger2017/{sfigure}_speedups.csv and .md (issue
62): Fig 6.23's GPU over the document's kind of CPU baseline and over the best CPU code,
from pfresample_studies.dulger2017.best_cpu.speedups_frame."""

from pfresample_studies.dulger2017 import best_cpu, filter_tables
from pfresample_studies.pipeline import artifacts as io
from pfresample_studies.pipeline import evidence
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run


def main(snakemake, log):
    p = snakemake.params
    inputs = snakemake.input
    frames = {}
    for backend in ("cpu", "cuda"):
        cells = [io.load_npz(path) for path in getattr(inputs, backend, [])]
        spec = {"variants": [p.spec["variant"]]}
        frames[backend] = filter_tables.filter_table(cells, spec) if cells else None
    paths = getattr(inputs, "evidence", [])
    committed = evidence.describe(paths[0]) if paths else None
    frame = best_cpu.speedups_frame(io.load_npz(inputs.cell), frames["cpu"], frames["cuda"],
                                    committed)  # fmt: skip
    frame["scale"] = p.scale
    pipeline_tables.write_csv(frame, snakemake.output.csv)
    name = snakemake.output.csv.rsplit("/", 1)[-1].removesuffix(".csv")
    title = f"Dülger (2017) {name}: {p.spec['title']}, against the best CPU code"
    pipeline_tables.write_text(best_cpu.speedups_markdown(frame, title), snakemake.output.md)
    log.info("%d rows; GPU from %s", len(frame), sorted(set(frame["gpu_source"])))


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
