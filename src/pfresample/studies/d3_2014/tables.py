"""Tidy tables of Das, Mazumdar & Banerjee (2014) from the cells' (arrays,
metadata), with the paper's numbers (catalog) beside ours.

* :func:`methods_table`: every filter's RMSE, bias and time per run at the
  figure N, the Kalman filter's floor, the paper's RMSEs and bias;
* :func:`table5`: seconds per whole run of CPU systematic SIR, CPU D3 and
  GPU D3 (160 threads per block) against N;
* :func:`table6` (and Fig 10): GPU D3 seconds per run against threads per
  block for every N;
* :func:`table7`: GPU D3 RMSE against threads per block at the figure N, and
  §4.3's CPM against the fastest threads per block;
* :func:`trajectory_table` (Figs 3-4), :func:`snapshot_table` (Figs 5-6),
  :func:`fig11_table` (Fig 11): the figures' data.

Measured values are means over the cells' trajectories and runs (the
RMSE's norm is the mean of each run's norm). Where no GPU ran, the GPU
columns are empty and ``note`` says why.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...backend import BACKEND_LABELS
from ...pipeline.tables import markdown_table
from . import catalog

NO_GPU = (
    "no GPU ran: the GPU columns need a CUDA device (backend auto with a device visible, "
    "or backend cuda); published values only"
)


def _fmt(value, digits: int = 4) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}g}"
    return str(value)


def _devices(cells) -> str:
    return ", ".join(sorted({m["device"] for _, m in cells}))


def filter_summary(cells) -> pd.DataFrame:
    """One row per (filter, N, backend) of filter cells: the means over the
    trajectories and runs of RMSE and bias per component, the RMSE's norm,
    the seconds per run and, where cells kept a snapshot, its distinct
    particles."""
    rows = []
    for arrays, meta in cells:
        rmse, bias = np.asarray(arrays["rmse"]), np.asarray(arrays["bias"])
        row = {"filter": meta["filter"], "method": meta["method"],
               "noise": meta.get("noise", ""), "cdf": meta.get("cdf", ""), "n": meta["n"],
               "rmse_x": rmse[0], "rmse_y": rmse[1], "rmse_norm": math.hypot(*rmse),
               "bias_x": bias[0], "bias_y": bias[1],
               "seconds": float(arrays["wall_seconds"]),
               "backend": meta["backend"], "device": meta["device"]}  # fmt: skip
        if "snapshot_distinct" in arrays:
            row["snapshot_distinct"] = float(arrays["snapshot_distinct"][2])
        rows.append(row)
    frame = pd.DataFrame(rows)
    keys = ["filter", "method", "noise", "cdf", "n", "backend"]
    agg = {c: "mean" for c in frame.columns if c not in keys + ["device"]}
    out = frame.groupby(keys, sort=False).agg({**agg, "device": "first"})
    out["runs"] = frame.groupby(keys, sort=False).size()
    return out.reset_index()


def methods_table(cells, trajectories, order) -> pd.DataFrame:
    """Every filter (in ``order``, the config's labels) at the figure N, then
    the Kalman filter's floor over ``trajectories`` (their arrays), with the
    paper's RMSE and bias (§3.2) beside the filters it names."""
    frame = filter_summary(cells)
    frame["order"] = frame["filter"].map({f: i for i, f in enumerate(order)})
    frame = frame.sort_values("order").drop(columns="order").reset_index(drop=True)
    frame["backend"] = frame["backend"].map(BACKEND_LABELS)
    kf_rmse = np.mean([t["kf_rmse"] for t in trajectories], axis=0)
    kf_bias = np.mean([t["kf_bias"] for t in trajectories], axis=0)
    kf = {"filter": "Kalman filter (exact floor)", "method": "kalman", "noise": "", "cdf": "",
          "n": pd.NA, "rmse_x": kf_rmse[0], "rmse_y": kf_rmse[1],
          "rmse_norm": math.hypot(*kf_rmse), "bias_x": kf_bias[0], "bias_y": kf_bias[1],
          "seconds": math.nan, "backend": "", "device": "", "runs": len(trajectories)}  # fmt: skip
    frame = pd.concat([frame, pd.DataFrame([kf])], ignore_index=True)
    frame["paper_rmse"] = frame["filter"].map(catalog.PUBLISHED_RMSE).astype(float)
    frame["paper_bias"] = frame["filter"].map(catalog.PUBLISHED_BIAS).astype(float)
    frame["paper_note"] = np.where(
        frame["paper_rmse"].notna(), "§3.2 as printed (m/s; component or norm not stated)", ""
    )
    frame["n"] = frame["n"].astype("Int64")
    return frame


def methods_markdown(frame: pd.DataFrame) -> str:
    header = ["filter", "method", "noise", "N", "RMSE Ẋ", "RMSE Ẏ", "RMSE norm", "bias Ẋ",
              "bias Ẏ", "s / run", "runs", "backend", "paper RMSE", "paper bias"]  # fmt: skip
    rows = [[r["filter"], r["method"], r["noise"], _fmt(r["n"]), _fmt(r["rmse_x"]),
             _fmt(r["rmse_y"]), _fmt(r["rmse_norm"]), _fmt(r["bias_x"]), _fmt(r["bias_y"]),
             _fmt(r["seconds"]), _fmt(r["runs"]), r["backend"], _fmt(r["paper_rmse"]),
             _fmt(r["paper_bias"])] for _, r in frame.iterrows()]  # fmt: skip
    title = ("# Das et al. (2014): every filter's RMSE and bias (m/s) and seconds per run, "
             "with the Kalman filter's floor\n\n")  # fmt: skip
    note = ("\nPaper (§3.2): RMSE 2.9535 m/s (systematic), 0.2681 m/s (D3), bias 0.025 m/s (D3), "
            "as printed; the component or norm is not stated.\n")  # fmt: skip
    return title + "\n".join(markdown_table(header, rows)) + "\n" + note


def _gpu_summary(cells) -> pd.DataFrame:
    """One row per GPU cell (threads, N): mean seconds, RMSE, bias, occupancy."""
    rows = []
    for arrays, meta in cells:
        rmse = np.asarray(arrays["rmse"]).reshape(-1, 2)
        bias = np.asarray(arrays["bias"]).reshape(-1, 2)
        occ = np.asarray(arrays.get("occupancy", [math.nan]), dtype=np.float64)
        rows.append({
            "threads": meta["threads"], "n": meta["n"],
            "seconds": float(np.mean(arrays["wall_seconds"])),
            "rmse_x": float(rmse[:, 0].mean()), "rmse_y": float(rmse[:, 1].mean()),
            "rmse_norm": float(np.hypot(rmse[:, 0], rmse[:, 1]).mean()),
            "bias_x": float(bias[:, 0].mean()), "bias_y": float(bias[:, 1].mean()),
            "occupancy": float(np.nanmean(occ)) if np.isfinite(occ).any() else math.nan,
            "runs": int(rmse.shape[0]), "device": meta["device"],
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["threads", "n", "seconds", "rmse_x", "rmse_y",
                                       "rmse_norm", "bias_x", "bias_y", "occupancy", "runs",
                                       "device"])  # fmt: skip


def _seconds(part: pd.DataFrame) -> float:
    return float(part["seconds"].iloc[0]) if not part.empty else math.nan


def table5(cpu_cells, gpu_cells, ns) -> pd.DataFrame:
    """Table 5 at each N of ``ns``: mean seconds per whole run of the CPU
    systematic SIR filter, the CPU D3 filter and the GPU D3 filter at 160
    threads per block (empty without GPU cells), the speed-ups, and the
    paper's numbers (as printed, unit not stated)."""
    cpu = filter_summary(cpu_cells)
    gpu = _gpu_summary([c for c in gpu_cells if c[1]["threads"] == catalog.TABLE5_THREADS])
    rows = []
    for n in ns:
        sir = _seconds(cpu[(cpu["filter"] == catalog.SIR_FILTER) & (cpu["n"] == n)])
        d3 = _seconds(cpu[(cpu["filter"] == catalog.D3_FILTER) & (cpu["n"] == n)])
        g = _seconds(gpu[gpu["n"] == n])
        paper = catalog.PUBLISHED_TABLE5.get(n, (math.nan,) * 3)
        rows.append({
            "n": n, "cpu_systematic_s": sir, "cpu_d3_s": d3, "gpu_d3_s": g,
            "speedup_gpu_vs_cpu_systematic": sir / g, "speedup_gpu_vs_cpu_d3": d3 / g,
            "cpu_d3_over_systematic": d3 / sir,
            "paper_cpu_systematic": paper[0], "paper_cpu_d3": paper[1], "paper_gpu_d3": paper[2],
            "paper_speedup_gpu_vs_cpu_systematic": paper[0] / paper[2],
            "paper_speedup_gpu_vs_cpu_d3": paper[1] / paper[2],
            "paper_cpu_d3_over_systematic": paper[1] / paper[0],
            "gpu_threads": catalog.TABLE5_THREADS,
            "cpu_device": _devices(cpu_cells), "gpu_device": _devices(gpu_cells),
            "paper_unit": catalog.PUBLISHED_NOTE, "note": "" if gpu_cells else NO_GPU,
        })  # fmt: skip
    return pd.DataFrame(rows)


def table5_markdown(frame: pd.DataFrame) -> str:
    header = ["N", "CPU systematic (s)", "CPU D3 (s)", "GPU D3 (s)", "paper CPU systematic",
              "paper CPU D3", "paper GPU D3"]  # fmt: skip
    rows = [[f"{int(r['n']):,}", _fmt(r["cpu_systematic_s"]), _fmt(r["cpu_d3_s"]),
             _fmt(r["gpu_d3_s"]), _fmt(r["paper_cpu_systematic"], 6),
             _fmt(r["paper_cpu_d3"], 6), _fmt(r["paper_gpu_d3"], 6)]
            for _, r in frame.iterrows()]  # fmt: skip
    first = frame.iloc[0]
    lines = ["# Das et al. (2014) Table 5: seconds per whole run (measured) and the paper's "
             "numbers (as printed, unit not stated)", "",
             *markdown_table(header, rows), "",
             f"CPU: {first['cpu_device']}. GPU: {first['gpu_device'] or 'none'}, "
             f"{int(first['gpu_threads'])} threads per block."]  # fmt: skip
    if first["note"]:
        lines.append(f"GPU column: {first['note']}.")
    return "\n".join(lines) + "\n"


def table6(gpu_cells, ns, threads) -> pd.DataFrame:
    """Table 6 and Fig 10: one row per (threads per block, N) of our grid or
    the paper's: the GPU D3 filter's mean seconds per run and occupancy
    (where the GPU run records it), and the paper's (unit not stated)."""
    gpu = _gpu_summary(gpu_cells).set_index(["threads", "n"])
    grid = {(t, n) for t in threads for n in ns}
    grid |= {(t, n) for t in catalog.PUBLISHED_TABLE6 for n in catalog.TABLE6_N}
    rows = []
    for t, n in sorted(grid):
        measured = gpu.loc[(t, n)] if (t, n) in gpu.index else None
        paper = catalog.PUBLISHED_TABLE6.get(t)
        rows.append({
            "threads": t, "n": n,
            "gpu_d3_s": measured["seconds"] if measured is not None else math.nan,
            "occupancy": measured["occupancy"] if measured is not None else math.nan,
            "runs": measured["runs"] if measured is not None else 0,
            "paper": paper[catalog.TABLE6_N.index(n)] if paper and n in catalog.TABLE6_N
            else math.nan,
            "device": measured["device"] if measured is not None else "",
            "paper_unit": catalog.PUBLISHED_NOTE, "note": "" if gpu_cells else NO_GPU,
        })  # fmt: skip
    return pd.DataFrame(rows)


def _wide(frame: pd.DataFrame, column: str) -> tuple[list[int], dict]:
    ns = sorted(frame["n"].unique())
    cells = {(r["threads"], r["n"]): r[column] for _, r in frame.iterrows()}
    return ns, cells


def table6_markdown(frame: pd.DataFrame) -> str:
    lines = ["# Das et al. (2014) Table 6: GPU D3 seconds per run against threads per block "
             "(TPB)", ""]  # fmt: skip
    for column, what in (("gpu_d3_s", "measured (s)"),
                         ("paper", f"paper ({catalog.PUBLISHED_NOTE})")):  # fmt: skip
        ns, cells = _wide(frame, column)
        header = ["TPB", *[f"{n:,}" for n in ns]]
        rows = [[str(t), *[_fmt(cells.get((t, n), math.nan)) for n in ns]]
                for t in sorted(frame["threads"].unique())]  # fmt: skip
        lines += [f"## {what}", "", *markdown_table(header, rows), ""]
    note = frame["note"].iloc[0]
    if note:
        lines.append(f"Measured: {note}.")
    return "\n".join(lines) + "\n"


def table7(gpu_cells, n: int, threads) -> pd.DataFrame:
    """Table 7 and §4.3's CPM at N = ``n``: per threads per block the GPU D3
    filter's mean RMSE per component, its norm and seconds per run; the CPM
    of every TPB against the fastest (``cpm_vs_fastest``, the fastest's own
    1); the paper's RMSEs, its printed CPM_{TPB|160} and the CPM recomputed
    from its Tables 6 (N = 50,000) and 7."""
    gpu = _gpu_summary([c for c in gpu_cells if c[1]["n"] == n]).set_index("threads")
    fastest = gpu["seconds"].idxmin() if not gpu.empty else None
    rows = []
    for t in sorted(set(threads) | set(catalog.PUBLISHED_TABLE7)):
        m = gpu.loc[t] if t in gpu.index else None
        paper = catalog.PUBLISHED_TABLE7.get(t, (math.nan, math.nan))
        row = {"threads": t, "n": n}
        for k in ("rmse_x", "rmse_y", "rmse_norm", "bias_x", "bias_y", "seconds"):
            row[k] = float(m[k]) if m is not None else math.nan
        row["fastest_threads"] = fastest if fastest is not None else pd.NA
        if m is not None:
            ref = gpu.loc[fastest]
            row["cpm_vs_fastest"] = catalog.cpm(
                1 / row["rmse_norm"], row["seconds"], 1 / ref["rmse_norm"], ref["seconds"]
            )
        else:
            row["cpm_vs_fastest"] = math.nan
        row |= {
            "paper_rmse_x": paper[0], "paper_rmse_y": paper[1],
            "paper_cpm_vs_160": catalog.PUBLISHED_CPM.get(t, math.nan),
            "paper_cpm_recomputed": catalog.published_cpm(t)
            if t in catalog.PUBLISHED_TABLE7 and t in catalog.PUBLISHED_TABLE6 else math.nan,
            "device": m["device"] if m is not None else "",
            "note": "" if gpu_cells else NO_GPU,
        }  # fmt: skip
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["fastest_threads"] = frame["fastest_threads"].astype("Int64")
    return frame


def table7_markdown(frame: pd.DataFrame) -> str:
    header = ["TPB", "RMSE Ẋ", "RMSE Ẏ", "s / run", "CPM vs fastest", "paper RMSE Ẋ",
              "paper RMSE Ẏ", "paper CPM vs 160", "paper CPM recomputed"]  # fmt: skip
    rows = [[str(r["threads"]), _fmt(r["rmse_x"]), _fmt(r["rmse_y"]), _fmt(r["seconds"]),
             _fmt(r["cpm_vs_fastest"]), _fmt(r["paper_rmse_x"]), _fmt(r["paper_rmse_y"]),
             _fmt(r["paper_cpm_vs_160"]), _fmt(r["paper_cpm_recomputed"])]
            for _, r in frame.iterrows()]  # fmt: skip
    n = int(frame["n"].iloc[0])
    fastest = frame["fastest_threads"].iloc[0]
    lines = [f"# Das et al. (2014) Table 7 and the CPM of §4.3: GPU D3 at N = {n:,}", "",
             *markdown_table(header, rows), "",
             "CPM_{a|b} = (P_a C_b) / (P_b C_a), P = 1 / |(RMSE Ẋ, RMSE Ẏ)|, C = seconds per "
             "run; ours against the fastest TPB"
             + (f" ({int(fastest)})" if fastest is not pd.NA else "")
             + ", the paper's against 160 (recomputed from its Table 6 at N = 50,000 and "
             "Table 7)."]  # fmt: skip
    note = frame["note"].iloc[0]
    if note:
        lines.append(f"Measured: {note}.")
    return "\n".join(lines) + "\n"


def trajectory_table(traj, cell) -> pd.DataFrame:
    """Figs 3-4: the kept estimates x^_k of one filter cell against the truth
    x_k at t = k dt, with the run's RMSE and bias (every step) per component."""
    arrays, meta = cell
    steps = np.asarray(arrays["estimate_steps"])
    est, truth = np.asarray(arrays["estimates"]), np.asarray(traj["truth"])[steps]
    rmse, bias = arrays["rmse"], arrays["bias"]
    return pd.DataFrame({
        "t": steps * meta["dt"], "step": steps, "truth_x": truth[:, 0], "truth_y": truth[:, 1],
        "estimate_x": est[:, 0], "estimate_y": est[:, 1], "rmse_x": rmse[0], "rmse_y": rmse[1],
        "bias_x": bias[0], "bias_y": bias[1], "filter": meta["filter"], "n": meta["n"],
        "trajectory": meta["trajectory"], "run": meta["run"],
        "backend": BACKEND_LABELS[meta["backend"]], "device": meta["device"],
    })  # fmt: skip


def snapshot_table(cell) -> pd.DataFrame:
    """Figs 5-6: the kept particles (index i, Ẋ, Ẏ) right after the resampling
    at the snapshot step, with the distinct values, spread and range over all
    N particles."""
    arrays, meta = cell
    x = np.asarray(arrays["snapshot"])
    distinct, std, span = arrays["snapshot_distinct"], arrays["snapshot_std"], arrays[
        "snapshot_range"]  # fmt: skip
    return pd.DataFrame({
        "particle": np.arange(x.shape[0]), "xdot": x[:, 0], "ydot": x[:, 1],
        "distinct_x": int(distinct[0]), "distinct_y": int(distinct[1]),
        "distinct_particles": int(distinct[2]), "std_x": std[0], "std_y": std[1],
        "range_x": span[0], "range_y": span[1], "t": meta["snapshot_step"] * meta["dt"],
        "filter": meta["filter"], "n": meta["n"], "trajectory": meta["trajectory"],
        "backend": BACKEND_LABELS[meta["backend"]], "device": meta["device"],
    })  # fmt: skip


def fig11_table(cell) -> pd.DataFrame:
    """Fig 11: per thread i the iterations j_i + 1 of the local-CDF search,
    and the paper's mean over its 5,000 threads."""
    arrays, meta = cell
    it = np.asarray(arrays["iterations"])
    return pd.DataFrame({
        "thread": np.arange(it.size), "iterations": it, "mean_iterations": float(it.mean()),
        "prefix_j": np.asarray(arrays["prefix_j"]), "ess": float(arrays["ess"]),
        "paper_mean_iterations": catalog.PUBLISHED_FIG11["mean_iterations"],
        "n": meta["n"], "step": meta["step"], "t": meta["time_s"],
        "backend": BACKEND_LABELS[meta["backend"]], "device": meta["device"],
    })  # fmt: skip
