"""Snakemake glue of the Gelencsér-Horváth et al. (2013) GPU experiment
(workflow/rules/cpf2013/gpu.smk): one function per rule, chosen by the rule's name.

* cpf2013_gpu_runs: results/cpf2013/gpu_runs/ (pfresample_studies.cpf2013.gpu_runs.run on the
  GPU where the cells have one; the files it did not write from the committed run);
* cpf2013_gpu_tables: results/tables/cpf2013/gpu/*.csv (.gpu_tables.tables);
* cpf2013_gpu_figure: results/figures/cpf2013/gpu/{fig}.png, .pdf (figures.draw).
"""

from pathlib import Path

import pandas as pd

from pfresample_studies.cpf2013 import catalog, figures, gpu_runs, gpu_tables
from pfresample_studies.pipeline import gpu_runs as committed_runs
from pfresample_studies.pipeline import plots
from pfresample_studies.pipeline.artifacts import write_atomically
from pfresample_studies.pipeline.jobs import run
from pfresample_studies.pipeline.speedups import THIS_RUN

CSV = {"index": False, "float_format": "%.6g"}  # the committed run's printed digits


def runs(snakemake, log):
    p = snakemake.params
    committed_runs.run_or_draw(
        snakemake, log, gpu_runs.NAMES,
        lambda out: gpu_runs.run(p.cfg, out, p.scale, say=log.info), gpu_tables.GPU_RUN,
    )  # fmt: skip


def tables(snakemake, log):
    for name, frame in gpu_tables.tables(Path(snakemake.input.sources).parent).items():
        write_atomically(snakemake.output[name], lambda tmp, f=frame: f.to_csv(tmp, **CSV))
        log.info("gpu/%s: %d rows", name, len(frame))


def figure(snakemake, log):
    plot = snakemake.wildcards.cpf_fig
    frame = pd.read_csv(snakemake.input.table)
    name = f"tables/{plot}.csv"
    where = committed_runs.read_sources(snakemake.input.sources)[name]
    source = "this machine" if where == THIS_RUN else f"committed evidence: {where}"
    scale = f"{frame['scale'].iloc[0]}; {source}"
    fig = figures.draw(plot, frame, scale)
    plots.save(fig, [snakemake.output.png, snakemake.output.pdf], title=catalog.TITLES[plot],
               source=source)  # fmt: skip
    log.info("%s: %d rows drawn (%s)", plot, len(frame), source)


def job(rule: str):
    return {"cpf2013_gpu_runs": runs, "cpf2013_gpu_tables": tables,
            "cpf2013_gpu_figure": figure}[rule]  # fmt: skip


run(job(snakemake.rule), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
