"""Snakemake glue of Moazeni (2013) (workflow/rules/moazeni2013/cells.smk): one function
per rule, chosen by the rule's name; each calls the study and writes its .npz atomically.

* moazeni2013_ch3_order_cell: results/moazeni2013/ch3/cpu/{ch3_order}.npz;
* moazeni2013_ch3_native_cell: results/moazeni2013/ch3/native.npz;
* moazeni2013_ch3_best_cpu_cell: results/moazeni2013/ch3/best_cpu.npz;
* moazeni2013_ch3_gpu_cell, moazeni2013_ch3_fig12_cell: results/moazeni2013/ch3/{gpu,fig12}.npz;
* moazeni2013_ch4_cpu_cell, moazeni2013_ch4_gpu_cell: results/moazeni2013/ch4/{cpu,gpu}.npz;
* moazeni2013_ch4_best_cpu_cell: results/moazeni2013/ch4/best_cpu.npz;
* moazeni2013_ch6_{cpu,native,peer,best_cpu,gpu}_cell: results/moazeni2013/ch6/*.npz;
* moazeni2013_ch5_gpu_cell: results/moazeni2013/ch5/gpu.npz;
* moazeni2013_ch7_search_cell, moazeni2013_ch7_timing_cell, moazeni2013_ch7_best_cpu_cell:
  results/moazeni2013/ch7/*.npz.
"""

from pfresample import backend
from pfresample_studies.moazeni2013 import (
    experiments,
    hashtable_workloads,
    mddtw_experiments,
    tv_experiments,
)
from pfresample_studies.pipeline import devices
from pfresample_studies.pipeline.jobs import run, save_cell

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake
CLAIM = None
GPU_RULES = ("moazeni2013_ch3_gpu_cell", "moazeni2013_ch3_fig12_cell", "moazeni2013_ch4_gpu_cell",
             "moazeni2013_ch6_gpu_cell", "moazeni2013_ch5_gpu_cell",
             "moazeni2013_ch7_timing_cell", "moazeni2013_ch7_choices_cell")  # fmt: skip
if RULE in GPU_RULES or (
    RULE == "moazeni2013_ch7_search_cell" and snakemake.params.backend == "gpu"  # noqa: F821
):  # noqa: F821
    # A GPU job takes one free GPU for itself before CUDA starts (pipeline.devices).
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


def best_cpu_cell(snakemake, log):
    p = snakemake.params
    cell = experiments.best_cpu_cell(p.n, p.dtypes, seed=p.seed, repeats=p.repeats,
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


def ch4_best_cpu_cell(snakemake, log):
    p = snakemake.params
    cell = hashtable_workloads.best_cpu_cell(p.runs, preload=p.preload, repeats=p.repeats,
                                             seed=p.seed, threads=snakemake.threads,
                                             log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def ch6_cpu_cell(snakemake, log):
    p = snakemake.params
    cell = tv_experiments.cpu_cell(p.size, p.tiles, tv_experiments.Settings(**p.settings),
                                   p.lambdas, p.epsilons, p.steps, every=p.every, **p.phantom,
                                   log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def ch6_native_cell(snakemake, log):
    p = snakemake.params
    cell = tv_experiments.native_cell(p.sizes, tv_experiments.Settings(**p.settings),
                                      p.iterations, p.repeats, **p.phantom, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def ch6_best_cpu_cell(snakemake, log):
    p = snakemake.params
    cell = tv_experiments.best_cpu_cell(p.sizes, tv_experiments.Settings(**p.settings),
                                        p.iterations, p.repeats, threads=snakemake.threads,
                                        **p.phantom, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def ch6_peer_cell(snakemake, log):
    p = snakemake.params
    cell = tv_experiments.peer_cell(p.size, p.weights, tv_experiments.Settings(**p.settings),
                                    **p.phantom, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def ch6_gpu_cell(snakemake, log):
    p = snakemake.params
    cell = tv_experiments.gpu_cell(p.sizes, p.tiles, tv_experiments.Settings(**p.settings),
                                   repeats=p.repeats, every=p.every, check_size=p.check_size,
                                   check_iterations=p.check_iterations, **p.phantom,
                                   log=log)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def ch5_gpu_cell(snakemake, log):
    p = snakemake.params
    cell = tv_experiments.ch5_cell(p.sizes_3d, p.sizes_2d, p.tiles, p.carveouts,
                                   repeats=p.repeats, seed=p.seed, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def ch7_search_cell(snakemake, log):
    p = snakemake.params
    kw = {"segments": p.segments, "exhaust_band": p.exhaust_band, "backend": p.backend,
          "log": log}  # fmt: skip
    planted, meta = mddtw_experiments.planted_cell(p.widths, p.length, p.m, p.seeds, p.search,
                                                   **kw)  # fmt: skip
    activity, meta2 = mddtw_experiments.activity_cell(
        p.m, p.search, seed=p.seed, rare=p.rare, rare_count=p.rare_count,
        queries_per_label=p.queries_per_label, normalise=p.normalise,
        orientations=p.orientations, orientation_queries=p.orientation_queries, **kw)  # fmt: skip
    meta["aeon"] = meta2.get("aeon")
    save_cell(snakemake, log, {**planted, **activity}, meta, CLAIM)


def ch7_timing_cell(snakemake, log):
    p = snakemake.params
    cell = mddtw_experiments.timing_cell(p.widths, p.lengths, p.queries, p.sf, p.nr,
                                         p.cpu_pairs, p.cpu_max_length, p.repeats, seed=p.seed,
                                         p=p.p, log=log)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def ch7_best_cpu_cell(snakemake, log):
    p = snakemake.params
    cell = mddtw_experiments.best_cpu_cell(p.cases, p.queries, p.sf, p.nr, p.p, p.cpu_pairs,
                                           p.repeats, seed=p.seed, threads=snakemake.threads,
                                           log=log)  # fmt: skip
    save_cell(snakemake, log, *cell)


def ch7_choices_cell(snakemake, log):
    p = snakemake.params
    cell = mddtw_experiments.choices_cell(p.m, p.search, p.choices, p.queries, seed=p.seed,
                                          log=log)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


JOBS = {
    "moazeni2013_ch7_search_cell": ch7_search_cell,
    "moazeni2013_ch7_choices_cell": ch7_choices_cell,
    "moazeni2013_ch7_timing_cell": ch7_timing_cell,
    "moazeni2013_ch7_best_cpu_cell": ch7_best_cpu_cell,
    "moazeni2013_ch6_cpu_cell": ch6_cpu_cell,
    "moazeni2013_ch6_native_cell": ch6_native_cell,
    "moazeni2013_ch6_peer_cell": ch6_peer_cell,
    "moazeni2013_ch6_best_cpu_cell": ch6_best_cpu_cell,
    "moazeni2013_ch6_gpu_cell": ch6_gpu_cell,
    "moazeni2013_ch5_gpu_cell": ch5_gpu_cell,
    "moazeni2013_ch4_cpu_cell": ch4_cell,
    "moazeni2013_ch4_gpu_cell": ch4_cell,
    "moazeni2013_ch4_best_cpu_cell": ch4_best_cpu_cell,
    "moazeni2013_ch3_order_cell": order_cell,
    "moazeni2013_ch3_native_cell": native_cell,
    "moazeni2013_ch3_best_cpu_cell": best_cpu_cell,
    "moazeni2013_ch3_gpu_cell": gpu_cell,
    "moazeni2013_ch3_fig12_cell": fig12_cell,
}


run(JOBS[RULE], snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
