"""Per-job overhead of a pipeline run, from Snakemake's benchmark records and
the jobs' own logs (issue 4: process start, imports and compile below 5% of
the total job time).

For every job with a benchmark record ``results/benchmarks/<x>.tsv`` and a log
``results/logs/<x>.log`` written by ``scripts/_pipeline.run``:

* ``job_s``: the benchmark's wall time ``s`` (the whole job process);
* ``work_s``: from the log's first line ("rule ...") to its last ("done: ...");
* ``startup_s = job_s - work_s``: interpreter start, imports (a cell imports
  CuPy and starts the CUDA driver before its log begins), Snakemake's script
  preamble, and exit;
* ``compile_s`` (resampling cells only): the excess of the first timed call
  over the median at the cell's first N and sequence, which holds the CUDA
  kernel compile or cache load (0 on the CPU, up to timing noise).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from .artifacts import CorruptArtifact, load_npz

_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
_RULE = re.compile(r"^\S+ \S+ INFO rule (\w+)", re.MULTILINE)


def _log_rule(text: str) -> str:
    """The rule a job log names on its first line ("rule <name>, wildcards ...")."""
    found = _RULE.search(text)
    return found[1] if found else ""


def _log_span(text: str) -> float | None:
    """Seconds between the first and the last timestamped line of a job log."""
    stamps = []
    for line in text.splitlines():
        if m := _STAMP.match(line):
            stamps.append(datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f"))
    return (stamps[-1] - stamps[0]).total_seconds() if len(stamps) >= 2 else None


def _compile_s(cell: Path) -> float:
    try:
        arrays, _ = load_npz(cell)
    except (FileNotFoundError, CorruptArtifact):
        return float("nan")
    return max(0.0, float(arrays["first_call_ms"][0, 0] - arrays["time_ms"][0, 0]) / 1e3)


def job_overheads(results="results") -> pd.DataFrame:
    """One row per job: kind (the first directory under benchmarks/), rule
    (from its log), job, job_s, work_s, startup_s, compile_s, cpu_s (the
    benchmark's CPU time: what the job cost, whatever ran beside it),
    max_rss_mb."""
    root = Path(results)
    rows = []
    for bench in sorted((root / "benchmarks").glob("**/*.tsv")):
        # Names like eq233-y3.5 hold dots: strip and add suffixes as text, not with_suffix.
        rel = Path(str(bench.relative_to(root / "benchmarks"))[: -len(".tsv")])
        log = root / "logs" / f"{rel}.log"
        record = pd.read_csv(bench, sep="\t").iloc[-1]
        text = log.read_text(errors="replace") if log.exists() else ""
        work = _log_span(text)
        job_s = float(record["s"])
        cell = root / f"{rel}.npz" if rel.parts[0] == "resample" else None
        rows.append(
            {
                "kind": rel.parts[0],
                "rule": _log_rule(text),
                "job": str(rel),
                "job_s": job_s,
                "work_s": work if work is not None else np.nan,
                "startup_s": job_s - work if work is not None else np.nan,
                "compile_s": _compile_s(cell) if cell is not None else 0.0,
                "cpu_s": float(record.get("cpu_time", np.nan)),
                "max_rss_mb": float(record.get("max_rss", np.nan)),
            }
        )
    return pd.DataFrame(rows)


def summary(jobs: pd.DataFrame) -> pd.DataFrame:
    """Totals per kind of job and overall: overhead = startup + compile, and its
    share of the total job time."""
    jobs = jobs.assign(overhead_s=jobs["startup_s"].fillna(0) + jobs["compile_s"].fillna(0))
    per_kind = jobs.groupby("kind").agg(
        jobs=("job", "size"),
        job_s=("job_s", "sum"),
        overhead_s=("overhead_s", "sum"),
        max_rss_mb=("max_rss_mb", "max"),
    )
    total = pd.DataFrame(
        {
            "jobs": [len(jobs)],
            "job_s": [jobs["job_s"].sum()],
            "overhead_s": [jobs["overhead_s"].sum()],
            "max_rss_mb": [jobs["max_rss_mb"].max()],
        },
        index=["all"],
    )
    out = pd.concat([per_kind, total])
    out["overhead_pct"] = 100 * out["overhead_s"] / out["job_s"]
    return out.reset_index(names="kind")


def per_rule(jobs: pd.DataFrame) -> pd.DataFrame:
    """Where a run's job time goes, one row per rule, largest first: jobs,
    job_s (summed wall time), share (% of all jobs' job_s), longest_s (its
    longest job: a single job past a core's share of the budget sets the
    critical path), cpu_s (summed CPU time) and startup_s (summed)."""
    table = (
        jobs.assign(rule=jobs["rule"].replace("", "(no log)"))
        .groupby("rule")
        .agg(
            jobs=("job", "size"),
            job_s=("job_s", "sum"),
            longest_s=("job_s", "max"),
            cpu_s=("cpu_s", "sum"),
            startup_s=("startup_s", "sum"),
        )
    )
    table.insert(2, "share_pct", 100 * table["job_s"] / table["job_s"].sum())
    return table.sort_values("job_s", ascending=False).reset_index()
