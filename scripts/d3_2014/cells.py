"""Snakemake glue of Das, Mazumdar & Banerjee (2014) (workflow/rules/d3_2014/cells.smk):
one function per rule, chosen by the rule's name. Each reads its inputs, calls the
study (pfresample_studies.d3_2014) and writes its .npz atomically.

* d3_2014_trajectory: results/d3_2014/trajectories/t{d3_j}.npz;
* d3_2014_filter_cell, _timing_cell, _gpu_cell, _fig11_cell, _regime_cell:
  results/d3_2014/{filter,timing,gpu,fig11,regimes}/**.npz;
* d3_2014_best_cpu_cell: results/d3_2014/best_cpu/n{n}.npz (on the job's threads);
* d3_2014_threshold_cell, _threshold_gamma_cell: results/d3_2014/thresholds/*.npz.
"""

import os

from pfresample import backend
from pfresample_studies.d3_2014 import catalog, experiments, regimes, thresholds
from pfresample_studies.pipeline import devices
from pfresample_studies.pipeline.jobs import run, save_cell

RULE = snakemake.rule  # noqa: F821 -- `snakemake` is injected by Snakemake
CLAIM = None
WILDCARDS = snakemake.wildcards  # noqa: F821
if RULE == "d3_2014_gpu_cell" or (RULE == "d3_2014_filter_cell" and WILDCARDS.d3_where == "gpu"):
    # A GPU job takes one free GPU for itself before CUDA starts (pipeline.devices).
    CLAIM = devices.pin_job(snakemake.params.devices)  # noqa: F821
    backend.cuda_device()


def _model(p, window: bool = False):
    """The rule's model; with ``window``, over the timing window alone."""
    m = catalog.model({"d3_2014_model": p.model, "d3_2014_duration": p.duration})
    return catalog.truncated(m, p.timing_duration) if window else m


def trajectory(snakemake, log):
    p, j = snakemake.params, int(snakemake.wildcards.d3_j)
    arrays, metadata = experiments.trajectory(_model(p), p.seed, j)
    save_cell(snakemake, log, arrays, metadata, CLAIM)
    log.info("trajectory %d: %d steps, Kalman RMSE %s", j, metadata["steps"], arrays["kf_rmse"])


def filter_cell(snakemake, log):
    w, p = snakemake.wildcards, snakemake.params
    traj = experiments.load_trajectory(snakemake.input.trajectory)
    cell = experiments.filter_cell(
        _model(p), traj, w.d3_filter, p.spec, int(w.n), int(w.d3_j), int(w.d3_r),
        backend=p.backend, snapshot_step=p.snapshot_step,
        snapshot_particles=p.snapshot_particles, estimate_every=p.estimate_every, log=log,
        **p.cell,
    )  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def timing_cell(snakemake, log):
    w, p = snakemake.wildcards, snakemake.params
    traj = experiments.load_trajectory(snakemake.input.trajectory)
    cell = experiments.timing_cell(_model(p, window=True), traj, w.d3_filter, p.spec, int(w.n),
                                   log=log, **p.cell)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def gpu_cell(snakemake, log):
    w, p = snakemake.wildcards, snakemake.params
    traj = experiments.load_trajectory(snakemake.input.trajectory)
    model = _model(p, window=not p.full)
    window = catalog.timing_model(
        {
            "d3_2014_model": p.model,
            "d3_2014_duration": p.duration,
            "d3_2014_timing_duration": p.timing_duration,
        }
    ).steps
    cell = experiments.gpu_cell(model, traj, p.spec, int(w.n), p.threads, algorithm=w.d3_algo,
                                window_steps=window, log=log, **p.cell)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def best_cpu_cell(snakemake, log):
    p = snakemake.params
    threads = int(snakemake.threads)  # the cores Snakemake gave the job (<= --cores)
    if threads < p.threads:
        log.warning("d3_2014_best_cpu_threads asks for %d threads; the job got %d (--cores)",
                    p.threads, threads)  # fmt: skip
    # Before the compiled library loads libgomp, which reads it once: the job holds its
    # cores, so the threads spin at the step's barriers (bench/d3_best_cpu.py's default).
    os.environ.setdefault("OMP_WAIT_POLICY", "ACTIVE")
    traj = experiments.load_trajectory(snakemake.input.trajectory)
    arrays, metadata = experiments.best_cpu_cell(
        _model(p, window=True), traj, p.specs, int(snakemake.wildcards.n), threads=threads,
        repeats=p.repeats, log=log, seed=p.cell["seed"],
    )  # fmt: skip
    metadata["threads_asked"] = int(p.threads)
    save_cell(snakemake, log, arrays, metadata, CLAIM)


def fig11_cell(snakemake, log):
    w, p = snakemake.wildcards, snakemake.params
    traj = experiments.load_trajectory(snakemake.input.trajectory)
    cell = experiments.fig11_cell(_model(p), traj, p.spec, int(w.n), p.step,
                                  seed=p.cell["seed"], log=log)  # fmt: skip
    save_cell(snakemake, log, *cell, CLAIM)


def regime_cell(snakemake, log):
    w, p = snakemake.wildcards, snakemake.params
    model = catalog.truncated(_model(p), p.regime_duration)
    traj = experiments.first_steps(experiments.load_trajectory(snakemake.input.trajectory),
                                   model.steps)  # fmt: skip
    arrays, metadata = regimes.regime_cell(
        model, traj, w.d3_regime, p.filter_process_sd, w.d3_regime_filter, p.spec, int(w.n),
        int(w.d3_j), seed=p.seed, snapshot_step=p.snapshot_step, bin_seconds=p.bin_seconds,
    )  # fmt: skip
    metadata["device"] = experiments.device_name("cpu")
    save_cell(snakemake, log, arrays, metadata, CLAIM)
    log.info("RMSE %s in %.1f s", arrays["rmse"], float(arrays["seconds"]))


def threshold_cell(snakemake, log):
    w, p = snakemake.wildcards, snakemake.params
    traj = experiments.load_trajectory(snakemake.input.trajectory)
    arrays, metadata = thresholds.step_cell(
        _model(p), traj, w.d3_regime, p.filter_process_sd, p.spec, int(p.n), int(p.step),
        seed=p.seed, draws=int(p.draws),
    )  # fmt: skip
    save_cell(snakemake, log, arrays, metadata, CLAIM)
    log.info("%s: iterations %.1f (printed thresholds) against %.1f (systematic)",
             metadata["weights"], float(arrays["mean_iterations_paper_thresholds"]),
             float(arrays["mean_iterations_local"]))  # fmt: skip


def threshold_gamma_cell(snakemake, log):
    p = snakemake.params
    arrays, metadata = thresholds.gamma_cell(int(p.n), draws=int(p.draws))
    save_cell(snakemake, log, arrays, metadata, CLAIM)


def job(rule: str):
    return {
        "d3_2014_trajectory": trajectory,
        "d3_2014_filter_cell": filter_cell,
        "d3_2014_timing_cell": timing_cell,
        "d3_2014_gpu_cell": gpu_cell,
        "d3_2014_best_cpu_cell": best_cpu_cell,
        "d3_2014_fig11_cell": fig11_cell,
        "d3_2014_regime_cell": regime_cell,
        "d3_2014_threshold_cell": threshold_cell,
        "d3_2014_threshold_gamma_cell": threshold_gamma_cell,
    }[rule]


run(job(RULE), snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
