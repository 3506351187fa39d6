"""Snakemake glue of the Güldaş (2015) GPU experiment (workflow/rules/guldas2015/gpu.smk):
one function per rule, chosen by the rule's name.

* guldas2015_gpu_runs: results/guldas2015/gpu_runs/ (pfresample_studies.guldas2015.gpu_runs
  .run on the GPU where the cells have one; the files it did not write from the committed
  run);
* guldas2015_gpu_tables: results/tables/guldas2015/gpu/ (.gpu_tables.tables).
"""

from pathlib import Path

import pandas as pd

from pfresample_studies.guldas2015 import gpu_runs, gpu_tables
from pfresample_studies.pipeline import evidence
from pfresample_studies.pipeline import gpu_runs as committed_runs
from pfresample_studies.pipeline.artifacts import write_atomically
from pfresample_studies.pipeline.jobs import run


def runs(snakemake, log):
    p, reference = snakemake.params, snakemake.input.reference

    def experiment(out):
        if not reference:
            raise FileNotFoundError(f"evidence/ holds no {gpu_tables.CPU_REFERENCE}")
        return gpu_runs.run(p.cfg, reference[0], out, log=log.info)

    committed_runs.run_or_draw(
        snakemake, log, gpu_runs.names(p.cfg), experiment, gpu_tables.GPU_RUN
    )


def _csv(frame, path, float_format):
    frame.to_csv(path, index=False, float_format=float_format)


def tables(snakemake, log):
    i, o = snakemake.input, snakemake.output
    if not i.exact or not i.reference:
        raise FileNotFoundError(
            f"evidence/ holds no {gpu_tables.CPU_EXACT} with {gpu_tables.CPU_REFERENCE} beside"
        )
    cpu_source = evidence.describe(i.exact[0]).label
    frames, markdown = gpu_tables.tables(
        Path(i.sources).parent, pd.read_csv(i.exact[0]), i.reference[0], cpu_source
    )
    for name, frame in frames.items():
        fmt = gpu_tables.FORMATS.get(name, "%.6g")  # the committed run's printed digits
        write_atomically(o[name], lambda tmp, f=frame, g=fmt: _csv(f, tmp, g))
        log.info("gpu/%s: %d rows", name, len(frame))
    for name, text in markdown.items():
        write_atomically(o[f"{name}_md"], lambda tmp, t=text: Path(tmp).write_text(t))


def job(rule: str):
    return {"guldas2015_gpu_runs": runs, "guldas2015_gpu_tables": tables}[rule]


run(job(snakemake.rule), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
