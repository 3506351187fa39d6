"""The run report: every figure of target `all` with where its data came from (this
machine, committed evidence, or nothing), read from the figure itself
(pfresample.pipeline.evidence); glue scripts/figure_sources.py.

* results/report/figures.csv, figures.md: one row a figure: study, figure, source,
  detail (the evidence's device, folder, date and commit, or the command that would
  fill a blank one), the newest committed table of its GPU rows, and whether it is
  blank although that table exists.
"""


def report_figures() -> dict[str, dict]:
    """PNG -> its study, name and the newest committed table of its GPU rows ("" where a
    study names none: its catalog's EVIDENCE_TABLES), for every figure of the studies'
    targets."""
    from pathlib import Path

    from pfresample.pipeline import evidence

    out = {}
    for study in STUDIES:
        tables = getattr(CATALOGS[study], "EVIDENCE_TABLES", {})
        for path in map(str, getattr(rules, study).input):
            if not (path.endswith(".png") and f"results/figures/{study}/" in path):
                continue
            name = Path(path).stem
            found = evidence.find(tables[name], EVIDENCE_ROOT) if name in tables else None
            out[path] = {"study": study, "figure": name,
                         "committed": str(found.path) if found else ""}  # fmt: skip
    return out


rule figure_sources:
    input:
        list(report_figures()),
    output:
        csv="results/report/figures.csv",
        md="results/report/figures.md",
    params:
        figures=list(report_figures().values()),
    log:
        "results/logs/report/figures.log",
    threads: 1
    resources:
        mem_mb=512,
    conda:
        CONDA_ENV
    script:
        "../../scripts/figure_sources.py"
