"""Moazeni (2013): the speed-up tables (issue 62's ratios 1 and 2), chapters 3 and
6's ``ch3_speedups`` and ``ch6_speedups``: the ratios are the table's own columns
divided; the GPU rows drawn from committed evidence are labelled as such (``one_host``
False, ``gpu_source`` naming the folder, the Markdown twin saying it is not the
headline); the best CPU cells' checks are live; and a tiny pipeline run writes both
tables where no GPU ran."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import catalog, experiments, speedups, tables
from pfresample_studies.pipeline import evidence

ROOT = Path(__file__).resolve().parents[3]
EVIDENCE = ROOT / "evidence"


def _gpu_cell(host="gpu-host"):
    """A GPU cell as experiments.gpu_cell writes it (made-up times: two strip blocks a
    size, the faster kept; Table 1's order, which the speed-ups leave out)."""
    rows = [(1024, 32, 0.004), (1024, 64, 0.003), (2048, 32, 0.010), (2048, 64, 0.012)]
    arrays = {"order": np.array(["bottom_up_strips"] * 4 + ["bottom_up"]),
              "n": np.array([r[0] for r in rows] + [1024]),
              "block": np.array([r[1] for r in rows] + [256]),
              "dtype": np.array(["float32"] * 5),
              "seconds": np.array([r[2] for r in rows] + [0.0001]),
              "upload_s": np.array([0.001] * 4 + [0.0])}  # fmt: skip
    return arrays, {"implementation": "CUDA (dp.cu), Test GPU", "backend": "cuda",
                    "device": "Test GPU", "host": host}  # fmt: skip


def _cpu_sides(host="gpu-host"):
    native = pd.DataFrame({"n": [1024, 1024, 2048, 2048], "dtype": ["float32"] * 4,
                           "threads": [1, 8, 1, 8], "seconds": [0.9, 0.2, 7.2, 1.0],
                           "implementation": "C"})  # fmt: skip
    best = ({"n": np.array([1024, 2048, 4096]), "dtype": np.array(["float32"] * 3),
             "threads": np.array([8, 8, 8]), "seconds": np.array([0.012, 0.06, 0.4])},
            {"code": "dp_blocked.c", "cpu": "Test CPU", "host": host})  # fmt: skip
    return native, best


def test_the_ratios_are_the_tables_own_columns_divided():
    native, best = _cpu_sides()
    gpu_cell = _gpu_cell()
    gpu = tables.gpu_strips(tables.order_frame([gpu_cell]))
    one_host = speedups.same_host({"host": "gpu-host"}, best[1], gpu_cell[1])
    frame = tables.ch3_speedups(gpu, native, best, gpu_source=speedups.THIS_RUN,
                                one_host=one_host)  # fmt: skip
    assert list(frame.columns[2:12]) == list(speedups.COLUMNS)
    assert frame["n"].tolist() == [1024, 2048]  # 4,096: no GPU or baseline row there
    assert frame["over_document"].tolist() == pytest.approx(frame["doc_cpu_s"] / frame["gpu_s"])
    assert frame["over_best_cpu"].tolist() == pytest.approx(frame["best_cpu_s"] / frame["gpu_s"])
    # the GPU's fastest strip block, its device time; the baseline one C thread
    assert frame["gpu_s"].tolist() == [0.003, 0.010] and frame["gpu_block"].tolist() == [64, 32]
    assert frame["doc_cpu_s"].tolist() == [0.9, 7.2] and frame["best_cpu_threads"].eq(8).all()
    assert frame["over_best_cpu"].tolist() == pytest.approx([4.0, 6.0])
    assert frame["one_host"].all() and frame["cpu"].eq("Test CPU").all()
    assert (frame["printed_speedup"] == catalog.PUBLISHED_SPEEDUP).all()
    text = speedups.markdown(frame, "T", tables.CH3_KEYS, tables.CH3_BASELINE,
                             tables.CH3_HEADLINE)  # fmt: skip
    assert "Not one host" not in text and "| 1024 | float32 |" in text


def test_another_host_is_not_one_host():
    native, best = _cpu_sides(host="laptop")
    gpu_cell = _gpu_cell(host="gpu-host")
    assert not speedups.same_host({"host": "laptop"}, best[1], gpu_cell[1])
    assert not speedups.same_host({"host": "laptop"}, {})  # a cell naming no host
    gpu = tables.gpu_strips(tables.order_frame([gpu_cell]))
    frame = tables.ch3_speedups(gpu, native, best, gpu_source=speedups.THIS_RUN, one_host=False)
    assert not frame["one_host"].any()


def test_the_committed_gpu_rows_are_labelled_not_one_host():
    """Without a GPU the table draws the committed GPU cell (its own CSV layout, read by
    the adapter): every row says which folder, one_host is False, and the caption says
    that the ratio is not the headline."""
    found = evidence.find(catalog.EVIDENCE_TABLES["ch3_speedups"], EVIDENCE)
    assert found is not None and found.folder == "2026-11-28-h100-202cbb3"
    committed = pd.read_csv(found.path)
    gpu = tables.gpu_strips(tables.evidence_gpu_orders(found.frame(), found.device))
    strips = committed[committed["order"] == "bottom_up_strips"]
    want = strips.groupby(["n", "dtype"])["seconds"].min()
    assert len(gpu) == len(want) == 8
    got = gpu.set_index(["n", "dtype"])["gpu_s"]
    assert got.loc[want.index].tolist() == pytest.approx(want.tolist())
    native, best = _cpu_sides(host="laptop")
    frame = tables.ch3_speedups(
        gpu, native, best, gpu_source=speedups.evidence_source(found), one_host=True
    )  # one_host asked for, but not this run's GPU
    assert len(frame) == 2 and not frame["one_host"].any()
    assert frame["gpu_source"].eq("evidence/2026-11-28-h100-202cbb3 (H100, 2026-11-28)").all()
    assert frame["over_best_cpu"].tolist() == pytest.approx(frame["best_cpu_s"] / frame["gpu_s"])
    text = speedups.markdown(frame, "T", tables.CH3_KEYS, tables.CH3_BASELINE,
                             tables.CH3_HEADLINE)  # fmt: skip
    assert "**Not one host.**" in text and "not the headline" in text
    assert "evidence/2026-11-28-h100-202cbb3 (H100, 2026-11-28)" in text


def test_nothing_to_join_gives_an_empty_table_that_says_so():
    native, best = _cpu_sides()
    frame = tables.ch3_speedups(pd.DataFrame(), native, best, gpu_source="none", one_host=False)
    assert frame.empty and set(speedups.COLUMNS) <= set(frame.columns)
    text = speedups.markdown(frame, "T", tables.CH3_KEYS, tables.CH3_BASELINE, "h")
    assert "No configuration has all three sides" in text


def test_the_best_cpu_cell_checks_its_matrix(native_build, monkeypatch):
    """The best CPU code's matrix equals dp.c's, and a wrong one stops the cell; the cell
    names its host and CPU. (The wrong answer is planted in the corner: on the cells'
    matrix every split costs the same, so dp_blocked.c's dropped-product flaws give the
    right matrix there: experiments.checked_matrix.)"""
    from pfresample_studies.moazeni2013 import native

    arrays, meta = experiments.best_cpu_cell([96], ["float32", "int32"], seed=1, repeats=1,
                                             threads=2)  # fmt: skip
    assert arrays["seconds"].shape == (2,) and (arrays["threads"] == 2).all()
    assert meta["host"] and meta["cpu"] and meta["code"] == "dp_blocked.c"
    right = native.solve_blocked

    def wrong(m, threads=None):
        right(m, threads)
        m[0, -1] += 1  # the answer
        return m

    monkeypatch.setattr(native, "solve_blocked", wrong)
    with pytest.raises(AssertionError, match="differs from the dp.c reference"):
        experiments.best_cpu_cell([96], ["float32"], seed=1, repeats=1, threads=2)
    # the native cell checks its large n against the best code: the flaw shows there too
    with pytest.raises(AssertionError, match="differs from the dp_blocked.c reference"):
        experiments.native_cell([520], ["float32"], seed=1, repeats=1, threads=2)


def _tv_cells(host="gpu-host"):
    """Chapter 6's cells as tv_experiments writes them (made-up seconds an iteration)."""
    from pfresample_studies.moazeni2013.tv_experiments import pack

    native = [(pack({"native": [{"size": 32, "seconds": 0.03}, {"size": 64, "seconds": 0.2}]}),
               {"host": host, "device": "CPU"})]  # fmt: skip
    best = (pack({"best_cpu": [{"size": 32, "threads": 8, "seconds": 0.001},
                               {"size": 64, "threads": 8, "seconds": 0.008}]}),
            {"host": host, "cpu": "Test CPU", "code": "tv_best.c"})  # fmt: skip
    timing = pd.DataFrame({"size": [32, 32, 64, 64, 64],
                           "variant": ["global_sync"] * 4 + ["unsync"],
                           "tile": [8, 16, 8, 16, 8],
                           "seconds": [0.0002, 0.0001, 0.0004, 0.0005, 0.00001],
                           "device": "Test GPU"})  # fmt: skip
    return native, best, timing


def test_chapter_6s_ratios_are_the_tables_own_columns_divided():
    from pfresample_studies.moazeni2013 import tv_figures

    native, best, timing = _tv_cells()
    gpu = tv_figures.gpu_global_sync(timing)  # GlobalSync at its faster tile, not UnSync
    assert gpu["gpu_s"].tolist() == [0.0001, 0.0004] and gpu["gpu_tile"].tolist() == [16, 8]
    frame = tv_figures.ch6_speedups(gpu, native, best, gpu_source=speedups.THIS_RUN,
                                    one_host=speedups.same_host(best[1], native[0][1]))  # fmt: skip
    assert list(frame.columns[1:11]) == list(speedups.COLUMNS) and frame["one_host"].all()
    assert frame["over_document"].tolist() == pytest.approx(frame["doc_cpu_s"] / frame["gpu_s"])
    assert frame["over_best_cpu"].tolist() == pytest.approx(frame["best_cpu_s"] / frame["gpu_s"])
    assert frame["over_document"].tolist() == pytest.approx([300.0, 500.0])
    assert frame["over_best_cpu"].tolist() == pytest.approx([10.0, 20.0])
    assert frame["printed_speedup"].eq(266.0).all()


def test_chapter_6s_committed_gpu_rows_are_labelled_not_one_host():
    from pfresample_studies.moazeni2013 import tv_figures

    found = evidence.find(catalog.EVIDENCE_TABLES["ch6_speedups"], EVIDENCE)
    assert found is not None
    gpu = tv_figures.gpu_global_sync(found.frame())
    assert gpu["size"].tolist() == [32, 64, 128, 256]
    committed = pd.read_csv(found.path)
    gs = committed[committed["variant"] == "global_sync"].groupby("size")["seconds"].min()
    assert gpu["gpu_s"].tolist() == pytest.approx(gs.tolist())
    native, best, _ = _tv_cells(host="laptop")
    frame = tv_figures.ch6_speedups(gpu, native, best, gpu_source=speedups.evidence_source(found),
                                    one_host=True)  # fmt: skip
    assert frame["size"].tolist() == [32, 64] and not frame["one_host"].any()
    assert frame["gpu_source"].eq(speedups.evidence_source(found)).all()
    assert speedups.evidence_source(found).startswith(f"evidence/{found.folder} (H100, ")
    text = speedups.markdown(frame, "T", tv_figures.CH6_KEYS, tv_figures.CH6_BASELINE,
                             tv_figures.CH6_HEADLINE)  # fmt: skip
    assert "**Not one host.**" in text and found.folder in text


def test_chapter_6s_best_cpu_cell_checks_its_volume(native_build, monkeypatch):
    from pfresample_studies.moazeni2013 import native, tv_experiments

    settings = tv_experiments.Settings(lam=3.0, eps=0.01, step=0.003, iterations=2)
    kw = {"seed": 1, "directions": 12, "noise": 0.05, "threads": 2}
    arrays, meta = tv_experiments.best_cpu_cell([8], settings, 2, 1, **kw)
    assert arrays["best_cpu/threads"].tolist() == [2] and meta["host"] and meta["cpu"]
    right = native.tv_solve
    monkeypatch.setattr(native, "tv_solve", lambda *a, **k: right(*a, **k) * 1.01)
    with pytest.raises(AssertionError, match="differs from tv.c's"):
        tv_experiments.best_cpu_cell([8], settings, 2, 1, **kw)


@pytest.mark.slow
def test_a_tiny_pipeline_run_writes_the_speedup_tables(native_build, tmp_path):
    """Chapters 3 and 6's outputs on a tiny grid without a GPU (backend cpu), the compiled
    sides at n = 1,024 and 32^3: the committed GPU rows there, labelled as not one host."""
    from snake_tools import snakemake

    config = ["scale=quick", "backend=cpu", "moazeni2013_ch3_numpy_n=[32,64]",
              "moazeni2013_ch3_block_sizes=[8,16]", "moazeni2013_ch3_recursive_base=8",
              "moazeni2013_ch3_native_n=[1024]", "moazeni2013_ch3_repeats=1",
              "moazeni2013_best_cpu_threads=2", "moazeni2013_ch6_iterations=20",
              "moazeni2013_ch6_sweep_lambdas=[3.0]", "moazeni2013_ch6_native_sizes=[32]",
              "moazeni2013_ch6_native_iterations=1", "moazeni2013_ch6_peer_weights=[0.1]",
              "moazeni2013_ch6_repeats=1"]  # fmt: skip
    targets = {"ch3": "results/tables/moazeni2013/ch3_speedups.csv",
               "ch6": "results/tables/moazeni2013/ch6_speedups.csv"}  # fmt: skip
    proc = snakemake(tmp_path, *targets.values(), config=config)
    assert proc.returncode == 0, proc.output
    ch3, ch6 = (pd.read_csv(tmp_path / t) for t in targets.values())
    assert ch3["n"].tolist() == [1024, 1024] and sorted(ch3["dtype"]) == ["float32", "int32"]
    assert ch3["gpu_source"].str.startswith("evidence/2026-11-28-h100-202cbb3").all()
    assert ch6["size"].tolist() == [32] and ch6["gpu_source"].str.startswith("evidence/").all()
    for frame in (ch3, ch6):
        assert not frame["one_host"].any() and (frame["best_cpu_threads"] == 2).all()
        assert np.allclose(frame["over_document"], frame["doc_cpu_s"] / frame["gpu_s"])
        assert np.allclose(frame["over_best_cpu"], frame["best_cpu_s"] / frame["gpu_s"])
    for target in targets.values():
        assert "**Not one host.**" in (tmp_path / target).with_suffix(".md").read_text()
