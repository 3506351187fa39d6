"""Snakemake glue of Güldaş (2015) §4.2-4.3 (workflow/rules/guldas2015/filters.smk):
one function per cell rule, chosen by the rule's name; each calls the study
(pfresample_studies.guldas2015.filter_experiments) and writes its .npz atomically.
"""

from pfresample_studies.guldas2015 import filter_experiments
from pfresample_studies.pipeline import artifacts
from pfresample_studies.pipeline.jobs import run, save_cell

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake


def filter_cell(snakemake, log):
    p = snakemake.params
    cell = filter_experiments.filter_cell(
        snakemake.wildcards.kind, int(snakemake.wildcards.n), runs=p.runs, steps=p.steps,
        tau=p.tau, seed=p.seed, backend=p.backend, log=log,
    )  # fmt: skip
    save_cell(snakemake, log, *cell)


def interaction_cell(snakemake, log):
    p = snakemake.params
    cell = filter_experiments.interaction_cell(
        int(snakemake.wildcards.n), steps=p.steps, tau=p.tau, seed=p.seed, log=log
    )
    save_cell(snakemake, log, *cell)


def smcem_reference(snakemake, log):
    p = snakemake.params
    cell = filter_experiments.smcem_reference_cell(
        sequences=p.sequences, length=p.length, iterations=p.iterations, starts=list(p.starts),
        seed=p.seed, log=log,
    )  # fmt: skip
    save_cell(snakemake, log, *cell)


def smcem_cell(snakemake, log):
    p = snakemake.params
    (reference,) = artifacts.load_all([snakemake.input.reference])
    cell = filter_experiments.smcem_cell(
        int(snakemake.wildcards.n), reference, iterations=p.iterations, seed=p.seed,
        filters=list(p.filters), tau=p.tau, backend=p.backend, log=log,
    )  # fmt: skip
    save_cell(snakemake, log, *cell)


def job(rule: str):
    return {
        "guldas2015_filter_cell": filter_cell,
        "guldas2015_interaction_cell": interaction_cell,
        "guldas2015_smcem_reference": smcem_reference,
        "guldas2015_smcem_cell": smcem_cell,
    }[rule]


run(job(RULE), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
