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

from ..pipeline import speedups
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
    per step (the filter's wall time over its steps; ``cpu_ms_per_step``: the
    process's CPU time, NaN in cells that predate it), steps, device, and for
    Table 1's loop whether numba compiled it (``numba``; None for the others)."""
    rows = [{"filter": meta["filter"], "n": int(meta["n"]), "steps": int(arrays["steps"]),
             "ms_per_step": 1e3 * float(arrays["wall_seconds"]) / int(arrays["steps"]),
             "cpu_ms_per_step": 1e3 * float(arrays.get("cpu_seconds", math.nan))
             / int(arrays["steps"]),
             "device": meta["device"], "numba": meta.get("numba")}
            for arrays, meta in cells]  # fmt: skip
    return pd.DataFrame(rows, columns=["filter", "n", "steps", "ms_per_step", "cpu_ms_per_step",
                                       "device", "numba"])  # fmt: skip


def _one(part: pd.DataFrame, column: str = "ms_per_step") -> float:
    return float(part[column].iloc[0]) if not part.empty else math.nan


def table5(cpu_cells, gpu_cells, ns) -> pd.DataFrame:
    """Table 5 at each N of ``ns``: milliseconds per filter step of the CPU
    systematic SIR filter and the CPU D3 filter (``cpu_cells``: the timing
    cells; beside them the process's CPU time, ``*_cpu_ms_per_step``, and, where
    a cell timed it, the D3 filter with Table 1's sequential loop,
    ``cpu_d3_loop_*``, ``cpu_d3_loop_numba`` saying whether numba compiled it)
    and of the GPU D3 filters at 160 threads per block -- ours
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
        loop_part = cpu[(cpu["filter"] == catalog.LOOP_FILTER) & (cpu["n"] == n)]
        sir, d3, loop = _one(sir_part), _one(d3_part), _one(loop_part)
        paper = catalog.PUBLISHED_TABLE5.get(n, (math.nan,) * 3)
        row = {"n": n, "cpu_systematic_ms_per_step": sir, "cpu_d3_ms_per_step": d3,
               "cpu_d3_loop_ms_per_step": loop,
               "cpu_systematic_cpu_ms_per_step": _one(sir_part, "cpu_ms_per_step"),
               "cpu_d3_cpu_ms_per_step": _one(d3_part, "cpu_ms_per_step"),
               "cpu_d3_loop_cpu_ms_per_step": _one(loop_part, "cpu_ms_per_step"),
               "cpu_d3_loop_numba": loop_part["numba"].iloc[0] if not loop_part.empty else None,
               "cpu_d3_loop_over_systematic": loop / sir}  # fmt: skip
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
    header = ["N", "CPU systematic (ms/step)", "CPU D3 (ms/step)",
              "CPU D3, Table 1's loop (ms/step)", "GPU D3, ours (ms/step)",
              "GPU D3, paper's algorithm (ms/step)", "ours vs CPU systematic", "ours vs CPU D3",
              "paper's algorithm vs CPU systematic", "paper's algorithm vs CPU D3",
              "paper CPU systematic", "paper CPU D3", "paper GPU D3",
              "paper GPU vs CPU systematic", "paper GPU vs CPU D3"]  # fmt: skip
    rows = [[f"{int(r['n']):,}", _fmt(r["cpu_systematic_ms_per_step"]),
             _fmt(r["cpu_d3_ms_per_step"]), _fmt(r["cpu_d3_loop_ms_per_step"]),
             _fmt(r["gpu_d3_ms_per_step"]),
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
    compiled = {bool(v) for v in frame["cpu_d3_loop_numba"] if v is not None and not pd.isna(v)}
    if compiled:
        lines.append("Table 1's loop: " + ("compiled by numba." if compiled == {True} else
                     "plain Python where numba was not installed (cpu_d3_loop_numba), "
                     "not the compiled baseline."))  # fmt: skip
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


# --- ratios 1 and 2 of Table 5: the GPU over the document's kind of CPU code and over the
# best CPU code on every core --------------------------------------------------------------

THIS_RUN = speedups.THIS_RUN
OVER_DOCUMENT = ("ratio 1: the GPU over the document's kind of CPU baseline (Table 5's CPU "
                 "filter in NumPy, one process: the pipeline's timing cell)")  # fmt: skip
OVER_BEST = ("ratio 2 (the headline): the GPU over the best CPU code (native/d3_best.c) of "
             "the same filter on every core")  # fmt: skip
# Table 5's CPU columns (the baseline of a row) -> the rows of bench/d3_best_cpu.py's
# times.csv holding the same filter: one NumPy thread (seq/d3-table is the library's D3
# filter, the timing cell's), the best CPU code.
EVIDENCE_CODES = {catalog.SIR_FILTER: ("seq/systematic", "best/systematic"),
                  catalog.D3_FILTER: ("seq/d3-table", "best/d3")}  # fmt: skip
SPEEDUP_COLUMNS = (
    "n", "gpu_algorithm", "baseline", "gpu_s", "gpu_s_min", "gpu_s_max", "gpu_steps",
    "gpu_threads", "gpu_device", "gpu_source", "doc_cpu_s", "doc_cpu_code", "doc_cpu_steps",
    "best_cpu_s", "best_cpu_s_min", "best_cpu_s_max", "best_cpu_code", "best_cpu_threads",
    "best_cpu_steps", "best_cpu_repeats", "cpu", "cpu_host", "cpu_cores", "over_document",
    "over_best_cpu", "over_best_cpu_low", "over_best_cpu_high", "best_cpu_own_algorithm_s",
    "over_best_cpu_own_algorithm", "paper_printed", "one_host", "evidence_over_document",
    "evidence_over_best_cpu", "evidence_cpu", "note",
)  # fmt: skip


def best_code_name(label: str, options: dict) -> str:
    """The best CPU code of a filter as the table names it, e.g. ``d3_best.c d3 (noise
    eq5, cdf prefix)``."""
    if options.get("kind") != "d3":
        return f"{catalog.BEST_CPU_CODE} {label}"
    return f"{catalog.BEST_CPU_CODE} {label} (noise {options['noise']}, cdf {options['cdf']})"


def best_cpu_times(cells) -> pd.DataFrame:
    """The best-CPU cells: per (N, filter) the best CPU code's seconds a step over its
    window (median, min, max of the repeats), its threads, window and host."""
    rows = []
    for arrays, meta in cells:
        per_step = np.asarray(arrays["seconds_per_step"], dtype=np.float64)
        for k, label in enumerate(meta["filters"]):
            rows.append({"n": int(meta["n"]), "filter": label,
                         "best_cpu_s": float(np.median(per_step[k])),
                         "best_cpu_s_min": float(per_step[k].min()),
                         "best_cpu_s_max": float(per_step[k].max()),
                         "best_cpu_code": best_code_name(label, meta["options"][k]),
                         "best_cpu_threads": int(meta["threads"]),
                         "best_cpu_steps": int(meta["window_steps"]),
                         "best_cpu_repeats": int(meta["repeats"]), "cpu": meta["cpu"],
                         "cpu_host": meta["host"], "cpu_cores": int(meta["cores"])})  # fmt: skip
    return pd.DataFrame(rows, columns=["n", "filter", "best_cpu_s", "best_cpu_s_min",
                                       "best_cpu_s_max", "best_cpu_code", "best_cpu_threads",
                                       "best_cpu_steps", "best_cpu_repeats", "cpu", "cpu_host",
                                       "cpu_cores"])  # fmt: skip


def doc_cpu_times(cells) -> pd.DataFrame:
    """The timing cells (Table 5's CPU columns, the document's kind of baseline): per (N,
    filter) the NumPy filter's seconds a step over its run, one process, and its host."""
    rows = [{"n": int(meta["n"]), "filter": meta["filter"],
             "doc_cpu_s": float(arrays["wall_seconds"]) / int(arrays["steps"]),
             "doc_cpu_code": f"NumPy run_filter {meta['filter']}, one process",
             "doc_cpu_steps": int(arrays["steps"]), "doc_host": meta.get("host")}
            for arrays, meta in cells]  # fmt: skip
    return pd.DataFrame(rows, columns=["n", "filter", "doc_cpu_s", "doc_cpu_code",
                                       "doc_cpu_steps", "doc_host"])  # fmt: skip


def gpu_times(cells) -> pd.DataFrame:
    """This run's GPU side: per (N, algorithm) the GPU cell's seconds a step at Table 5's
    160 threads per block, over the timing window where the cell timed it apart (Table 5's
    value), with the min and max of its replays of 100 steps, and its host."""
    rows = []
    for r in gpu_summary(cells).to_dict("records"):
        if r["threads"] != catalog.TABLE5_THREADS:
            continue
        window = np.isfinite(r["window_ms_per_step"])
        rows.append({"n": r["n"], "gpu_algorithm": r["algorithm"],
                     "gpu_s": 1e-3 * (r["window_ms_per_step"] if window else r["ms_per_step"]),
                     "gpu_s_min": 1e-3 * r["ms_min"], "gpu_s_max": 1e-3 * r["ms_max"],
                     "gpu_steps": r["window_steps"] if window else r["steps"],
                     "gpu_device": r["device"], "gpu_source": THIS_RUN})  # fmt: skip
    hosts = {(int(m["n"]), m.get("algorithm", catalog.D3_FILTER)): m.get("host")
             for _, m in cells}  # fmt: skip
    frame = pd.DataFrame(rows, columns=["n", "gpu_algorithm", "gpu_s", "gpu_s_min", "gpu_s_max",
                                        "gpu_steps", "gpu_device", "gpu_source"])  # fmt: skip
    keys = zip(frame["n"], frame["gpu_algorithm"], strict=True)
    frame["gpu_host"] = [hosts.get(key) for key in keys]
    return frame


def evidence_gpu_times(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """The committed GPU side (``frame``: a ``times.csv`` of bench/d3_best_cpu.py), one
    row per (N, GPU algorithm, baseline): its ``gpu/<algorithm>`` rows (milliseconds a
    step over steps 3 ... 502, median, min and max of the replays), labelled ``source``,
    with that host's own ratios beside (``evidence_over_document``: its one-thread NumPy
    filter of the baseline, ``evidence_over_best_cpu``: its best CPU code of the baseline
    on all its cores; both one-host figures of that machine)."""
    what = frame.set_index(["what", "n"])

    def ms(code: str, n: int, column: str = "ms_median") -> float:
        return float(what.loc[(code, n), column]) if (code, n) in what.index else math.nan

    rows = []
    for r in frame[frame["what"].str.startswith("gpu/")].itertuples(index=False):
        n, gpu = int(r.n), float(r.ms_median)
        for baseline, (seq, best) in EVIDENCE_CODES.items():
            best_row = what.loc[(best, n)] if (best, n) in what.index else None
            rows.append({"n": n, "gpu_algorithm": r.what.removeprefix("gpu/"),
                         "baseline": baseline, "gpu_s": 1e-3 * gpu,
                         "gpu_s_min": 1e-3 * float(r.ms_min), "gpu_s_max": 1e-3 * float(r.ms_max),
                         "gpu_steps": int(r.steps), "gpu_device": r.device,
                         "gpu_source": source, "gpu_host": None,
                         "evidence_over_document": ms(seq, n) / gpu,
                         "evidence_over_best_cpu": ms(best, n) / gpu,
                         "evidence_cpu": "" if best_row is None else
                         f"{best_row['cpu']}, {int(best_row['threads'])} threads of "
                         f"{int(best_row['cores'])} CPUs"})  # fmt: skip
    return pd.DataFrame(rows)


def evidence_source(found) -> str:
    """A committed run's ``gpu_source``: ``evidence/<folder> (<device>, <date>)``
    (``found``: a ``pipeline.evidence.Evidence``)."""
    return f"evidence/{found.folder} ({found.device}, {found.date})"


def speedup_table(timing, best, gpu, ns, algorithms, evidence=None) -> pd.DataFrame:
    """Ratios 1 and 2 of Table 5, one row per (N of ``ns``, GPU algorithm of ``algorithms``,
    Table 5's CPU filter ``baseline``: systematic, d3), seconds a filter step:

    * ``gpu_s``: this run's GPU cells (``gpu``) at 160 threads per block, else, where
      none ran, the committed run ``evidence`` (a ``pipeline.evidence.Evidence`` of
      bench/d3_best_cpu.py's ``times.csv``, or None), labelled in ``gpu_source``;
    * ``doc_cpu_s``: the timing cells (``timing``): the baseline's NumPy filter on one
      process, the document's kind of baseline; ``over_document`` = doc_cpu_s / gpu_s;
    * ``best_cpu_s``: the best-CPU cells (``best``): the best CPU code of the baseline's
      filter on every core; ``over_best_cpu`` = best_cpu_s / gpu_s, its range from the
      sides' extremes; and the best CPU code of the GPU's own algorithm
      (``over_best_cpu_own_algorithm``).

    ``one_host``: the GPU and both CPU sides ran in this run on one host; ``note`` says
    otherwise which machines a ratio sets side by side."""
    here = gpu_times(gpu)
    committed = None
    if here.empty and evidence is not None:
        committed = evidence_gpu_times(evidence.frame(), evidence_source(evidence))
    doc_by = {(r["n"], r["filter"]): r for r in doc_cpu_times(timing).to_dict("records")}
    best_by = {(r["n"], r["filter"]): r for r in best_cpu_times(best).to_dict("records")}
    gpu_by = {(r["n"], r["gpu_algorithm"]): r for r in here.to_dict("records")}
    ev_by = (
        {}
        if committed is None
        else {(r["n"], r["gpu_algorithm"], r["baseline"]): r for r in committed.to_dict("records")}
    )
    rows = []
    for n in ns:
        for algorithm in algorithms:
            for baseline in catalog.TIMING_FILTERS:
                g = ev_by.get((n, algorithm, baseline)) or gpu_by.get((n, algorithm)) or {}
                d = doc_by.get((n, baseline), {})
                b = best_by.get((n, baseline), {})
                own = best_by.get((n, algorithm), {})
                row = {"n": n, "gpu_algorithm": algorithm, "baseline": baseline,
                       "gpu_threads": catalog.TABLE5_THREADS}  # fmt: skip
                for key in ("gpu_s", "gpu_s_min", "gpu_s_max", "doc_cpu_s", "best_cpu_s",
                            "best_cpu_s_min", "best_cpu_s_max", "evidence_over_document",
                            "evidence_over_best_cpu"):  # fmt: skip
                    row[key] = float({**g, **d, **b}.get(key, math.nan))
                for key in ("gpu_steps", "gpu_device", "gpu_source", "gpu_host", "doc_cpu_code",
                            "doc_cpu_steps", "doc_host", "best_cpu_code", "best_cpu_threads",
                            "best_cpu_steps", "best_cpu_repeats", "cpu", "cpu_host",
                            "cpu_cores", "evidence_cpu"):  # fmt: skip
                    row[key] = {**g, **d, **b}.get(key)
                row["best_cpu_own_algorithm_s"] = float(own.get("best_cpu_s", math.nan))
                paper = catalog.PUBLISHED_TABLE5.get(n)
                column = catalog.TIMING_FILTERS.index(baseline)
                row["paper_printed"] = (paper[column] / paper[2]
                                        if paper and algorithm == catalog.PAPER_GPU
                                        else math.nan)  # fmt: skip
                rows.append(row)
    frame = pd.DataFrame(rows)
    frame["over_document"] = frame["doc_cpu_s"] / frame["gpu_s"]
    frame["over_best_cpu"] = frame["best_cpu_s"] / frame["gpu_s"]
    frame["over_best_cpu_low"] = frame["best_cpu_s_min"] / frame["gpu_s_max"]
    frame["over_best_cpu_high"] = frame["best_cpu_s_max"] / frame["gpu_s_min"]
    frame["over_best_cpu_own_algorithm"] = frame["best_cpu_own_algorithm_s"] / frame["gpu_s"]
    hosts = frame[["gpu_host", "doc_host", "cpu_host"]]
    frame["one_host"] = ((frame["gpu_source"] == THIS_RUN) & hosts.notna().all(axis=1)
                         & (frame["gpu_host"] == frame["cpu_host"])
                         & (frame["doc_host"] == frame["cpu_host"]))  # fmt: skip
    frame["note"] = [_speedup_note(r) for r in frame.to_dict("records")]
    frame = frame.reindex(columns=list(SPEEDUP_COLUMNS))
    for column in ("n", "gpu_steps", "gpu_threads", "doc_cpu_steps", "best_cpu_threads",
                   "best_cpu_steps", "best_cpu_repeats", "cpu_cores"):  # fmt: skip
        frame[column] = pd.to_numeric(frame[column]).astype("Int64")
    return frame


def _speedup_note(r: dict) -> str:
    cpu = (f"{r['cpu']} on host {r['cpu_host']}, {r['best_cpu_threads']} threads of "
           f"{r['cpu_cores']}" if r.get("cpu") else "no best-CPU cell")  # fmt: skip
    source = r.get("gpu_source")
    if not isinstance(source, str) or not source or not np.isfinite(r["gpu_s"]):
        return f"no GPU time: none ran here and evidence/ holds none of this row; CPU: {cpu}"
    if source == THIS_RUN:
        if r["one_host"]:
            return f"one host: GPU ({r['gpu_device']}) and both CPU sides ({cpu}) in this run"
        return (f"NOT one host: this run's GPU ({r['gpu_device']}, host {r['gpu_host']}) "
                f"against CPU sides of host {r['cpu_host']} (the timing cell's: "
                f"{r['doc_host']}) ({cpu})")  # fmt: skip
    return (f"NOT one host: GPU from committed evidence ({source}, steps 3 ... "
            f"{2 + int(r['gpu_steps'])}); CPU sides on this machine ({cpu})")  # fmt: skip


def speedup_caption(frame: pd.DataFrame) -> str:
    """What the speed-up table shows and where its sides ran; it says so plainly when the
    GPU and the CPU sides are different machines (then the headline is the committed
    one-host run, evidence_over_best_cpu)."""
    first = frame.iloc[0]
    cpu = (f"{first['cpu']} (host {first['cpu_host']}): {catalog.BEST_CPU_CODE} on "
           f"{first['best_cpu_threads']} threads of its {first['cpu_cores']} logical CPUs, the "
           f"median of {first['best_cpu_repeats']} runs over {first['best_cpu_steps']} steps; "
           f"the NumPy filter one run over {first['doc_cpu_steps']} steps"
           if isinstance(first["cpu"], str) else "none")  # fmt: skip
    text = (f"Seconds a filter step of trajectory 0's timing window; the GPU at "
            f"{catalog.TABLE5_THREADS} threads per block. {OVER_DOCUMENT}; {OVER_BEST}. Each "
            "ratio is a ratio of medians; ratio 2's range pairs the sides' extremes. "
            f"paper_printed: the paper's Table 5 ratio (its GPU column, the paper's "
            f"algorithm). CPU sides: {cpu}.")  # fmt: skip
    return text + speedups.source_sentence(
        frame, "the columns evidence_over_best_cpu (ratio 2) and evidence_over_document (ratio 1)"
    )


def speedup_markdown(frame: pd.DataFrame) -> str:
    """The speed-up table as Markdown, its caption (:func:`speedup_caption`) first."""
    header = ["N", "GPU", "over", "GPU (ms/step)", "GPU from", "NumPy, one process (ms/step)",
              "ratio 1", "paper printed", "best CPU code (ms/step)", "threads", "ratio 2",
              "one host", "evidence host's ratio 2"]  # fmt: skip

    def ms(value) -> str:
        return "" if not np.isfinite(value) else f"{1e3 * value:.4g}"

    def x(value, lo=math.nan, hi=math.nan) -> str:
        if not np.isfinite(value):
            return ""
        span = f" [{lo:.3g}, {hi:.3g}]" if np.isfinite(lo) and np.isfinite(hi) else ""
        return f"{value:.3g}×{span}"

    rows = []
    for r in frame.to_dict("records"):
        source = r["gpu_source"] if isinstance(r["gpu_source"], str) else ""
        rows.append([
            f"{int(r['n']):,}", r["gpu_algorithm"], r["baseline"], ms(r["gpu_s"]),
            f"{source} ({r['gpu_device']})" if source == THIS_RUN else (source or "none"),
            ms(r["doc_cpu_s"]), x(r["over_document"]), x(r["paper_printed"]),
            ms(r["best_cpu_s"]), _fmt(r["best_cpu_threads"]),
            x(r["over_best_cpu"], r["over_best_cpu_low"], r["over_best_cpu_high"]),
            "yes" if r["one_host"] else "**no**", x(r["evidence_over_best_cpu"]),
        ])  # fmt: skip
    title = ("# Das et al. (2014) Table 5: the GPU over the document's kind of CPU code "
             "(ratio 1) and over the best CPU code on every core (ratio 2)\n\n")  # fmt: skip
    return title + speedup_caption(frame) + "\n\n" + "\n".join(markdown_table(header, rows)) + "\n"
