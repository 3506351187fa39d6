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
from pfresample_studies.pipeline import devices, evidence
from pfresample_studies.pipeline import gpu_runs as committed_runs
from pfresample_studies.pipeline.artifacts import write_atomically
from pfresample_studies.pipeline.jobs import run


def runs(snakemake, log):
    i, p = snakemake.input, snakemake.params
    out = Path(snakemake.output.sources).parent
    if not i.committed:
        raise FileNotFoundError(f"evidence/ holds no {gpu_tables.GPU_RUN} to draw from")
    found = evidence.describe(i.committed[0])
    produced = set()
    if p.gpu:
        if not i.reference:
            raise FileNotFoundError(f"evidence/ holds no {gpu_tables.CPU_REFERENCE}")
        claim = devices.pin_job(p.devices)  # before CUDA starts: one GPU for this job
        if claim is not None:
            log.info("GPU: device %s (waited %.1f s)", claim.device, claim.waited_s)
        produced = gpu_runs.run(p.cfg, i.reference[0], out, log=log.info)
    sources = committed_runs.fill(out, gpu_runs.names(p.cfg), produced, found, p.base)
    for name, source in sources.items():
        log.info("%s: %s", name, source)


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
