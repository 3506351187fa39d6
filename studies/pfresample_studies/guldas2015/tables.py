"""Tidy tables of Figs 4.1-4.8 from the cells' (arrays, metadata): one row
per plotted point, with the statistic, its confidence interval (the
library's level, ``constants.CONFIDENCE_LEVEL``, normal approximation over
the T particle sets) and what it is compared against."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pfresample.constants import CONFIDENCE_LEVEL
from pfresample.metrics import confidence_interval

from .experiments import FAMILIES, parse_radix, radix_label
from .targets import Target


def _mean_ci(values) -> tuple[float, float]:
    """Mean and confidence half-width (NaN for a single value)."""
    values = np.asarray(values, dtype=np.float64)
    return confidence_interval(values) if values.size > 1 else (float(values[0]), np.nan)


def _mean_squares(errors, prefix: str) -> dict:
    """``{prefix}``, ``{prefix}_ci``, ``{prefix}_q10``, ``{prefix}_q90`` of the squared errors."""
    squared = np.asarray(errors, dtype=np.float64) ** 2
    mean, half = _mean_ci(squared)
    return {
        prefix: mean,
        f"{prefix}_ci": half,
        f"{prefix}_q10": float(np.quantile(squared, 0.1)),
        f"{prefix}_q90": float(np.quantile(squared, 0.9)),
    }


def log2_scale(n: int) -> float:
    """N / log2 N, the scale of Theorem 3.4 for radix 2 (N >= 2)."""
    return n / math.log2(n)


def histogram_table(cells) -> pd.DataFrame:
    """Fig 4.1: every particle set's error E (eq. 4.1) and local error LE
    (eq. 4.3) at the histogram N, and both scaled by sqrt(N / log2 N)."""
    frames = []
    for arrays, meta in cells:
        n, root = meta["n"], math.sqrt(log2_scale(meta["n"]))
        frames.append(
            pd.DataFrame(
                {
                    "n": n,
                    "particle_set": np.arange(arrays["errors"].size),
                    "error": arrays["errors"],
                    "local_error": arrays["local_errors"],
                    "scaled_error": arrays["errors"] * root,
                    "scaled_local_error": arrays["local_errors"] * root,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def radix2_table(cells, target: Target) -> pd.DataFrame:
    """Fig 4.2: per N, LMSE and MSE, raw and times N / log2 N, against the
    limit (1 - 1/2) Var_{pi_hat_0}(phi) of Theorem 3.4."""
    rows = []
    for arrays, meta in sorted(cells, key=lambda c: c[1]["n"]):
        n = meta["n"]
        row = {"n": n, "particle_sets": meta["replicates"], "scale": log2_scale(n)}
        row |= _mean_squares(arrays["local_errors"], "lmse")
        row |= _mean_squares(arrays["errors"], "mse")
        for stat in ("lmse", "mse"):
            row[f"{stat}_scaled"] = row[stat] * row["scale"]
            row[f"{stat}_scaled_ci"] = row[f"{stat}_ci"] * row["scale"]
        row["limit"] = target.theorem_3_4_limit(2)
        row["confidence_level"] = CONFIDENCE_LEVEL
        rows.append(row)
    return pd.DataFrame(rows)


def first_order_lmse(radix, n: int, variance: float) -> float:
    """sum_k (1 - 1/r_k) Var / N: Theorem 3.4's (1 - 1/r) Var log_r N / N for a
    fixed radix r, and Theorem 3.5's (2 - 1/r) Var / N for (r, N/r) as N/r
    grows; for other sequences, our first-order reading (one term per stage)."""
    return sum(1 - 1 / r for r in radix) * variance / n


def sweep_table(arrays, meta, radices, target: Target) -> pd.DataFrame:
    """Figs 4.3-4.4: LMSE and MSE of each radix sequence in ``radices``,
    with the 0.1 / 0.9 quantiles of the squared errors, and the first-order
    LMSE of :func:`first_order_lmse`."""
    labels = meta["radices"]
    n, variance = meta["n"], target.weighted_moments()[1]
    rows = []
    for radix in radices:
        k = labels.index(radix_label(radix))
        row = {"radix": radix_label(radix), "depth": len(radix), "n": n,
               "log2_first_radix": int(math.log2(radix[0])),
               "particle_sets": meta["replicates"]}  # fmt: skip
        row |= _mean_squares(arrays["local_errors"][k], "lmse")
        row |= _mean_squares(arrays["errors"][k], "mse")
        row["first_order_lmse"] = first_order_lmse(radix, n, variance)
        row["confidence_level"] = CONFIDENCE_LEVEL
        rows.append(row)
    return pd.DataFrame(rows)


# Candidates within this share of the fastest one's time are near-ties: the
# speed tables list the first-order factors among them (radix_tie_factors).
RADIX_NEAR_TIE = 0.05


def first_order_factor(radix, n: int) -> float:
    """The butterfly's first-order LMSE over standard multinomial's,
    sum_k (1 - 1/r_k) / (1 - 1/N) (:func:`first_order_lmse`; 1 for radix (N,))."""
    return sum(1 - 1 / r for r in radix) / (1 - 1 / n)


def _radix_ties(arrays, meta, method: str, precision: str) -> tuple[float, str]:
    """The chosen (fastest) radix's margin over the next-fastest candidate,
    (t_2 - t_1) / t_1, and the first-order factors of every candidate within
    RADIX_NEAR_TIE of the fastest (e.g. "1.50 1.95")."""
    timed = [(float(t), parse_radix(c["radix"]))
             for c, t in zip(meta["candidates"], arrays["candidate_time_ms"], strict=True)
             if c["method"] == method and c["precision"] == precision]  # fmt: skip
    timed.sort(key=lambda item: item[0])
    if not timed:
        return np.nan, ""
    fastest = timed[0][0]
    margin = (timed[1][0] - fastest) / fastest if len(timed) > 1 else np.nan
    ties = sorted({round(first_order_factor(r, meta["n"]), 2) for t, r in timed
                   if t <= fastest * (1 + RADIX_NEAR_TIE)})  # fmt: skip
    return margin, " ".join(f"{f:.2f}" for f in ties)


def speed_table(cells, family: str) -> pd.DataFrame:
    """Figs 4.5-4.8: per N and precision, the standard method of ``family``
    and its butterfly form: median time, LMSE (eq. 4.6, the thesis's
    quantity), MSE (eq. 4.5) beside it, and error x time for both (the
    thesis's "Monte Carlo error per computation time"); the butterfly's
    radix, depth and first-order factor (:func:`first_order_factor`), its
    margin over the next-fastest radix and the factors of the near-ties
    (:func:`_radix_ties`). Precision "log32" is the standard method on the
    thesis's float32 log-domain scan (Appendix A)."""
    methods = {family: "standard", FAMILIES[family]: "butterfly"}
    rows = []
    for arrays, meta in sorted(cells, key=lambda c: c[1]["n"]):
        for k, arm in enumerate(meta["arms"]):
            if arm["method"] not in methods:
                continue
            n = meta["n"]
            radix = parse_radix(arm["radix"]) or (n,)
            row = {"n": n, "precision": arm["precision"],
                   "scheme": methods[arm["method"]], "method": arm["method"],
                   "radix": arm["radix"], "depth": len(radix),
                   "first_order_factor": first_order_factor(radix, n),
                   "particle_sets": meta["replicates"],
                   "time_ms": float(arrays["time_ms"][k])}  # fmt: skip
            if methods[arm["method"]] == "butterfly":
                row["radix_margin"], row["radix_tie_factors"] = _radix_ties(
                    arrays, meta, arm["method"], arm["precision"]
                )
            row |= _mean_squares(arrays["local_errors"][k], "lmse")
            row |= _mean_squares(arrays["errors"][k], "mse")
            row["lmse_x_time"] = row["lmse"] * row["time_ms"]
            row["mse_x_time"] = row["mse"] * row["time_ms"]
            row["target"] = meta["target"]
            row["device"] = meta["device"]
            row["confidence_level"] = CONFIDENCE_LEVEL
            rows.append(row)
    return pd.DataFrame(rows)


def candidates_table(cells) -> pd.DataFrame:
    """Every radix sequence timed for §4.1.4's fastest-radix choice, with
    the chosen one marked."""
    rows = []
    for arrays, meta in cells:
        chosen = {(a["method"], a["precision"]): a["radix"] for a in meta["arms"]}
        for c, ms in zip(meta["candidates"], arrays["candidate_time_ms"], strict=True):
            rows.append({
                "target": meta["target"], "n": meta["n"], "method": c["method"],
                "precision": c["precision"], "radix": c["radix"],
                "depth": len(parse_radix(c["radix"])), "time_ms": float(ms),
                "chosen": chosen[(c["method"], c["precision"])] == c["radix"],
                "device": meta["device"],
            })  # fmt: skip
    return pd.DataFrame(rows).sort_values(["target", "n", "method", "precision", "time_ms"])


def filter_table(cells) -> pd.DataFrame:
    """Figs 4.9-4.10: per N and arm, the AMSE (§4.2.1: the mean over runs of
    each run's time-averaged squared error) with its interval, the median
    run time, AMSE x time and the mean interaction level. Columns as
    :func:`speed_table`'s (``mse`` holds the AMSE) so that one figure draws
    both; the filters run in float32 weights."""
    rows = []
    for arrays, meta in sorted(cells, key=lambda c: c[1]["n"]):
        for k, arm in enumerate(meta["arms"]):
            amse, half = _mean_ci(arrays["amse"][k])
            time_ms = 1e3 * float(np.median(arrays["seconds"][k]))
            rows.append({
                "n": meta["n"], "precision": "float32", "scheme": arm["scheme"],
                "method": arm["method"], "label": arm["label"], "radix": arm["radix"],
                "kind": meta["kind"],
                "runs": meta["runs"], "steps": meta["steps"], "tau": meta["tau"],
                "mse": amse, "mse_ci": half, "time_ms": time_ms, "mse_x_time": amse * time_ms,
                "level": float(np.mean(arrays["level"][k])), "device": meta["device"],
                "confidence_level": CONFIDENCE_LEVEL,
            })  # fmt: skip
    return pd.DataFrame(rows)


def interaction_table(arrays, meta) -> pd.DataFrame:
    """Fig 4.11: ESS and interaction level at every step t, per filter."""
    frames = []
    for k, label in enumerate(meta["labels"]):
        steps = arrays["ess"].shape[1]
        frames.append(pd.DataFrame({
            "t": np.arange(1, steps + 1), "filter": label, "ess": arrays["ess"][k],
            "level": arrays["level"][k], "n": meta["n"], "tau": meta["tau"],
            "device": meta["device"],
        }))  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def sign_flip_p(differences) -> float:
    """The two-sided p-value of the paired sign-flip (randomisation) test of
    mean zero: the share of the 2^M sign patterns whose |mean| reaches the
    observed one (exact for M <= 16; the observed pattern counts)."""
    d = np.asarray(differences, dtype=np.float64)
    if d.size > 16:
        raise ValueError(f"the exact sign-flip test enumerates 2^M patterns; M = {d.size} > 16")
    signs = 1 - 2 * ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1)
    means = np.abs(signs @ d) / d.size
    return float(np.mean(means >= abs(d.mean()) * (1 - 1e-12)))


PARAMETERS = ("alpha", "sigma")


def smcem_table(cells, alpha: float, sigma: float) -> pd.DataFrame:
    """Fig 4.12: per N, filter, scheme and start, the time per EM iteration
    and, for alpha and sigma, the three parts of the final estimate's error
    over the M sequences (filter_experiments module docstring): ``*_mc_mse``
    (SMC-EM minus exact EM at the same iteration, also at a quarter and half
    of the iterations: ``*_mc_mse_q``, ``*_mc_mse_h``), ``*_em_mse`` (exact
    EM minus the ML point), ``*_ml_mse`` (the ML point minus the truth),
    and ``*_mse`` (the estimate minus the truth), each with its interval.
    The butterfly rows add the paired comparison with multinomial on the
    same sequences: the ratio of Monte Carlo MSEs, the mean difference of
    squared Monte Carlo errors (butterfly - multinomial) with its interval,
    and the sign-flip p-value (:func:`sign_flip_p`)."""
    refs = [c for c in cells if c[1]["experiment"] == "SMC-EM references"]
    if len(refs) != 1:
        raise ValueError(f"Fig 4.12's table needs one reference cell, got {len(refs)}")
    ref, ref_meta = refs[0]
    truth = {"alpha": alpha, "sigma": sigma}
    ml = {"alpha": ref["ml"][:, 0], "sigma": ref["ml"][:, 1]}
    rows = []
    runs = sorted((c for c in cells if c[1]["experiment"] == "SMC-EM"), key=lambda c: c[1]["n"])
    for arrays, meta in runs:
        last = meta["iterations"]
        checkpoints = {"_q": max(1, last // 4), "_h": max(1, last // 2), "": last}
        mc_errors = {}
        for a, arm in enumerate(meta["arms"]):
            for j, start in enumerate(meta["starts"]):
                k = ref_meta["starts"].index(start)
                row = {"n": meta["n"], "filter": arm["filter"], "scheme": arm["scheme"],
                       "start": start, "sequences": meta["sequences"], "iterations": last,
                       "length": meta["length"]}  # fmt: skip
                row["time_per_iteration_ms"] = 1e3 * float(arrays["seconds"][a, j].mean())
                for name in PARAMETERS:
                    trace, exact = arrays[name][a, j], ref[name][k]
                    final = trace[:, last]
                    for suffix, i in checkpoints.items():
                        row[f"{name}_mc_mse{suffix}"], half = _mean_ci(
                            (trace[:, i] - exact[:, i]) ** 2
                        )
                        if not suffix:
                            row[f"{name}_mc_mse_ci"] = half
                    mc_errors[(arm["filter"], start, arm["scheme"], name)] = final - exact[:, last]
                    row[f"{name}_em_mse"] = float(np.mean((exact[:, last] - ml[name]) ** 2))
                    row[f"{name}_ml_mse"], row[f"{name}_ml_mse_ci"] = _mean_ci(
                        (ml[name] - truth[name]) ** 2
                    )
                    row[f"{name}_mse"], row[f"{name}_mse_ci"] = _mean_ci((final - truth[name]) ** 2)
                    row[f"{name}_mean"] = float(np.mean(final))
                    row[f"{name}_ml_mean"] = float(np.mean(ml[name]))
                row["device"] = meta["device"]
                row["confidence_level"] = CONFIDENCE_LEVEL
                rows.append(row)
        for row in rows:
            if row["n"] != meta["n"] or row["scheme"] != "butterfly":
                continue
            for name in PARAMETERS:
                base = mc_errors[(row["filter"], row["start"], "multinomial", name)]
                own = mc_errors[(row["filter"], row["start"], "butterfly", name)]
                d = own**2 - base**2
                row[f"{name}_mc_ratio"] = float(np.mean(own**2) / np.mean(base**2))
                row[f"{name}_mc_diff"], row[f"{name}_mc_diff_ci"] = _mean_ci(d)
                row[f"{name}_mc_p"] = sign_flip_p(d)
    return pd.DataFrame(rows)
