"""Tidy tables of Das, Mazumdar & Banerjee (2014) from the cells' (arrays,
metadata), with the paper's numbers (catalog) beside ours.

* :func:`methods_table`: every filter's RMSE, bias and time per run at the
  figure N, the Kalman filter's floor, the paper's RMSEs and bias;
* :func:`table5`: milliseconds per filter step of CPU systematic SIR, CPU D3
  (the timing cells) and GPU D3 at 160 threads per block against N;
* :func:`table6` (and Fig 10): GPU D3 milliseconds per step against threads
  per block for every N, and the D3 kernel's occupancy per block size;
* :func:`table7`: GPU D3 RMSE against threads per block at the figure N,
  whether it is the same at every block size, and §4.3's CPM against the
  fastest threads per block;
* :func:`trajectory_table` (Figs 3-4), :func:`snapshot_table` (Figs 5-6),
  :func:`fig11_table` (Fig 11): the figures' data.

Times are per filter step, in milliseconds: a CPU cell's ``wall_seconds``
or a GPU run's ``device_seconds`` over its ``steps`` (the paper's unit is
not stated, and the timing runs are shorter than the figures' runs). The
methods table's values are means over the cells' trajectories and runs (the
RMSE's norm is the mean of each run's norm). Where no GPU ran, the GPU
columns are empty and ``note`` says why.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pfresample.backend import BACKEND_LABELS

from ..pipeline.tables import markdown_table
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
               "noise": meta.get("noise", ""), "cdf": meta.get("cdf", ""),
               "regime": meta.get("regime", ""),
               "filter_process_sd": meta.get("filter_process_sd", math.nan), "n": meta["n"],
               "rmse_x": rmse[0], "rmse_y": rmse[1], "rmse_norm": math.hypot(*rmse),
               "bias_x": bias[0], "bias_y": bias[1],
               "seconds": float(arrays["wall_seconds"]),
               "backend": meta["backend"], "device": meta["device"]}  # fmt: skip
        if "snapshot_distinct" in arrays:
            row["snapshot_distinct"] = float(arrays["snapshot_distinct"][2])
        rows.append(row)
    frame = pd.DataFrame(rows)
    keys = ["filter", "method", "noise", "cdf", "regime", "filter_process_sd", "n", "backend"]
    agg = {c: "mean" for c in frame.columns if c not in keys + ["device"]}
    out = frame.groupby(keys, sort=False, dropna=False).agg({**agg, "device": "first"})
    out["runs"] = frame.groupby(keys, sort=False, dropna=False).size()
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
          "regime": "", "filter_process_sd": math.nan, "n": pd.NA,
          "rmse_x": kf_rmse[0], "rmse_y": kf_rmse[1],
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
    header = ["filter", "method", "noise", "cdf", "regime", "N", "RMSE Ẋ", "RMSE Ẏ", "RMSE norm",
              "bias Ẋ", "bias Ẏ", "s / run", "runs", "backend", "paper RMSE",
              "paper bias"]  # fmt: skip
    rows = [[r["filter"], r["method"], r["noise"], r["cdf"], r["regime"], _fmt(r["n"]),
             _fmt(r["rmse_x"]),
             _fmt(r["rmse_y"]), _fmt(r["rmse_norm"]), _fmt(r["bias_x"]), _fmt(r["bias_y"]),
             _fmt(r["seconds"]), _fmt(r["runs"]), r["backend"], _fmt(r["paper_rmse"]),
             _fmt(r["paper_bias"])] for _, r in frame.iterrows()]  # fmt: skip
    title = ("# Das et al. (2014): every filter's RMSE and bias (m/s) and seconds per run, "
             "with the Kalman filter's floor\n\n")  # fmt: skip
    note = ("\nPaper (§3.2): RMSE 2.9535 m/s (systematic), 0.2681 m/s (D3), bias 0.025 m/s "
            "(D3), as printed; the component or norm is not stated. Regime: paper = no process "
            "noise in the filter (eqs. 11-12 as printed), ours = the truth's process "
            "noise.\n")  # fmt: skip
    return title + "\n".join(markdown_table(header, rows)) + "\n" + note


def gpu_summary(cells) -> pd.DataFrame:
    """One row per (threads per block, N) of the GPU cells: the run's
    milliseconds per step (device time, and the host's wall time), steps,
    RMSE, bias and the D3 kernel's occupancy."""
    rows = []
    for arrays, meta in cells:
        steps = np.asarray(arrays["steps"], dtype=np.float64)
        rmse, bias = np.asarray(arrays["rmse"]), np.asarray(arrays["bias"])
        ms = 1e3 * np.asarray(arrays["device_seconds"], dtype=np.float64) / steps
        wall_ms = 1e3 * np.asarray(arrays["wall_seconds"], dtype=np.float64) / steps
        nan = np.full(len(ms), np.nan)
        med, lo, hi = (np.asarray(arrays.get(f"chunk_ms_{k}", nan), dtype=np.float64)
                       for k in ("median", "min", "max"))  # fmt: skip
        window = np.asarray(arrays.get("window_ms_per_step", nan), dtype=np.float64)
        window_steps = int(arrays.get("window_steps", 0))
        for i, t in enumerate(np.asarray(arrays["threads"]).tolist()):
            rows.append({
                "algorithm": meta.get("algorithm", catalog.D3_FILTER),
                "threads": int(t), "n": int(meta["n"]), "ms_per_step": float(ms[i]),
                "ms_median": float(med[i]), "ms_min": float(lo[i]), "ms_max": float(hi[i]),
                "window_ms_per_step": float(window[i]), "window_steps": window_steps,
                "wall_ms_per_step": float(wall_ms[i]), "steps": int(steps[i]),
                "rmse_x": float(rmse[i, 0]), "rmse_y": float(rmse[i, 1]),
                "rmse_norm": math.hypot(*rmse[i]), "bias_x": float(bias[i, 0]),
                "bias_y": float(bias[i, 1]), "occupancy": float(arrays["occupancy"][i]),
                "device": meta["device"],
            })  # fmt: skip
    return pd.DataFrame(rows, columns=["algorithm", "threads", "n", "ms_per_step", "ms_median",
                                       "ms_min", "ms_max", "window_ms_per_step",
                                       "window_steps", "wall_ms_per_step", "steps",
                                       "rmse_x", "rmse_y", "rmse_norm", "bias_x", "bias_y",
                                       "occupancy", "device"])  # fmt: skip


def timing_summary(cells) -> pd.DataFrame:
    """One row per timing cell (Table 5's CPU columns): filter, N, milliseconds
    per step (the filter's wall time over its steps), steps, device."""
    rows = [{"filter": meta["filter"], "n": int(meta["n"]), "steps": int(arrays["steps"]),
             "ms_per_step": 1e3 * float(arrays["wall_seconds"]) / int(arrays["steps"]),
             "device": meta["device"]} for arrays, meta in cells]  # fmt: skip
    return pd.DataFrame(rows, columns=["filter", "n", "steps", "ms_per_step", "device"])


def _one(part: pd.DataFrame, column: str = "ms_per_step") -> float:
    return float(part[column].iloc[0]) if not part.empty else math.nan


def table5(cpu_cells, gpu_cells, ns) -> pd.DataFrame:
    """Table 5 at each N of ``ns``: milliseconds per filter step of the CPU
    systematic SIR filter and the CPU D3 filter (``cpu_cells``: the timing
    cells) and of the GPU D3 filters at 160 threads per block -- ours
    (``gpu_d3_*``) and the paper's algorithm (``gpu_paper_*``), empty without
    GPU cells -- over the CPU's window where the GPU cell timed it apart
    (``window_ms_per_step``), else over the GPU run; the steps each was
    measured over, the speed-ups, and the paper's numbers (as printed, unit
    not stated; its ratios are unit-free)."""
    cpu = timing_summary(cpu_cells)
    gpu = gpu_summary(gpu_cells)
    gpu = gpu[gpu["threads"] == catalog.TABLE5_THREADS]
    rows = []
    for n in ns:
        sir_part = cpu[(cpu["filter"] == catalog.SIR_FILTER) & (cpu["n"] == n)]
        d3_part = cpu[(cpu["filter"] == catalog.D3_FILTER) & (cpu["n"] == n)]
        sir, d3 = _one(sir_part), _one(d3_part)
        paper = catalog.PUBLISHED_TABLE5.get(n, (math.nan,) * 3)
        row = {"n": n, "cpu_systematic_ms_per_step": sir, "cpu_d3_ms_per_step": d3}
        for key, algorithm in (("d3", catalog.D3_FILTER), ("paper", catalog.PAPER_GPU)):
            part = gpu[(gpu["n"] == n) & (gpu["algorithm"] == algorithm)]
            window = _one(part, "window_ms_per_step")
            g = window if not math.isnan(window) else _one(part)
            steps = _one(part, "window_steps") if not math.isnan(window) else _one(part, "steps")
            row |= {f"gpu_{key}_ms_per_step": g, f"gpu_{key}_steps": steps,
                    f"speedup_gpu_{key}_vs_cpu_systematic": sir / g,
                    f"speedup_gpu_{key}_vs_cpu_d3": d3 / g}  # fmt: skip
        row |= {
            "cpu_d3_over_systematic": d3 / sir, "cpu_steps": _one(d3_part, "steps"),
            "paper_cpu_systematic": paper[0], "paper_cpu_d3": paper[1], "paper_gpu_d3": paper[2],
            "paper_speedup_gpu_vs_cpu_systematic": paper[0] / paper[2],
            "paper_speedup_gpu_vs_cpu_d3": paper[1] / paper[2],
            "paper_cpu_d3_over_systematic": paper[1] / paper[0],
            "gpu_threads": catalog.TABLE5_THREADS,
            "cpu_device": _devices(cpu_cells), "gpu_device": _devices(gpu_cells),
            "paper_unit": catalog.PUBLISHED_NOTE, "note": "" if gpu_cells else NO_GPU,
        }  # fmt: skip
        rows.append(row)
    frame = pd.DataFrame(rows)
    for column in ("cpu_steps", "gpu_d3_steps", "gpu_paper_steps"):
        frame[column] = frame[column].astype("Int64")
    return frame


def _steps(values) -> str:
    steps = sorted({int(v) for v in values if v is not pd.NA and not pd.isna(v)})
    return " / ".join(f"{v:,}" for v in steps) or "none"


def table5_markdown(frame: pd.DataFrame) -> str:
    header = ["N", "CPU systematic (ms/step)", "CPU D3 (ms/step)", "GPU D3, ours (ms/step)",
              "GPU D3, paper's algorithm (ms/step)", "ours vs CPU systematic", "ours vs CPU D3",
              "paper's algorithm vs CPU systematic", "paper's algorithm vs CPU D3",
              "paper CPU systematic", "paper CPU D3", "paper GPU D3",
              "paper GPU vs CPU systematic", "paper GPU vs CPU D3"]  # fmt: skip
    rows = [[f"{int(r['n']):,}", _fmt(r["cpu_systematic_ms_per_step"]),
             _fmt(r["cpu_d3_ms_per_step"]), _fmt(r["gpu_d3_ms_per_step"]),
             _fmt(r["gpu_paper_ms_per_step"]),
             _fmt(r["speedup_gpu_d3_vs_cpu_systematic"], 3),
             _fmt(r["speedup_gpu_d3_vs_cpu_d3"], 3),
             _fmt(r["speedup_gpu_paper_vs_cpu_systematic"], 3),
             _fmt(r["speedup_gpu_paper_vs_cpu_d3"], 3),
             _fmt(r["paper_cpu_systematic"], 6), _fmt(r["paper_cpu_d3"], 6),
             _fmt(r["paper_gpu_d3"], 6), _fmt(r["paper_speedup_gpu_vs_cpu_systematic"], 3),
             _fmt(r["paper_speedup_gpu_vs_cpu_d3"], 3)]
            for _, r in frame.iterrows()]  # fmt: skip
    first = frame.iloc[0]
    lines = ["# Das et al. (2014) Table 5: milliseconds per filter step (measured) and the "
             f"paper's numbers ({catalog.PUBLISHED_NOTE})", "",
             *markdown_table(header, rows), "",
             f"CPU: {first['cpu_device']}, one run of trajectory 0 over its first "
             f"{_steps(frame['cpu_steps'])} steps (wall time over steps). "
             + (f"GPU: {first['gpu_device']}, {int(first['gpu_threads'])} threads per block, "
                f"one run each, over {_steps(frame['gpu_d3_steps'])} / "
                f"{_steps(frame['gpu_paper_steps'])} steps (ours / the paper's algorithm; "
                "CUDA-event time over steps). " if first["gpu_device"] else "GPU: none. ")
             + "The paper's numbers are per run of 36,000 steps in an unstated unit: compare "
             "the speed-ups, which are unit-free."]  # fmt: skip
    if first["note"]:
        lines.append(f"GPU column: {first['note']}.")
    return "\n".join(lines) + "\n"


def _algorithms(gpu: pd.DataFrame) -> list[str]:
    """The GPU algorithms measured, ours first; ours alone where none ran."""
    found = list(dict.fromkeys(gpu["algorithm"])) if not gpu.empty else []
    return sorted(found or [catalog.D3_FILTER], key=lambda a: a != catalog.D3_FILTER)


def table6(gpu_cells, ns, threads) -> pd.DataFrame:
    """Table 6 and Fig 10: one row per (algorithm, threads per block, N) of
    our grid or the paper's: the GPU D3 filter's milliseconds per step over
    its run (``gpu_d3_ms_per_step``; the algorithm is ``algorithm``: ours
    ``d3`` or the paper's ``d3-paper``), the median and the min-max of its
    replays of 100 steps (the repeats), the steps it was measured over, the
    dominant kernel's occupancy at that block size, and the paper's number
    (unit not stated). ``gpu_d3_wall_ms_per_step``: the host's wall time of
    the same runs over their steps."""
    summary = gpu_summary(gpu_cells)
    gpu = summary.set_index(["algorithm", "threads", "n"])
    grid = {(t, n) for t in threads for n in ns}
    grid |= {(t, n) for t in catalog.PUBLISHED_TABLE6 for n in catalog.TABLE6_N}
    rows = []
    for algorithm in _algorithms(summary):
        for t, n in sorted(grid):
            key = (algorithm, t, n)
            m = gpu.loc[key] if key in gpu.index else None
            paper = catalog.PUBLISHED_TABLE6.get(t)

            def get(column, m=m):
                return m[column] if m is not None else math.nan

            rows.append({
                "algorithm": algorithm, "threads": t, "n": n,
                "gpu_d3_ms_per_step": get("ms_per_step"),
                "ms_median": get("ms_median"), "ms_min": get("ms_min"), "ms_max": get("ms_max"),
                "gpu_d3_wall_ms_per_step": get("wall_ms_per_step"),
                "steps": m["steps"] if m is not None else pd.NA,
                "occupancy": get("occupancy"),
                "paper": paper[catalog.TABLE6_N.index(n)] if paper and n in catalog.TABLE6_N
                else math.nan,
                "device": m["device"] if m is not None else "",
                "paper_unit": catalog.PUBLISHED_NOTE, "note": "" if gpu_cells else NO_GPU,
            })  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["steps"] = frame["steps"].astype("Int64")
    return frame


def _wide(frame: pd.DataFrame, column: str) -> tuple[list[int], dict]:
    ns = sorted(frame["n"].unique())
    cells = {(r["threads"], r["n"]): r[column] for _, r in frame.iterrows()}
    return ns, cells


def table6_markdown(frame: pd.DataFrame) -> str:
    lines = ["# Das et al. (2014) Table 6: GPU D3 milliseconds per filter step against "
             "threads per block (TPB)", ""]  # fmt: skip
    algorithms = list(dict.fromkeys(frame["algorithm"]))
    tables = [(frame[frame["algorithm"] == a], "gpu_d3_ms_per_step",
               f"measured, {a} (ms per step over the run)") for a in algorithms]  # fmt: skip
    tables.append((frame[frame["algorithm"] == algorithms[0]], "paper",
                   f"paper, per run ({catalog.PUBLISHED_NOTE})"))  # fmt: skip
    for part, column, what in tables:
        ns, cells = _wide(part, column)
        header = ["TPB", *[f"{n:,}" for n in ns]]
        rows = [[str(t), *[_fmt(cells.get((t, n), math.nan)) for n in ns]]
                for t in sorted(part["threads"].unique())]  # fmt: skip
        lines += [f"## {what}", "", *markdown_table(header, rows), ""]
    for a in algorithms:
        part = frame[(frame["algorithm"] == a) & frame["occupancy"].notna()]
        occ = part.groupby("threads")["occupancy"].first()
        if not occ.empty:
            lines += [f"## theoretical occupancy of {a}'s dominant D3 kernel", "",
                      *markdown_table(["TPB", *map(str, occ.index)], [["occupancy",
                                      *[_fmt(v, 3) for v in occ]]]), ""]  # fmt: skip
    measured = frame[frame["gpu_d3_ms_per_step"].notna()]
    if not measured.empty:
        lines.append(f"Measured: one run of trajectory 0 per (algorithm, TPB, N) over "
                     f"{_steps(measured['steps'])} steps, CUDA-event time over steps (the "
                     "CSV has the median and min-max of its replays of 100 steps); "
                     f"{', '.join(sorted(set(measured['device'])))}.")  # fmt: skip
    note = frame["note"].iloc[0]
    if note:
        lines.append(f"Measured: {note}.")
    return "\n".join(lines) + "\n"


def identical(frame: pd.DataFrame, columns=("rmse_x", "rmse_y", "bias_x", "bias_y")) -> str:
    """Whether every measured row of ``frame`` has the same values in
    ``columns``, bit for bit: "yes" or "no"; "" with fewer than two rows."""
    values = frame[list(columns)].dropna()
    if len(values) < 2:
        return ""
    return "yes" if (values.nunique() == 1).all() else "no"


def table7(gpu_cells, n: int, threads) -> pd.DataFrame:
    """Table 7 and §4.3's CPM at N = ``n``: per (algorithm, threads per
    block) the GPU D3 filter's RMSE per component over its run, its norm,
    the bias, the milliseconds per step and the run's seconds (ms per step
    times its steps); whether RMSE and bias are the same at every TPB of the
    algorithm (``identical_across_tpb``); the CPM of every TPB against the
    algorithm's fastest (``cpm_vs_fastest``, the fastest's own 1: a ratio,
    the same from milliseconds per step as from seconds per run, since every
    TPB runs the same steps); the paper's RMSEs, its printed CPM_{TPB|160}
    and the CPM recomputed from its Tables 6 (N = 50,000) and 7."""
    summary = gpu_summary([c for c in gpu_cells if c[1]["n"] == n])
    rows = []
    for algorithm in _algorithms(summary):
        gpu = summary[summary["algorithm"] == algorithm].set_index("threads")
        fastest = gpu["ms_per_step"].idxmin() if not gpu.empty else None
        same = identical(gpu)
        for t in sorted(set(threads) | set(catalog.PUBLISHED_TABLE7)):
            m = gpu.loc[t] if t in gpu.index else None
            paper = catalog.PUBLISHED_TABLE7.get(t, (math.nan, math.nan))
            row = {"algorithm": algorithm, "threads": t, "n": n}
            for k in ("rmse_x", "rmse_y", "rmse_norm", "bias_x", "bias_y", "ms_per_step",
                      "ms_median", "ms_min", "ms_max", "wall_ms_per_step"):  # fmt: skip
                row[k] = float(m[k]) if m is not None else math.nan
            row["steps"] = int(m["steps"]) if m is not None else pd.NA
            row["run_seconds"] = (row["ms_per_step"] * m["steps"] / 1e3 if m is not None
                                  else math.nan)  # fmt: skip
            row["identical_across_tpb"] = same
            row["fastest_threads"] = fastest if fastest is not None else pd.NA
            if m is not None:
                ref = gpu.loc[fastest]
                row["cpm_vs_fastest"] = catalog.cpm(
                    1 / row["rmse_norm"], row["ms_per_step"], 1 / ref["rmse_norm"],
                    ref["ms_per_step"],
                )  # fmt: skip
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
    frame["steps"] = frame["steps"].astype("Int64")
    return frame


def table7_markdown(frame: pd.DataFrame) -> str:
    header = ["TPB", "RMSE Ẋ", "RMSE Ẏ", "ms / step", "s / run", "CPM vs fastest",
              "paper RMSE Ẋ", "paper RMSE Ẏ", "paper CPM vs 160",
              "paper CPM recomputed"]  # fmt: skip
    n = int(frame["n"].iloc[0])
    lines = [f"# Das et al. (2014) Table 7 and the CPM of §4.3: GPU D3 at N = {n:,}", ""]
    for algorithm, part in frame.groupby("algorithm", sort=False):
        rows = [[str(r["threads"]), _fmt(r["rmse_x"]), _fmt(r["rmse_y"]), _fmt(r["ms_per_step"]),
                 _fmt(r["run_seconds"]), _fmt(r["cpm_vs_fastest"]), _fmt(r["paper_rmse_x"]),
                 _fmt(r["paper_rmse_y"]), _fmt(r["paper_cpm_vs_160"]),
                 _fmt(r["paper_cpm_recomputed"])]
                for _, r in part.iterrows()]  # fmt: skip
        fastest = part["fastest_threads"].iloc[0]
        same = part["identical_across_tpb"].iloc[0]
        lines += [f"## {algorithm}", "", *markdown_table(header, rows), ""]
        if fastest is not pd.NA:
            lines.append(f"Fastest TPB: {int(fastest)}.")
        if same:
            steps = _steps(part["steps"])
            lines.append(f"RMSE and bias identical across TPB (bit for bit, runs of {steps} "
                         f"steps): {same}.")  # fmt: skip
        lines.append("")
    lines.append(
        "CPM_{a|b} = (P_a C_b) / (P_b C_a), P = 1 / |(RMSE Ẋ, RMSE Ẏ)|, C = "
        "milliseconds per step (every TPB runs the same steps, so the ratio is that "
        "of seconds per run); ours against the algorithm's fastest TPB, the paper's "
        "against 160 (recomputed from its Table 6 at N = 50,000 and Table 7)."
    )
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
    paper_it = np.asarray(arrays.get("paper_iterations", np.full(it.size, -1)))
    return pd.DataFrame({
        "thread": np.arange(it.size), "iterations": it, "mean_iterations": float(it.mean()),
        "paper_thresholds_iterations": paper_it,
        "paper_thresholds_mean_iterations": float(paper_it.mean()),
        "prefix_j": np.asarray(arrays["prefix_j"]), "ess": float(arrays["ess"]),
        "paper_mean_iterations": catalog.PUBLISHED_FIG11["mean_iterations"],
        "n": meta["n"], "step": meta["step"], "t": meta["time_s"],
        "backend": BACKEND_LABELS[meta["backend"]], "device": meta["device"],
    })  # fmt: skip
