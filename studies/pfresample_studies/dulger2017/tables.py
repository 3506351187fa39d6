"""Tidy tables of the resampling cells (thesis §2.5, §6.5), as pandas frames.

* :func:`cell_frame`: one row per (variant, distribution, N, weight sequence)
  of one cell artifact: MSE (eq. 2.30), Var and ||Bias||^2 (eq. 2.32), B, time.
* :func:`summarise`: the thesis's "averages of these 16 weight sequences",
  with 99% confidence half-widths across sequences, plus the derived metrics
  the figures plot (MSE/N, Var/N, bias contribution ||Bias||^2/MSE).
* :func:`add_speedup`, :func:`add_time_ratio`, :func:`match_ladder`: speed-up
  over a baseline (§6.5), T(N)/T(N/2) (Fig 6.27), and the B-reduced Metropolis
  matched to another method in MSE or time (§5.3, Figs 5.11-5.14).
* :func:`operations_table`: Table 6.1 with the measured time per inner-loop
  iteration next to the thesis's operation counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pfresample.constants import CONFIDENCE_LEVEL
from pfresample.metrics import confidence_interval

# Columns that are measurements of elapsed time: they differ between runs,
# everything else is a deterministic function of the configuration.
TIME_COLUMNS = (
    "time_ms",
    "first_call_ms",
    "time_ms_ci",
    "speedup",
    "time_ratio",
    "ns_per_iteration",
)


def cell_frame(arrays: Mapping[str, np.ndarray], metadata: Mapping) -> pd.DataFrame:
    """One row per (N, weight sequence) of one cell (``experiments.run_ladder``)."""
    se = arrays["squared_errors"]  # (G, S, K)
    G, S, K = se.shape
    variant = metadata["variant"]
    n = np.repeat(arrays["n"], S)
    frame = pd.DataFrame(
        {
            "variant": variant["name"],
            "method": variant["method"],
            "segment_bytes": variant["segment_bytes"],
            "B_of": variant["B_of"],
            "B_scale": variant["B_scale"],
            "distribution": metadata["distribution"],
            "n": n,
            "sequence": np.tile(np.arange(S), G),
            "draws": K,
            "mse": se.mean(axis=2).ravel(),
            "variance": arrays["variance"].ravel(),
            "bias2": arrays["bias2"].ravel(),
            "B": arrays["B"].ravel(),
            "time_ms": arrays["time_ms"].ravel(),
            "first_call_ms": arrays["first_call_ms"].ravel(),
            "backend": metadata["backend"],
            "device": metadata["device"],
        }
    )
    # 99% half-width of each sequence's MSE over its K draws (normal approximation).
    frame["mse_ci"] = [
        confidence_interval(row)[1] if K > 1 else np.nan for row in se.reshape(-1, K)
    ]
    frame["B"] = frame["B"].where(frame["B"] >= 0)  # -1 marks "no B": missing
    return frame


def _half_width(values: pd.Series) -> float:
    v = values.dropna()
    return confidence_interval(v, CONFIDENCE_LEVEL)[1] if len(v) > 1 else np.nan


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Average over weight sequences (thesis §6.5), per (variant, distribution, N).

    The derived metrics are per sequence first, then averaged: MSE/N, Var/N
    and the bias contribution ||Bias||^2/MSE (§2.5). ``*_ci`` columns are 99%
    half-widths of the mean across sequences.
    """
    f = frame.assign(
        mse_per_n=frame["mse"] / frame["n"],
        variance_per_n=frame["variance"] / frame["n"],
        bias_fraction=np.where(
            frame["mse"] > 0, frame["bias2"] / frame["mse"].where(frame["mse"] > 0), 0.0
        ),
    )
    keys = ["variant", "method", "segment_bytes", "B_of", "B_scale", "distribution", "n"]
    grouped = f.groupby(keys, dropna=False, sort=True)
    out = grouped.agg(
        sequences=("sequence", "size"),
        draws=("draws", "first"),
        mse_per_n=("mse_per_n", "mean"),
        mse_per_n_ci=("mse_per_n", _half_width),
        variance_per_n=("variance_per_n", "mean"),
        bias_fraction=("bias_fraction", "mean"),
        bias_fraction_ci=("bias_fraction", _half_width),
        B=("B", "mean"),
        time_ms=("time_ms", "mean"),
        time_ms_ci=("time_ms", _half_width),
        first_call_ms=("first_call_ms", "mean"),
        backend=("backend", "first"),
        device=("device", "first"),
    )
    return out.reset_index()


def add_speedup(summary: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Column ``speedup``: the baseline variant's time over each row's time,
    on the same distribution and N (§6.5: Uphill's time over Uphill-CA's)."""
    base = summary.loc[summary["variant"] == baseline, ["distribution", "n", "time_ms"]]
    base = base.rename(columns={"time_ms": "baseline_time_ms"})
    out = summary.merge(base, on=["distribution", "n"], how="left")
    out["speedup"] = out["baseline_time_ms"] / out["time_ms"]
    return out.drop(columns="baseline_time_ms")


def add_time_ratio(summary: pd.DataFrame) -> pd.DataFrame:
    """Column ``time_ratio``: T(N) / T(N/2) of each variant and distribution
    (Fig 6.27: "the ratios of the current execution times ... to the previous")."""
    out = summary.sort_values(["variant", "distribution", "n"]).copy()
    previous = out.groupby(["variant", "distribution"])["time_ms"].shift(1)
    out["time_ratio"] = out["time_ms"] / previous
    return out


def match_ladder(
    summary: pd.DataFrame, candidates: Sequence[str], target: str, by: str, label: str
) -> pd.DataFrame:
    """For each (distribution, N), the candidate (Metropolis at a reduced B)
    whose ``by`` column is closest to the target variant's (thesis §5.3:
    "we match the MSE results ... by reducing B in M", or the execution times).

    Returns the target's rows and the chosen candidate rows, the latter with
    ``variant`` set to ``label`` and ``matched_variant`` naming the choice.
    """
    keys = ["distribution", "n"]
    goal = summary.loc[summary["variant"] == target, [*keys, by]].rename(columns={by: "goal"})
    pool = summary[summary["variant"].isin(candidates)].merge(goal, on=keys)
    pool = pool.assign(distance=(np.log(pool[by]) - np.log(pool["goal"])).abs())
    best = pool.loc[pool.groupby(keys)["distance"].idxmin()].drop(columns=["goal", "distance"])
    best = best.assign(matched_variant=best["variant"], variant=label)
    rows = summary[summary["variant"] == target].assign(matched_variant=target)
    return pd.concat([best, rows], ignore_index=True)


def operations_table(
    summary: pd.DataFrame, operations: Mapping[str, Mapping[str, str]]
) -> pd.DataFrame:
    """Table 6.1: the operations in the inner loop of each method (from the
    algorithm boxes, as the configuration states them) and the measured time
    per inner-loop iteration, time / (N B), at equal B (the Fig 6.6 and 6.10
    cells, where Metropolis runs with Uphill's B), at the largest N of the
    grid (where the loop, not the per-call overhead, dominates), averaged over
    the distributions. ``operations`` maps a variant to its counts."""
    rows = []
    largest = summary["n"].max()
    for variant, ops in operations.items():
        s = summary[
            (summary["variant"] == variant) & (summary["n"] == largest) & (summary["B"] > 0)
        ]
        ns = s["time_ms"] * 1e6 / (s["n"] * s["B"])
        rows.append(
            {
                "variant": variant,
                "method": s["method"].iloc[0] if len(s) else variant,
                **ops,
                "ns_per_iteration": float(ns.mean()) if len(s) else np.nan,
                "n": int(largest),
                "distributions": int(s["distribution"].nunique()),
                "device": s["device"].iloc[0] if len(s) else None,
            }
        )
    return pd.DataFrame(rows)


def variant_label(method, segment_bytes=None, B_of=None, B_scale=None) -> str:
    """Legend text of a variant (as ``pfresample.experiments.Variant.label``)."""
    from .experiments import Variant

    def given(x):
        return x is not None and not pd.isna(x)

    return Variant(
        "",
        method,
        int(segment_bytes) if given(segment_bytes) else None,
        B_of if given(B_of) else None,
        float(B_scale) if given(B_scale) else None,
    ).label


def figure_tables(
    cells: Sequence[pd.DataFrame], spec: Mapping, members: Mapping[str, Sequence[str]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per_sequence, summary)`` tables of one figure of the catalog
    (config/dulger2017.yaml): the cells' rows, and their averages over weight
    sequences with the columns the figure's metrics need."""
    per_sequence = pd.concat(cells, ignore_index=True)
    per_sequence["segment_bytes"] = per_sequence["segment_bytes"].astype("Int64")
    summary = summarise(per_sequence)
    summary["label"] = [
        variant_label(*row)
        for row in summary[["method", "segment_bytes", "B_of", "B_scale"]].itertuples(index=False)
    ]
    if "baseline" in spec:
        summary = add_speedup(summary, spec["baseline"])
    if "time_ratio" in spec["metrics"]:
        summary = add_time_ratio(summary)
    if "match" in spec:
        match = spec["match"]
        candidates = [v for group in match["candidates"] for v in members[group]]
        column = {"mse": "mse_per_n", "time": "time_ms"}[match["by"]]
        target = summary.loc[summary["variant"] == match["target"], "label"].iloc[0]
        method = summary.loc[summary["variant"].isin(candidates), "method"].iloc[0]
        label = f"{method} (B reduced to match {match['by'].upper()} of {target})"
        summary = match_ladder(summary, candidates, match["target"], column, label)
        summary.loc[summary["variant"] == label, "label"] = label
    if "operations" in spec:
        summary = operations_table(summary, spec["operations"])
    sort = [c for c in ("variant", "distribution", "n") if c in summary.columns]
    return per_sequence, summary.sort_values(sort, kind="stable").reset_index(drop=True)
