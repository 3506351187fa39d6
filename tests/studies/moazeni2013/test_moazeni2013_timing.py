"""Moazeni (2013): no first call's cost enters a time or a speed-up. Each timing cell
takes a warm-up call and the median of its repeats; a planted slow first call (a
library's build, a thread pool's start) leaves the tables unchanged, and a speed-up of
k threads over one above k is caught (``tables.beyond_threads``). And a figure whose
GPU rows did not run here draws a committed table's, labelled."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import (
    experiments,
    hashtable_figures,
    hashtable_workloads,
    native,
    tables,
)

SLOW = 0.5  # seconds the planted first call costs


def slow_first(fn, seconds=SLOW):
    """``fn`` whose first call sleeps ``seconds`` more, as a first call's build would."""
    calls = []

    def wrapped(*args, **kwargs):
        if not calls:
            time.sleep(seconds)
        calls.append(1)
        return fn(*args, **kwargs)

    return wrapped


def test_median_run_keeps_the_median_and_the_median_runs_result():
    times = iter([0.03, 0.01, 0.02])

    def call():
        seconds = next(times)
        time.sleep(seconds)
        return seconds

    median, fastest, result = experiments.median_run(call, 3)
    assert result == 0.02 and median == pytest.approx(0.02, abs=0.01)
    assert fastest == pytest.approx(0.01, abs=0.01) and fastest <= median


def test_a_slow_first_c_call_does_not_enter_fig16(monkeypatch):
    """One run a cell (the quick grid's repeats): before the warm-up, the one-thread time
    at the first n held the first call, and C on 2 threads read hundreds of times one
    thread at n = 128 on a fresh clone (the library's build)."""
    try:
        native.compiler()
    except RuntimeError:
        pytest.skip("no C compiler")
    monkeypatch.setattr(native, "solve", slow_first(native.solve))
    arrays, meta = experiments.native_cell([128, 256], ["float32"], seed=1, repeats=1,
                                           threads=2)  # fmt: skip
    frame = tables.native_frame((arrays, meta))
    assert (frame["seconds"] < SLOW / 2).all(), frame
    f16 = tables.fig16(tables.order_frame([_order_cell()]), frame)
    assert tables.beyond_threads(f16, pd.DataFrame()) == []


def test_a_slow_first_numpy_call_does_not_enter_an_order_cell(monkeypatch):
    solve = experiments.SOLVERS["bottom_up"]
    monkeypatch.setitem(experiments.SOLVERS, "bottom_up", slow_first(solve))
    arrays, _ = experiments.order_cell("bottom_up", [32], [8], ["float32"], seed=1, repeats=1,
                                       base=8)  # fmt: skip
    assert (arrays["seconds"] < SLOW / 2).all()


def test_a_slow_first_hash_table_batch_does_not_enter_chapter_4(monkeypatch):
    run_cpu = hashtable_workloads.run_cpu

    def planted(*args, **kwargs):  # the first batch reads SLOW seconds more
        out = run_cpu(*args, **kwargs)
        if not planted.done:
            planted.done = True
            out = {**out, "seconds": out["seconds"] + SLOW}
        return out

    planted.done = False
    monkeypatch.setattr(hashtable_workloads, "run_cpu", planted)
    runs = [hashtable_workloads.Run("cpu", t, "normal", 0.05, "dek", "ph", 1, 512, 33)
            for t in (1, 2)]  # fmt: skip
    arrays, _ = hashtable_workloads.run_cell(runs, preload=2048, repeats=1, seed=1)
    assert planted.done and (arrays["seconds"] < SLOW / 2).all()


def test_beyond_threads_catches_a_first_call_artefact():
    """The negative control: the 600x of the fresh clone's Fig 16 and a chapter 4
    sweep three times faster on two threads are both caught; honest rows are not."""
    f16 = pd.DataFrame({"implementation": ["C, 2 threads", "C, 2 threads", "NumPy (dp.py)"],
                        "n": [128, 256, 128], "dtype": ["float32"] * 3,
                        "speedup_over_one_thread": [600.0, 1.6, 0.02]})  # fmt: skip
    sweep = pd.DataFrame({"tables": [1, 1, 20, 20], "threads": [1, 2, 1, 2],
                          "mops": [1.0, 3.0, 1.0, 1.9]})  # fmt: skip
    found = tables.beyond_threads(f16, sweep)
    assert len(found) == 2
    assert "n = 128" in found[0] and "600x" in found[0] and "PH = 1 on 2" in found[1]
    assert tables.beyond_threads(f16.iloc[1:], sweep[sweep["tables"] == 20]) == []


def _order_cell():
    arrays = {"n": np.array([128]), "block": np.array([16]), "dtype": np.array(["float32"]),
              "seconds": np.array([0.1]), "upload_s": np.array([0.0])}  # fmt: skip
    for k in ("diagonal", "triangular", "rectangular"):
        arrays[f"{k}_s"], arrays[k] = np.array([0.03]), np.array([1])
    return arrays, {"order": "bottom_up", "implementation": "NumPy (dp.py)"}


def test_chapter_4_without_a_gpu_draws_the_cpus_twins():
    """No GPU: the plan's GPU runs become CPU runs, and the figures that compare the
    structures have rows; the GPU-over-CPU figures are empty (their rows come from a
    committed run)."""
    cfg = {"moazeni2013_ch4_tables": [1, 5], "moazeni2013_ch4_top_tables": 5,
           "moazeni2013_ch4_batches": [512], "moazeni2013_ch4_variances": [0.05],
           "moazeni2013_ch4_hashes": ["dek"], "moazeni2013_ch4_cpu_threads": 2,
           "moazeni2013_ch4_thread_sweep": [1, 2]}  # fmt: skip
    with_gpu = hashtable_workloads.plan(cfg)
    without = hashtable_workloads.plan(cfg, gpu=False)
    assert {r.backend for r in without} == {"cpu"}
    assert len(without) < len(with_gpu)  # a GPU run whose CPU twin was planned already
    arrays, meta = hashtable_workloads.run_cell(without, preload=2048, repeats=1, seed=1)
    out = hashtable_figures.tables(hashtable_figures.frame([(arrays, meta)]), cfg)
    for name in ("fig19", "fig27", "fig29", "fig32"):
        assert out[name].empty, name
    for name in ("fig26", "fig30", "fig31", "fig36", "fig37", "cpu_threads", "applications"):
        assert len(out[name]), name
    assert set(out["fig37"]["structure"]) == {"CPU_PH", "CPU_BIG"}
