"""Das et al. (2014) in two regimes of the filter's process noise: does
systematic resampling degenerate, and does D3 repair it?

The paper's filter propagates its particles through eqs. 11-12 without a
noise term (§2 step 1, §4.1 step 1), and its Figs 3 and 5 describe what that
does to the SIR filter: the error grows after t = 200 s and "the first 50
particles" carry the posterior, spread O(1e-3). The project's first runs
gave the filter the truth's own process noise (sigma = 0.005 m/s a step), a
linear-Gaussian filter that sits on the Kalman floor. A **regime** is the
filter's process noise (``UuvModel.filter_process_sd``); the truth is the
same in every regime (``process_sd``), and so are the trajectories and the
runs' seeds (common random numbers: trajectory j and run seed s(N, j) of
``experiments``), so every comparison between filters or regimes is paired
by trajectory.

* :func:`regime_cell`: one run of one filter in one regime on trajectory j:
  RMSE and bias per component over the run, the squared error per component
  in bins of ``bin_seconds`` (error against time), and the particles right
  after the resampling at the snapshot time: distinct particles, standard
  deviation and range per component;
* :func:`summary`: per (regime, filter, N) the means over the trajectories,
  with Student-t intervals (``LEVEL``) of the RMSE's norm, of each bias and
  of the distinct particles and spread at the snapshot, and the **paired**
  difference of the RMSE's norm against the systematic filter of the same
  regime (per trajectory, then its mean and interval);
* :func:`error_vs_time`: per (regime, filter, N, bin) the RMSE over the
  trajectories of the bin's errors (the figure of error against time);
* :func:`tables`: the four tables of the pipeline's target
  (results/tables/d3_2014/regimes/, workflow/rules/d3_2014/outputs.smk).
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pandas as pd

from pfresample.filters.d3 import velocity_errors

from .experiments import run_d3, run_seed, snapshot_summary

LEVEL = 0.99  # the project's intervals (constants.CONFIDENCE_LEVEL), here Student-t
REFERENCE = "systematic"  # the filter every other is paired against


def regime_model(model, filter_process_sd):
    """``model`` with the filter's process noise of a regime (None: the truth's)."""
    return dataclasses.replace(model, filter_process_sd=filter_process_sd)


def _options(spec: dict) -> dict:
    keys = ("method", "noise", "cdf", "threads", "threads_scope", "components", "impl")
    return {k: spec[k] for k in keys if k in spec}


def regime_cell(model, traj, regime: str, filter_process_sd, label: str, spec: dict, n: int,
                j: int, *, seed: int, snapshot_step: int, bin_seconds: float = 1.0,
                backend: str = "cpu") -> tuple[dict, dict]:  # fmt: skip
    """One run of filter ``label`` (``spec``: run_d3's method options) with N
    particles on trajectory j (``traj``: truth and readings) in the regime
    whose filter process noise is ``filter_process_sd``. Returns (arrays,
    metadata)."""
    m = regime_model(model, filter_process_sd)
    y, truth = traj["y"], traj["truth"]
    s = run_seed(seed, n, j, 0)
    start = time.perf_counter()
    run = run_d3(m, y, n, s, snapshot_step=snapshot_step, backend=backend, **_options(spec))
    elapsed = time.perf_counter() - start
    err = np.asarray(run.estimates, dtype=np.float64) - truth[1:]
    rmse, bias = velocity_errors(run.estimates, truth[1:])
    per_bin = max(1, int(round(bin_seconds / m.dt)))
    bins = err.shape[0] // per_bin
    sq = (err[: bins * per_bin] ** 2).reshape(bins, per_bin, 2).mean(axis=1)
    arrays = {"rmse": rmse, "bias": bias, "bin_mse": sq, "seconds": np.float64(elapsed),
              "seed": np.uint64(s)}  # fmt: skip
    snap = snapshot_summary(run.snapshot, 0)
    arrays |= {k: snap[k] for k in ("snapshot_distinct", "snapshot_std", "snapshot_range")}
    metadata = {"study": "d3_2014", "experiment": "regime", "regime": regime,
                "filter_process_sd": filter_process_sd, "truth_process_sd": model.process_sd,
                "filter": label, **_options(spec), "n": int(n), "trajectory": int(j),
                "seed": int(seed), "steps": int(y.shape[0]), "dt": float(m.dt),
                "bin_seconds": per_bin * m.dt, "snapshot_step": int(snapshot_step),
                "backend": run.backend}  # fmt: skip
    return arrays, metadata


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom, by
    bisection on its CDF (the density integrated by Simpson's rule from 0)."""
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def density(t: float) -> float:
        return math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df))

    def cdf(t: float) -> float:  # t >= 0
        steps = 2000
        h = t / steps
        s = density(0.0) + density(t)
        s += sum((4 if k % 2 else 2) * density(k * h) for k in range(1, steps))
        return 0.5 + s * h / 3

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def t_interval(values, level: float = LEVEL) -> tuple[float, float]:
    """(mean, half width) of the Student-t interval of the mean of ``values``
    (NaN half width for fewer than two)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        return (float(x.mean()) if x.size else math.nan), math.nan
    q = t_quantile(0.5 + level / 2, x.size - 1)
    return float(x.mean()), float(q * x.std(ddof=1) / math.sqrt(x.size))


def cell_frame(cells) -> pd.DataFrame:
    """One row per cell: regime, filter, N, trajectory, RMSE and bias per
    component, the RMSE's norm, the snapshot's distinct particles, std and
    range per component, seconds."""
    rows = []
    for arrays, meta in cells:
        rmse, bias = np.asarray(arrays["rmse"]), np.asarray(arrays["bias"])
        distinct = np.asarray(arrays["snapshot_distinct"])
        std, span = np.asarray(arrays["snapshot_std"]), np.asarray(arrays["snapshot_range"])
        rows.append({
            "regime": meta["regime"], "filter_process_sd": meta["filter_process_sd"],
            "filter": meta["filter"], "n": int(meta["n"]), "trajectory": int(meta["trajectory"]),
            "rmse_x": rmse[0], "rmse_y": rmse[1], "rmse_norm": math.hypot(*rmse),
            "bias_x": bias[0], "bias_y": bias[1], "distinct": int(distinct[2]),
            "std_x": std[0], "std_y": std[1], "range_x": span[0], "range_y": span[1],
            "seconds": float(arrays["seconds"]), "backend": meta["backend"],
        })  # fmt: skip
    return pd.DataFrame(rows)


def summary(cells, order=None, level: float = LEVEL) -> pd.DataFrame:
    """Per (regime, filter, N): the trajectories' count, the mean and the
    interval half width (``_ci``) of the RMSE per component and its norm,
    of the bias per component, of the distinct particles and the std per
    component at the snapshot; and the paired difference of the RMSE's norm
    against ``REFERENCE`` in the same regime and N (``d_rmse_norm``, its
    ``_ci``), over the trajectories both ran."""
    frame = cell_frame(cells)
    rows = []
    for (regime, label, n), part in frame.groupby(["regime", "filter", "n"], sort=False):
        row = {"regime": regime, "filter_process_sd": part["filter_process_sd"].iloc[0],
               "filter": label, "n": n, "trajectories": len(part)}  # fmt: skip
        for col in ("rmse_x", "rmse_y", "rmse_norm", "bias_x", "bias_y", "distinct", "std_x",
                    "std_y", "range_x", "range_y", "seconds"):  # fmt: skip
            row[col], row[f"{col}_ci"] = t_interval(part[col], level)
        ref = frame[(frame["regime"] == regime) & (frame["filter"] == REFERENCE)
                    & (frame["n"] == n)].set_index("trajectory")["rmse_norm"]  # fmt: skip
        mine = part.set_index("trajectory")["rmse_norm"]
        both = mine.index.intersection(ref.index)
        diff = (mine[both] - ref[both]).to_numpy()
        row["d_rmse_norm"], row["d_rmse_norm_ci"] = t_interval(diff, level)
        row["paired_trajectories"] = len(both)
        rows.append(row)
    out = pd.DataFrame(rows)
    out["level"] = level
    if order is not None:
        rank = {f: i for i, f in enumerate(order)}
        out = out.sort_values(["regime", "n"], kind="stable")
        out["_rank"] = out["filter"].map(rank)
        out = out.sort_values(["regime", "n", "_rank"], kind="stable").drop(columns="_rank")
    return out.reset_index(drop=True)


def regime_pairs(cells, level: float = LEVEL) -> pd.DataFrame:
    """Per (filter, N) present in two regimes: the paired difference of the
    RMSE's norm, second regime minus first (the regimes in their order of
    appearance), over the trajectories both ran."""
    frame = cell_frame(cells)
    regimes = list(dict.fromkeys(frame["regime"]))
    rows = []
    for a_i, a in enumerate(regimes):
        for b in regimes[a_i + 1 :]:
            for (label, n), part in frame.groupby(["filter", "n"], sort=False):
                pa = part[part["regime"] == a].set_index("trajectory")["rmse_norm"]
                pb = part[part["regime"] == b].set_index("trajectory")["rmse_norm"]
                both = pa.index.intersection(pb.index)
                if len(both) == 0:
                    continue
                mean, ci = t_interval((pb[both] - pa[both]).to_numpy(), level)
                rows.append({"filter": label, "n": n, "regime_a": a, "regime_b": b,
                             "d_rmse_norm_b_minus_a": mean, "ci": ci,
                             "trajectories": len(both), "level": level})  # fmt: skip
    return pd.DataFrame(rows)


def error_vs_time(cells) -> pd.DataFrame:
    """Per (regime, filter, N, time bin): the RMSE per component over the
    trajectories of the bin's squared errors (sqrt of their mean), and the
    bin's end time."""
    groups: dict = {}
    for arrays, meta in cells:
        key = (meta["regime"], meta["filter"], int(meta["n"]), float(meta["bin_seconds"]))
        groups.setdefault(key, []).append(np.asarray(arrays["bin_mse"]))
    rows = []
    for (regime, label, n, width), mses in groups.items():
        mse = np.mean(mses, axis=0)
        for b in range(mse.shape[0]):
            rows.append({"regime": regime, "filter": label, "n": n, "t": (b + 1) * width,
                         "rmse_x": math.sqrt(mse[b, 0]), "rmse_y": math.sqrt(mse[b, 1]),
                         "trajectories": len(mses)})  # fmt: skip
    return pd.DataFrame(rows)


def tables(cells, order=None, level: float = LEVEL) -> dict[str, pd.DataFrame]:
    """The experiment's tables from its ``cells`` ((arrays, metadata) in the
    order of their runs): ``cells`` (:func:`cell_frame`), ``summary`` (its
    filters ranked by ``order``), ``regime_pairs`` and ``error_vs_time``."""
    return {
        "cells": cell_frame(cells),
        "summary": summary(cells, order=order, level=level),
        "regime_pairs": regime_pairs(cells, level=level),
        "error_vs_time": error_vs_time(cells),
    }
