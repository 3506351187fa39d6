"""Moazeni (2013) chapter 4's speed-up table (issue 62's ratios 1 and 2), ``ch4_speedups``:
the ratios are the table's own columns divided, a row a GPU hash; the committed bench
run's GPU rows (its own CSV layout, read by ``hashtable_figures.evidence_gpu_rows``) are
labelled as not one host, with that host's own ratios beside; a smaller workload than the
GPU side's is said; the best-CPU cell's check is live; a tiny pipeline run writes the
table where no GPU ran."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import catalog, hashtable_figures, speedups
from pfresample_studies.moazeni2013 import hashtable_workloads as w
from pfresample_studies.pipeline import evidence

ROOT = Path(__file__).resolve().parents[3]
EVIDENCE = ROOT / "evidence"
FOLDER = "2026-11-28-h200-45f3754"
HF = hashtable_figures


def _best_cell(preload=262144, host="gpu-host"):
    """The best-CPU cell as hashtable_workloads.best_cpu_cell writes it (made-up seconds)."""
    rows = [{"distribution": "normal", "variance": 0.05, "batch": 262144, "mix": 33,
             "threads": 16, "repeats": 5, "best_cpu_s": 4e-4, "best_cpu_s_min": 3.9e-4,
             "best_cpu_s_max": 3e-3},
            {"distribution": "uniform", "variance": 0.0, "batch": 4096, "mix": 0,
             "threads": 16, "repeats": 5, "best_cpu_s": 1e-5, "best_cpu_s_min": 1e-5,
             "best_cpu_s_max": 2e-5}]  # fmt: skip
    arrays = {k: np.asarray([r[k] for r in rows]) for k in rows[0]}
    return arrays, {"code": "hashset_best.c", "cpu": "Test CPU", "host": host,
                    "preload": preload}  # fmt: skip


def _runs():
    """The CPU and GPU cells' runs (``hashtable_figures.frame``'s rows): CPU_PH at the top
    PH and at another, GPU_PH with DEK, mix and SDBM, and a GPU_BIG row left out."""
    run = {"variance": 0.05, "layout": "ph", "tables": 320, "distribution": "normal",
           "batch": 262144, "mix": 33}  # fmt: skip
    rows = [
        {**run, "backend": "cpu", "threads": 8, "hash": "dek", "seconds": 0.016, "device": "CPU"},
        {**run, "backend": "cpu", "threads": 8, "hash": "dek", "seconds": 9.0, "device": "CPU",
         "tables": 1},
        {**run, "backend": "gpu", "threads": 0, "hash": "dek", "seconds": 1e-4, "device": "G"},
        {**run, "backend": "gpu", "threads": 0, "hash": "mix", "seconds": 5e-5, "device": "G"},
        {**run, "backend": "gpu", "threads": 0, "hash": "sdbm", "seconds": 6e-5, "device": "G"},
        {**run, "backend": "gpu", "threads": 0, "hash": "dek", "seconds": 1.0, "device": "G",
         "layout": "big"},
        {**run, "backend": "cpu", "threads": 8, "hash": "dek", "seconds": 5e-4, "device": "CPU",
         "distribution": "uniform", "variance": 0.0, "batch": 4096, "mix": 0},
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_ratios_are_the_tables_own_columns_divided():
    runs = _runs()
    gpu = HF.gpu_rows(runs, 320, 262144)
    assert gpu["gpu_code"].tolist() == ["GPU_PH dek", "GPU_PH mix"]  # SDBM and BIG left out
    doc = HF.doc_rows(runs, 320, 8)
    assert doc["doc_cpu_s"].tolist() == [0.016, 5e-4]  # CPU_PH at the top PH only
    best = _best_cell()
    one_host = speedups.same_host(best[1], {"host": "gpu-host"})
    frame = HF.ch4_speedups(gpu, doc, best, gpu_source=speedups.THIS_RUN, one_host=one_host)
    assert list(frame.columns[:4]) == list(HF.CH4_KEYS)
    assert list(frame.columns[4:14]) == list(speedups.COLUMNS)
    assert len(frame) == 2 and frame["one_host"].all() and frame["same_workload"].all()
    assert frame["over_document"].tolist() == pytest.approx(frame["doc_cpu_s"] / frame["gpu_s"])
    assert frame["over_best_cpu"].tolist() == pytest.approx(frame["best_cpu_s"] / frame["gpu_s"])
    assert frame["over_best_cpu"].tolist() == pytest.approx([4.0, 8.0])
    assert frame["doc_cpu_code"].eq("hashtable.cpp CPU_PH (320 tables, DEK)").all()
    assert (frame["doc_cpu_threads"] == 8).all() and (frame["best_cpu_threads"] == 16).all()
    assert frame["best_cpu_s_max"].tolist() == [3e-3, 3e-3]  # the stall's run kept, beside
    assert frame["evidence_over_best_cpu"].isna().all()  # no committed run beside this one
    text = speedups.markdown(frame, "T", HF.CH4_KEYS, HF.CH4_BASELINE, HF.CH4_HEADLINE,
                             notes=HF.ch4_notes(frame), shown=HF.CH4_SHOWN)  # fmt: skip
    assert "Not one host" not in text and "Not the same workload" not in text
    assert "| normal | 262144 | 33 | GPU_PH mix |" in text
    # another host is not one host
    other = HF.ch4_speedups(gpu, doc, _best_cell(host="laptop"), gpu_source=speedups.THIS_RUN,
                            one_host=speedups.same_host(_best_cell(host="laptop")[1],
                                                        {"host": "gpu-host"}))  # fmt: skip
    assert not other["one_host"].any()


def test_the_committed_gpu_rows_are_labelled_not_one_host():
    """Without a GPU the table draws the committed one-host bench run (its CSV layout, read
    by the adapter): GPU_PH with DEK and with mix, that host's CPU_PH on the thesis's 8
    threads and its best code beside; every row names the folder, one_host is False, the
    caption says it is not the headline and that the workload differs where it does."""
    found = evidence.find(catalog.EVIDENCE_TABLES["ch4_speedups"], EVIDENCE)
    assert found is not None and found.folder == FOLDER and found.device == "H200"
    committed = pd.read_csv(found.path)
    gpu = HF.evidence_gpu_rows(found.frame(), found.device, found.folder)
    sides = committed[committed["section"] == "gpu"]
    assert len(gpu) == len(sides) == 112  # 56 cells, two hashes
    assert gpu["gpu_s"].tolist() == pytest.approx(sides["seconds"].tolist())
    assert set(gpu["gpu_code"]) == {"GPU_PH dek", "GPU_PH mix"}
    assert (gpu["evidence_doc_cpu_threads"] == 8).all() and (gpu["gpu_tables"] == 320).all()
    assert (gpu["evidence_best_cpu_threads"] == 16).all() and gpu["gpu_preload"].eq(262144).all()
    stalled = gpu[gpu["note"] != ""][["distribution", "batch", "mix"]].drop_duplicates()
    assert sorted(map(tuple, stalled.values.tolist())) == sorted(HF.STALLED[FOLDER])
    doc = pd.DataFrame({"distribution": ["normal", "uniform"], "batch": [262144, 4096],
                        "mix": [33, 0], "doc_cpu_s": [0.02, 1e-3], "doc_cpu_tables": [20, 20],
                        "doc_cpu_threads": [2, 2]})  # fmt: skip
    frame = HF.ch4_speedups(gpu, doc, _best_cell(preload=16384, host="laptop"),
                            gpu_source=speedups.evidence_source(found),
                            one_host=True)  # fmt: skip  # asked, but not this run's GPU
    assert len(frame) == 4 and not frame["one_host"].any() and not frame["same_workload"].any()
    assert frame["gpu_source"].eq(f"evidence/{FOLDER} (H200, 2026-11-28)").all()
    assert frame["over_document"].tolist() == pytest.approx(frame["doc_cpu_s"] / frame["gpu_s"])
    assert frame["over_best_cpu"].tolist() == pytest.approx(frame["best_cpu_s"] / frame["gpu_s"])
    mine = frame["evidence_over_best_cpu"]
    assert mine.tolist() == pytest.approx(frame["evidence_best_cpu_s"] / frame["gpu_s"])
    assert frame["evidence_over_document"].tolist() == pytest.approx(
        frame["evidence_doc_cpu_s"] / frame["gpu_s"])  # fmt: skip
    # the one-host cell docs/moazeni2013.md quotes: normal keys, 2^18, 33 % search
    cell = frame.set_index(["distribution", "batch", "mix", "gpu_code"])
    dek, mix = cell.loc[("normal", 262144, 33, "GPU_PH dek")], cell.loc[
        ("normal", 262144, 33, "GPU_PH mix")]  # fmt: skip
    assert (
        round(dek["evidence_over_best_cpu"], 2) == 3.60
        and round(mix["evidence_over_best_cpu"], 2) == 8.38
    )
    assert round(dek["evidence_over_document"], 1) == 136.0
    text = speedups.markdown(frame, "T", HF.CH4_KEYS, HF.CH4_BASELINE, HF.CH4_HEADLINE,
                             notes=HF.ch4_notes(frame), shown=HF.CH4_SHOWN)  # fmt: skip
    assert "**Not one host.**" in text and "not the headline" in text and FOLDER in text
    assert "**Not the same workload.**" in text and "16,384 keys preloaded" in text


def test_nothing_to_join_gives_an_empty_table():
    frame = HF.ch4_speedups(pd.DataFrame(), HF.doc_rows(_runs(), 320, 8), _best_cell(),
                            gpu_source="none", one_host=False)  # fmt: skip
    assert frame.empty and set(speedups.COLUMNS) <= set(frame.columns)
    assert HF.evidence_gpu_rows(pd.DataFrame(), "X").empty
    assert HF.gpu_rows(pd.DataFrame(), 320, 1).empty and HF.doc_rows(pd.DataFrame(), 320, 8).empty
    assert HF.ch4_notes(frame) == []


def test_the_cell_runs_where_the_thesiss_cpu_ph_runs():
    """The best-CPU cell's grid is the CPU_PH runs' (top PH, the CPU runs' threads, DEK):
    the quick grid's 4,096 batch at the seven mixes of normal keys and two of uniform
    keys without a GPU, the five combined mixes with one."""
    from test_moazeni2013_study import GOOD

    cfg = {**GOOD, "moazeni2013_ch4_batches": [4096], "moazeni2013_ch4_top_tables": 20,
           "moazeni2013_ch4_tables": [1, 5, 20], "moazeni2013_ch4_cpu_threads": 2}  # fmt: skip
    cells = {(r.distribution, r.batch, r.mix) for r in w.doc_runs(cfg, gpu=False)}
    assert cells == {*(("normal", 4096, m) for m in w.MIXES), ("uniform", 4096, 0),
                     ("uniform", 4096, 33)}  # fmt: skip
    cells = {(r.distribution, r.mix) for r in w.doc_runs(cfg, gpu=True)}
    assert cells == {("normal", m) for m in catalog.CH4_MIXES}
    assert all(r.tables == 20 and r.threads == 2 for r in w.doc_runs(cfg))


def test_the_best_cpu_cell_checks_its_table(native_build, monkeypatch):
    """The cell's table is checked after the timed runs (a wrong key set stops it); it
    takes the median of at least 5 runs, with min and max, and names its host and CPU."""
    from pfresample_studies.moazeni2013 import hashtable_best

    runs = [w.Run("cpu", 2, "normal", 0.05, "dek", "ph", 5, 512, 33),
            w.Run("cpu", 2, "uniform", 0.0, "dek", "ph", 5, 512, 0)]  # fmt: skip
    arrays, meta = w.best_cpu_cell(runs, preload=2048, repeats=5, seed=1, threads=2)
    assert arrays["distribution"].tolist() == ["normal", "uniform"] and arrays["ok"].all()
    assert (arrays["best_cpu_s_min"] <= arrays["best_cpu_s"]).all()
    assert (arrays["best_cpu_s"] <= arrays["best_cpu_s_max"]).all()
    assert arrays["threads"].tolist() == [2, 2] and meta["host"] and meta["cpu"]
    assert meta["preload"] == 2048 and meta["code"] == "hashset_best.c"
    with pytest.raises(ValueError, match="at least 5"):
        w.best_cpu_cell(runs, preload=2048, repeats=3, seed=1, threads=2)
    monkeypatch.setattr(hashtable_best.BestHashSet, "check",
                        lambda self: np.zeros(0, np.float32))  # fmt: skip
    with pytest.raises(AssertionError, match="key set"):
        w.best_cpu_cell(runs, preload=2048, repeats=5, seed=1, threads=2)


@pytest.mark.slow
def test_a_tiny_pipeline_run_writes_the_speedup_table(native_build, tmp_path):
    """Chapter 4's outputs on a tiny grid without a GPU (backend cpu) at the committed
    run's 2^12 batch: its GPU rows there, both hashes, labelled as not one host and as a
    smaller workload than the GPU's."""
    from snake_tools import snakemake

    config = ["scale=quick", "backend=cpu", "moazeni2013_ch4_tables=[1,5]",
              "moazeni2013_ch4_top_tables=5", "moazeni2013_ch4_batches=[4096]",
              "moazeni2013_ch4_variances=[0.05]", "moazeni2013_ch4_hashes=[dek]",
              "moazeni2013_ch4_thread_sweep=[2]", "moazeni2013_ch4_preload=4096",
              "moazeni2013_ch4_repeats=1", "moazeni2013_ch4_cpu_threads=2",
              "moazeni2013_best_cpu_threads=2"]  # fmt: skip
    target = "results/tables/moazeni2013/ch4_speedups.csv"
    proc = snakemake(tmp_path, target, config=config)
    assert proc.returncode == 0, proc.output
    frame = pd.read_csv(tmp_path / target)
    cells = set(map(tuple, frame[["distribution", "batch", "mix"]].values.tolist()))
    assert cells == {*(("normal", 4096, m) for m in w.MIXES), ("uniform", 4096, 0),
                     ("uniform", 4096, 33)}  # fmt: skip
    assert set(frame["gpu_code"]) == {"GPU_PH dek", "GPU_PH mix"} and len(frame) == 18
    assert frame["gpu_source"].str.startswith(f"evidence/{FOLDER}").all()
    assert not frame["one_host"].any() and (frame["best_cpu_threads"] == 2).all()
    assert (frame["doc_cpu_tables"] == 5).all() and not frame["same_workload"].any()
    assert (frame["best_cpu_repeats"] >= 5).all()
    assert np.allclose(frame["over_document"], frame["doc_cpu_s"] / frame["gpu_s"])
    assert np.allclose(frame["over_best_cpu"], frame["best_cpu_s"] / frame["gpu_s"])
    text = (tmp_path / target).with_suffix(".md").read_text()
    assert "**Not one host.**" in text and "**Not the same workload.**" in text
