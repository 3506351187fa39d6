"""Snakemake glue of Moazeni (2013) (workflow/rules/moazeni2013/cells.smk): one function
per rule, chosen by the rule's name; each calls the study and writes its .npz atomically.

* moazeni2013_ch3_order_cell: results/moazeni2013/ch3/cpu/{ch3_order}.npz;
* moazeni2013_ch3_native_cell: results/moazeni2013/ch3/native.npz;
* moazeni2013_ch3_gpu_cell, moazeni2013_ch3_fig12_cell: results/moazeni2013/ch3/{gpu,fig12}.npz;
* moazeni2013_ch4_cpu_cell, moazeni2013_ch4_gpu_cell: results/moazeni2013/ch4/{cpu,gpu}.npz.
"""

from pfresample import backend
from pfresample.pipeline import devices
from pfresample.pipeline.jobs import run, save_cell
from pfresample.studies.moazeni2013 import experiments, hashtable_workloads

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake
CLAIM = None
if RULE in ("moazeni2013_ch3_gpu_cell", "moazeni2013_ch3_fig12_cell", "moazeni2013_ch4_gpu_cell"):
    # A GPU job takes one free GPU for itself before CUDA starts (pfresample.pipeline.devices).
    CLAIM = devices.pin_job(snakemake.params.devices)  # noqa: F821
    backend.cuda_device()


def order_cell(snakemake, log):
    p = snakemake.params
    cell = experiments.order_cell(snakemake.wildcards.ch3_order, p.n, p.block_sizes, p.dtypes,
                                  seed=p.seed, repeats=p.repeats, base=p.base, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def native_cell(snakemake, log):
    p = snakemake.params
    cell = experiments.native_cell(p.n, p.dtypes, seed=p.seed, repeats=p.repeats,
                                   threads=snakemake.threads, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def gpu_cell(snakemake, log):
    p = snakemake.params
    cell = experiments.gpu_cell(p.n, p.block_sizes, p.dtypes, seed=p.seed, repeats=p.repeats,
                                log=log)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def fig12_cell(snakemake, log):
    p = snakemake.params
    save_cell(snakemake, log, *experiments.fig12_cell(p.sizes, repeats=p.repeats, log=log), CLAIM)


def ch4_cell(snakemake, log):
    p = snakemake.params
    cell = hashtable_workloads.run_cell(p.runs, **p.cell, log=log)
    save_cell(snakemake, log, *cell, CLAIM)


JOBS = {
    "moazeni2013_ch4_cpu_cell": ch4_cell,
    "moazeni2013_ch4_gpu_cell": ch4_cell,
    "moazeni2013_ch3_order_cell": order_cell,
    "moazeni2013_ch3_native_cell": native_cell,
    "moazeni2013_ch3_gpu_cell": gpu_cell,
    "moazeni2013_ch3_fig12_cell": fig12_cell,
}


run(JOBS[RULE], snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
