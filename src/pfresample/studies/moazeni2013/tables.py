"""Moazeni (2013) chapter 3: tidy tables of Tables 1 and 3 and Figs 13 and
15-17 from the cells (``experiments``), the thesis's numbers beside ours where
it prints them, each labelled with its hardware."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import catalog, dp


def order_frame(cells) -> pd.DataFrame:
    """One row per (order, n, block size, dtype) of the order cells."""
    frames = []
    for arrays, meta in cells:
        frame = pd.DataFrame({k: np.asarray(v) for k, v in arrays.items()})
        frame.insert(0, "order", meta["order"])
        frame["implementation"] = meta["implementation"]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def native_frame(cell) -> pd.DataFrame:
    """The compiled baseline's rows (none where no compiler was found)."""
    arrays, meta = cell
    frame = pd.DataFrame({k: np.asarray(v) for k, v in arrays.items()})
    frame = frame.astype({"n": np.int64, "threads": np.int64, "seconds": np.float64})
    frame["implementation"] = meta["implementation"]
    return frame


def table1(orders: pd.DataFrame) -> pd.DataFrame:
    """Table 1: per order and thesis n, the calls of each kernel at block size
    and threshold 256 counted exactly by a dry run (``counted``) beside the
    printed calls and times (Tesla C1060); then our measured rows (the
    order cells' calls and seconds per kernel kind, ``measured``)."""
    rows = []
    for order, printed in catalog.PUBLISHED_TABLE1.items():
        solve = {"bottom_up": dp.solve_bottom_up,
                 "divide_and_conquer": dp.solve_divide_and_conquer}[order]  # fmt: skip
        for n, (tri, tri_us, rect, rect_us) in printed.items():
            _, calls = solve(dp.shaped(n), catalog.TABLE1_BLOCK, dry=True)
            rows.append({"source": "counted (dry run) / printed", "order": order, "n": n,
                         "block": catalog.TABLE1_BLOCK, "dtype": "",
                         "triangular_calls": calls.triangular,
                         "rectangular_calls": calls.rectangular,
                         "printed_triangular_calls": tri, "printed_rectangular_calls": rect,
                         "triangular_s": tri_us / 1e6, "rectangular_s": rect_us / 1e6,
                         "hardware": catalog.PUBLISHED_HARDWARE.split(" vs ")[0]})  # fmt: skip
    for _, r in orders.iterrows():
        rows.append({"source": "measured", "order": r["order"], "n": int(r["n"]),
                     "block": int(r["block"]), "dtype": r["dtype"],
                     "triangular_calls": int(r["triangular"]),
                     "rectangular_calls": int(r["rectangular"]),
                     "triangular_s": r["triangular_s"], "rectangular_s": r["rectangular_s"],
                     "hardware": r["implementation"]})  # fmt: skip
    return pd.DataFrame(rows)


def table3(orders: pd.DataFrame) -> pd.DataFrame:
    """Table 3: time of divide and conquer over bottom-up (the bottom-up's
    speed-up) at each n, block size and dtype, beside the printed ratio."""
    keys = ["n", "block", "dtype"]
    up = orders[orders["order"] == "bottom_up"].set_index(keys)["seconds"]
    dc = orders[orders["order"] == "divide_and_conquer"].set_index(keys)["seconds"]
    both = up.index.intersection(dc.index)
    frame = pd.DataFrame({"bottom_up_s": up.loc[both], "divide_and_conquer_s": dc.loc[both]})
    frame["speedup"] = frame["divide_and_conquer_s"] / frame["bottom_up_s"]
    frame = frame.reset_index()
    frame["printed_speedup"] = frame["n"].map(catalog.PUBLISHED_TABLE3)
    frame["implementation"] = orders["implementation"].iloc[0]
    return frame


def fig13(orders: pd.DataFrame) -> pd.DataFrame:
    """Figs 13-14: time against n for each block size (every order and dtype)."""
    return orders[["order", "dtype", "block", "n", "seconds", "implementation"]].copy()


def fig15(orders: pd.DataFrame) -> pd.DataFrame:
    """Fig 15: the share of the time in each kernel kind, per order, n, block size."""
    frame = orders[["order", "dtype", "block", "n"]].copy()
    parts = orders[[f"{k}_s" for k in dp.KINDS]]
    total = parts.sum(axis=1)
    for kind in dp.KINDS:
        frame[f"{kind}_share"] = orders[f"{kind}_s"] / total
    return frame


def fig16(orders: pd.DataFrame, native: pd.DataFrame) -> pd.DataFrame:
    """Fig 16: speed-ups over one CPU thread of the compiled code, at the n
    both ran: every implementation's time against it (> 1: faster)."""
    one = native[native["threads"] == 1].set_index(["n", "dtype"])["seconds"]
    rows = []
    for _, r in native[native["threads"] > 1].iterrows():
        rows.append({"implementation": f"C, {int(r['threads'])} threads", "order": "diagonals",
                     "n": int(r["n"]), "dtype": r["dtype"], "block": 0,
                     "seconds": r["seconds"]})  # fmt: skip
    for _, r in orders.iterrows():
        rows.append({"implementation": "NumPy", "order": r["order"], "n": int(r["n"]),
                     "dtype": r["dtype"], "block": int(r["block"]),
                     "seconds": r["seconds"]})  # fmt: skip
    frame = pd.DataFrame(rows)
    base = [one.get((n, d), np.nan) for n, d in zip(frame["n"], frame["dtype"], strict=True)]
    frame["one_thread_s"] = base
    frame["speedup_over_one_thread"] = frame["one_thread_s"] / frame["seconds"]
    frame["printed_best_speedup"] = catalog.PUBLISHED_SPEEDUP
    return frame


def fig17(orders: pd.DataFrame, native: pd.DataFrame) -> pd.DataFrame:
    """Fig 17: min-plus operations a second, the count (n^3 - n) / 6 stated
    (one add and one min each; n the matrix side, Table 1's n)."""
    rows = []
    for _, r in native.iterrows():
        rows.append({"implementation": f"C, {int(r['threads'])} thread(s)", "n": int(r["n"]),
                     "dtype": r["dtype"], "block": 0, "seconds": r["seconds"]})  # fmt: skip
    for _, r in orders.iterrows():
        rows.append({"implementation": f"NumPy {r['order']}", "n": int(r["n"]),
                     "dtype": r["dtype"], "block": int(r["block"]),
                     "seconds": r["seconds"]})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["operations"] = [dp.operations(n) for n in frame["n"]]
    frame["gop_per_s"] = frame["operations"] / frame["seconds"] / 1e9
    return frame
