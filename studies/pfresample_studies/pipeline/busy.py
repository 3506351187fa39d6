"""How busy the GPUs of a pipeline run were, where their idle time went, and
how long the jobs a run did not finish would take on the same GPUs.

Three records of one run feed it:

* the **trace** of ``scripts/busy_trace.py``: every few seconds, each GPU's
  utilisation as ``nvidia-smi`` reports it (the share of the last sample period
  in which a kernel ran) and the host's memory in use;
* the **jobs**: each Snakemake benchmark record ``results/benchmarks/<x>.tsv``
  gives a job's wall seconds ``s`` and its peak memory; the file is written when
  the job ends, so its modification time is the end and ``end - s`` the start;
  the job's log names the GPU it claimed (``GPU: device D``);
* the run's start and end (epoch seconds).

A GPU's wall time then splits into: busy (the trace's utilisation, summed over
the samples), held but idle (a job holds the GPU and runs no kernel: process
start, imports, reading inputs, host work between launches, writing results),
and not held (before its first job, between jobs, after its last job).
"""

from __future__ import annotations

import heapq
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

TRACE_COLUMNS = ("time", "gpu", "util_pct", "gpu_mem_mb", "host_used_mb")
_DEVICE = re.compile(r"GPU: device (\S+)")
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ", re.MULTILINE)


def read_trace(path) -> pd.DataFrame:
    """The trace CSV (columns :data:`TRACE_COLUMNS`, time in epoch seconds)."""
    trace = pd.read_csv(path)
    missing = set(TRACE_COLUMNS) - set(trace.columns)
    if missing:
        raise ValueError(f"{path}: not a busy trace, columns {sorted(missing)} missing")
    return trace


def busy_seconds(trace: pd.DataFrame, start: float, end: float) -> dict[str, float]:
    """Seconds each GPU was busy between ``start`` and ``end``: each sample's
    utilisation times the time to the next sample of that GPU (the last sample
    counts to ``end``), clipped to the window."""
    out = {}
    for gpu, rows in trace.groupby("gpu"):
        t = rows["time"].to_numpy(dtype=float)
        order = np.argsort(t)
        t, util = t[order], rows["util_pct"].to_numpy(dtype=float)[order] / 100
        edges = np.clip(np.append(t, end), start, end)
        out[str(gpu)] = float(np.sum(util * np.diff(edges)))
    return out


def _log_start_device(log: Path) -> tuple[float, str]:
    """The first timestamp of a job log (epoch seconds, local time) and the GPU
    it names (or empty)."""
    text = log.read_text(errors="replace")
    found = _DEVICE.search(text)
    stamp = _STAMP.search(text)
    start = np.nan
    if stamp:  # logging writes local time
        when = datetime.strptime(stamp[1], "%Y-%m-%d %H:%M:%S,%f")
        start = time.mktime(when.timetuple()) + when.microsecond / 1e6
    return start, found[1] if found else ""


def job_timeline(results, running: bool = False) -> pd.DataFrame:
    """One row per finished job of a run: job (the benchmark's path under
    benchmarks/, without .tsv), kind (its first folder), start, end (epoch
    seconds), seconds, device (the GPU it claimed, or empty) and max_rss_mb.
    With ``running``, also the jobs that have a log but no benchmark record
    (started, not finished): start from the log's first line, end NaN."""
    root = Path(results)
    rows = []
    for bench in sorted((root / "benchmarks").glob("**/*.tsv")):
        rel = str(bench.relative_to(root / "benchmarks"))[: -len(".tsv")]
        record = pd.read_csv(bench, sep="\t").iloc[-1]
        end = bench.stat().st_mtime
        seconds = float(record["s"])
        log = root / "logs" / f"{rel}.log"
        device = _log_start_device(log)[1] if log.exists() else ""
        rows.append(
            {
                "job": rel,
                "kind": rel.split("/", 1)[0],
                "start": end - seconds,
                "end": end,
                "seconds": seconds,
                "device": device,
                "max_rss_mb": float(record.get("max_rss", np.nan)),
            }
        )
    if running:
        finished = {row["job"] for row in rows}
        for log in sorted((root / "logs").glob("**/*.log")):
            rel = str(log.relative_to(root / "logs"))[: -len(".log")]
            if rel not in finished:
                start, device = _log_start_device(log)
                kind = rel.split("/", 1)[0]
                rows.append(
                    {"job": rel, "kind": kind, "start": start, "end": np.nan,
                     "seconds": np.nan, "device": device, "max_rss_mb": np.nan}
                )  # fmt: skip
    return pd.DataFrame(
        rows, columns=["job", "kind", "start", "end", "seconds", "device", "max_rss_mb"]
    )


def job_busy_seconds(timeline: pd.DataFrame, trace: pd.DataFrame) -> pd.Series:
    """Seconds each GPU job of ``timeline`` kept its GPU busy (its device's
    :func:`busy_seconds` over the job's span); NaN for jobs without a GPU."""
    out = pd.Series(np.nan, index=timeline.index)
    for i, row in timeline.iterrows():
        if row["device"] != "" and row["device"] in set(trace["gpu"].astype(str)):
            mine = trace[trace["gpu"].astype(str) == row["device"]]
            out[i] = busy_seconds(mine, row["start"], row["end"])[row["device"]]
    return out


def idle_report(
    timeline: pd.DataFrame, busy: Mapping[str, float], start: float, end: float
) -> pd.DataFrame:
    """Per GPU of ``busy`` (:func:`busy_seconds`): wall, busy and held seconds,
    the busy fraction of the wall time, and the idle time split into held but
    idle, before the first job, between jobs and after the last job."""
    wall = end - start
    rows = []
    for gpu, busy_s in sorted(busy.items()):
        jobs = timeline[timeline["device"] == gpu].sort_values("start")
        spans = []
        for s, e in zip(jobs["start"], jobs["end"], strict=True):
            # A job's start is its end minus its benchmark seconds: it may reach
            # back a fraction of a second into the previous job's span.
            s = max(s, start, spans[-1][1] if spans else start)
            spans.append((s, max(s, min(e, end))))
        held = sum(e - s for s, e in spans)
        before = spans[0][0] - start if spans else wall
        after = end - spans[-1][1] if spans else 0.0
        rows.append(
            {
                "gpu": gpu,
                "jobs": len(spans),
                "wall_s": wall,
                "busy_s": busy_s,
                "busy_pct": 100 * busy_s / wall,
                "held_s": held,
                "held_idle_s": held - busy_s,
                "before_first_job_s": before,
                "between_jobs_s": wall - held - before - after,
                "after_last_job_s": after,
            }
        )
    return pd.DataFrame(rows)


def list_schedule(
    jobs: Iterable[tuple[str, float, float]],
    gpus: int,
    start: float | Sequence[float] = 0.0,
    gap: float = 0.0,
) -> tuple[float, pd.DataFrame]:
    """Simulate ``gpus`` GPUs taking ``jobs`` (name, seconds, priority) in
    order of priority (highest first), each the next time one is free, as
    Snakemake does with ``--resources gpu=N`` when every job is ready. ``start``
    is when the GPUs can take their first jobs (one time, or one per GPU),
    ``gap`` the seconds a GPU stays free between two jobs. Returns the time the
    last job ends (or the latest start, without jobs) and one row per job
    (name, gpu, start, end)."""
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus}")
    starts = [float(start)] * gpus if np.isscalar(start) else [float(s) for s in start]
    if len(starts) != gpus:
        raise ValueError(f"{len(starts)} start times for {gpus} GPUs")
    free = [(t, g) for g, t in enumerate(starts)]
    heapq.heapify(free)
    rows = []
    for name, seconds, _ in sorted(jobs, key=lambda job: -job[2]):
        t, g = heapq.heappop(free)
        rows.append({"job": name, "gpu": g, "start": t, "end": t + seconds})
        heapq.heappush(free, (t + seconds + gap, g))
    schedule = pd.DataFrame(rows, columns=["job", "gpu", "start", "end"])
    return (float(schedule["end"].max()) if rows else max(starts)), schedule
