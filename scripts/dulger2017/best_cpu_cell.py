"""Snakemake entry point: Fig 6.23's best-CPU cell results/filter_best_cpu/{sfigure}.npz;
pfresample_studies.dulger2017.best_cpu.measure_cell does the work."""

from pfresample_studies.dulger2017 import best_cpu
from pfresample_studies.dulger2017.trajectories import load_trajectories
from pfresample_studies.pipeline.jobs import run, save_cell


def main(snakemake, log):
    p = snakemake.params
    trajectories, _ = load_trajectories(snakemake.input.trajectories)
    arrays, metadata = best_cpu.measure_cell(
        trajectories, p.n, p.numpy_n, threads=p.threads, repeats=p.repeats,
        numpy_repeats=p.numpy_repeats, warmup=p.warmup, seed=p.seed, model=p.spec["model"],
    )  # fmt: skip
    if metadata["best_cpu_error"]:
        log.warning("best CPU code not measured: %s", metadata["best_cpu_error"])
    for i, n in enumerate(arrays["n"]):
        log.info("N = %d: Systematic %.4f s, Uphill %.4f s on %d thread(s); NumPy %.4f s",
                 n, arrays["systematic_s"][i], arrays["uphill_s"][i], p.threads,
                 arrays["numpy_s"][i])  # fmt: skip
    save_cell(snakemake, log, arrays, metadata)


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
