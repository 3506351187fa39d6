"""How busy the GPUs of a finished (or stopped) pipeline run were, and where the idle time went.

    python scripts/run_report.py results --trace trace.csv --start T0 --end T1 --out DIR

T0 and T1 are the run's start and end in epoch seconds. Writes to DIR:
``jobs.csv`` (every job that started: start and end in seconds from T0, seconds,
GPU, peak memory, finished or still running at T1, seconds its GPU was busy),
``gpus.csv`` (per GPU: wall, busy, held, and the idle time split into held
but idle, before the first job, between jobs and after the last job) and
prints both summaries (pfresample_studies.pipeline.busy).
"""

import argparse
from pathlib import Path

from pfresample_studies.pipeline import busy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--trace", required=True)
    parser.add_argument("--start", type=float, required=True)
    parser.add_argument("--end", type=float, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    trace = busy.read_trace(args.trace)
    timeline = busy.job_timeline(args.results, running=True)
    timeline = timeline[~(timeline["end"] > args.end + 1)]  # jobs of a later run
    timeline["finished"] = timeline["end"].notna()
    # A job still running at the end holds its GPU until then.
    timeline["end"] = timeline["end"].fillna(args.end)
    timeline["seconds"] = timeline["end"] - timeline["start"]
    timeline["busy_s"] = busy.job_busy_seconds(timeline, trace)
    relative = timeline.assign(
        start=timeline["start"] - args.start, end=timeline["end"] - args.start
    )
    relative.to_csv(out / "jobs.csv", index=False, float_format="%.2f")
    busy_s = busy.busy_seconds(trace, args.start, args.end)
    gpus = busy.idle_report(timeline, busy_s, args.start, args.end)
    gpus.to_csv(out / "gpus.csv", index=False, float_format="%.1f")
    window = trace[(trace["time"] >= args.start) & (trace["time"] <= args.end)]
    done = timeline["finished"]
    print(
        f"wall {args.end - args.start:.0f} s, {done.sum()} jobs finished, {(~done).sum()} running"
    )
    print(
        f"peak host memory in use {window['host_used_mb'].max():.0f} MB (trace); "
        f"largest job {timeline['max_rss_mb'].max():.0f} MB (max_rss)"
    )
    print(gpus.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    kinds = timeline[done].groupby("kind").agg(
        jobs=("job", "size"), seconds=("seconds", "sum"), longest=("seconds", "max"),
        gpu_busy_s=("busy_s", "sum"),
    )  # fmt: skip
    print(kinds.to_string(float_format=lambda x: f"{x:.1f}"))


if __name__ == "__main__":
    main()
