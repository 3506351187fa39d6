"""Moazeni (2013) chapter 7's speed-up table (issue 62's ratios 1 and 2), ``ch7_speedups``:
the ratios are the table's own columns divided, a row a GPU scope; the committed bench
run's GPU rows (its own CSV layout, read by ``mddtw_figures.evidence_gpu_rows``) are
labelled as not one host; the best-CPU cell's check is live; a tiny pipeline run writes
the table where no GPU ran."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import catalog, mddtw_experiments, mddtw_figures, speedups
from pfresample_studies.moazeni2013.tv_experiments import pack
from pfresample_studies.pipeline import evidence

ROOT = Path(__file__).resolve().parents[3]
EVIDENCE = ROOT / "evidence"
FOLDER = "2026-11-28-h200-45f3754"


def _best_cell(host="gpu-host"):
    """The best-CPU cell as mddtw_experiments.best_cpu_cell writes it (made-up seconds)."""
    rows = [{"k": 3, "n": 262144, "m": 64, "threads": 8, "dtw_best_search_s": 0.05,
             "dtw_best_all_s": 0.2, "best_cpu_s": 0.05, "best_cpu_code": "dtw_best_search",
             "doc_cpu_s": 16.0},
            {"k": 9, "n": 4096, "m": 32, "threads": 8, "dtw_best_search_s": 0.03,
             "dtw_best_all_s": 0.02, "best_cpu_s": 0.02, "best_cpu_code": "dtw_best_all",
             "doc_cpu_s": 1.0}]  # fmt: skip
    return pack({"best_cpu": rows}), {"code": "dtw_best.c", "cpu": "Test CPU", "host": host}


def _timing(host="gpu-host"):
    """The timing cell's rows (the kernel alone); a Daphnet and a Fig 64 row left out."""
    return pd.DataFrame({"recording": ["random walk, 3 dims", "random walk, 9 dims",
                                       "Daphnet S06R02E0", "fig64 nr fixed"],
                         "k": [3, 9, 9, 3], "n": [262144, 4096, 4096, 4096], "m": [64, 32, 32, 32],
                         "gpu_s": [0.002, 0.001, 0.5, 0.5], "device": "Test GPU"})  # fmt: skip


def test_the_ratios_are_the_tables_own_columns_divided():
    best = _best_cell()
    gpu = mddtw_figures.gpu_kernel_rows(_timing())
    assert (
        gpu["gpu_s"].tolist() == [0.002, 0.001]
        and gpu["gpu_scope"].eq("kernel (CUDA events)").all()
    )
    one_host = speedups.same_host(best[1], {"host": "gpu-host"})
    frame = mddtw_figures.ch7_speedups(gpu, best, gpu_source=speedups.THIS_RUN, one_host=one_host)
    assert list(frame.columns[:4]) == list(mddtw_figures.CH7_KEYS)
    assert list(frame.columns[4:14]) == list(speedups.COLUMNS)
    assert frame["k"].tolist() == [3, 9] and frame["one_host"].all()
    assert frame["over_document"].tolist() == pytest.approx(frame["doc_cpu_s"] / frame["gpu_s"])
    assert frame["over_best_cpu"].tolist() == pytest.approx(frame["best_cpu_s"] / frame["gpu_s"])
    assert frame["over_best_cpu"].tolist() == pytest.approx([25.0, 20.0])
    # the faster of the two codes is the best CPU code, and the row names it
    codes = ["dtw_best_search", "dtw_best_all"]
    assert frame["best_cpu_code"].tolist() == [f"dtw_best.c {c} (native.{c})" for c in codes]
    assert (frame["best_cpu_s"] == frame[["dtw_best_search_s", "dtw_best_all_s"]].min(axis=1)).all()
    assert frame["printed_speedup"].eq(mddtw_figures.PUBLISHED_SPEEDUP).all()
    text = speedups.markdown(frame, "T", mddtw_figures.CH7_KEYS, mddtw_figures.CH7_BASELINE,
                             mddtw_figures.CH7_HEADLINE)  # fmt: skip
    assert "Not one host" not in text and "| 3 | 262144 | 64 | kernel (CUDA events) |" in text


def test_the_committed_gpu_rows_are_labelled_not_one_host():
    """Without a GPU the table draws the committed one-host bench run (its CSV layout, read
    by the adapter): both scopes, the kernel's and the top-p task's medians; every row
    names the folder, one_host is False, and the caption says it is not the headline."""
    found = evidence.find(catalog.EVIDENCE_TABLES["ch7_speedups"], EVIDENCE)
    assert found is not None and found.folder == FOLDER and found.device == "H200"
    committed = pd.read_csv(found.path)
    gpu = mddtw_figures.evidence_gpu_rows(found.frame(), found.device)
    sides = committed[committed["side"] == "gpu"]
    assert len(gpu) == len(sides) == 4
    assert sorted(set(gpu["gpu_scope"])) == sorted([mddtw_figures.KERNEL, mddtw_figures.TOP_P])
    assert gpu["gpu_s"].tolist() == pytest.approx(sides["seconds"].tolist())
    assert gpu["gpu_device"].eq("NVIDIA H200").all()
    frame = mddtw_figures.ch7_speedups(gpu, _best_cell(host="laptop"),
                                       gpu_source=speedups.evidence_source(found),
                                       one_host=True)  # fmt: skip  # asked, but not this run's GPU
    assert len(frame) == 2 and not frame["one_host"].any()  # 3:262144:64, both scopes
    assert frame["gpu_scope"].tolist() == sorted([mddtw_figures.KERNEL, mddtw_figures.TOP_P])
    assert frame["gpu_source"].eq(f"evidence/{FOLDER} (H200, 2026-11-28)").all()
    assert frame["over_document"].tolist() == pytest.approx(frame["doc_cpu_s"] / frame["gpu_s"])
    assert frame["over_best_cpu"].tolist() == pytest.approx(frame["best_cpu_s"] / frame["gpu_s"])
    text = speedups.markdown(frame, "T", mddtw_figures.CH7_KEYS, mddtw_figures.CH7_BASELINE,
                             mddtw_figures.CH7_HEADLINE)  # fmt: skip
    assert "**Not one host.**" in text and "not the headline" in text and FOLDER in text


def test_nothing_to_join_gives_an_empty_table():
    frame = mddtw_figures.ch7_speedups(pd.DataFrame(), _best_cell(), gpu_source="none",
                                       one_host=False)  # fmt: skip
    assert frame.empty and set(speedups.COLUMNS) <= set(frame.columns)
    assert mddtw_figures.evidence_gpu_rows(pd.DataFrame(), "X").empty


def test_the_cell_draws_the_timing_cells_inputs():
    """The timing cell's loop draws a start and noise for each query length before m."""
    rng = np.random.default_rng([7, 2, 300])
    db = np.cumsum(rng.normal(size=(2, 300)), axis=1)
    for mm in (16, 32):
        start = int(rng.integers(0, 300 - mm + 1))
        query = db[:, start : start + mm] + rng.normal(0, 0.3, (2, mm))
    got_db, got_query = mddtw_experiments.timing_inputs(2, 300, 32, [16, 32, 64], 7)
    assert np.array_equal(got_db, db) and np.array_equal(got_query, query)
    with pytest.raises(ValueError, match="K:N:M"):
        mddtw_experiments.parse_cases(["3:100"])
    with pytest.raises(ValueError, match="at most N"):
        mddtw_experiments.parse_cases(["3:100:200"])


def test_the_best_cpu_cell_checks_its_selection(native_build, monkeypatch):
    """The cell's two codes select the same windows as dtw.c; a wrong selection stops it;
    the cell names its host and CPU."""
    from pfresample_studies.moazeni2013 import native

    args = (["2:2048:32"], [32], 0.05, 2, 3, 1, 1)
    arrays, meta = mddtw_experiments.best_cpu_cell(*args, seed=1, threads=2)
    assert arrays["best_cpu/threads"].tolist() == [2] and meta["host"] and meta["cpu"]
    both = (arrays["best_cpu/dtw_best_search_s"][0], arrays["best_cpu/dtw_best_all_s"][0])
    assert arrays["best_cpu/best_cpu_s"][0] == min(both)
    assert arrays["best_cpu/pairs"].tolist() == [4] and arrays["best_cpu/doc_cpu_s"][0] > 0
    right = native.dtw_best_all

    def wrong(*a, **k):
        out = right(*a, **k)
        out[0] = out[0][1:] + out[0][:1]  # the first pair's windows in another order
        return out

    monkeypatch.setattr(native, "dtw_best_all", wrong)
    with pytest.raises(AssertionError, match="differ"):
        mddtw_experiments.best_cpu_cell(*args, seed=1, threads=2)


def test_a_case_longer_than_its_recording_is_named():
    from test_moazeni2013_study import GOOD

    catalog.check_config({**GOOD, "moazeni2013_ch7_best_cpu_cases": ["3:1024:64"]})
    with pytest.raises(ValueError, match="moazeni2013_ch7_best_cpu_cases"):
        catalog.check_config({**GOOD, "moazeni2013_ch7_best_cpu_cases": ["3:64:1024"]})


@pytest.mark.slow
def test_a_tiny_pipeline_run_writes_the_speedup_table(native_build, tmp_path):
    """Chapter 7's outputs on a tiny grid without a GPU (backend cpu), the best-CPU cell at
    the committed run's cheaper case: the committed GPU rows there, both scopes,
    labelled as not one host."""
    from snake_tools import snakemake

    config = ["scale=quick", "backend=cpu", "moazeni2013_ch7_m=16",
              "moazeni2013_ch7_planted_widths=[3]", "moazeni2013_ch7_planted_length=512",
              "moazeni2013_ch7_planted_seeds=1", "moazeni2013_ch7_queries_per_label=1",
              "moazeni2013_best_cpu_threads=2", "moazeni2013_ch7_cpu_pairs=1",
              "moazeni2013_ch7_repeats=1",
              "moazeni2013_ch7_best_cpu_cases=['3:262144:64']"]  # fmt: skip
    target = "results/tables/moazeni2013/ch7_speedups.csv"
    proc = snakemake(tmp_path, target, config=config)
    assert proc.returncode == 0, proc.output
    frame = pd.read_csv(tmp_path / target)
    assert frame[["k", "n", "m"]].drop_duplicates().values.tolist() == [[3, 262144, 64]]
    assert sorted(frame["gpu_scope"]) == sorted([mddtw_figures.KERNEL, mddtw_figures.TOP_P])
    assert frame["gpu_source"].str.startswith(f"evidence/{FOLDER}").all()
    assert not frame["one_host"].any() and (frame["best_cpu_threads"] == 2).all()
    assert np.allclose(frame["over_document"], frame["doc_cpu_s"] / frame["gpu_s"])
    assert np.allclose(frame["over_best_cpu"], frame["best_cpu_s"] / frame["gpu_s"])
    assert "**Not one host.**" in (tmp_path / target).with_suffix(".md").read_text()
