"""Güldaş (2015) §4.1.4 on the CPU: is standard resampling "numerically
unstable" in float32 on the thesis's own kernel, the log-domain scan of
Appendix A (precision "log32", ``pfresample.resampling.log_scan``)? (issue 40;
docs/guldas2015.md, "float32 stability, on the thesis's kernel").

Two measurements on the particle-weight sets of Figs 4.5-4.8 (``catalog.targets``:
x ~ U[-sigma, sigma] with g = exp(-x^2 / 2 sigma^2), and x ~ Poisson(lambda)
with g = lambda^x / x!), each a cell per (set, N) and a table:

* :func:`exact_cell`, no draws. A prefix sum r (count * C / C_N) defines the
  distribution multinomial resampling draws from, p'_i = (r_i - r_{i-1}) / N;
  the exact one is p_i = w_i / sum w. Per particle set and kernel (KERNELS:
  the log-domain scan at the thesis's level, the raw log g, and at level 0,
  our tiled float32 scan, float64): the exact LMSE (eq. 4.6) of multinomial
  resampling from p', Var_p'(x) / N + b^2, where b = sum (p'_i - p_i) x_i is
  the bias of the resampled mean against the set's importance-sampling
  estimate, b^2 and the total-variation distance. :func:`exact_table`
  averages them over the sets of each N (99 % intervals over the sets).
* :func:`draws_cell`: the study's ``replicate_errors`` (LE of eq. 4.3) for
  multinomial and systematic in float32, log32 and float64 on T particle
  sets; :func:`draws_table`: the LMSE with its interval and the paired
  difference to float64 on the same sets, the measured instability.

The particle sets of an exact cell at N = 2^e come from ``default_rng([seed, e,
len(name)])`` (name: the set's key, gaussian or poisson; as the former
bench/guldas_log32.py drew them, whose committed tables the pipeline reproduces),
those of a draws cell from the study's stream ``log32-{name}`` at N.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from pfresample.metrics import confidence_interval
from pfresample.resampling import log_scan
from pfresample.resampling.cumulative import scaled_prefix_sum
from pfresample.timing import cpu_name

from . import experiments

KERNELS = ("log32-thesis-level", "log32-level-0", "float32-tiled", "float64")
DRAW_METHODS = ("multinomial", "systematic")
DRAW_PRECISIONS = ("float32", experiments.LOG32, "float64")


def exact_sets(n: int, weights: int, fewest: int, most: int) -> int:
    """Particle sets of an exact cell at N: ``weights // N``, within [fewest, most]."""
    return max(fewest, min(most, weights // n))


def ratios(kernel: str, lw: np.ndarray) -> np.ndarray:
    """r = N C / C_N of one set's raw log g by ``kernel``, float64."""
    n = lw.size
    w64 = np.exp(lw - lw.max())
    if kernel == "log32-thesis-level":
        return log_scan.ratios(log_scan.log_prefix_sum(lw.astype(np.float32)), n).astype(float)
    if kernel == "log32-level-0":
        values = log_scan.log_values(w64, 0.0)
        return log_scan.ratios(log_scan.log_prefix_sum(values), n).astype(float)
    if kernel == "float32-tiled":
        return scaled_prefix_sum(w64.astype(np.float32), np.dtype(np.float32), n)[0].astype(float)
    if kernel != "float64":
        raise ValueError(f"unknown kernel {kernel!r}; expected one of {KERNELS}")
    c = np.cumsum(w64)
    return n * c / c[-1]


def exact_cell(name: str, target, n: int, *, sets: int, seed: int, log=None):
    """One particle-weight set (``name``: its key in ``catalog.targets``,
    ``target``: the set) at N = 2^e, the exact measurement: per kernel
    and particle set ``lmse``, ``bias2``, ``tv`` (kernels x sets), and
    ``level`` (sets: the largest raw log g, the thesis-level scan's level)."""
    e = int(n).bit_length() - 1
    if 2**e != n:
        raise ValueError(f"N must be a power of 2, got {n}")
    rng = np.random.default_rng([seed, e, len(name)])
    shape = (len(KERNELS), sets)
    lmse, bias2, tv = np.empty(shape), np.empty(shape), np.empty(shape)
    level = np.empty(sets)
    started = time.perf_counter()
    for s in range(sets):
        x = target.draw(rng, n).astype(np.float64)
        lw = target.log_g(x, np).astype(np.float64)
        w = np.exp(lw - lw.max())
        p = w / w.sum()
        importance = p @ x
        level[s] = lw.max()
        for k, kernel in enumerate(KERNELS):
            q = np.diff(np.concatenate([[0.0], ratios(kernel, lw)])) / n
            b = q @ x - importance
            var = q @ (x * x) - (q @ x) ** 2
            lmse[k, s], bias2[k, s] = var / n + b * b, b * b
            tv[k, s] = 0.5 * np.abs(q - p).sum()
    seconds = time.perf_counter() - started
    if log is not None:
        log.info("exact %s N = %d: %d sets in %.1f s", name, n, sets, seconds)
    arrays = {"lmse": lmse, "bias2": bias2, "tv": tv, "level": level, "seconds": seconds}
    metadata = {
        "experiment": "log32 exact", "study": "guldas2015", "target": name,
        "target_parameters": list(target.parameters), "n": int(n), "sets": int(sets),
        "kernels": list(KERNELS), "seed": int(seed), "backend": "cpu", "device": cpu_name(),
    }  # fmt: skip
    return arrays, metadata


def exact_table(cells) -> pd.DataFrame:
    """One row a (set, N, kernel) of the exact cells, in their order: the mean
    LMSE, its ratio to float64's with the 99 % interval over the sets, the mean
    b^2 and its share of the LMSE, the mean TV distance, and the level (the
    thesis-level scan's: the last set's largest log g; 0 for the others)."""
    rows = []
    for arrays, meta in cells:
        exact_lmse = arrays["lmse"][meta["kernels"].index("float64")]
        for k, kernel in enumerate(meta["kernels"]):
            lmse = arrays["lmse"][k]
            ratio, ratio_ci = confidence_interval(lmse / exact_lmse)
            rows.append({
                "target": meta["target"], "n": meta["n"], "sets": meta["sets"], "kernel": kernel,
                "lmse": lmse.mean(), "lmse_ratio_to_float64": ratio, "lmse_ratio_ci": ratio_ci,
                "bias2": arrays["bias2"][k].mean(),
                "bias2_share": np.mean(arrays["bias2"][k] / lmse),
                "tv_distance": arrays["tv"][k].mean(),
                "level": float(arrays["level"][-1]) if kernel == "log32-thesis-level" else 0.0,
            })  # fmt: skip
    return pd.DataFrame(rows)


def draw_arms() -> list[experiments.Arm]:
    return [experiments.Arm(m, p) for m in DRAW_METHODS for p in DRAW_PRECISIONS]


def draws_cell(name: str, target, n: int, *, replicates: int, seed: int, log=None):
    """One particle-weight set (as in :func:`exact_cell`) at N, the draws: ``local`` (arms x
    replicates), LE of eq. 4.3 of every arm of :func:`draw_arms` on the same
    particle sets, on the CPU."""
    arms = draw_arms()
    started = time.perf_counter()
    _, local = experiments.replicate_errors(
        target, n, arms, replicates=replicates, seed=seed,
        stream=experiments.stream_of(f"log32-{name}", n), backend="cpu", log=log,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if log is not None:
        log.info("draws %s N = %d: %d sets in %.1f s", name, n, replicates, seconds)
    arrays = {"local": local, "seconds": seconds}
    metadata = {
        "experiment": "log32 draws", "study": "guldas2015", "target": name,
        "target_parameters": list(target.parameters), "n": int(n),
        "replicates": int(replicates),
        "arms": [{"method": a.method, "precision": a.precision} for a in arms],
        "seed": int(seed), "backend": "cpu", "device": cpu_name(),
    }  # fmt: skip
    return arrays, metadata


def draws_table(cells) -> pd.DataFrame:
    """One row a (set, N, method, precision) of the draws cells, in their
    order: the LMSE with its 99 % interval and the paired difference to the
    same method's float64 on the same particle sets, with its interval."""
    rows = []
    for arrays, meta in cells:
        local, arms = arrays["local"], meta["arms"]
        base = {a["method"]: local[k] for k, a in enumerate(arms) if a["precision"] == "float64"}
        for k, arm in enumerate(arms):
            lmse, half = confidence_interval(local[k] ** 2)
            diff, diff_half = confidence_interval(local[k] ** 2 - base[arm["method"]] ** 2)
            rows.append({
                "target": meta["target"], "n": meta["n"], "particle_sets": meta["replicates"],
                "method": arm["method"], "precision": arm["precision"], "lmse": lmse,
                "lmse_ci": half, "diff_vs_float64": diff, "diff_vs_float64_ci": diff_half,
            })  # fmt: skip
    return pd.DataFrame(rows)


def tables(exact_cells, draws_cells) -> dict[str, pd.DataFrame]:
    """The experiment's two tables (results/tables/guldas2015/log32/)."""
    return {"exact": exact_table(exact_cells), "draws": draws_table(draws_cells)}
