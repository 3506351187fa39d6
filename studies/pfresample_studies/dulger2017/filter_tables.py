"""Tables of the SIR-filter experiments (Dülger 2017, Tables 5.1-5.2, 6.2-6.3,
7.2-7.3, 7.5-7.6; Fig 6.23's speed-ups), from filter cells
(:func:`pfresample.filter_experiments.run_filter_cell`).

One row per (variant, N) of a cell holding J trajectories x R runs:

* ``stage<s>_pct``: stage s's share of the execution time, in %: the mean
  seconds of stage s per run over the mean total seconds per run (so the four
  shares add up to 100), as Tables 5.1, 6.2, 7.2 and 7.5 report them;
* ``exec_s``: mean seconds of one T-step run (all four stages), the tables'
  "Exec. Time"; ``resampling_s`` the same for stage 4 alone; times are
  means over the ``timed_runs`` runs of each trajectory made one at a time
  (the other runs ran side by side on the GPU, untimed);
* ``rmse``: the mean over the J trajectories of the mean over the R runs of
  each run's RMSE (Tables 5.2, 6.3, 7.3, 7.6);
* ``*_ci``: 99% half-widths by :func:`runs_half_width`.

The confidence interval treats the trajectories as fixed (the thesis reuses
the same 16 for every N and method) and the runs as the random part: with
s_j^2 the sample variance of trajectory j's R values, the mean of the J
per-trajectory means has variance sum_j s_j^2 / (R J^2), and

    half-width = z_0.995 * sqrt(sum_j s_j^2 / R) / J,   z_0.995 = 2.5758...
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pfresample.constants import CONFIDENCE_Z
from pfresample.filters import STAGES

from ..pipeline.tables import markdown_table

STAGE_COUNT = len(STAGES)  # the four stages of Algorithm 2.4

# Columns that are measurements of elapsed time (they differ between runs of
# the pipeline); the others are deterministic functions of the configuration.
TIME_COLUMNS = (
    *(f"stage{s}_pct" for s in range(1, STAGE_COUNT + 1)),
    *(f"stage{s}_s" for s in range(1, STAGE_COUNT + 1)),
    "exec_s",
    "exec_s_ci",
    "resampling_s",
    "resampling_s_ci",
    "wall_s",
    "speedup_total",
    "speedup_resampling",
    "cpu_exec_s",
    "cpu_resampling_s",
    "gpu_exec_s",
    "gpu_resampling_s",
)


def runs_half_width(values, z: float = CONFIDENCE_Z) -> float:
    """99% half-width of the mean over trajectories of the mean over runs of
    ``values`` (shape (J, R): trajectories x runs), the trajectories fixed:
    ``z * sqrt(sum_j s_j^2 / R) / J`` with s_j^2 the sample variance (divisor
    R - 1) of row j. NaN with fewer than two runs."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] < 1:
        raise ValueError(f"values must have shape (trajectories, runs), got {v.shape}")
    J, R = v.shape
    if R < 2:
        return float("nan")
    s2 = v.var(axis=1, ddof=1)
    return float(z * math.sqrt(s2.sum() / R) / J)


def mean_of_means(values) -> float:
    """The mean over trajectories (rows) of the mean over runs (columns)."""
    return float(np.asarray(values, dtype=np.float64).mean(axis=1).mean())


def cell_row(arrays: Mapping[str, np.ndarray], metadata: Mapping) -> dict:
    """The summary of one filter cell as one table row (module docstring)."""
    stages = np.asarray(arrays["stage_seconds"], dtype=np.float64)  # (J, R, 4)
    total = np.asarray(arrays["total_seconds"], dtype=np.float64)  # (J, R)
    J, R = total.shape
    # The timed runs (filter_experiments.FilterSettings.timed_runs): the runs
    # whose times every trajectory has; the others ran side by side, untimed.
    timed = np.isfinite(total).all(axis=0)
    if not timed.any():
        raise ValueError(f"{metadata['model']}, {metadata['variant']['name']}: no run was timed")
    stages, total, wall = stages[:, timed], total[:, timed], arrays["wall_seconds"][:, timed]
    variant = metadata["variant"]
    B = np.asarray(arrays["B"])
    row = {
        "model": metadata["model"],
        "variant": variant["name"],
        "method": variant["method"],
        "segment_bytes": variant["segment_bytes"],
        "n": int(metadata["n"]),
        "log2_n": int(round(math.log2(metadata["n"]))),
        "trajectories": J,
        "runs": R,
        "timed_runs": int(timed.sum()),
        "steps": int(metadata["steps"]),
    }
    exec_s = mean_of_means(total)
    for s in range(STAGE_COUNT):
        mean = mean_of_means(stages[:, :, s])
        row[f"stage{s + 1}_s"] = mean
        row[f"stage{s + 1}_pct"] = 100.0 * mean / exec_s if exec_s > 0 else float("nan")
    row.update(
        exec_s=exec_s,
        exec_s_ci=runs_half_width(total),
        resampling_s=mean_of_means(stages[:, :, STAGE_COUNT - 1]),
        resampling_s_ci=runs_half_width(stages[:, :, STAGE_COUNT - 1]),
        wall_s=mean_of_means(wall),
        rmse=mean_of_means(arrays["rmse"]),
        rmse_ci=runs_half_width(arrays["rmse"]),
        B_mean=float(B[B >= 0].mean()) if (B >= 0).any() else float("nan"),
        backend=metadata["backend"],
        device=metadata["device"],
    )
    return row


def filter_table(cells: Sequence[tuple[Mapping, Mapping]], spec: Mapping) -> pd.DataFrame:
    """The tidy table of one filter table of the catalog: one row per
    (variant, N), variants in the order of ``spec["variants"]``, with the
    thesis's method label (``spec["labels"]``, else the variant name)."""
    rows = [cell_row(arrays, metadata) for arrays, metadata in cells]
    frame = pd.DataFrame(rows)
    order = {v: i for i, v in enumerate(spec["variants"])}
    frame = frame.assign(_order=frame["variant"].map(order)).sort_values(["_order", "n"])
    labels = spec.get("labels", {})
    frame.insert(2, "label", frame["variant"].map(lambda v: labels.get(v, v)))
    return frame.drop(columns="_order").reset_index(drop=True)


def _time(v: float, digits: int = 3) -> str:
    return "–" if not np.isfinite(v) else f"{v:.{digits}g}"


def _with_ci(value: float, ci: float, fmt: str) -> str:
    text = format(value, fmt)
    return f"{text} ± {format(ci, fmt)}" if np.isfinite(ci) else text


def stages_markdown(table: pd.DataFrame) -> list[str]:
    """Tables 5.1, 6.2, 7.2, 7.5: one block per N, stages x methods (shares in
    %), then the execution time of one run in seconds with its 99% half-width."""
    labels = list(dict.fromkeys(table["label"]))
    lines = []
    for n, block in table.groupby("n", sort=True):
        by = block.set_index("label")
        header = [f"log2 N = {int(round(math.log2(n)))} (N = {n:,})", *labels]
        rows = [
            [f"Stage{s}", *(f"{by.loc[lab, f'stage{s}_pct']:.2f}" for lab in labels)]
            for s in range(1, STAGE_COUNT + 1)
        ]
        rows.append(
            [
                "Exec. Time (s)",
                *(
                    f"{_time(by.loc[lab, 'exec_s'])} ± {_time(by.loc[lab, 'exec_s_ci'], 2)}"
                    if np.isfinite(by.loc[lab, "exec_s_ci"])
                    else _time(by.loc[lab, "exec_s"])
                    for lab in labels
                ),
            ]
        )
        lines += markdown_table(header, rows) + [""]
    return lines


def rmse_markdown(table: pd.DataFrame) -> list[str]:
    """Tables 5.2, 6.3, 7.3, 7.6: methods x N, the RMSE with its 99% half-width."""
    ns = sorted(set(table["n"]))
    header = ["Method \\ N", *(f"{n:,}" for n in ns)]
    rows = []
    for label, part in table.groupby("label", sort=False):
        by = part.set_index("n")
        rows.append(
            [label, *(_with_ci(by.loc[n, "rmse"], by.loc[n, "rmse_ci"], ".5f") for n in ns)]
        )
    return markdown_table(header, rows) + [""]


def table_markdown(table: pd.DataFrame, spec: Mapping, name: str, note: str) -> str:
    """A filter table as Markdown laid out as the thesis's: its title, a note
    line (backend, device, scale, trajectories x runs), then the blocks."""
    body = stages_markdown(table) if spec["layout"] == "stages" else rmse_markdown(table)
    number = name.removeprefix("table").replace("_", ".")
    what = (
        "Shares of the four stages of Algorithm 2.4 in % of the execution time; "
        "Exec. Time = mean seconds of one run with its 99% half-width."
        if spec["layout"] == "stages"
        else "RMSE (mean over trajectories of the mean over runs) with its 99% half-width."
    )
    head = [f"# Table {number}: {spec['title']}", "", note, "", what, ""]
    return "\n".join(head + body)


def speedup_frame(cpu: pd.DataFrame, gpu: pd.DataFrame | None) -> pd.DataFrame:
    """Fig 6.23: per N the CPU and (when measured) GPU seconds of one run, in
    total and of the resampling stage, and the speed-ups CPU / GPU."""
    keep = ["model", "variant", "method", "n", "log2_n", "trajectories", "runs"]
    out = cpu[keep].copy()
    out["cpu_exec_s"] = cpu["exec_s"].to_numpy()
    out["cpu_resampling_s"] = cpu["resampling_s"].to_numpy()
    out["cpu_device"] = cpu["device"].to_numpy()
    if gpu is None or gpu.empty:
        for col in ("gpu_exec_s", "gpu_resampling_s", "speedup_total", "speedup_resampling"):
            out[col] = np.nan
        out["gpu_device"] = None
        return out
    g = gpu.set_index("n")
    out["gpu_exec_s"] = out["n"].map(g["exec_s"])
    out["gpu_resampling_s"] = out["n"].map(g["resampling_s"])
    out["gpu_device"] = out["n"].map(g["device"])
    out["speedup_total"] = out["cpu_exec_s"] / out["gpu_exec_s"]
    out["speedup_resampling"] = out["cpu_resampling_s"] / out["gpu_resampling_s"]
    return out
