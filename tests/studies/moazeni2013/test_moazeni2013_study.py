"""Moazeni (2013) chapter 3, the study around the algorithms: the config checks, the
cells (each run checked against the reference before it is kept), and the tables
(Table 1's counted calls equal the printed ones; Table 3 and Fig 16-17's arithmetic)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import catalog, dp, experiments, tables

GOOD = {
    "moazeni2013_ch3_numpy_n": [32, 64],
    "moazeni2013_ch3_native_n": [64],
    "moazeni2013_ch3_block_sizes": [8, 16],
    "moazeni2013_ch3_recursive_base": 8,
    "moazeni2013_ch3_dtypes": ["float32", "int32"],
    "moazeni2013_ch3_repeats": 1,
    "moazeni2013_ch3_gpu_n": [64],
    "moazeni2013_ch3_gpu_block_sizes": [16],
    "moazeni2013_ch3_fig12_sizes": [64],
    "moazeni2013_ch3_other_gpu_cells": [],
    "moazeni2013_ch4_tables": [1, 5],
    "moazeni2013_ch4_top_tables": 5,
    "moazeni2013_ch4_batches": [512],
    "moazeni2013_ch4_variances": [0.05],
    "moazeni2013_ch4_hashes": ["dek"],
    "moazeni2013_ch4_cpu_threads": 2,
    "moazeni2013_ch4_thread_sweep": [1, 2],
    "moazeni2013_ch4_preload": 2048,
    "moazeni2013_ch4_repeats": 1,
    "moazeni2013_ch6_tiles": [8],
    "moazeni2013_ch6_iterations": 20,
    "moazeni2013_ch6_cpu_size": 16,
    "moazeni2013_ch6_sweep_lambdas": [3.0],
    "moazeni2013_ch6_sweep_eps": [0.01],
    "moazeni2013_ch6_sweep_steps": [0.003],
    "moazeni2013_ch6_native_sizes": [16],
    "moazeni2013_ch6_native_iterations": 1,
    "moazeni2013_ch6_peer_size": 16,
    "moazeni2013_ch6_peer_weights": [0.1],
    "moazeni2013_ch6_gpu_sizes": [16],
    "moazeni2013_ch6_check_size": 16,
    "moazeni2013_ch6_check_iterations": 5,
    "moazeni2013_ch6_repeats": 1,
    "moazeni2013_ch5_sizes_3d": [16],
    "moazeni2013_ch5_sizes_2d": [64],
    "moazeni2013_ch5_repeats": 1,
    "moazeni2013_ch7_m": 16,
    "moazeni2013_ch7_planted_widths": [3],
    "moazeni2013_ch7_planted_length": 512,
    "moazeni2013_ch7_planted_seeds": 1,
    "moazeni2013_ch7_queries_per_label": 1,
    "moazeni2013_ch7_timing_widths": [3],
    "moazeni2013_ch7_timing_lengths": [1024],
    "moazeni2013_ch7_timing_queries": [16],
    "moazeni2013_ch7_cpu_max_length": 1024,
    "moazeni2013_ch7_repeats": 1,
}


@pytest.mark.parametrize(
    "change,match",
    [
        ({"moazeni2013_ch3_block_sizes": [12]}, "powers of 2"),
        ({"moazeni2013_ch3_recursive_base": 32}, "below moazeni2013_ch3_recursive_base"),
        ({"moazeni2013_ch3_numpy_n": [16]}, "at least twice"),
        ({"moazeni2013_ch3_dtypes": ["float64"]}, "not in"),
        ({"moazeni2013_ch3_gpu_block_sizes": [48]}, "powers of 2"),
        ({"moazeni2013_ch3_other_gpu_cells": ["/no/such/gpu.npz"]}, "no such file"),
        ({"moazeni2013_ch6_gpu_sizes": [24]}, "multiple of 16"),
        ({"moazeni2013_ch7_planted_length": 100}, "at least 8 x"),
    ],
)
def test_bad_configurations_are_named(change, match):
    catalog.check_config(GOOD)
    with pytest.raises(ValueError, match=match):
        catalog.check_config({**GOOD, **change})


@pytest.fixture(scope="module")
def cells():
    orders = [experiments.order_cell(o, [32, 64], [8, 16], ["float32", "int32"], seed=1,
                                     repeats=1, base=8) for o in catalog.ORDERS]  # fmt: skip
    return orders


def test_order_cells_count_what_the_dry_run_counts(cells):
    frame = tables.order_frame(cells)
    assert len(frame) == len(catalog.ORDERS) * 2 * 2 * 2
    assert (frame["seconds"] > 0).all()
    for _, r in frame[frame["order"] == "bottom_up"].iterrows():
        tri, rect = dp.bottom_up_counts(-(-int(r["n"]) // int(r["block"])))
        assert (r["triangular"], r["rectangular"]) == (tri, rect)
    parts = frame[[f"{k}_s" for k in dp.KINDS]].sum(axis=1)
    assert (parts <= frame["seconds"] + 1e-9).all()  # the kinds' times lie inside the run's


def test_a_cell_refuses_a_wrong_matrix(monkeypatch):
    """The check is live: a solver that drops eq. 5 makes the cell fail."""
    monkeypatch.setattr(dp.Blocked, "triangular", lambda self, c, a, b: None)
    with pytest.raises(AssertionError, match="differs from the NumPy reference"):
        experiments.order_cell("bottom_up", [64], [16], ["float32"], seed=1, repeats=1, base=8)


def test_table1_counts_equal_the_printed_calls(cells):
    t = tables.table1(tables.order_frame(cells))
    counted = t[t["source"].str.startswith("counted")]
    assert len(counted) == 8
    assert (counted["triangular_calls"] == counted["printed_triangular_calls"]).all()
    assert (counted["rectangular_calls"] == counted["printed_rectangular_calls"]).all()


def test_table3_and_the_rates(cells):
    orders = tables.order_frame(cells)
    t3 = tables.table3(orders)
    row = t3.iloc[0]
    assert row["speedup"] == pytest.approx(row["divide_and_conquer_s"] / row["bottom_up_s"])
    native = pd.DataFrame({"n": [64, 64], "dtype": ["float32"] * 2, "threads": [1, 2],
                           "seconds": [0.02, 0.01], "implementation": "C"})  # fmt: skip
    f16 = tables.fig16(orders, native)
    c2 = f16[f16["implementation"] == "C, 2 threads"].iloc[0]
    assert c2["speedup_over_one_thread"] == pytest.approx(2.0)
    f17 = tables.fig17(orders, native)
    one = f17[f17["implementation"] == "C, 1 thread(s)"].iloc[0]
    assert one["gop_per_s"] == pytest.approx(dp.operations(64) / 0.02 / 1e9)
    assert np.isnan(f16[f16["n"] == 32]["one_thread_s"]).all()  # no baseline at n = 32


def test_without_a_compiler_the_native_cell_says_so_and_the_tables_go_on(cells, monkeypatch):
    from pfresample_studies.moazeni2013 import native

    def missing(cxx=False):
        raise RuntimeError("no C compiler found (test)")

    monkeypatch.setattr(native, "compiler", missing)
    arrays, meta = experiments.native_cell([64], ["float32"], seed=1, repeats=1)
    assert meta["implementation"].startswith("not run: no C compiler")
    frame = tables.native_frame((arrays, meta))
    assert frame.empty
    orders = tables.order_frame(cells)
    assert np.isnan(tables.fig16(orders, frame)["speedup_over_one_thread"]).all()
    assert len(tables.fig17(orders, frame)) == len(orders)


def _gpu_cell(device="Test GPU"):
    """A GPU cell as experiments.gpu_cell writes it (rows made up for the table
    arithmetic; the GPU tests run the real one)."""
    rows = [("bottom_up_strips", 256, 32, 0.010), ("bottom_up_strips", 256, 64, 0.020),
            ("bottom_up_strips", 1024, 32, 0.040), ("bottom_up_strips", 1024, 64, 0.030),
            ("bottom_up", 1024, 256, 0.5), ("divide_and_conquer", 1024, 256, 0.6)]  # fmt: skip
    arrays = {"order": np.array([r[0] for r in rows]), "n": np.array([r[1] for r in rows]),
              "block": np.array([r[2] for r in rows]), "dtype": np.array(["float32"] * 6),
              "seconds": np.array([r[3] for r in rows]), "upload_s": np.full(6, 0.001)}  # fmt: skip
    for k in dp.KINDS:
        arrays[f"{k}_s"] = arrays["seconds"] / 3
    for k in ("diagonal", "triangular", "rectangular"):
        arrays[k] = np.ones(6, dtype=int)
    meta = {"implementation": f"CUDA (dp.cu), {device}", "backend": "cuda", "device": device}
    return arrays, meta


def test_gpu_rows_join_the_tables(cells):
    orders = tables.order_frame(cells + [_gpu_cell()])
    assert (orders.loc[orders["backend"] == "cpu", "upload_s"] == 0).all()
    f18 = tables.fig18(orders)
    # §3.6.2's blocks: 32 below n = 512, 64 from it; the upload counted in
    assert list(zip(f18["n"], f18["block"], strict=True)) == [(256, 32), (1024, 64)]
    assert f18["seconds_with_upload"].tolist() == pytest.approx([0.011, 0.031])
    t3 = tables.table3(orders)
    gpu = t3[t3["implementation"].str.startswith("CUDA")]
    assert gpu["speedup"].tolist() == pytest.approx([0.6 / 0.5])
    assert len(t3) == len(gpu) + 2 * 2 * 2  # the NumPy rows: n 32, 64 x s 8, 16 x 2 dtypes
    native = pd.DataFrame({"n": [1024, 1024], "dtype": ["float32"] * 2, "threads": [1, 4],
                           "seconds": [4.1, 1.1], "implementation": "C"})  # fmt: skip
    f16 = tables.fig16(orders, native)
    row = f16[(f16["order"] == "bottom_up_strips") & (f16["n"] == 1024) & (f16["block"] == 64)]
    assert row["speedup_over_one_thread"].item() == pytest.approx(4.1 / 0.031)
    assert row["speedup_over_all_threads"].item() == pytest.approx(1.1 / 0.031)


def test_figures_without_a_gpu_say_so(cells):
    from pfresample_studies.moazeni2013 import figures

    orders = tables.order_frame(cells)
    assert tables.fig18(orders).empty and tables.fig12([]).empty
    for name, frame in (("fig12", tables.fig12([])), ("fig18", tables.fig18(orders)),
                        ("fig13", tables.fig13(orders))):  # fmt: skip
        fig = figures.draw(name, frame, "quick", [])
        assert any("no GPU ran" in t.get_text() for t in fig.texts)
