"""Snakemake glue of Moazeni (2013)'s one-host experiments (workflow/rules/moazeni2013/gpu.smk):
one function per rule, chosen by the rule's name.

* moazeni2013_{ch3_real,ch7_fig63,ch4_peers}_runs: results/moazeni2013/gpu_runs/<experiment>/
  (the experiment's ``run`` where the cells have a GPU; the files it did not write from the
  committed run, ``pipeline.gpu_runs.run_or_draw``);
* moazeni2013_{ch3_real,ch7_fig63,ch4_peers}_tables: results/tables/moazeni2013/<experiment>/
  (the experiment's ``tables``, each labelled with the sources of the files it read);
* moazeni2013_ch6_tv_draws_runs / _summary: ``tv_draws.run`` on the CPU, and its summary.
"""

from pathlib import Path

import pandas as pd

from pfresample_studies.moazeni2013 import fair_peers, fig63_end_to_end, real_instances, tv_draws
from pfresample_studies.pipeline import gpu_runs
from pfresample_studies.pipeline.artifacts import write_atomically
from pfresample_studies.pipeline.jobs import run

EXPERIMENTS = {"ch3_real": real_instances, "ch7_fig63": fig63_end_to_end, "ch4_peers": fair_peers}
CSV = {"index": False, "float_format": "%.6g"}  # the committed derived tables' digits


def _experiment(name: str, snakemake, log):
    """``out`` -> the files the experiment ``name`` wrote there (run on this job's GPU)."""
    p = snakemake.params
    module = EXPERIMENTS[name]
    if name == "ch4_peers":
        args = fair_peers.settings(p.cfg)
        if not args.cuco.is_file():
            log.warning("no cuCollections driver at %s (bench/device/cuco_build.sh builds it): "
                        "the committed run's peers", args.cuco)  # fmt: skip
            return lambda out: set()
    else:
        args = module.settings(p.cfg)
    return lambda out: module.run(args, out, log=log.info)


def runs(name: str):
    def job(snakemake, log):
        module = EXPERIMENTS[name]
        experiment = _experiment(name, snakemake, log)
        gpu_runs.run_or_draw(snakemake, log, module.NAMES, experiment, module.MARKER)

    return job


def tables(name: str):
    def job(snakemake, log):
        module = EXPERIMENTS[name]
        folder = Path(snakemake.input.sources).parent
        sources = gpu_runs.read_sources(snakemake.input.sources)
        for table, frame in module.tables(folder).items():
            frame = gpu_runs.labelled(frame, sources, module.TABLES[table])
            out = snakemake.output[table]
            write_atomically(out, lambda tmp, f=frame: f.to_csv(tmp, **CSV))
            log.info("%s: %d rows (%s)", table, len(frame), frame[gpu_runs.SOURCE_COLUMN].iloc[0]
                     if len(frame) else "empty")  # fmt: skip

    return job


def tv_draws_runs(snakemake, log):
    p, o = snakemake.params, snakemake.output
    tuning_seeds = list(range(p.seed, p.seed + p.tuning))
    evaluation_seeds = list(range(p.seed + p.tuning, p.seed + p.tuning + p.evaluation))
    tuning, evaluation, _ = tv_draws.run(p.size, tuning_seeds, evaluation_seeds,
                                         workers=snakemake.threads)  # fmt: skip
    # tv_draws' own digits (its command line's), so that the committed run compares
    write_atomically(o.tuning, lambda tmp: tuning.to_csv(tmp, index=False))
    write_atomically(o.draws, lambda tmp: evaluation.to_csv(tmp, index=False))
    log.info("%d^3: %d tuning and %d evaluation draws", p.size, p.tuning, p.evaluation)


def tv_draws_summary(snakemake, log):
    summary = tv_draws.summarise(pd.read_csv(snakemake.input.draws))
    write_atomically(snakemake.output[0], lambda tmp: summary.to_csv(tmp, index=False))
    log.info("summary:\n%s", summary.to_string())


def job(rule: str):
    jobs = {"moazeni2013_ch6_tv_draws_runs": tv_draws_runs,
            "moazeni2013_ch6_tv_draws_summary": tv_draws_summary}  # fmt: skip
    for name in EXPERIMENTS:
        jobs[f"moazeni2013_{name}_runs"] = runs(name)
        jobs[f"moazeni2013_{name}_tables"] = tables(name)
    return jobs[rule]


run(job(snakemake.rule), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
