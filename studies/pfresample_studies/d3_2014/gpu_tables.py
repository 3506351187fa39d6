#!/usr/bin/env python3
"""Das et al. (2014): the derived tables of the GPU run (:mod:`.gpu_runs`' ``timing.csv``,
``spread.csv``, ``table7_360s.csv`` and ``regimes/``, this run's or the committed run's)
beside the committed CPU baselines (``cpu_baselines.csv`` of the one-thread runs at N up
to 50,000, whose experiment is now the pipeline's Table 5 CPU timing cells), so that every
speed-up, ratio and CPM that docs/d3_2014.md quotes is recomputed by the pipeline's rule
``d3_2014_gpu_tables`` (target ``d3_2014_gpu``). Every table carries ``gpu_source``, the
sources of the GPU files it read (``pipeline.gpu_runs``); the two that read a committed
CPU table carry ``cpu_source`` too.

A run its deadlines cut (``d3_2014_gpu_runs_*deadline_s``) keeps the cells it reached, and
its files are this run's whole (``pipeline.gpu_runs`` draws whole files, never cells: a ratio
of this device's time over another's would be no measurement). A cell not run is absent
from every table: no row, or NaN where a summary reads it (the ratio at 736 TPB without the
736 cell, every CPM without the 160 cell); :func:`not_run` lists them for the rule's log.

The tables (:func:`tables`, results/tables/d3_2014/gpu/):

* ``table5_speedups.csv``: Table 5 over the same steps (3 ... 502 of
  trajectory 0, the paper's regime). GPU: the run's five windows of 100
  steps at 160 TPB, their total over 500 steps (``gpu_ms_window``: the time
  per step over exactly the CPU's steps; one run) and their median. CPU: the
  median of 5 repeats of the whole window with their min-max (a 93.75 %
  distribution-free interval for the median), wall and process CPU time. The
  speed-up is CPU / GPU with the interval [CPU min / GPU, CPU max / GPU]
  (the GPU's windows vary by less than the CPU's repeats: ``gpu_window_spread``).
  The paper's printed ratios beside (its unit cancels).
* ``table6_tpb.csv``: per (algorithm, N, TPB) the median and min-max of the
  windows, and the time against 160 TPB paired by window (the five windows
  are the same steps at every TPB): median and min-max of the five ratios;
  the paper's Table 6 value and its ratio to its 160 row.
* ``table6_summary.csv``: per (algorithm, N) the fastest TPB, whether 160's
  min-max overlaps the fastest's, the paired ratios at 736 and 1024 against
  160, and the paper's 736 / 160.
* ``table7_cpm.csv``: N = 50,000, per (algorithm, TPB): the run's RMSE per
  component and its norm (502 steps, one run), the time, §4.3's CPM against
  160 TPB (``catalog.cpm``), the paper's RMSE and CPM; per algorithm in
  ``table7_summary.csv``: whether the RMSEs are the same at every TPB, their
  range, and Spearman's rank correlation of the RMSE's norm with TPB with a
  permutation p-value (fixed seed).
* ``fig10.csv``: per (algorithm, TPB) the dominant kernel's theoretical
  occupancy on the device and the time at N = 50,000 (median, paired ratio to
  160); ``fig10_summary.csv``: both over TPB <= 736 (the paper's range) and
  >= 772 (ours, "above 800").
* ``regimes_n50000_bins.csv``: the RMSE's norm over the trajectories in the
  10 s bins ending at 10, 200 and 350 s (``regimes/error_vs_time.csv``).
* ``spread.csv`` / ``spread_summary.csv`` (from ``spread.csv`` of the GPU
  run): per (algorithm, TPB) the runs (each its own filter seed, trajectory
  0, the timing window), the mean RMSE's norm with its 99 % Student-t
  interval, the run medians' median and min-max time a step; per algorithm a
  one-way test of TPB on the RMSE's norm: the F statistic of the TPB groups
  and its permutation p-value (PERMUTATIONS shuffles of the runs' TPB labels,
  fixed seed), and whether every run's RMSE is the same at every TPB.
* ``table7_360s.csv``: Table 7 over the whole 360 s (``table7_360s.csv`` of
  the GPU run, trajectory 0, one run a cell): the RMSE per component and its
  norm, the paper's printed RMSE, and §4.3's CPM against 160 TPB with the
  time a step of the clean timing windows (``timing.csv``, N = 50,000).
* ``components_n1000.csv`` (from the committed ``regimes_n1000/cells.csv``, the
  regime experiment on the CPU at N = 1,000 with 8 trajectories): per regime,
  per-component D3 (``d3-each``) against the joint one (``d3``), the paired
  difference of the RMSE's norm over the trajectories with its 99 % interval.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample_studies.d3_2014 import catalog, regimes
from pfresample_studies.d3_2014.gpu_runs import THREADS as TIMING_THREADS
from pfresample_studies.pipeline import gpu_runs

# The committed tables the derived ones read beside the GPU run (paths inside an evidence
# folder; pipeline.evidence finds the newest): the GPU run (its timing table marks it), the
# one-thread CPU baselines, and the regime experiment on the CPU at N = 1,000.
GPU_RUN = "d3_2014/timing.csv"
CPU_BASELINES = "d3_2014/cpu_baselines.csv"
COMPONENT_CELLS = "d3_2014/regimes_n1000/cells.csv"
TABLES = ("table5_speedups", "table6_tpb", "table6_summary", "table7_cpm", "table7_summary",
          "fig10", "fig10_summary", "regimes_n50000_bins", "table7_360s", "components_n1000",
          "spread", "spread_summary")  # fmt: skip
REFERENCE_TPB = catalog.TABLE5_THREADS  # Table 5's 160, and the CPM's reference
PAPER_TPB_MAX = 736  # the last row of the paper's Tables 6-7
ABOVE_800_FROM = 772  # our first TPB past the paper's range (Fig 10's "above 800")
CPM_TPB = tuple(catalog.PUBLISHED_CPM)  # 520, 556, 592, 628
PERMUTATIONS = 100_000
# The CPU rows of each Table 5 comparison: the paper's sequential D3 is Table 1's loop;
# ours is the sparse table.
CPU_D3 = {"paper": "d3-loop", "ours": "d3-table"}


def windows(row) -> np.ndarray:
    return np.array([float(v) for v in str(row["ms_per_step_repeats"]).split()])


def table5(timing: pd.DataFrame, cpu: pd.DataFrame) -> pd.DataFrame:
    rows = []
    gpu = timing[timing["threads"] == REFERENCE_TPB]
    for n in sorted(gpu["n"].unique()):
        paper = catalog.PUBLISHED_TABLE5.get(int(n))
        for algorithm in ("paper", "ours"):
            g = gpu[(gpu["algorithm"] == algorithm) & (gpu["n"] == n)]
            if g.empty:
                continue
            w = windows(g.iloc[0])
            gpu_ms = float(w.mean())  # total of the windows / their steps
            for cpu_filter in ("systematic", CPU_D3[algorithm]):
                c = cpu[(cpu["filter"] == cpu_filter) & (cpu["n"] == n)]
                if c.empty:
                    continue
                c = c.iloc[0]
                printed = math.nan
                if paper and algorithm == "paper":
                    printed = paper[0 if cpu_filter == "systematic" else 1] / paper[2]
                rows.append({
                    "n": int(n), "gpu_algorithm": algorithm, "gpu_threads": REFERENCE_TPB,
                    "gpu_ms_window": gpu_ms, "gpu_ms_median": float(np.median(w)),
                    "gpu_window_spread": float((w.max() - w.min()) / np.median(w)),
                    "cpu_filter": cpu_filter, "cpu_wall_ms_median": c["wall_ms_median"],
                    "cpu_wall_ms_min": c["wall_ms_min"], "cpu_wall_ms_max": c["wall_ms_max"],
                    "cpu_ms_median": c["cpu_ms_median"],
                    "speedup_wall": c["wall_ms_median"] / gpu_ms,
                    "speedup_wall_lo": c["wall_ms_min"] / gpu_ms,
                    "speedup_wall_hi": c["wall_ms_max"] / gpu_ms,
                    "speedup_cpu_time": c["cpu_ms_median"] / gpu_ms,
                    "paper_speedup": printed,
                    "gpu_device": g.iloc[0]["device"], "cpu_device": c["cpu"],
                })  # fmt: skip
    return pd.DataFrame(rows)


def table6(timing: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (algorithm, n), part in timing.groupby(["algorithm", "n"]):
        ref = part[part["threads"] == REFERENCE_TPB]
        ref_w = windows(ref.iloc[0]) if not ref.empty else None
        paper = catalog.PUBLISHED_TABLE6
        col = catalog.TABLE6_N.index(int(n)) if int(n) in catalog.TABLE6_N else None
        for _, r in part.sort_values("threads").iterrows():
            t = int(r["threads"])
            ratios = windows(r) / ref_w if ref_w is not None else np.full(1, math.nan)
            printed = paper[t][col] if t in paper and col is not None else math.nan
            rows.append({
                "algorithm": algorithm, "n": int(n), "threads": t,
                "ms_median": r["ms_per_step_median"], "ms_min": r["ms_per_step_min"],
                "ms_max": r["ms_per_step_max"],
                "ratio_vs_160_median": float(np.median(ratios)),
                "ratio_vs_160_min": float(ratios.min()),
                "ratio_vs_160_max": float(ratios.max()),
                "paper": printed,
                "paper_ratio_vs_160": printed / paper[REFERENCE_TPB][col]
                if col is not None else math.nan,
                "occupancy": r["occupancy"], "kernel": r["kernel"], "device": r["device"],
            })  # fmt: skip
    return pd.DataFrame(rows)


def _at(part: pd.DataFrame, threads: int, column: str) -> float:
    """``part``'s ``column`` at TPB ``threads`` (``part`` indexed by TPB); NaN where that
    cell was not run (a deadline cut the run before it)."""
    return part.at[threads, column] if threads in part.index else math.nan


def table6_summary(t6: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (algorithm, n), part in t6.groupby(["algorithm", "n"]):
        part = part.set_index("threads")
        fastest = int(part["ms_median"].idxmin())
        paper = part["paper"].dropna()
        rows.append({
            "algorithm": algorithm, "n": int(n), "fastest_threads": fastest,
            "fastest_ms": part.loc[fastest, "ms_median"],
            "ms_160": _at(part, REFERENCE_TPB, "ms_median"),
            "overlaps_fastest_160": bool(part.at[REFERENCE_TPB, "ms_min"]
                                         <= part.loc[fastest, "ms_max"])
            if REFERENCE_TPB in part.index else pd.NA,
            "ratio_736_vs_160": _at(part, PAPER_TPB_MAX, "ratio_vs_160_median"),
            "ratio_736_vs_160_min": _at(part, PAPER_TPB_MAX, "ratio_vs_160_min"),
            "ratio_736_vs_160_max": _at(part, PAPER_TPB_MAX, "ratio_vs_160_max"),
            "ratio_1024_vs_160": _at(part, 1024, "ratio_vs_160_median"),
            "ratio_1024_vs_160_min": _at(part, 1024, "ratio_vs_160_min"),
            "ratio_1024_vs_160_max": _at(part, 1024, "ratio_vs_160_max"),
            "paper_ratio_736_vs_160": _at(part, PAPER_TPB_MAX, "paper_ratio_vs_160"),
            "paper_fastest_threads": int(paper.idxmin()) if not paper.empty else pd.NA,
        })  # fmt: skip
    return pd.DataFrame(rows)


def spearman(x: np.ndarray, y: np.ndarray, rng) -> tuple[float, float]:
    """Spearman's rho (ranks' Pearson correlation; no ties here) and its
    two-sided permutation p-value over PERMUTATIONS shuffles of y."""
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    rho = float(np.corrcoef(rx, ry)[0, 1])
    perms = np.array([np.corrcoef(rx, rng.permutation(ry))[0, 1] for _ in range(PERMUTATIONS)])
    return rho, float((np.sum(np.abs(perms) >= abs(rho) - 1e-12) + 1) / (PERMUTATIONS + 1))


def _cpm_range(cpm: dict) -> dict:
    """The CPMs at 520 ... 628 TPB (``cpm``: TPB -> CPM against 160): their min, max and
    the TPB of the largest; NaN for each where none was run or 160 was not (a deadline
    cut them)."""
    known = {t: c for t, c in cpm.items() if not math.isnan(c)}
    if not known:
        return {"cpm_520_628_min": math.nan, "cpm_520_628_max": math.nan,
                "cpm_best_of_520_628": pd.NA}  # fmt: skip
    return {"cpm_520_628_min": min(known.values()), "cpm_520_628_max": max(known.values()),
            "cpm_best_of_520_628": max(known, key=known.get)}  # fmt: skip


def table7(timing: pd.DataFrame, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, summary = [], []
    rng = np.random.default_rng(2014)
    col = catalog.TABLE6_N.index(catalog.CPM_N)
    for algorithm, part in timing[timing["n"] == n].groupby("algorithm"):
        part = part.sort_values("threads").set_index("threads")
        # without its 160 TPB cell (a deadline cut it) an algorithm has no CPM: NaN
        ref = part.loc[REFERENCE_TPB] if REFERENCE_TPB in part.index else None
        p_ref = math.nan if ref is None else catalog.performance(ref["rmse_x"], ref["rmse_y"])
        ms_ref = math.nan if ref is None else ref["ms_per_step_median"]
        for t, r in part.iterrows():
            paper = catalog.PUBLISHED_TABLE7.get(int(t), (math.nan, math.nan))
            rows.append({
                "algorithm": algorithm, "n": n, "threads": int(t), "steps": r["window_last"],
                "rmse_x": r["rmse_x"], "rmse_y": r["rmse_y"],
                "rmse_norm": math.hypot(r["rmse_x"], r["rmse_y"]),
                "ms_median": r["ms_per_step_median"],
                "cpm_vs_160": catalog.cpm(catalog.performance(r["rmse_x"], r["rmse_y"]),
                                          r["ms_per_step_median"], p_ref, ms_ref),
                "paper_rmse_x": paper[0], "paper_rmse_y": paper[1],
                "paper_cpm_printed": catalog.PUBLISHED_CPM.get(int(t), math.nan),
                "paper_cpm_recomputed": catalog.published_cpm(int(t))
                if int(t) in catalog.PUBLISHED_TABLE7 and int(t) in catalog.PUBLISHED_TABLE6
                else math.nan,
                "paper_ms": catalog.PUBLISHED_TABLE6[int(t)][col]
                if int(t) in catalog.PUBLISHED_TABLE6 else math.nan,
            })  # fmt: skip
        norm = np.hypot(part["rmse_x"].to_numpy(), part["rmse_y"].to_numpy())
        same = bool(part["rmse_x"].nunique() == 1 and part["rmse_y"].nunique() == 1)
        rho, p = (math.nan, math.nan) if same else spearman(part.index.to_numpy(), norm, rng)
        cpm_group = {r["threads"]: r["cpm_vs_160"] for r in rows
                     if r["algorithm"] == algorithm and r["threads"] in CPM_TPB}  # fmt: skip
        summary.append({
            "algorithm": algorithm, "n": n, "threads_run": len(part),
            "identical_across_tpb": same,
            "rmse_x_min": part["rmse_x"].min(), "rmse_x_max": part["rmse_x"].max(),
            "rmse_y_min": part["rmse_y"].min(), "rmse_y_max": part["rmse_y"].max(),
            "rmse_norm_min": norm.min(), "rmse_norm_max": norm.max(),
            "rmse_norm_160": norm[list(part.index).index(REFERENCE_TPB)]
            if ref is not None else math.nan,
            "rmse_norm_best_threads": int(part.index[int(np.argmin(norm))]),
            "spearman_rho_rmse_norm_vs_tpb": rho, "spearman_permutation_p": p,
            **_cpm_range(cpm_group),
        })  # fmt: skip
    return pd.DataFrame(rows), pd.DataFrame(summary)


def fig10(t6: pd.DataFrame, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    part = t6[t6["n"] == n][
        [
            "algorithm",
            "threads",
            "occupancy",
            "kernel",
            "ms_median",
            "ratio_vs_160_median",
            "ratio_vs_160_min",
            "ratio_vs_160_max",
        ]
    ]
    rows = []
    for algorithm, a in part.groupby("algorithm"):
        for label, sel in (("160-736", a["threads"] <= PAPER_TPB_MAX),
                           ("772-1024", a["threads"] >= ABOVE_800_FROM)):  # fmt: skip
            s = a[sel]
            rows.append({
                "algorithm": algorithm, "n": n, "threads": label, "count": len(s),
                "occupancy_min": s["occupancy"].min(), "occupancy_max": s["occupancy"].max(),
                "occupancy_mean": s["occupancy"].mean(), "ms_median_min": s["ms_median"].min(),
                "ms_median_max": s["ms_median"].max(),
                "ratio_vs_160_min": s["ratio_vs_160_median"].min(),
                "ratio_vs_160_max": s["ratio_vs_160_median"].max(),
            })  # fmt: skip
    return part.reset_index(drop=True), pd.DataFrame(rows)


def f_statistic(values: np.ndarray, groups: np.ndarray) -> float:
    """One-way ANOVA's F: between-group over within-group mean square; NaN where no group
    has two runs (a deadline cut the spread after its first run: no within-group spread)."""
    labels = np.unique(groups)
    if values.size == labels.size:
        return math.nan
    grand = values.mean()
    between = sum((groups == g).sum() * (values[groups == g].mean() - grand) ** 2 for g in labels)
    within = sum(((values[groups == g] - values[groups == g].mean()) ** 2).sum() for g in labels)
    dfb, dfw = labels.size - 1, values.size - labels.size
    return float((between / dfb) / (within / dfw)) if within > 0 else math.inf


def spread_tables(spread: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    spread = spread.assign(rmse_norm=np.hypot(spread["rmse_x"], spread["rmse_y"]))
    rows, summary = [], []
    rng = np.random.default_rng(2014)
    for (algorithm, t), part in spread.groupby(["algorithm", "threads"]):
        mean, half = regimes.t_interval(part["rmse_norm"])
        rows.append({
            "algorithm": algorithm, "n": int(part["n"].iloc[0]), "threads": int(t),
            "runs": len(part), "rmse_norm_mean": mean, "rmse_norm_ci": half,
            "rmse_norm_min": part["rmse_norm"].min(), "rmse_norm_max": part["rmse_norm"].max(),
            "ms_median_of_runs": part["ms_per_step_median"].median(),
            "ms_min_of_runs": part["ms_per_step_median"].min(),
            "ms_max_of_runs": part["ms_per_step_median"].max(),
        })  # fmt: skip
    for algorithm, part in spread.groupby("algorithm"):
        values, groups = part["rmse_norm"].to_numpy(), part["threads"].to_numpy()
        same = bool((part.groupby("run")["rmse_norm"].nunique() == 1).all())
        f = math.nan if same else f_statistic(values, groups)
        p = math.nan
        if not math.isnan(f):
            perms = [
                f_statistic(values, rng.permutation(groups)) for _ in range(PERMUTATIONS // 10)
            ]
            p = float((np.sum(np.asarray(perms) >= f - 1e-12) + 1) / (len(perms) + 1))
        summary.append({
            "algorithm": algorithm, "runs": len(part), "threads": part["threads"].nunique(),
            "identical_across_tpb_per_run": same, "f_tpb": f, "f_permutation_p": p,
        })  # fmt: skip
    return pd.DataFrame(rows), pd.DataFrame(summary)


def table7_full(full: pd.DataFrame, timing: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for algorithm, part in full.groupby("algorithm"):
        clean = timing[(timing["algorithm"] == algorithm) & (timing["n"] == part["n"].iloc[0])]
        ms = clean.set_index("threads")["ms_per_step_median"]
        full_ref = part.set_index("threads")
        # a cell a deadline cut (in either file) leaves its CPM NaN
        p_ref = math.nan
        if REFERENCE_TPB in full_ref.index:
            ref = full_ref.loc[REFERENCE_TPB]
            p_ref = catalog.performance(ref["rmse_x"], ref["rmse_y"])
        for _, r in part.sort_values("threads").iterrows():
            t = int(r["threads"])
            paper = catalog.PUBLISHED_TABLE7.get(t, (math.nan, math.nan))
            rows.append({
                "algorithm": algorithm, "n": int(r["n"]), "threads": t, "steps": int(r["steps"]),
                "rmse_x": r["rmse_x"], "rmse_y": r["rmse_y"],
                "rmse_norm": math.hypot(r["rmse_x"], r["rmse_y"]),
                "bias_x": r["bias_x"], "bias_y": r["bias_y"], "ms_clean": ms.get(t, math.nan),
                "cpm_vs_160": catalog.cpm(catalog.performance(r["rmse_x"], r["rmse_y"]),
                                          ms.get(t, math.nan), p_ref,
                                          ms.get(REFERENCE_TPB, math.nan)),
                "paper_rmse_x": paper[0], "paper_rmse_y": paper[1],
            })  # fmt: skip
    return pd.DataFrame(rows)


def components(cells: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for regime, part in cells.groupby("regime"):
        joint = part[part["filter"] == "d3"].set_index("trajectory")["rmse_norm"]
        each = part[part["filter"] == "d3-each"].set_index("trajectory")["rmse_norm"]
        both = joint.index.intersection(each.index)
        d = (each.loc[both] - joint.loc[both]).to_numpy()
        mean, half = regimes.t_interval(d)
        rows.append({
            "regime": regime, "n": int(part["n"].iloc[0]), "trajectories": both.size,
            "d3_rmse_norm_mean": joint.loc[both].mean(),
            "d3_each_rmse_norm_mean": each.loc[both].mean(),
            "d_each_minus_joint": mean, "ci": half, "each_lower_in": int((d < 0).sum()),
            "level": regimes.LEVEL,
        })  # fmt: skip
    return pd.DataFrame(rows)


def regime_bins(path: Path, ends=(10.0, 200.0, 350.0)) -> pd.DataFrame:
    e = pd.read_csv(path)
    e = e[e["t"].isin(ends)].copy()
    e["rmse_norm"] = np.hypot(e["rmse_x"], e["rmse_y"])
    return e.sort_values(["regime", "filter", "t"]).reset_index(drop=True)


def not_run(timing: pd.DataFrame) -> list[tuple[str, int, int]]:
    """The timing cells (algorithm, N, TPB) of the full grid (``TIMING_THREADS`` at
    every N of Table 6, for each algorithm the run has) that ``timing`` lacks: a deadline
    cut them, and the tables show them as absent (no row, or NaN where a summary reads
    them)."""
    cells = zip(
        timing["algorithm"], timing["n"].astype(int), timing["threads"].astype(int), strict=True
    )
    have = set(cells)
    return [(a, n, t) for a in sorted(timing["algorithm"].unique()) for n in catalog.TABLE6_N
            for t in TIMING_THREADS if (a, n, t) not in have]  # fmt: skip


def tables(
    runs: Path, cpu: pd.DataFrame, n1000: pd.DataFrame, cpu_source: str, n: int = catalog.CPM_N
) -> dict[str, pd.DataFrame]:
    """Every derived table (TABLES), from the GPU run's files under ``runs`` (with their
    ``sources.csv``), the CPU baselines ``cpu`` and the regime cells at N = 1,000
    ``n1000`` (both from the committed table ``cpu_source`` labels)."""
    runs = Path(runs)
    sources = gpu_runs.read_sources(runs / gpu_runs.SOURCES)
    timing = pd.read_csv(runs / "timing.csv")
    t6 = table6(timing)
    t7, t7s = table7(timing, n)
    f10, f10s = fig10(t6, n)
    spread, spread_summary = spread_tables(pd.read_csv(runs / "spread.csv"))
    bins = "regimes/error_vs_time.csv"
    out = {
        "table5_speedups": (table5(timing, cpu), ["timing.csv"]),
        "table6_tpb": (t6, ["timing.csv"]), "table6_summary": (table6_summary(t6), ["timing.csv"]),
        "table7_cpm": (t7, ["timing.csv"]), "table7_summary": (t7s, ["timing.csv"]),
        "fig10": (f10, ["timing.csv"]), "fig10_summary": (f10s, ["timing.csv"]),
        "regimes_n50000_bins": (regime_bins(runs / bins), [bins]),
        "table7_360s": (table7_full(pd.read_csv(runs / "table7_360s.csv"), timing),
                        ["table7_360s.csv", "timing.csv"]),
        "components_n1000": (components(n1000), []),
        "spread": (spread, ["spread.csv"]), "spread_summary": (spread_summary, ["spread.csv"]),
    }  # fmt: skip
    frames = {}
    for name in TABLES:
        frame, read = out[name]
        if read:
            frame = gpu_runs.labelled(frame, sources, read)
        if name in ("table5_speedups", "components_n1000"):
            frame = frame.assign(cpu_source=cpu_source)
        frames[name] = frame
    return frames
