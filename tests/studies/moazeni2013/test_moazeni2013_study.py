"""Moazeni (2013) chapter 3, the study around the algorithms: the config checks, the
cells (each run checked against the reference before it is kept), and the tables
(Table 1's counted calls equal the printed ones; Table 3 and Fig 16-17's arithmetic)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pfresample.studies.moazeni2013 import catalog, dp, experiments, tables

GOOD = {
    "moazeni2013_ch3_numpy_n": [32, 64],
    "moazeni2013_ch3_native_n": [64],
    "moazeni2013_ch3_block_sizes": [8, 16],
    "moazeni2013_ch3_recursive_base": 8,
    "moazeni2013_ch3_dtypes": ["float32", "int32"],
    "moazeni2013_ch3_repeats": 1,
}


@pytest.mark.parametrize(
    "change,match",
    [
        ({"moazeni2013_ch3_block_sizes": [12]}, "powers of 2"),
        ({"moazeni2013_ch3_recursive_base": 32}, "below moazeni2013_ch3_recursive_base"),
        ({"moazeni2013_ch3_numpy_n": [16]}, "at least twice"),
        ({"moazeni2013_ch3_dtypes": ["float64"]}, "not in"),
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
    from pfresample.studies.moazeni2013 import native

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
