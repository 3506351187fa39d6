"""How busy a run's GPUs were (pfresample_studies.pipeline.busy): the busy seconds of a
trace, the idle-time split, the job timeline from benchmark records and logs,
and the list scheduling that projects a run, each against a hand computation."""

from __future__ import annotations

import os
import time

import pandas as pd
import pytest

from pfresample_studies.pipeline import busy


def _trace(rows):
    return pd.DataFrame(rows, columns=["time", "gpu", "util_pct", "gpu_mem_mb", "host_used_mb"])


def test_busy_seconds_by_hand():
    # GPU 0: 100 % from 0 to 2, 50 % from 2 to 4, 0 % from 4 to the end (10).
    # GPU 1: one sample of 20 % at 1, counted to the end: 9 s x 0.2.
    trace = _trace(
        [
            (0, 0, 100, 0, 0),
            (2, 0, 50, 0, 0),
            (4, 0, 0, 0, 0),
            (1, 1, 20, 0, 0),
        ]
    )
    assert busy.busy_seconds(trace, 0, 10) == pytest.approx({"0": 3.0, "1": 1.8})
    # A window clips the samples: from 1 to 3, 1 s at 100 % and 1 s at 50 %.
    assert busy.busy_seconds(trace, 1, 3)["0"] == pytest.approx(1.5)
    # Per job: a job on GPU 0 from 1 to 3 kept it busy 1.5 s; one on no GPU, NaN.
    jobs = pd.DataFrame({"start": [1.0, 0.0], "end": [3.0, 10.0], "device": ["0", ""]})
    per_job = busy.job_busy_seconds(jobs, trace)
    assert per_job[0] == pytest.approx(1.5) and pd.isna(per_job[1])


def test_idle_report_splits_the_wall_time():
    timeline = pd.DataFrame(
        {
            "job": ["a", "b", "c"],
            "kind": ["x"] * 3,
            "start": [2.0, 5.0, 1.0],
            "end": [4.0, 9.0, 3.0],
            "seconds": [2.0, 4.0, 2.0],
            "device": ["0", "0", ""],
            "max_rss_mb": [1.0] * 3,
        }
    )
    report = busy.idle_report(timeline, {"0": 5.0, "1": 0.0}, 0.0, 10.0).set_index("gpu")
    row = report.loc["0"]
    assert row["jobs"] == 2 and row["held_s"] == 6.0 and row["held_idle_s"] == 1.0
    assert (row["before_first_job_s"], row["between_jobs_s"], row["after_last_job_s"]) == (
        2.0,
        1.0,
        1.0,
    )
    assert row["busy_pct"] == 50.0
    # The parts add up to the wall time; a GPU no job claimed was idle throughout.
    parts = ["busy_s", "held_idle_s", "before_first_job_s", "between_jobs_s", "after_last_job_s"]
    assert report[parts].sum(axis=1).tolist() == [10.0, 10.0]
    assert report.loc["1", "before_first_job_s"] == 10.0


def test_job_timeline_from_benchmarks_and_logs(tmp_path):
    bench = tmp_path / "benchmarks" / "filter" / "growth"
    logs = tmp_path / "logs" / "filter" / "growth"
    bench.mkdir(parents=True)
    logs.mkdir(parents=True)
    (bench / "n16.tsv").write_text("s\th:m:s\tmax_rss\n12.5\t0:00:12\t300.0\n")
    (logs / "n16.log").write_text("2026-11-26 10:00:00,000 INFO GPU: device 3 of ['0', '3']\n")
    os.utime(bench / "n16.tsv", (1000.0, 1000.0))
    (tmp_path / "benchmarks" / "weights.tsv").write_text("s\tmax_rss\n2\t10\n")
    timeline = busy.job_timeline(tmp_path).set_index("job")
    row = timeline.loc["filter/growth/n16"]
    assert (row["start"], row["end"], row["device"], row["kind"]) == (987.5, 1000.0, "3", "filter")
    assert row["max_rss_mb"] == 300.0
    assert timeline.loc["weights", "device"] == ""  # no log: no GPU
    # A job with a log and no benchmark record is running: its start is the log's.
    (logs / "n32.log").write_text("2026-11-26 10:00:05,500 INFO GPU: device 0 of ['0']\n")
    running = busy.job_timeline(tmp_path, running=True).set_index("job")
    assert len(running) == 3 and pd.isna(running.loc["filter/growth/n32", "end"])
    stamp = pd.Timestamp("2026-11-26 10:00:05.5")
    local = time.mktime(stamp.timetuple()) + 0.5
    assert running.loc["filter/growth/n32", "start"] == pytest.approx(local)
    assert running.loc["filter/growth/n32", "device"] == "0"


def test_list_schedule_longest_first():
    # Jobs 3, 3, 2, 2, 2 on 2 GPUs, longest first: 3+2+2 on one, 3+2 on the other.
    jobs = [("a", 3, 3), ("b", 3, 3), ("c", 2, 2), ("d", 2, 2), ("e", 2, 2)]
    end, schedule = busy.list_schedule(jobs, gpus=2)
    assert end == 7.0 and len(schedule) == 5
    # One long job last makes the run longer: 1, 1, 1, 1, 4 on 2 GPUs take 4 s
    # longest first, 6 s shortest first.
    jobs = [("a", 1, 1), ("b", 1, 1), ("c", 1, 1), ("d", 1, 1), ("e", 4, 4)]
    assert busy.list_schedule(jobs, gpus=2)[0] == 4.0
    assert busy.list_schedule([(n, s, -p) for n, s, p in jobs], gpus=2)[0] == 6.0
    # A start offset and a gap between jobs on a GPU.
    end, _ = busy.list_schedule([("a", 1, 1), ("b", 1, 1)], gpus=1, start=5, gap=0.5)
    assert end == 7.5
    # GPUs free at different times: the job goes to the one free first.
    end, rows = busy.list_schedule([("a", 2, 1)], gpus=2, start=[4, 1])
    assert end == 3.0 and rows["gpu"].tolist() == [1]
    assert busy.list_schedule([], gpus=2, start=[4, 1])[0] == 4.0
    with pytest.raises(ValueError, match="gpus must be >= 1"):
        busy.list_schedule(jobs, gpus=0)
