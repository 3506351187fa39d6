"""Snakemake glue of the Das et al. (2014) GPU experiment (workflow/rules/d3_2014/gpu.smk):
one function per rule, chosen by the rule's name.

* d3_2014_gpu_runs: results/d3_2014/gpu_runs/ (pfresample_studies.d3_2014.gpu_runs.run on
  the GPU where the cells have one; the files it did not write from the committed run);
* d3_2014_gpu_tables: results/tables/d3_2014/gpu/*.csv (.gpu_tables.tables).
"""

from pathlib import Path

import pandas as pd

from pfresample_studies.d3_2014 import gpu_runs, gpu_tables
from pfresample_studies.pipeline import evidence
from pfresample_studies.pipeline import gpu_runs as committed_runs
from pfresample_studies.pipeline.artifacts import write_atomically
from pfresample_studies.pipeline.jobs import run

CSV = {"index": False, "float_format": "%.6g"}


def runs(snakemake, log):
    p = snakemake.params
    committed_runs.run_or_draw(
        snakemake, log, gpu_runs.NAMES,
        lambda out: gpu_runs.run(p.cfg, out, log=log.info), gpu_tables.GPU_RUN,
    )  # fmt: skip


def tables(snakemake, log):
    i = snakemake.input
    for key in ("cpu", "n1000"):
        if not i[key]:
            raise FileNotFoundError(f"evidence/ holds no committed {key} table")
    labels = (evidence.describe(i[k][0]).label for k in ("cpu", "n1000"))
    cpu_source = "; ".join(dict.fromkeys(labels))
    cut = gpu_tables.not_run(pd.read_csv(Path(i.sources).parent / "timing.csv"))
    if cut:
        log.warning(
            "timing: %d cells of the grid not run (absent, NaN where a summary reads them): %s",
            len(cut),
            " ".join(f"{a}/{n}/{t}" for a, n, t in cut),
        )
    frames = gpu_tables.tables(
        Path(i.sources).parent, pd.read_csv(i.cpu[0]), pd.read_csv(i.n1000[0]), cpu_source
    )
    for name, frame in frames.items():
        # printed at 6 digits: the committed run's derived tables
        write_atomically(snakemake.output[name], lambda tmp, f=frame: f.to_csv(tmp, **CSV))
        log.info("gpu/%s: %d rows", name, len(frame))


def job(rule: str):
    return {"d3_2014_gpu_runs": runs, "d3_2014_gpu_tables": tables}[rule]


run(job(snakemake.rule), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
