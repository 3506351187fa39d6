"""Tidy tables of Gelencsér-Horváth et al. (2013) Figs 7-12 and Table 1 from
the cells' (arrays, metadata): one row per plotted point, with its
confidence interval (the library's level, ``constants.CONFIDENCE_LEVEL``,
normal approximation over the trajectories), the backend and the device of
the cell it comes from.

* :func:`error_table` (Figs 9-10): per configuration (CPF) and per baseline
  method (SIR) the mean error measure over the trajectories against the
  mean time of a step; the CPF's best r of each N marked;
* :func:`trajectory_table` (Figs 7-8): one trajectory, its observations
  and the CPF's estimate;
* :func:`timing_table`, :func:`sir_run_times` (Figs 11-12): medians of
  the timed runs;
* :func:`baselines_table`: at each N, each baseline against the CPF's best r;
* :func:`table1`, :func:`table1_markdown`: the paper's Table 1 (published)
  next to ours (measured).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pfresample.backend import BACKEND_LABELS
from pfresample.constants import CONFIDENCE_LEVEL
from pfresample.metrics import confidence_interval

from ..pipeline import speedups
from ..pipeline.tables import markdown_table
from . import targets
from .catalog import ERROR_FIGURES, TRAJECTORY_FIGURES

MEASURED = "measured (this pipeline)"
PUBLISHED = "published"


def _mean_ci(values) -> tuple[float, float]:
    """Mean and confidence half-width (NaN for a single value; both NaN
    where a value is NaN: a measure the cell did not take)."""
    values = np.asarray(values, dtype=np.float64)
    if not np.isfinite(values).all():
        return math.nan, math.nan
    return confidence_interval(values) if values.size > 1 else (float(values[0]), math.nan)


def _cell_columns(meta) -> dict:
    return {"backend": BACKEND_LABELS[meta["backend"]], "device": meta["device"]}


def error_table(cells) -> pd.DataFrame:
    """Figs 9-10: one row per cell (CPF at (N, r), SIR with a method at N) of
    one model: ``error`` (the model's measure, ``targets.ERROR_MEASURES``:
    the mean over the trajectories of the per-trajectory MSE or position
    RMSE) with its interval, for the bearings-only model also the mean
    position error, ``step_us`` (the mean step time over the trajectories,
    the figures' x: "each point ... the mean of 1,000 and 100 executions"),
    its median, ``wall_ms`` (the median whole run), and ``best_radius``:
    the CPF row of least error at its N (Fig 10's squares)."""
    rows = []
    for arrays, meta in cells:
        measure = targets.ERROR_MEASURES[meta["model"]]
        error, half = _mean_ci(arrays[measure])
        row = {
            "model": meta["model"], "filter": meta["filter"], "method": meta["method"],
            "n": meta["n"], "radius": meta["radius"], "setup": meta.get("setup", ""),
            "estimator": meta.get("estimator", ""), "error_measure": measure,
            "error": error, "error_ci": half,
            "step_us": 1e6 * float(np.mean(arrays["step_seconds"])),
            "step_us_median": 1e6 * float(np.median(arrays["step_seconds"])),
            "wall_ms": 1e3 * float(np.median(arrays["wall_seconds"])),
            "trajectories": meta["trajectories"], "steps": meta["steps"],
            "fast_math": meta["fast_math"], "precision": meta.get("precision", ""),
            "neighbourhood": meta.get("neighbourhood", ""),
        }  # fmt: skip
        for estimator in targets.ESTIMATORS:  # every filter with each estimator (NaN: not run)
            key = f"{measure}_{estimator}"
            if key in arrays:
                row[f"error_{estimator}"], row[f"error_{estimator}_ci"] = _mean_ci(arrays[key])
        if "mean_position_error" in arrays:
            row["mean_position_error"], row["mean_position_error_ci"] = _mean_ci(
                arrays["mean_position_error"]
            )
        for measure in targets.CLOUD_MEASURES:  # the CPU cells' particle cloud (NaN: the GPU)
            if measure in arrays:
                row[measure] = _mean_ci(arrays[measure])[0]
        if "mean_B" in arrays:
            b = np.asarray(arrays["mean_B"], dtype=np.float64)
            row["mean_B"] = float(np.mean(b)) if np.isfinite(b).all() else math.nan
        rows.append(row | _cell_columns(meta) | {"confidence_level": CONFIDENCE_LEVEL})
    frame = pd.DataFrame(rows)
    frame["radius"] = frame["radius"].astype("Int64")
    frame = frame.sort_values(["filter", "method", "n", "radius"], ignore_index=True)
    cpf = frame[frame["filter"] == "CPF"]
    best = cpf.loc[cpf.groupby("n")["error"].idxmin()].index if not cpf.empty else []
    frame["best_radius"] = frame.index.isin(best)
    return frame


def trajectory_table(name: str, trajectories, arrays, meta, j: int = 0) -> pd.DataFrame:
    """Figs 7-8: trajectory ``j`` of model ``name`` (t = 0 ... T; x_0 has no
    observation and no estimate) with the CPF's estimate from the cell
    ``(arrays, meta)``, whose ``estimates`` are of trajectory 0."""
    if j != 0:
        raise ValueError("the cells keep the estimates of trajectory 0 only")
    truth, y = trajectories["truth"][j], trajectories["y"][j]
    est = np.asarray(arrays["estimates"], dtype=np.float64)
    steps = y.shape[0]
    t = np.arange(steps + 1)
    pad = np.full((1, *est.shape[1:]), np.nan)
    est = np.concatenate([pad, est])
    observation = np.concatenate([[np.nan], y])
    if name == "growth":
        frame = pd.DataFrame({"t": t, "truth": truth, "observation": observation,
                              "estimate": est})  # fmt: skip
        frame["squared_error"] = (frame["truth"] - frame["estimate"]) ** 2
    else:
        cols = targets.POSITION_COLUMNS
        frame = pd.DataFrame({
            "t": t, "x_true": truth[:, cols[0]], "y_true": truth[:, cols[1]],
            "x_estimate": est[:, cols[0]], "y_estimate": est[:, cols[1]],
            "bearing": observation,
        })  # fmt: skip
        frame["position_error"] = np.hypot(
            frame["x_true"] - frame["x_estimate"], frame["y_true"] - frame["y_estimate"]
        )
    frame["model"], frame["trajectory"] = name, j
    frame["n"], frame["radius"] = meta["n"], meta["radius"]
    return frame.assign(**_cell_columns(meta))


def _quantiles(values, scale: float, prefix: str) -> dict:
    values = scale * np.asarray(values, dtype=np.float64)
    return {
        prefix: float(np.median(values)),
        f"{prefix}_q25": float(np.quantile(values, 0.25)),
        f"{prefix}_q75": float(np.quantile(values, 0.75)),
    }


def _ratio_ci(fast, default) -> tuple[float, float, float]:
    """The geometric mean of the paired ratios fast[i] / default[i] and its
    interval (the interval of the mean log-ratio, exponentiated): below 1,
    fast is faster."""
    logs = np.log(np.asarray(fast, dtype=np.float64) / np.asarray(default, dtype=np.float64))
    if logs.size < 2:
        return float(np.exp(logs.mean())), math.nan, math.nan
    mean, half = confidence_interval(logs)
    return float(np.exp(mean)), float(np.exp(mean - half)), float(np.exp(mean + half))


def timing_table(cells) -> pd.DataFrame:
    """Figs 11-12: per N and variant (radius, kernel, build) of the timing
    cells, the median (and quartiles) of the timed runs' step time (µs) and
    whole-run time (ms); on a fast-math row also ``fast_math_ratio``, the
    geometric mean over the repeats of its step time over the default
    build's (the two take turns run by run, so repeat i of each is a pair),
    with its interval (``fast_math_ratio_low``, ``_high``)."""
    rows = []
    for arrays, meta in cells:
        variants = meta["variants"]
        for k, v in enumerate(variants):
            row = {"model": meta["model"], "filter": "CPF", "method": "cellular",
                   "n": meta["n"], "radius": v["radius"], "precision": v["precision"],
                   "neighbourhood": v["neighbourhood"],
                   "kernel": f"{v['precision']}-{v['neighbourhood']}",
                   "build": v["build"]}  # fmt: skip
            row |= _quantiles(arrays["step_seconds"][k], 1e6, "step_us")
            row |= _quantiles(arrays["wall_seconds"][k], 1e3, "wall_ms")
            pair = [j for j, w in enumerate(variants)
                    if w | {"build": "default"} == v | {"build": "default"} and j != k]  # fmt: skip
            ratio = (math.nan,) * 3
            if v["build"] == "fast-math" and pair:
                ratio = _ratio_ci(arrays["step_seconds"][k], arrays["step_seconds"][pair[0]])
            row |= dict(zip(("fast_math_ratio", "fast_math_ratio_low", "fast_math_ratio_high"),
                            ratio, strict=True))  # fmt: skip
            row |= {"repeats": meta["repeats"], "steps": meta["steps"],
                    "setup": meta.get("setup", "")} | _cell_columns(meta)  # fmt: skip
            rows.append(row)
    frame = pd.DataFrame(rows).sort_values(["kernel", "build", "radius", "n"], ignore_index=True)
    frame["radius"] = frame["radius"].astype("Int64")
    return frame


def sir_run_times(cells) -> pd.DataFrame:
    """Fig 12's baselines: per timing cell and SIR method, the median step
    time and whole-run time of its repeats, in :func:`timing_table`'s columns."""
    rows = []
    for arrays, meta in cells:
        for b, method in enumerate(meta.get("sir_methods", [])):
            where = meta["sir_backends"][b]
            row = {"model": meta["model"], "filter": "SIR", "method": method, "n": meta["n"],
                   "radius": None, "precision": "", "neighbourhood": "", "kernel": "",
                   "build": "default"}  # fmt: skip
            row |= _quantiles(arrays["sir_step_seconds"][b], 1e6, "step_us")
            row |= _quantiles(arrays["sir_wall_seconds"][b], 1e3, "wall_ms")
            row |= {"repeats": meta["repeats"], "steps": meta["steps"],
                    "setup": meta.get("setup", ""), "backend": BACKEND_LABELS[where],
                    "device": meta["sir_devices"][b]}  # fmt: skip
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame = frame.sort_values(["method", "n"], ignore_index=True)
    frame["radius"] = frame["radius"].astype("Int64")
    return frame


def baselines_table(errors: pd.DataFrame) -> pd.DataFrame:
    """What locality costs and saves: per model, N and baseline method, the
    SIR filter's error and times next to the CPF's at its best r of that N
    (``error_table``'s ``best_radius``), and their ratios CPF / SIR: the
    errors of each filter's own estimator (``error_ratio``), and of the same
    estimator in both, the weighted mean before resampling
    (``error_ratio_weighted``) and the mean after it
    (``error_ratio_resampled``; NaN where the SIR cell ran on the GPU). The
    paired intervals of these differences are in ``paired.csv``."""
    rows = []
    for (model, n), part in errors.groupby(["model", "n"], sort=True):
        best = part[(part["filter"] == "CPF") & part["best_radius"]]
        for _, sir in part[part["filter"] == "SIR"].sort_values("method").iterrows():
            row = {
                "model": model, "n": n, "error_measure": sir["error_measure"],
                "method": sir["method"], "sir_error": sir["error"],
                "sir_error_ci": sir["error_ci"], "sir_step_us": sir["step_us"],
                "sir_wall_ms": sir["wall_ms"], "sir_backend": sir["backend"],
            }  # fmt: skip
            b = best.iloc[0] if not best.empty else {}
            row |= {
                "cpf_radius": b.get("radius"), "cpf_error": b.get("error", math.nan),
                "cpf_error_ci": b.get("error_ci", math.nan),
                "cpf_step_us": b.get("step_us", math.nan),
                "cpf_wall_ms": b.get("wall_ms", math.nan), "cpf_backend": b.get("backend", ""),
            }  # fmt: skip
            for estimator in targets.ESTIMATORS:
                row[f"cpf_error_{estimator}"] = b.get(f"error_{estimator}", math.nan)
                row[f"sir_error_{estimator}"] = sir.get(f"error_{estimator}", math.nan)
            row["error_ratio"] = row["cpf_error"] / row["sir_error"]
            for estimator in targets.ESTIMATORS:
                ratio = row[f"cpf_error_{estimator}"] / row[f"sir_error_{estimator}"]
                row[f"error_ratio_{estimator}"] = ratio
            row["step_ratio"] = row["cpf_step_us"] / row["sir_step_us"]
            row["wall_ratio"] = row["cpf_wall_ms"] / row["sir_wall_ms"]
            row |= {"trajectories": sir["trajectories"], "device": sir["device"],
                    "confidence_level": CONFIDENCE_LEVEL}  # fmt: skip
            rows.append(row)
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["cpf_radius"] = frame["cpf_radius"].astype("Int64")
    return frame


TABLE1_COLUMNS = (
    "source", "reference", "gpu", "gpu_clock", "computes", "model", "time_included",
    "particles", "radius", "time_ms", "kernel_us", "position_error_low",
    "position_error_high", "position_rmse", "mse", "backend", "note",
)  # fmt: skip


def table1(published, cells, configurations) -> pd.DataFrame:
    """Table 1: the paper's rows (``published``, catalog.PUBLISHED_TABLE1),
    then ours at ``configurations`` (catalog.table1_configurations: the
    paper's (model, N, r) and the grid's nearest) from the CPF cells
    ``cells``: the median whole run (ms), the mean step time (µs), the mean
    position error over the trajectories (the paper's "position error"), the
    position RMSE (Fig 10's measure) and the growth model's MSE."""
    rows = []
    for entry in published:
        low, high = entry.get("position_error", (math.nan, math.nan))
        rows.append({
            "source": PUBLISHED, **{k: entry.get(k) for k in TABLE1_COLUMNS[1:7]},
            "particles": entry.get("particles"), "radius": entry.get("radius"),
            "time_ms": entry.get("time_ms", math.nan),
            "kernel_us": entry.get("kernel_us", math.nan),
            "position_error_low": low, "position_error_high": high, "position_rmse": math.nan,
            "mse": math.nan, "backend": "", "note": entry.get("note", ""),
        })  # fmt: skip
    by_config = {(m["model"], m["n"], m["radius"]): (a, m) for a, m in cells}
    for c in configurations:
        key = (c["model"], c["n"], c["radius"])
        if key not in by_config:
            raise ValueError(f"table1: no CPF cell for model {key[0]}, N = {key[1]}, r = {key[2]}")
        arrays, meta = by_config[key]
        row = error_table([(arrays, meta)]).iloc[0]
        mean_pos = row.get("mean_position_error", math.nan)
        note = "the paper's configuration"
        if (c["n"], c["radius"]) != (c["paper_n"], c["paper_r"]):
            note = f"the grid's nearest to the paper's N = {c['paper_n']}, r = {c['paper_r']}"
        steps = meta["steps"]
        rows.append({
            "source": MEASURED, "reference": "ours", "gpu": meta["device"], "gpu_clock": "",
            "computes": "All; CPF on a ring (pfresample.filters.run_cpf)",
            "model": ("BOT model" if c["model"] == "bot" else "first (growth) model")
            + f", {steps} time steps",
            "time_included": "whole run: inputs, upload, steps, estimates' download (median)",
            "particles": c["n"], "radius": c["radius"], "time_ms": row["wall_ms"],
            "kernel_us": row["step_us"], "position_error_low": mean_pos,
            "position_error_high": mean_pos,
            "position_rmse": row["error"] if c["model"] == "bot" else math.nan,
            "mse": row["error"] if c["model"] == "growth" else math.nan,
            "backend": row["backend"],
            "note": f"{note}; mean over {meta['trajectories']} trajectories",
        })  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(TABLE1_COLUMNS))
    for col in ("particles", "radius"):
        frame[col] = frame[col].astype("Int64")
    return frame


def _fmt(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def table1_markdown(frame: pd.DataFrame) -> str:
    """Table 1 as Markdown, published rows first, ours after."""
    header = ["source", "reference", "GPU", "model", "time included", "N", "r", "time (ms)",
              "kernel (µs/step)", "position error", "position RMSE", "MSE", "note"]  # fmt: skip
    rows = []
    for _, r in frame.iterrows():
        low, high = r["position_error_low"], r["position_error_high"]
        pos = _fmt(low) if low == high or math.isnan(high) else f"{_fmt(low)} - {_fmt(high)}"
        rows.append([
            r["source"], r["reference"], r["gpu"] or "(not in the text)", r["model"],
            r["time_included"], _fmt(r["particles"]), _fmt(r["radius"]), _fmt(r["time_ms"]),
            _fmt(r["kernel_us"]), pos, _fmt(r["position_rmse"]), _fmt(r["mse"]), r["note"],
        ])  # fmt: skip
    title = "# Gelencsér-Horváth et al. (2013) Table 1: published rows and ours\n\n"
    return title + "\n".join(markdown_table(header, rows)) + "\n"


def figure_table(figure: str, *, trajectories=None, cpf=(), sir=()) -> pd.DataFrame:
    """The tidy table of ``figure`` (catalog.FIGURES) from its cells: Figs 7-8
    the trajectory set and the CPF cell of the largest configuration; Figs
    9-10 the CPF and SIR cells of the model; Figs 11-12 the timing cells (Fig
    12: the default build, and the SIR runs of the timing cells)."""
    if figure in TRAJECTORY_FIGURES:
        (cell,) = cpf
        return trajectory_table(TRAJECTORY_FIGURES[figure], trajectories, *cell)
    if figure in ERROR_FIGURES:
        return error_table([*cpf, *sir])
    if figure == "fig11":
        return timing_table(cpf)
    if figure == "fig12":  # the default build of each kernel, and the timing cells' SIR runs
        timing = timing_table(cpf)
        frames = [timing[timing["build"] == "default"], sir_run_times(cpf)]
        return pd.concat([f for f in frames if not f.empty], ignore_index=True)
    raise ValueError(f"no table for figure {figure!r}")


# --- ratios 1 and 2: the GPU over the document's kind of CPU code and over the best ----

THIS_RUN = speedups.THIS_RUN
RATIO1 = "ratio 1: GPU over the document's kind of CPU baseline (the NumPy CPF, one process)"
RATIO2 = "ratio 2 (the headline): GPU over the best CPU code (cpf_best.c) on all cores"
SPEEDUP_COLUMNS = (
    "model", "n", "radius", "kernel", "gpu_build", "gpu_s", "gpu_s_min", "gpu_s_max",
    "gpu_repeats", "gpu_device", "gpu_source", "doc_cpu_s", "doc_cpu_s_min", "doc_cpu_s_max",
    "best_cpu_s", "best_cpu_s_min", "best_cpu_s_max", "cpu_repeats", "cpu", "cpu_host",
    "cpu_cores", "best_cpu_threads", "over_document", "over_document_low",
    "over_document_high", "over_best_cpu", "over_best_cpu_low", "over_best_cpu_high",
    "one_host", "evidence_over_best_cpu", "evidence_best_cpu_threads", "evidence_cpu", "note",
)  # fmt: skip


def _spread(values, prefix: str) -> dict:
    """Median, min and max of a side's repeats (seconds)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0 or not np.isfinite(values).all():
        return {prefix: math.nan, f"{prefix}_min": math.nan, f"{prefix}_max": math.nan}
    return {prefix: float(np.median(values)), f"{prefix}_min": float(values.min()),
            f"{prefix}_max": float(values.max())}  # fmt: skip


def gpu_run_times(cells, kernel: str) -> pd.DataFrame:
    """This run's GPU side: per (model, N, r, build) the whole runs of ``kernel``
    ("<precision>-<neighbourhood>") in the timing cells that ran on the GPU, with the
    host the cell ran on (``gpu_host``)."""
    rows = []
    for arrays, meta in cells:
        if meta["backend"] != "cuda":
            continue
        for k, v in enumerate(meta["variants"]):
            if f"{v['precision']}-{v['neighbourhood']}" != kernel:
                continue
            rows.append({"model": meta["model"], "n": meta["n"], "radius": v["radius"],
                         "gpu_build": v["build"], **_spread(arrays["wall_seconds"][k], "gpu_s"),
                         "gpu_repeats": meta["repeats"], "gpu_device": meta["device"],
                         "gpu_source": THIS_RUN, "gpu_host": meta.get("host")})  # fmt: skip
    return pd.DataFrame(rows)


def evidence_run_times(frame: pd.DataFrame, kernel: str, label: str) -> pd.DataFrame:
    """The committed GPU side (``frame``: a ``timings.csv`` of bench/cpf2013_best_cpu.py,
    its ``gpu`` rows of ``kernel``), labelled ``label`` (``pipeline.evidence.Evidence``'s),
    with that host's own best-CPU time beside it (``evidence_over_best_cpu``: a one-host ratio)."""
    gpu = frame[(frame["section"] == "gpu") & (frame["code"] == f"timing_cell: CPF {kernel}")]
    best = frame[frame["section"] == "best_cpu"].drop_duplicates(["model", "n", "radius",
                                                                   "threads"])  # fmt: skip
    cores = best["cores"].max() if not best.empty else None
    best = best[best["threads"] == cores] if cores is not None else best
    best = best.set_index(["model", "n", "radius"])
    rows = []
    for r in gpu.itertuples(index=False):
        key = (r.model, int(r.n), int(r.radius))
        own = best.loc[key] if key in best.index else None
        rows.append({"model": r.model, "n": int(r.n), "radius": int(r.radius),
                     "gpu_build": r.build, "gpu_s": float(r.seconds),
                     "gpu_s_min": float(r.seconds_min), "gpu_s_max": float(r.seconds_max),
                     "gpu_repeats": int(r.repeats), "gpu_device": r.device, "gpu_source": label,
                     "gpu_host": None,
                     "evidence_over_best_cpu": math.nan if own is None
                     else float(own["seconds"]) / float(r.seconds),
                     "evidence_best_cpu_threads": math.nan if own is None else int(own["threads"]),
                     "evidence_cpu": "" if own is None else f"{own['cpu']}, "
                     f"{int(own['cores'])} CPUs"})  # fmt: skip
    return pd.DataFrame(rows)


def best_cpu_times(cells) -> pd.DataFrame:
    """The CPU sides of the best-CPU cells: per (model, N, r) the NumPy CPF's and the best
    CPU code's whole runs (median, min, max) and the host and threads of the cell."""
    rows = []
    for arrays, meta in cells:
        for k, radius in enumerate(meta["radii"]):
            numpy_runs = arrays["numpy_wall_seconds"][k] if meta["numpy"] else []
            rows.append({"model": meta["model"], "n": meta["n"], "radius": radius,
                         **_spread(numpy_runs, "doc_cpu_s"),
                         **_spread(arrays["best_wall_seconds"][k], "best_cpu_s"),
                         "cpu_repeats": meta["repeats"], "cpu": meta["cpu"],
                         "cpu_host": meta["host"], "cpu_cores": meta["cores"],
                         "best_cpu_threads": meta["threads"], "steps": meta["steps"]})  # fmt: skip
    return pd.DataFrame(rows)


def speedup_table(timing, best, kernel: str, evidence=None) -> pd.DataFrame:
    """Ratios 1 and 2 per (model, N, r) of the best-CPU cells ``best`` and GPU build: the
    GPU's median whole run of ``kernel`` -- this run's timing cells' (``timing``) where
    they ran on the GPU, else the committed evidence's (``evidence``: an
    ``pipeline.evidence.Evidence`` of a best-CPU bench's ``timings.csv``, or None) --
    beside the NumPy CPF's (``over_document`` = doc_cpu_s / gpu_s) and the best CPU code's
    (``over_best_cpu`` = best_cpu_s / gpu_s), each ratio's ``_low`` and ``_high`` from the sides'
    extremes (min CPU / max GPU, max CPU / min GPU). ``one_host``: both sides ran in this
    run on one host; else ``note`` says which machines the ratio sets side by side."""
    cpu = best_cpu_times(best)
    gpu = gpu_run_times(timing, kernel)
    if gpu.empty and evidence is not None:
        gpu = evidence_run_times(evidence.frame(), kernel, evidence.label)
    keys = ["model", "n", "radius"]
    if gpu.empty:
        frame = cpu.assign(gpu_build="", gpu_source="", gpu_device="", gpu_host=None,
                           gpu_s=math.nan, gpu_s_min=math.nan, gpu_s_max=math.nan,
                           gpu_repeats=math.nan)  # fmt: skip
    else:
        frame = cpu.merge(gpu, on=keys, how="left")
    frame["kernel"] = kernel
    for side, ratio in (("doc_cpu_s", "over_document"), ("best_cpu_s", "over_best_cpu")):
        frame[ratio] = frame[side] / frame["gpu_s"]
        frame[f"{ratio}_low"] = frame[f"{side}_min"] / frame["gpu_s_max"]
        frame[f"{ratio}_high"] = frame[f"{side}_max"] / frame["gpu_s_min"]
    frame["one_host"] = (frame["gpu_source"] == THIS_RUN) & (frame["gpu_host"] == frame["cpu_host"])
    frame["note"] = [_speedup_note(r) for r in frame.to_dict("records")]
    frame = frame.reindex(columns=list(SPEEDUP_COLUMNS))
    frame = frame.sort_values(["model", "n", "radius", "gpu_build"], ignore_index=True)
    for col in ("n", "radius", "gpu_repeats", "cpu_repeats", "cpu_cores", "best_cpu_threads",
                "evidence_best_cpu_threads"):  # fmt: skip
        frame[col] = frame[col].astype("Int64")
    return frame


def _speedup_note(r: dict) -> str:
    cpu = f"{r['cpu']} on host {r['cpu_host']}, {r['best_cpu_threads']} threads of {r['cpu_cores']}"
    if not isinstance(r.get("gpu_source"), str) or not r["gpu_source"] or \
            not np.isfinite(r.get("gpu_s", math.nan)):  # fmt: skip
        return f"no GPU time: none ran here and evidence/ holds none of this row; CPU: {cpu}"
    if r["gpu_source"] == THIS_RUN:
        if r["gpu_host"] == r["cpu_host"]:
            return f"one host: GPU ({r['gpu_device']}) and CPU ({cpu}) in this run"
        return (f"NOT one host: this run's GPU ({r['gpu_device']}, host {r['gpu_host']}) "
                f"against CPU sides of another host ({cpu})")  # fmt: skip
    return (f"NOT one host: GPU from committed evidence ({r['gpu_source']}); CPU sides on this "
            f"machine ({cpu})")  # fmt: skip


def speedup_caption(frame: pd.DataFrame) -> str:
    """What the speed-up table shows, and where its two sides ran; it says so plainly when
    the GPU and the CPU sides are different machines."""
    first = frame.iloc[0]
    cpu = (
        f"{first['cpu']} (host {first['cpu_host']}): cpf_best.c on "
        f"{first['best_cpu_threads']} threads of its {first['cpu_cores']} logical CPUs"
    )
    text = (f"Whole runs of the first (growth) model, {int(first['cpu_repeats'])} timed runs a "
            f"CPU side (median [min, max]); the GPU runs kernel {first['kernel']}. {RATIO1}; "
            f"{RATIO2}. Each ratio is a ratio of medians; its range pairs the sides' extremes. "
            f"CPU sides: {cpu}.")  # fmt: skip
    return text + speedups.source_sentence(frame, "the column evidence_over_best_cpu (ratio 2)")


def speedup_markdown(frame: pd.DataFrame) -> str:
    """The speed-up table as Markdown, its caption (:func:`speedup_caption`) first."""
    header = ["N", "r", "GPU build", "GPU whole run (ms)", "GPU from",
              "NumPy CPF (ms)", "ratio 1", "cpf_best.c (ms)", "threads", "ratio 2",
              "one host", "evidence host's ratio 2"]  # fmt: skip

    def ms(med, lo, hi):
        return "" if not np.isfinite(med) else f"{1e3 * med:.3f} [{1e3 * lo:.3f}, {1e3 * hi:.3f}]"

    def x(med, lo, hi):
        return "" if not np.isfinite(med) else f"{med:.2f}× [{lo:.2f}, {hi:.2f}]"

    rows = []
    for r in frame.to_dict("records"):
        source = r["gpu_source"] if isinstance(r["gpu_source"], str) else ""
        rows.append([
            f"{r['n']:,}", str(r["radius"]),
            r["gpu_build"] if isinstance(r["gpu_build"], str) else "",
            ms(r["gpu_s"], r["gpu_s_min"], r["gpu_s_max"]),
            (f"{r['gpu_device']}, " if source else "") + (source or "none"),
            ms(r["doc_cpu_s"], r["doc_cpu_s_min"], r["doc_cpu_s_max"]),
            x(r["over_document"], r["over_document_low"], r["over_document_high"]),
            ms(r["best_cpu_s"], r["best_cpu_s_min"], r["best_cpu_s_max"]),
            str(r["best_cpu_threads"]),
            x(r["over_best_cpu"], r["over_best_cpu_low"], r["over_best_cpu_high"]),
            "yes" if r["one_host"] else "**no**",
            _fmt(r["evidence_over_best_cpu"], 4)
            + ("×" if np.isfinite(r["evidence_over_best_cpu"]) else ""),
        ])  # fmt: skip
    title = ("# Gelencsér-Horváth et al. (2013): the GPU over the document's kind of CPU code "
             "(ratio 1) and over the best CPU code (ratio 2)\n\n")  # fmt: skip
    return title + speedup_caption(frame) + "\n\n" + "\n".join(markdown_table(header, rows)) + "\n"
