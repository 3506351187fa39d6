"""How long the rest of a stopped thesis-scale run of `dulger2017` would take on the same GPUs.

    python bench/thesis_scale_projection.py REPORT_DIR \\
        --tables evidence/2026-11-25-h100-e74e5ae/dulger2017_ablations/tables_16x10 --out DIR

REPORT_DIR is what `bench/device/thesis_scale.sh stop` packs (plan.txt: the dry run of
the command; jobs.csv and gpus.csv of scripts/run_report.py; start, end).

1. The GPU jobs of the plan that did not finish get an expected time. A filter cell:
   its mean seconds a run in the 16 x 10 tables of the same GPU model (``--tables``)
   times its runs, through the straight line fitted to the cells that finished in this
   run (measured job seconds against that estimate; the fit and its worst residual are
   printed). Any other GPU job: the pipeline's own ordering model
   (pfresample_studies.dulger2017.schedule).
2. The run goes on from its stop in the simulation (pfresample_studies.pipeline.busy.list_schedule):
   each job still running at the stop ends at its start plus its expected time; the rest
   start in the order of their priorities (the plan's), each on the next free GPU, with
   the run's median gap between two jobs on a GPU. The tables and figures that follow
   the last GPU job add the longest of this run's table and figure jobs.
3. The busy fraction: this run's busy seconds until the stop plus the expected seconds
   of the rest times the share of its time a job of that kind (resample, filter) kept
   its GPU busy in this run, over GPUs x projected wall.

Writes DIR/projection.csv (one row per GPU job: measured or expected seconds, and where
the number comes from) and DIR/projection.md, and prints the summary.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample_studies.pipeline.busy import list_schedule

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
    parser.add_argument("--tables", required=True)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--runs", type=int, default=100, help="runs a trajectory of a table cell")
    parser.add_argument("--speedup-runs", type=int, default=10)
    parser.add_argument("--trajectories", type=int, default=16)
    parser.add_argument(
        "--h200-resampling-s", type=float, default=1245.0,
        help="job seconds of every resampling cell on one H200 (docs/performance.md)",
    )  # fmt: skip
    parser.add_argument(
        "--h200-ladder-s", type=float, default=76.0,
        help="the reduced-B ladder on eq. 2.33 with y = 4 on that H200",
    )  # fmt: skip
    parser.add_argument("--cpu-slots", type=int, default=32, help="CPU parts side by side")
    parser.add_argument(
        "--overheads",
        default="evidence/2026-11-22-h200-32d104b/thesis_scale/filter_tables_16x10_jobs.csv",
        help="job records of a 16 x 10 run: job, job_s, runs, mean_s_per_run",
    )  # fmt: skip
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    report, out = Path(args.report), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stop = float((report / "end").read_text()) - float((report / "start").read_text())
    plan = planned_jobs(report / "plan.txt")
    jobs = pd.read_csv(report / "jobs.csv", dtype={"device": str})
    jobs["device"] = jobs["device"].fillna("")
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
    # A cell's fixed cost (process, imports, warm-up run, graph capture) by N: the
    # median of job seconds minus runs x seconds a run in the 16 x 10 run's records.
    records = pd.read_csv(args.overheads)
    records["n"] = records["job"].str.extract(r"/n(\d+)$")[0].astype(int)
    fixed = (
        (records["job_s"] - records["runs"] * records["mean_s_per_run"])
        .groupby(records["n"])
        .median()
    )
    gpu_plan["fixed_s"] = gpu_plan["job"].map(
        lambda job: fixed.get(filter_key(job)[2], np.nan) if filter_key(job) else np.nan
    )
    fit = gpu_plan.dropna(subset=["estimate_s", "measured_s"])
    ratios = (fit["measured_s"] - fit["fixed_s"]) / fit["estimate_s"]
    slope = float(np.median(ratios))
    print(
        f"{len(fit)} finished filter cells: measured = fixed cost of N + {slope:.3f} x "
        f"(16x10 tables' s a run x runs); ratios {ratios.min():.3f} ... {ratios.max():.3f}"
    )

    # Resampling cells not finished: the rest of the H200 run's total for all of
    # them (docs/performance.md), scaled by this run's time of the one cell both
    # runs name (the reduced-B ladder on eq. 2.33, y = 4), spread evenly.
    resample = gpu_plan["job"].str.startswith("resample/")
    done = gpu_plan["measured_s"].notna()
    ladder = measured.get("resample/metropolis-reduced/eq233-y4", np.nan)
    scale = ladder / args.h200_ladder_s
    rest_s = scale * args.h200_resampling_s - gpu_plan.loc[resample & done, "measured_s"].sum()
    per_cell = rest_s / max(1, int((resample & ~done).sum()))
    print(
        f"resampling cells: H200 total {args.h200_resampling_s:.0f} s x {scale:.3f} "
        f"(ladder y = 4: {ladder:.1f} s here, {args.h200_ladder_s:.0f} s on the H200); "
        f"{per_cell:.1f} s a cell not finished"
    )

    def expected(row):
        if not np.isnan(row.measured_s):
            return row.measured_s, "measured"
        if not np.isnan(row.estimate_s):
            return row.fixed_s + slope * row.estimate_s, "16x10 tables, scaled"
        if row.job.startswith("resample/"):
            return per_cell, "H200 resampling total, scaled"
        return float(fit["measured_s"].min()), "smallest finished filter cell"

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
    # Each GPU takes new jobs from when its running job would end (or the stop).
    starts = [max(stop, free_at.get(d, stop)) for d in devices]
    pending = zip(left["job"], left["seconds"], left["priority"], strict=True)
    finish, _ = list_schedule(pending, len(devices), start=starts, gap=gap)
    tables = jobs[jobs["kind"].isin(["tables", "figures"]) & jobs["finished"].astype(bool)]
    tail = float(tables["seconds"].max()) * 2 if len(tables) else 0.0
    wall = finish + tail

    # 3. Busy fraction: each kind of GPU job (resample, filter, ...) keeps its GPU
    # busy the share of its time it did in this run's finished jobs.
    kind = gpu_plan["job"].str.split("/").str[0]
    gpu_jobs = jobs[jobs["finished"].astype(bool) & (jobs["device"] != "")]
    share = gpu_jobs.groupby("kind")["busy_s"].sum() / gpu_jobs.groupby("kind")["seconds"].sum()
    ratio = float(gpu_jobs["busy_s"].sum() / gpu_jobs["seconds"].sum())
    remaining = gpu_plan["seconds"].where(gpu_plan["measured_s"].isna(), 0.0)
    for row in running.itertuples():  # a running job's part after the stop
        remaining[gpu_plan["job"] == row.job] = max(
            0.0, seconds.get(row.job, 0.0) - (stop - row.start)
        )
    rest_busy = float((remaining * kind.map(share).fillna(ratio)).sum())
    busy_pct = 100 * (gpus["busy_s"].sum() + rest_busy) / (args.gpus * wall)
    total = float(gpu_plan["seconds"].sum())
    check, _ = list_schedule(
        zip(gpu_plan["job"], gpu_plan["seconds"], gpu_plan["priority"], strict=True),
        args.gpus,
    )
    # 4. Fig 6.23's CPU parts: each N's finished parts give its mean seconds a part
    # (N without a finished part: scaled from the nearest N by particles x runs).
    parts = plan[plan["rule"] == "filter_speedup_part"].copy()
    parts["n"] = parts["job"].str.extract(r"/n(\d+)/")[0].astype(int)
    parts["of"] = parts["job"].str.extract(r"of(\d+)$")[0].astype(int)
    # Seconds a part per particle-run: a part runs J x R / P runs of N particles.
    per_run = args.trajectories * args.speedup_runs
    finished_parts = parts["job"].map(measured)
    unit = (
        (finished_parts / (parts["n"] * per_run / parts["of"])).groupby(parts["n"]).mean().dropna()
    )
    parts["expected_s"] = [
        unit.get(n, unit.iloc[int(np.argmin(np.abs(np.log2(unit.index / n))))])
        * n * per_run / of
        for n, of in zip(parts["n"], parts["of"], strict=True)
    ]  # fmt: skip
    started = jobs.set_index("job")
    left_s = 0.0
    for row in parts.itertuples():
        if row.job in started.index and bool(started.loc[row.job, "finished"]):
            continue
        elapsed = stop - started.loc[row.job, "start"] if row.job in started.index else 0.0
        left_s += max(0.0, row.expected_s - elapsed)
    cpu_end = stop + left_s / args.cpu_slots
    gpu_plan.to_csv(out / "projection.csv", index=False, float_format="%.2f")
    lines = [
        f"Stopped at {stop:.0f} s; {int(gpu_plan['measured_s'].notna().sum())} of "
        f"{len(gpu_plan)} GPU jobs finished, {len(running)} running, {len(left)} not started.",
        f"GPU jobs in all: {total:.0f} s ({total / args.gpus:.0f} s a GPU if evenly spread).",
        f"Filter cells not finished: fixed cost of N + {slope:.3f} x the 16 x 10 tables' "
        f"seconds a run x runs (median ratio of {len(fit)} finished cells, "
        f"{ratios.min():.3f} ... {ratios.max():.3f}).",
        f"Median gap between two jobs on a GPU: {gap:.2f} s; share of a job's time its GPU "
        f"was busy: {', '.join(f'{k} {v:.3f}' for k, v in share.items())}.",
        f"Projected wall time of the whole run: {wall:.0f} s ({wall / 60:.1f} min), "
        f"the last GPU job ending at {finish:.0f} s, then tables and figures ({tail:.0f} s).",
        f"Projected busy fraction: {busy_pct:.1f} % a GPU on average.",
        f"Fig 6.23's CPU parts: {len(parts)}, {int(finished_parts.notna().sum())} finished; "
        f"{left_s:.0f} core-s left over {args.cpu_slots} side by side end at {cpu_end:.0f} s "
        f"(seconds a part per million particle-runs by N: "
        f"{', '.join(f'2^{int(np.log2(n))}: {1e6 * u:.1f}' for n, u in unit.items())}).",
        f"The same jobs from an empty start, longest first, no gaps: {check:.0f} s (lower bound "
        f"of any order: {max(total / args.gpus, float(gpu_plan['seconds'].max())):.0f} s).",
    ]
    (out / "projection.md").write_text("\n".join(f"* {line}" for line in lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
