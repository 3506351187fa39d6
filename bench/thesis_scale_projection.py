"""How long the rest of a stopped thesis-scale run of `dulger2017` would take on the same GPUs.

    python bench/thesis_scale_projection.py REPORT_DIR RESULTS_DIR \\
        --tables bench/results/dulger2017_issue21_h100/tables_16x10 --out DIR

REPORT_DIR is what `bench/device/thesis_scale.sh stop` packs (plan.txt: the dry run of
the command; jobs.csv: every job that started, seconds from the run's start; gpus.csv;
start, end); RESULTS_DIR the run's results/ (the filter cells' trajectories and runs).

1. The GPU jobs of the plan that did not finish get an expected time. A filter cell:
   its mean seconds a run in the 16 x 10 tables of the same GPU model (``--tables``)
   times its runs, through the straight line fitted to the cells that finished in this
   run (measured job seconds against that estimate; the fit and its worst residual are
   printed). Any other GPU job: the pipeline's own ordering model
   (pfresample.studies.dulger2017.schedule).
2. The run goes on from its stop in the simulation (pfresample.pipeline.busy.list_schedule):
   each job still running at the stop ends at its start plus its expected time; the rest
   start in the order of their priorities (the plan's), each on the next free GPU, with
   the run's median gap between two jobs on a GPU. The tables and figures that follow
   the last GPU job add the longest of this run's table and figure jobs.
3. The busy fraction: this run's busy seconds until the stop plus the expected seconds
   of the rest times this run's ratio of busy to held time, over GPUs x projected wall.

Writes DIR/projection.csv (one row per GPU job: measured or expected seconds, and where
the number comes from) and DIR/projection.md, and prints the summary.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample.pipeline.busy import list_schedule
from pfresample.studies.dulger2017 import schedule

_BLOCK = re.compile(r"^(?:local)?rule (\S+):$")


def planned_jobs(plan: Path) -> pd.DataFrame:
    """The jobs of a Snakemake dry run: rule, job (benchmark path under
    benchmarks/ without .tsv), priority and whether it claims a GPU."""
    rows, current = [], None
    for line in plan.read_text().splitlines():
        if m := _BLOCK.match(line.strip()):
            current = {"rule": m[1], "job": None, "priority": 0.0, "gpu": False}
            rows.append(current)
        elif current is not None and ":" in line:
            key, _, value = line.strip().partition(": ")
            if key == "benchmark":
                current["job"] = value.split("results/benchmarks/", 1)[-1].removesuffix(".tsv")
            elif key == "priority":
                current["priority"] = float(value)
            elif key == "resources":
                current["gpu"] = bool(re.search(r"\bgpu=[1-9]", value))
    return pd.DataFrame([r for r in rows if r["job"]])


def table_seconds_per_run(tables: Path) -> dict[tuple[str, str, int], float]:
    """(model, variant, N) -> mean wall seconds of one run, from the stage tables."""
    out = {}
    for path in sorted(tables.glob("table*.csv")):
        frame = pd.read_csv(path)
        if "wall_s" not in frame:
            continue
        for row in frame.itertuples():
            out[(row.model, row.variant, int(row.n))] = float(row.wall_s)
    return out


def filter_key(job: str):
    """(model, variant, N, runs kind) of a filter job name, or None."""
    m = re.fullmatch(r"filter(?:_speedup/cuda)?/([^/]+)/([^/]+)/n(\d+)", job)
    if not m:
        return None
    return m[1], m[2], int(m[3]), "speedup" if "speedup" in job else "table"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("results")
    parser.add_argument("--tables", required=True)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--runs", type=int, default=100, help="runs a trajectory of a table cell")
    parser.add_argument("--speedup-runs", type=int, default=10)
    parser.add_argument("--trajectories", type=int, default=16)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    report, out = Path(args.report), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stop = float((report / "end").read_text()) - float((report / "start").read_text())
    plan = planned_jobs(report / "plan.txt")
    jobs = pd.read_csv(report / "jobs.csv", keep_default_na=False, na_values=[""])
    jobs["device"] = jobs["device"].astype(str)
    gpus = pd.read_csv(report / "gpus.csv")
    per_run = table_seconds_per_run(Path(args.tables))

    # 1. Expected seconds from the 16 x 10 tables, calibrated on the finished cells.
    def table_estimate(job):
        key = filter_key(job)
        if key is None or key[:3] not in per_run:
            return np.nan
        runs = args.speedup_runs if key[3] == "speedup" else args.runs
        return per_run[key[:3]] * runs * args.trajectories

    gpu_plan = plan[plan["gpu"]].copy()
    gpu_plan["estimate_s"] = gpu_plan["job"].map(table_estimate)
    measured = jobs[jobs["finished"].astype(bool)].set_index("job")["seconds"]
    gpu_plan["measured_s"] = gpu_plan["job"].map(measured)
    fit = gpu_plan.dropna(subset=["estimate_s", "measured_s"])
    slope, intercept = np.polyfit(fit["estimate_s"], fit["measured_s"], 1)
    residual = fit["measured_s"] - (intercept + slope * fit["estimate_s"])
    worst = float(np.max(np.abs(residual) / fit["measured_s"]))
    print(
        f"fit on {len(fit)} finished filter cells: measured = {intercept:.2f} s + "
        f"{slope:.3f} x (16x10 tables' s a run x runs); worst residual {100 * worst:.1f} %"
    )

    def expected(row):
        if not np.isnan(row.measured_s):
            return row.measured_s, "measured"
        if not np.isnan(row.estimate_s):
            return intercept + slope * row.estimate_s, "16x10 tables, fitted"
        method = row.job.split("/")[1]
        return schedule.resample_seconds(method), "ordering model"

    values = [expected(row) for row in gpu_plan.itertuples()]
    gpu_plan["seconds"] = [v[0] for v in values]
    gpu_plan["source"] = [v[1] for v in values]

    # 2. The rest of the run, from the stop.
    on_gpu = jobs[jobs["device"].str.fullmatch(r"\d+")]
    gaps = []
    for _, rows in on_gpu.sort_values("start").groupby("device"):
        gaps += list(np.clip(rows["start"].to_numpy()[1:] - rows["end"].to_numpy()[:-1], 0, None))
    gap = float(np.median(gaps)) if gaps else 0.0
    running = on_gpu[~on_gpu["finished"].astype(bool)]
    seconds = gpu_plan.set_index("job")["seconds"]
    free_at = {}
    for row in running.itertuples():
        free_at[row.device] = row.start + seconds.get(row.job, 0.0) + gap
    devices = sorted(set(on_gpu["device"]) | {str(g) for g in range(args.gpus)})
    left = gpu_plan[gpu_plan["measured_s"].isna() & ~gpu_plan["job"].isin(running["job"])]
    # Each GPU starts taking new jobs when its running job would end (or at the stop).
    ends = {d: max(stop, free_at.get(d, stop)) for d in devices}
    pending = list(zip(left["job"], left["seconds"], left["priority"], strict=True))
    finish = max(ends.values())
    if pending:
        # list_schedule starts all GPUs at one time: shift by each GPU's own start.
        order = sorted(pending, key=lambda job: -job[2])
        free = sorted((t, d) for d, t in ends.items())
        for name, sec, _ in order:
            t, d = free.pop(0)
            end = t + sec
            free.append((end + gap, d))
            free.sort()
            finish = max(finish, end)
    tables = jobs[jobs["kind"].isin(["tables", "figures"]) & jobs["finished"].astype(bool)]
    tail = float(tables["seconds"].max()) * 2 if len(tables) else 0.0
    wall = finish + tail

    # 3. Busy fraction.
    held = gpus["held_s"].sum()
    ratio = gpus["busy_s"].sum() / held if held else 1.0
    rest = float(left["seconds"].sum()) + sum(
        max(0.0, seconds.get(r.job, 0.0) - (stop - r.start)) for r in running.itertuples()
    )
    busy_pct = 100 * (gpus["busy_s"].sum() + ratio * rest) / (args.gpus * wall)
    total = float(gpu_plan["seconds"].sum())
    check, _ = list_schedule(
        zip(gpu_plan["job"], gpu_plan["seconds"], gpu_plan["priority"], strict=True),
        args.gpus,
    )
    gpu_plan.to_csv(out / "projection.csv", index=False, float_format="%.2f")
    lines = [
        f"Stopped at {stop:.0f} s; {int(gpu_plan['measured_s'].notna().sum())} of "
        f"{len(gpu_plan)} GPU jobs finished, {len(running)} running, {len(left)} not started.",
        f"GPU jobs in all: {total:.0f} s ({total / args.gpus:.0f} s a GPU if evenly spread).",
        f"Fit of the filter cells: {intercept:.2f} s + {slope:.3f} x table estimate "
        f"({len(fit)} cells, worst residual {100 * worst:.1f} %).",
        f"Median gap between two jobs on a GPU: {gap:.2f} s; busy/held ratio {ratio:.3f}.",
        f"Projected wall time of the whole run: {wall:.0f} s ({wall / 60:.1f} min), "
        f"the last GPU job ending at {finish:.0f} s, then tables and figures ({tail:.0f} s).",
        f"Projected busy fraction: {busy_pct:.1f} % a GPU on average.",
        f"The same jobs from an empty start, longest first, no gaps: {check:.0f} s (lower bound "
        f"of any order: {max(total / args.gpus, float(gpu_plan['seconds'].max())):.0f} s).",
    ]
    (out / "projection.md").write_text("\n".join(f"* {line}" for line in lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
