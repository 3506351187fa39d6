"""The run report: every figure of target `all` with where its data came from (this
machine, committed evidence, or nothing), read from the figure itself
(pfresample_studies.pipeline.evidence); glue scripts/figure_sources.py.

* results/report/figures.csv, figures.md: one row a figure: study, figure, source,
  detail (the evidence's device, folder, date and commit, or the command that would
  fill a blank one), the newest committed table of its GPU rows, and whether it is
  blank although that table exists.
"""


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
