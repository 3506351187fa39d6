"""Snakemake glue of the run report (workflow/rules/report.smk): every figure of the
run with where its data came from -- this machine, committed evidence, or nothing --
as recorded in its PNG (pfresample_studies.pipeline.evidence), written to
results/report/figures.csv and figures.md."""

from pfresample_studies.pipeline import evidence
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run


def figure_sources(snakemake, log):
    described = zip(snakemake.input, snakemake.params.figures, strict=True)
    figures = [(f["study"], f["figure"], png, f["committed"]) for png, f in described]
    frame = evidence.report(figures)
    pipeline_tables.write_csv(frame, snakemake.output.csv)
    pipeline_tables.write_text(evidence.report_markdown(frame), snakemake.output.md)
    for kind, count in frame["source"].value_counts().items():
        log.info("%s: %d figures", kind, count)
    for r in frame[frame["blank_despite_evidence"]].itertuples(index=False):
        log.warning("%s %s is blank although %s holds its rows", r.study, r.figure, r.committed)


run(figure_sources, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
