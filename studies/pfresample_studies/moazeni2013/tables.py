"""Moazeni (2013) chapter 3: tidy tables of Tables 1 and 3 and Figs 13 and
15-17 from the cells (``experiments``), the thesis's numbers beside ours where
it prints them, each labelled with its hardware."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import catalog, dp


def order_frame(cells) -> pd.DataFrame:
    """One row per (implementation, order, n, block size, dtype) of the order
    cells and the GPU cells (which carry their order a row); ``upload_s`` is
    the GPU's upload (0 on the CPU), which the thesis counts in a GPU's time."""
    frames = []
    for arrays, meta in cells:
        frame = pd.DataFrame({k: np.asarray(v) for k, v in arrays.items()})
        if "order" not in frame:
            frame.insert(0, "order", meta["order"])
        frame["implementation"] = meta["implementation"]
        frame["backend"] = meta.get("backend", "cpu")
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    if "upload_s" not in frame:
        frame["upload_s"] = 0.0
    frame["upload_s"] = frame["upload_s"].fillna(0.0).astype(float)
    return frame


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
    keys = ["implementation", "n", "block", "dtype"]
    up = orders[orders["order"] == "bottom_up"].set_index(keys)["seconds"]
    dc = orders[orders["order"] == "divide_and_conquer"].set_index(keys)["seconds"]
    both = up.index.intersection(dc.index)
    frame = pd.DataFrame({"bottom_up_s": up.loc[both], "divide_and_conquer_s": dc.loc[both]})
    frame["speedup"] = frame["divide_and_conquer_s"] / frame["bottom_up_s"]
    frame = frame.reset_index()
    frame["printed_speedup"] = frame["n"].map(catalog.PUBLISHED_TABLE3)
    return frame


def fig13(orders: pd.DataFrame) -> pd.DataFrame:
    """Figs 13-14: time against n for each block size (every order and dtype)."""
    return orders[["implementation", "order", "dtype", "block", "n", "seconds"]].copy()


def fig15(orders: pd.DataFrame) -> pd.DataFrame:
    """Fig 15: the share of the time in each kernel kind, per order, n, block size."""
    frame = orders[["implementation", "order", "dtype", "block", "n"]].copy()
    parts = orders[[f"{k}_s" for k in dp.KINDS]]
    total = parts.sum(axis=1)
    for kind in dp.KINDS:
        frame[f"{kind}_share"] = orders[f"{kind}_s"] / total
    return frame


def fig16(orders: pd.DataFrame, native: pd.DataFrame) -> pd.DataFrame:
    """Fig 16: speed-ups over one CPU thread of the compiled code, at the n
    both ran: every implementation's time against it (> 1: faster); a GPU's
    time with its upload, as the thesis counts it (§3.6)."""
    one = native[native["threads"] == 1].set_index(["n", "dtype"])["seconds"]
    rows = []
    for _, r in native[native["threads"] > 1].iterrows():
        rows.append({"implementation": f"C, {int(r['threads'])} threads", "order": "diagonals",
                     "n": int(r["n"]), "dtype": r["dtype"], "block": 0,
                     "seconds": r["seconds"]})  # fmt: skip
    for _, r in orders.iterrows():
        rows.append({"implementation": r["implementation"], "order": r["order"],
                     "n": int(r["n"]), "dtype": r["dtype"], "block": int(r["block"]),
                     "seconds": r["seconds"] + r["upload_s"]})  # fmt: skip
    frame = pd.DataFrame(rows)
    base = [one.get((n, d), np.nan) for n, d in zip(frame["n"], frame["dtype"], strict=True)]
    frame["one_thread_s"] = base
    frame["speedup_over_one_thread"] = frame["one_thread_s"] / frame["seconds"]
    many = native[native["threads"] > 1].set_index(["n", "dtype"])
    frame["all_threads_s"] = [many["seconds"].get((n, d), np.nan)
                              for n, d in zip(frame["n"], frame["dtype"], strict=True)]  # fmt: skip
    frame["speedup_over_all_threads"] = frame["all_threads_s"] / frame["seconds"]
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
        rows.append({"implementation": f"{r['implementation']} {r['order']}",
                     "n": int(r["n"]), "dtype": r["dtype"], "block": int(r["block"]),
                     "seconds": r["seconds"]})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["operations"] = [dp.operations(n) for n in frame["n"]]
    frame["gop_per_s"] = frame["operations"] / frame["seconds"] / 1e9
    return frame


def fig12(cells) -> pd.DataFrame:
    """Fig 12: one rectangular launch against cuBLAS's dense product of the
    same p x p shape, per device (no rows where no GPU ran)."""
    frames = [pd.DataFrame({k: np.asarray(v) for k, v in arrays.items()}).assign(
              device=meta["device"]) for arrays, meta in cells]  # fmt: skip
    if not frames:
        return pd.DataFrame(columns=["device", "p", "minplus_s", "matmul_s", "minplus_over_matmul"])
    frame = pd.concat(frames, ignore_index=True)
    frame["minplus_over_matmul"] = frame["minplus_s"] / frame["matmul_s"]
    return frame[["device", "p", "minplus_s", "matmul_s", "minplus_over_matmul"]]


def fig18(orders: pd.DataFrame) -> pd.DataFrame:
    """Fig 18 (the chapter's three GPUs): each GPU's one-launch-a-strip time
    against n at §3.6.2's block size (32 below n = 512, 64 above), upload
    included as the thesis counts it (no rows where no GPU ran)."""
    gpu = orders[(orders["backend"] == "cuda") & (orders["order"] == "bottom_up_strips")]
    chosen = gpu[gpu["block"] == gpu["n"].map(catalog.fig18_block)]
    frame = chosen[["implementation", "dtype", "n", "block", "seconds", "upload_s"]].copy()
    frame["seconds_with_upload"] = frame["seconds"] + frame["upload_s"]
    return frame.sort_values(["implementation", "dtype", "n"]).reset_index(drop=True)


def beyond_threads(fig16: pd.DataFrame, cpu_threads: pd.DataFrame) -> list[str]:
    """Every CPU-threads-over-one-thread speed-up above its number of threads: Fig 16's
    "C, k threads" rows over one C thread, and chapter 4's thread sweep (Mops/s at k
    threads over one thread, each table count). A speed-up above k on k threads is a
    timing artefact (a first call's cost in the one-thread time, a too-short run), not
    a result; the tests fail on any."""
    found = []
    c = fig16[fig16["implementation"].astype(str).str.match(r"C, \d+ threads")]
    for r in c.itertuples(index=False):
        k = int(str(r.implementation).split()[1])
        if r.speedup_over_one_thread > k:
            found.append(f"Fig 16: {r.implementation} at n = {r.n} {r.dtype}: "
                         f"{r.speedup_over_one_thread:.3g}x one thread")  # fmt: skip
    if len(cpu_threads):
        for tables, part in cpu_threads.groupby("tables"):
            one = part.loc[part["threads"] == 1, "mops"]
            for r in part[part["threads"] > 1].itertuples(index=False):
                if len(one) and r.mops / one.iloc[0] > r.threads:
                    found.append(f"cpu_threads: PH = {tables} on {r.threads} threads: "
                                 f"{r.mops / one.iloc[0]:.3g}x one thread")  # fmt: skip
    return found


CH3_KEYS = ("n", "dtype")
CH3_BASELINE = "dp.c by diagonals on one thread, the thesis's one Core i7 thread (§3.6)"
CH3_HEADLINE = ("evidence/2026-11-28-h100-202cbb3 and evidence/2026-11-28-h100-1327ac8, one "
                "H100 with its 16 Xeon cores; docs/moazeni2013.md")  # fmt: skip


def evidence_gpu_orders(frame: pd.DataFrame, device: str) -> pd.DataFrame:
    """A committed GPU cell in its own layout (``ch3_gpu_cell.csv``: the cell's arrays
    as columns, one row an (order, n, block, dtype)) as ``order_frame``'s rows of a
    GPU named ``device``."""
    frame = frame.copy()
    frame["implementation"] = f"CUDA (dp.cu), {device}"
    frame["backend"] = "cuda"
    frame["upload_s"] = frame.get("upload_s", 0.0)
    frame["upload_s"] = frame["upload_s"].fillna(0.0).astype(float)
    return frame


def gpu_strips(orders: pd.DataFrame) -> pd.DataFrame:
    """The GPU's time at each (n, dtype): the thesis's final order (one launch a strip)
    at its fastest block size, the device time without the upload (``gpu_upload_s``
    beside it), as the one-host run measured it (bench/moazeni2013_best_cpu.py)."""
    gpu = orders[(orders["backend"] == "cuda") & (orders["order"] == "bottom_up_strips")]
    if gpu.empty:
        return pd.DataFrame(columns=[*CH3_KEYS, "gpu_s", "gpu_block", "gpu_upload_s",
                                     "gpu_device"])  # fmt: skip
    fastest = gpu.loc[gpu.groupby(list(CH3_KEYS))["seconds"].idxmin()]
    return pd.DataFrame({"n": fastest["n"].astype(np.int64).to_numpy(),
                         "dtype": fastest["dtype"].to_numpy(),
                         "gpu_s": fastest["seconds"].astype(float).to_numpy(),
                         "gpu_block": fastest["block"].astype(np.int64).to_numpy(),
                         "gpu_upload_s": fastest["upload_s"].astype(float).to_numpy(),
                         "gpu_device": fastest["implementation"].to_numpy()})  # fmt: skip


def ch3_speedups(gpu: pd.DataFrame, native: pd.DataFrame, best_cell, *, gpu_source: str,
                 one_host: bool) -> pd.DataFrame:  # fmt: skip
    """Chapter 3's speed-ups at each (n, dtype) all three sides ran: the GPU (``gpu``,
    ``gpu_strips``' rows) over the document's baseline (the native cell's one-thread
    dp.c) and over the best CPU code on every core (the best-CPU cell's dp_blocked.c),
    the thesis's printed "up to 228x" beside them (``speedups.join``)."""
    from . import speedups

    arrays, meta = best_cell
    extra = ("gpu_block", "gpu_upload_s", "gpu_device", "doc_cpu_code", "printed_speedup")
    best = pd.DataFrame({k: np.asarray(v) for k, v in arrays.items()})
    one = native[native["threads"] == 1]
    if best.empty or one.empty or gpu.empty:
        return speedups.empty(CH3_KEYS, extra)
    doc = pd.DataFrame({"n": one["n"].astype(np.int64), "dtype": one["dtype"].astype(str),
                        "doc_cpu_s": one["seconds"].astype(float)})  # fmt: skip
    best = pd.DataFrame({"n": best["n"].astype(np.int64), "dtype": best["dtype"].astype(str),
                         "best_cpu_s": best["seconds"].astype(float),
                         "best_cpu_threads": best["threads"].astype(np.int64)})  # fmt: skip
    gpu = gpu.astype({"n": np.int64, "dtype": str})
    return speedups.join(CH3_KEYS, gpu, doc, best, gpu_source=gpu_source,
                         best_code=f"{meta['code']} (native.solve_blocked)", cpu=meta["cpu"],
                         one_host=one_host,
                         extra={"doc_cpu_code": "dp.c, 1 thread",
                                "printed_speedup": catalog.PUBLISHED_SPEEDUP})  # fmt: skip
