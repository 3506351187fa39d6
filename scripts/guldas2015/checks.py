"""Snakemake glue of Güldaş (2015)'s CPU checks (workflow/rules/guldas2015/checks.smk):
one function per rule, chosen by the rule's name; each calls the study
(pfresample_studies.guldas2015.log32, .exact_em) and writes its outputs atomically.

* guldas2015_log32_cell: results/guldas2015/log32/{exact,draws}/{target}/n{n}.npz;
* guldas2015_log32_tables: results/tables/guldas2015/log32/{exact,draws}.csv;
* guldas2015_exact_em_cell: results/guldas2015/exact_em/s{m}.npz;
* guldas2015_exact_em_tables: results/tables/guldas2015/exact_em/*.csv.
"""

from pfresample_studies.guldas2015 import catalog, exact_em, log32
from pfresample_studies.pipeline import artifacts
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run, save_cell

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake


def log32_cell(snakemake, log):
    w, p = snakemake.wildcards, snakemake.params
    target = catalog.targets(snakemake.config)[w.target]
    if w.log32_part == "exact":
        cell = log32.exact_cell(w.target, target, int(w.n), sets=p.sets, seed=p.seed, log=log)
    else:
        cell = log32.draws_cell(w.target, target, int(w.n), replicates=p.replicates,
                                seed=p.seed, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def _write(snakemake, log, frames, cells: int) -> None:
    for name, frame in frames.items():
        frame["scale"] = snakemake.params.scale
        pipeline_tables.write_csv(frame, snakemake.output[name])
        log.info("%s: %d rows from %d cells", name, len(frame), cells)


def log32_tables(snakemake, log):
    exact = artifacts.load_all(snakemake.input.exact)
    draws = artifacts.load_all(snakemake.input.draws)
    _write(snakemake, log, log32.tables(exact, draws), len(exact) + len(draws))


def exact_em_cell(snakemake, log):
    p = snakemake.params
    (reference,) = artifacts.load_all([snakemake.input.reference])
    cell = exact_em.exact_em_cell(reference, int(snakemake.wildcards.m), starts=list(p.starts),
                                  iterations=p.iterations, settled=p.settled, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def exact_em_tables(snakemake, log):
    p = snakemake.params
    (reference,) = artifacts.load_all([snakemake.input.reference])
    cells = artifacts.load_all(snakemake.input.cells)
    frames = exact_em.tables(reference, cells, window=p.window, tolerance=p.tolerance)
    _write(snakemake, log, frames, len(cells))


def job(rule: str):
    return {
        "guldas2015_log32_cell": log32_cell,
        "guldas2015_log32_tables": log32_tables,
        "guldas2015_exact_em_cell": exact_em_cell,
        "guldas2015_exact_em_tables": exact_em_tables,
    }[rule]


run(job(RULE), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
