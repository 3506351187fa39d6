"""Güldaş (2015) on one GPU: float32 stability of the log-domain scan at the thesis's N and
Fig 4.12's SMC-EM at the thesis's N. The pipeline's rule ``guldas2015_gpu_runs`` runs it
(:func:`run`) where the cells have a GPU; without one the rule draws the same files from
the committed run (``pipeline.gpu_runs``).

**log32** (``log32_gpu/runs.csv``): standard multinomial and systematic on the float32
log-domain scan of Appendix A (precision ``log32``) beside our float32 and float64 scans and
float32 butterfly multinomial (default radix), on Figs 4.5-4.8's particle-weight sets: LMSE
(eq. 4.6) over ``guldas2015_gpu_log32_replicates`` sets with its 99 % interval, the paired
difference to float64 on the same sets, and the median time of a call (CUDA events, 21 calls
after a warm-up), at N = 2^``guldas2015_gpu_log32_log2_n``.

**smcem** (``smcem_gpu/``): the study's SMC-EM cells (``filter_experiments.smcem_cell``, the
bootstrap filter: the adaptive filter has no GPU code; from each start of
``guldas2015_gpu_smcem_starts``, the ML point by default) at N =
2^``guldas2015_gpu_smcem_log2_n`` on a reference cell (the committed CPU run's
``smcem_cpu/reference_smcem.npz``: ML points and exact EM, so that the device spends no time
on the ML search), ``guldas2015_gpu_smcem_iterations`` EM iterations; then Fig 4.12's table of
them (``fig4_12.csv``) and the per-iteration mean squared Monte Carlo error
(``mc_trace.csv``). A cell is saved per N, so a run stopped by a timeout keeps its finished
N and the next run goes on from there.

Neither section starts a new N after ``guldas2015_gpu_runs_deadline_s`` seconds of the run
(null: no deadline); an N of SMC-EM not run is then the committed run's, and ``log32`` is
this run's only where it finished its first N.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from pfresample.metrics import confidence_interval
from pfresample.models.volatility import ALPHA, SIGMA
from pfresample_studies.guldas2015 import catalog, experiments, filter_experiments, tables
from pfresample_studies.pipeline import artifacts

SECTIONS = ("log32", "smcem")
LOG32 = "log32_gpu/runs.csv"
SMCEM_TABLES = ("smcem_gpu/fig4_12.csv", "smcem_gpu/mc_trace.csv")
SMCEM_FILTERS = ("bootstrap",)  # the GPU's SMC-EM filter


def smcem_cell_name(log2_n: int) -> str:
    return f"smcem_gpu/smcem_n{2**log2_n}.npz"


def names(cfg) -> tuple[str, ...]:
    """The files the experiment writes (paths under its folder), section by section."""
    cells = tuple(smcem_cell_name(e) for e in cfg["guldas2015_gpu_smcem_log2_n"])
    return (LOG32, *SMCEM_TABLES, *cells)


def _past(cfg, started: float) -> bool:
    """Whether ``guldas2015_gpu_runs_deadline_s`` has passed since ``started``."""
    deadline = cfg["guldas2015_gpu_runs_deadline_s"]
    return deadline is not None and time.perf_counter() - started > deadline


def log32(cfg, backend: str = "cuda", log=print, started=None) -> pd.DataFrame:
    """The log32 section's rows (``log32_gpu/runs.csv``), N by N until the deadline."""
    started = time.perf_counter() if started is None else started
    seed, replicates = cfg["seed"], cfg["guldas2015_gpu_log32_replicates"]
    targets = catalog.targets(cfg)
    rows = []
    for name in ("gaussian", "poisson"):
        target = targets[name]
        for e in cfg["guldas2015_gpu_log32_log2_n"]:
            if _past(cfg, started):
                log(f"deadline: log32 stops before {name} 2^{e}")
                return pd.DataFrame(rows)
            n, begun = 2**e, time.perf_counter()
            arms = [experiments.Arm(m, p) for m in ("multinomial", "systematic")
                    for p in ("float32", experiments.LOG32, "float64")]  # fmt: skip
            arms.append(experiments.Arm("butterfly-multinomial", "float32", None))
            stream = experiments.stream_of(f"log32-{name}", n)
            w = experiments.timing_weights(target, n, "float32", seed=seed, stream=stream,
                                           backend=backend)  # fmt: skip
            times = [experiments.time_arm(w, arm, seed=seed, backend=backend, repeats=21)
                     for arm in arms]  # fmt: skip
            _, local = experiments.replicate_errors(
                target, n, arms, replicates=replicates, seed=seed, stream=stream,
                backend=backend,
            )  # fmt: skip
            base = {a.method: local[k] for k, a in enumerate(arms) if a.precision == "float64"}
            for k, arm in enumerate(arms):
                lmse, half = confidence_interval(local[k] ** 2)
                row = {"target": name, "n": n, "particle_sets": replicates,
                       "method": arm.method, "precision": arm.precision, "lmse": lmse,
                       "lmse_ci": half, "time_ms": times[k],
                       "device": experiments.device_name(backend)}  # fmt: skip
                if arm.method in base:
                    d, dh = confidence_interval(local[k] ** 2 - base[arm.method] ** 2)
                    row |= {"diff_vs_float64": d, "diff_vs_float64_ci": dh}
                rows.append(row)
            log(f"log32 {name} 2^{e}: {time.perf_counter() - begun:.1f} s")
    return pd.DataFrame(rows)


def smcem(cfg, reference, out, backend: str = "cuda", log=print, started=None) -> list:
    """The SMC-EM cells at each N until the deadline (a cell ``out`` holds already is kept),
    Fig 4.12's table and the Monte Carlo trace of them, under ``out``; returns the cells,
    the reference first (the reference alone where the deadline left no N)."""
    started = time.perf_counter() if started is None else started
    out = Path(out)
    ref = artifacts.load_npz(reference)
    iterations = cfg["guldas2015_gpu_smcem_iterations"]
    cells = [ref]
    for e in cfg["guldas2015_gpu_smcem_log2_n"]:
        path = out / Path(smcem_cell_name(e)).name
        if not path.exists():
            if _past(cfg, started):
                log(f"deadline: smcem stops before N = 2^{e}")
                break
            begun = time.perf_counter()
            cell = filter_experiments.smcem_cell(
                2**e, ref, iterations=iterations, seed=ref[1]["seed"],
                filters=list(SMCEM_FILTERS), starts=list(cfg["guldas2015_gpu_smcem_starts"]),
                backend=backend,
            )  # fmt: skip
            artifacts.save_npz(path, *cell)
            log(f"smcem N = 2^{e}: {time.perf_counter() - begun:.0f} s on {cell[1]['device']}")
        cells.append(artifacts.load_npz(path))
    if len(cells) == 1:
        return cells
    tables.smcem_table(cells, ALPHA, SIGMA).to_csv(out / "fig4_12.csv", index=False,
                                                   float_format="%.6g")  # fmt: skip
    trace = []
    r = cells[0][0]
    for arrays, meta in cells[1:]:
        for a, arm in enumerate(meta["arms"]):
            for j, start in enumerate(meta["starts"]):
                k = cells[0][1]["starts"].index(start)
                for name in ("alpha", "sigma"):
                    iterates = arrays[name][a, j]  # (M, iterations + 1)
                    d2 = (iterates - r[name][k][:, : iterates.shape[1]]) ** 2
                    for i in range(d2.shape[1]):
                        trace.append({"n": meta["n"], **arm, "start": start, "parameter": name,
                                      "iteration": i, "mc_mse": d2[:, i].mean()})  # fmt: skip
    pd.DataFrame(trace).to_csv(out / "mc_trace.csv", index=False, float_format="%.6g")
    return cells


def run(cfg, reference, out, log=print, backend: str = "cuda") -> set[str]:
    """The sections of ``guldas2015_gpu_runs_sections`` on the GPU (``backend``), into
    ``out`` (SMC-EM on the reference cell ``reference``); returns the files (:func:`names`)
    written."""
    out, started = Path(out), time.perf_counter()
    produced = set()
    sections = cfg["guldas2015_gpu_runs_sections"]
    if "log32" in sections:
        frame = log32(cfg, backend, log=log, started=started)
        if len(frame):
            (out / LOG32).parent.mkdir(parents=True, exist_ok=True)
            frame.to_csv(out / LOG32, index=False, float_format="%.6g")
            produced.add(LOG32)
    if "smcem" in sections:
        (out / "smcem_gpu").mkdir(parents=True, exist_ok=True)
        cells = smcem(cfg, reference, out / "smcem_gpu", backend, log=log, started=started)
        if len(cells) > 1:
            produced.update(SMCEM_TABLES)
            ns = {meta["n"] for _, meta in cells[1:]}
            produced.update(smcem_cell_name(e) for e in cfg["guldas2015_gpu_smcem_log2_n"]
                            if 2**e in ns)  # fmt: skip
    return produced
