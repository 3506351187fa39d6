"""Snakemake glue of Gelencsér-Horváth et al. (2013) (workflow/rules/cpf2013/cells.smk):
one function per rule, chosen by the rule's name. Each reads its inputs, calls the
study (pfresample_studies.cpf2013) and writes its .npz atomically.

* cpf2013_trajectories: results/cpf2013/trajectories/{cpf_model}.npz;
* cpf2013_cpf_cell, _sir_cell, _timing_cell: results/cpf2013/{cpf,sir,timing}/**.npz;
* cpf2013_best_cpu_cell: results/cpf2013/best_cpu/**.npz (on the job's threads);
* cpf2013_campaign_trajectories, _campaign_cell: results/cpf2013/campaign/**.npz.
"""

import os

from pfresample import backend
from pfresample_studies.cpf2013 import experiments, targets
from pfresample_studies.pipeline import devices
from pfresample_studies.pipeline.jobs import run, save_cell

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake
CLAIM = None
if RULE.endswith("_cell") and RULE != "cpf2013_best_cpu_cell":
    # A cell job takes one free GPU for itself before CUDA starts (pipeline.devices).
    CLAIM = devices.pin_job(snakemake.params.devices)  # noqa: F821
    backend.cuda_device()


def _trajectories(snakemake):
    name = snakemake.wildcards.cpf_model
    return name, targets.load_set(name, snakemake.input.trajectories)


def trajectories(snakemake, log):
    name, p = snakemake.wildcards.cpf_model, snakemake.params
    arrays = targets.simulate(name, p.trajectories, p.steps, p.seed)
    metadata = {"study": "cpf2013", "what": "trajectories", "model": name, "seed": int(p.seed),
                "count": int(p.trajectories), "steps": int(p.steps)}  # fmt: skip
    save_cell(snakemake, log, arrays, metadata, CLAIM)
    log.info("%d %s trajectories of %d steps", p.trajectories, name, p.steps)


def campaign_cell(snakemake, log):
    spec, p = snakemake.params.spec, snakemake.params
    data = targets.load_set(spec["model"], snakemake.input.trajectories)
    kw = {"seed": p.seed, "backend": p.backend, "setup": spec["setup"], "log": log}
    if spec["kind"] == "cpf":
        cell = experiments.cpf_cell(spec["model"], data, spec["n"], spec["radius"],
                                    fast_math=spec["fast_math"], precision=spec["precision"],
                                    neighbourhood=spec["neighbourhood"], **kw)  # fmt: skip
    else:
        cell = experiments.sir_cell(spec["model"], data, spec["n"], spec["method"], **kw)
    cell[1]["campaign"] = True
    save_cell(snakemake, log, *cell, CLAIM)


def cpf_cell(snakemake, log):
    name, data = _trajectories(snakemake)
    w, p = snakemake.wildcards, snakemake.params
    cell = experiments.cpf_cell(name, data, int(w.n), int(w.r), fast_math=p.fast_math,
                                log=log, **p.cell)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def sir_cell(snakemake, log):
    name, data = _trajectories(snakemake)
    w, p = snakemake.wildcards, snakemake.params
    cell = experiments.sir_cell(name, data, int(w.n), w.sir_method, log=log, **p.cell)
    save_cell(snakemake, log, *cell, CLAIM)


def timing_cell(snakemake, log):
    name, data = _trajectories(snakemake)
    w, p = snakemake.wildcards, snakemake.params
    cell = experiments.timing_cell(name, data, int(w.n), p.radii, repeats=p.repeats,
                                   kernels=[tuple(k) for k in p.kernels],
                                   baselines=list(p.baselines), log=log, **p.cell)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def best_cpu_cell(snakemake, log):
    name, data = _trajectories(snakemake)
    n, p = int(snakemake.wildcards.n), snakemake.params
    threads = int(snakemake.threads)  # the cores Snakemake gave the job (<= --cores)
    if threads < p.threads:
        log.warning("cpf2013_best_cpu_threads asks for %d threads; the job got %d (--cores)",
                    p.threads, threads)  # fmt: skip
    # Before the compiled library loads libgomp, which reads it once: the job holds its
    # cores, so the threads spin at the step's barrier (bench/cpf2013_best_cpu.py's default).
    os.environ.setdefault("OMP_WAIT_POLICY", "ACTIVE")
    cell = experiments.best_cpu_cell(name, data, n, p.radii, seed=p.seed, repeats=p.repeats,
                                     threads=threads, numpy=n in p.numpy_n, setup=p.setup,
                                     log=log)  # fmt: skip
    cell[1]["threads_asked"] = int(p.threads)
    save_cell(snakemake, log, *cell, CLAIM)


def job(rule: str):
    return {
        "cpf2013_trajectories": trajectories,
        "cpf2013_cpf_cell": cpf_cell,
        "cpf2013_sir_cell": sir_cell,
        "cpf2013_timing_cell": timing_cell,
        "cpf2013_best_cpu_cell": best_cpu_cell,
        "cpf2013_campaign_trajectories": trajectories,
        "cpf2013_campaign_cell": campaign_cell,
    }[rule]


run(job(RULE), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
