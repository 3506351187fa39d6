#!/usr/bin/env python3
"""Moazeni (2013) chapter 7: the GPU's MD-DTW search against the best CPU code we can
write, on every core, against the document's kind of baseline and against dtaidistance,
in one run on one machine.

**The task** (Fig 55, the single-dimensional search): for every (query dimension,
recording dimension) pair with |i - j| < nr, the p windows of least DTW distance at least
m / 2 apart (``mddtw.best_windows`` of every window's distance). Every side returns the
same (window, distance) bits, checked in the run. The inputs are the pipeline timing
cell's (``mddtw_experiments.timing_cell``: random walks, seed 2017, a query cut from the
recording with noise 0.3, band round(0.05 m), nr = 2, p = 10). Each window's mean and
divisor (``mddtw.running_stats``, O(n) a dimension) are an input of every side and
outside every clock (the GPU's ``Recording`` computes them on the host too); their time
is a row of its own.

* **GPU** (the pipeline's ``mddtw_gpu.Recording.distances``, fast_stats): ``gpu_kernel``,
  the distance kernel alone between CUDA events (the scope of the document's printed
  ratios and of the pipeline's Fig 63); ``gpu_top_p``, the task: the kernel, CuPy's
  ``argsort`` of each pair's distances on the device, the p (2 (m / 2) - 1) smallest a
  pair copied to the host, and the selection there in C (``native.dtw_select_candidates``;
  the selection takes its p windows among them), wall time after a synchronise.
* **Best CPU code, all cores** (``native/dtw_best.c``): ``dtw_best_search``, the UCR-suite
  cascade made exact for the top-p task (LB_Kim, LB_Keogh EQ and EC early-abandoned,
  online z-normalisation, cumulative-bound abandoning of the DTW), with its counters
  (the fraction of windows each stage drops, the DTW cells it computes); ``dtw_best_all``,
  every window's exact distance eight windows a SIMD vector, then the selection (the
  GPU kernel's CPU twin). The faster is the headline's "best CPU". ``dtw_best_search``
  also on one thread (up to ``--ch7-one-thread-max-gcells``): the cells a core.
* **The document's kind of baseline**: ``native/dtw.c``'s exact DTW of every window on
  one thread, every pair (not 2 scaled up), then the same C selection on one thread,
  up to ``--ch7-baseline-max-gcells`` of DTW cells a case (``--ch7-baseline-repeats``
  runs, 1 by default: 80 s a run at the headline case).
* **The peer**: dtaidistance with ``parallel=True`` where installed (its OpenMP loop
  runs over a block's rows: one row a window, the query the one column; ``window`` =
  band + 1), its distances' selection in C; the normalised windows are made outside
  the clock. Up to ``--ch7-peer-max-gcells``.

Efficiency: every CPU row has the brute-force DTW cells of the task (pairs x W x the
band's cells a window) over its seconds, in all and a core -- for the brute-force codes
the cells they compute, for the pruned search what it saves.

**The machine's bound**, measured at the start of the run (about 2 s): the core's float64
min-plus peak (``native/minplus_peak.c``'s ``minplus_peak_f64``, chapter 3's microkernel
in float64, dtw_best.c's type: a tile of ``min(acc, x + y)`` in registers) on one thread
and on all, and the latency of one DTW cell's dependency chain (``minplus_chain_f64``).
The best code's two rows (and the one-thread row) report the DTW cells they compute a
second against both:

* **ops a cell**, from dtw_best.c's inner loops: ``dtw_lanes`` (dtw_best_all) computes a
  cell as cost = (q - w)(q - w) (a subtraction, a multiplication), best = min(up, left),
  best = min(best, diag), left = cost + best: 2 min + 2 add/sub + 1 mul, 5 operations
  of the peak's ports (the peak's min-plus is 2: a min and an add), so the peak allows
  ``2 x peak / 5`` cells a second; ``dtw_abandon`` (dtw_best_search) adds the row's
  least cost, min(least, left): 6, and it is scalar (one window at a time: ``1 / lanes``
  of the SIMD peak at most). ``pct_of_peak``: the cells a second x ops a cell over 2 x
  the peak of as many threads.
* **the dependency chain**: a cell's cost reaches its right and lower neighbours through
  min, min, add (one link of ``minplus_chain_f64``); every window's DTW has a path of
  2 (m - 1) links from its first cell to its last, so a thread completes at most
  ``lanes`` windows (dtw_lanes' 8, one chain; the search: one) in 2 (m - 1) links, or
  ``lanes x cells a window / (2 (m - 1) x link)`` cells a second (a ceiling: the up
  value also passes through the row buffer in memory). ``pct_of_chain``; ``bound``
  names the lower of the two ceilings (for the search, the scalar peak: the SIMD
  peak over its lanes), the one that bounds the code. The search's seconds also hold
  its lower bounds' work, so its fractions are of the whole search, not of its DTW.

Every cell: a warm-up call, then the median, min and max of ``--ch7-repeats`` runs
(>= 3); the document's baseline as said. Rows go to ``ch7_timings.csv`` one at a time
(a killed run keeps what it measured), the ratios to ``ch7_ratios.csv`` (the GPU's two
scopes over each CPU side, the median's ratio and the interval min/max to max/min).

    python bench/moazeni2013_ch7_best_cpu.py --out OUT               # the grid (~4 min)
    python bench/moazeni2013_ch7_best_cpu.py --out OUT --ch7-quick   # small cases
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from pfresample_studies.moazeni2013 import mddtw, native

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Rows, gpu, host  # noqa: E402 -- sibling module

SEED = 2017  # config/config.yaml's seed
QUERIES = (32, 64, 128, 256)  # moazeni2013_ch7_timing_queries: the order of the cell's draws
SF, NR, P = 0.05, 2, 10  # moazeni2013_ch7_sf, _nr, _p
CASES = ("99:65536:64", "99:16384:32", "3:262144:64", "9:65536:128", "99:65536:256")
QUICK_CASES = ("9:4096:64", "3:8192:32")
TIMING_FIELDS = ["case", "k", "n", "m", "band", "pairs", "windows", "side", "code", "threads",
                 "seconds", "seconds_min", "seconds_max", "repeats", "brute_gcells",
                 "brute_gcells_per_s", "brute_gcells_per_s_core", "dtw_gcells_computed",
                 "drop_lb_kim", "drop_lb_keogh_eq", "drop_lb_keogh_ec", "drop_dtw_abandoned",
                 "dtw_completed", "equal_to_reference", "dtw_gcells_per_s",
                 "dtw_gcells_per_s_core", "cell_ops", "peak_gcells_per_s", "pct_of_peak",
                 "chain_gcells_per_s", "pct_of_chain", "bound", "rate", "unit", "note",
                 "device", "cpu", "cores", "commit", "date"]  # fmt: skip
# dtw_best.c's operations a DTW cell (the module's docstring) and whether the code is SIMD
CELL_OPS = {"dtw_best.c dtw_best_all (SIMD)": (5, True),
            "dtw_best.c dtw_best_search": (6, False)}  # fmt: skip
DTW_LANES = 8  # dtw_best.c's LANES: the windows of one dtw_lanes call, one chain
BOUND_SECONDS = 0.1  # a run of the peak, or of the chain
RATIO_FIELDS = [
    "case",
    "k",
    "n",
    "m",
    "pairs",
    "gpu_scope",
    "gpu_s",
    "over",
    "cpu_s",
    "speedup",
    "speedup_low",
    "speedup_high",
    "device",
    "cpu",
    "cores",
    "commit",
    "date",
]


def timed(run, repeats: int, warm: bool = True) -> dict:
    """Median, min and max seconds of ``run()`` over ``repeats`` runs after a warm-up;
    ``run`` may return its own seconds (a device time) as a float."""
    if warm:
        run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        own = run()
        seconds = time.perf_counter() - start
        times.append(float(own) if isinstance(own, float) else seconds)
    return {"seconds": statistics.median(times), "seconds_min": min(times),
            "seconds_max": max(times), "repeats": repeats}  # fmt: skip


def case_inputs(k: int, n: int, m: int):
    """The timing cell's recording and query for (k, n, m): the same draws in the same
    order (its loop over QUERIES draws a start and noise for each length before m)."""
    rng = np.random.default_rng([SEED, k, n])
    db = np.cumsum(rng.normal(size=(k, n)), axis=1)
    query = None
    for mm in QUERIES if m in QUERIES else (m,):
        if mm > n:
            continue
        start = int(rng.integers(0, n - mm + 1))
        noisy = db[:, start : start + mm] + rng.normal(0, 0.3, (k, mm))
        if mm == m:
            query = noisy
            break
    return db, query


def machine_bounds(threads: int, repeats: int, h: dict, timings: Rows) -> dict:
    """The float64 min-plus peak on one thread and on ``threads`` (G min-plus/s) and one
    link of the DTW cell's chain (seconds), each the median of ``repeats`` runs of
    about BOUND_SECONDS after a calibrating run; rows of side "bound"."""
    bounds = {"peak": {}, "lanes": native.peak_library().minplus_peak_lanes_f64()}
    for nthreads in sorted({1, threads}):
        rounds = 1000
        while native.minplus_peak(rounds, nthreads, "float64")[0] < BOUND_SECONDS:
            rounds *= 2
        ops = native.minplus_peak(1, nthreads, "float64")[1] * rounds
        t = timed(lambda r=rounds, k=nthreads: native.minplus_peak(r, k, "float64")[0], repeats,
                  warm=False)  # fmt: skip
        rate = ops / t["seconds"] / 1e9
        bounds["peak"][nthreads] = rate
        timings.add({"side": "bound", "code": "minplus_peak.c minplus_peak_f64",
                     "threads": nthreads, **t, "rate": rate, "unit": "G min-plus/s",
                     "note": f"float64, {bounds['lanes']} lanes a vector; a min-plus is a min "
                             "and an add", **h})  # fmt: skip
        print(f"  float64 min-plus peak, {nthreads:>3} thread(s): {rate:8.2f} G/s "
              f"({rate / nthreads:.2f} a core; {2 * rate / 5:.2f} G cells/s at 5 ops a cell)",
              flush=True)  # fmt: skip
    links = 1 << 20
    while native.minplus_chain(links) < BOUND_SECONDS:
        links *= 2
    t = timed(lambda: native.minplus_chain(links), repeats, warm=False)
    for key in ("seconds", "seconds_min", "seconds_max"):
        t[key] /= links
    bounds["link_s"] = t["seconds"]
    timings.add({"side": "bound", "code": "minplus_peak.c minplus_chain_f64", "threads": 1, **t,
                 "rate": t["seconds"] * 1e9, "unit": "ns a link (min, min, add)",
                 "note": "one DTW cell's path to its neighbour", **h})  # fmt: skip
    print(f"  one DTW cell's chain (min, min, add): {t['seconds'] * 1e9:.2f} ns a link",
          flush=True)  # fmt: skip
    return bounds


def efficiency(code: str, nthreads: int, seconds: float, gcells: float, m: int, band: int,
               bounds: dict) -> dict:  # fmt: skip
    """The best code's DTW cells a second against the peak and the chain (the module's
    docstring): the columns of its row."""
    ops, simd = CELL_OPS[code]
    lanes = DTW_LANES if simd else 1
    rate = gcells / seconds
    peak = 2 * bounds["peak"][nthreads] / ops  # G cells/s at the SIMD peak
    throughput = peak if simd else peak / bounds["lanes"]
    chain = nthreads * lanes * cells_per_window(m, band) / (2 * (m - 1) * bounds["link_s"]) / 1e9
    bound = "chain" if chain < throughput else ("peak" if simd else "scalar peak")
    return {"dtw_gcells_per_s": rate, "dtw_gcells_per_s_core": rate / nthreads,
            "cell_ops": ops, "peak_gcells_per_s": peak, "pct_of_peak": 100 * rate / peak,
            "chain_gcells_per_s": chain, "pct_of_chain": 100 * rate / chain,
            "bound": bound}  # fmt: skip


def cells_per_window(m: int, band: int) -> int:
    """The banded DTW's cells of one window (every row's band, clipped at the edges)."""
    return sum(min(m - 1, i + band) - max(0, i - band) + 1 for i in range(m))


def dtw_c_baseline(data, qz, db, mu, sd, pair_list, band, E) -> list:
    """dtw.c on one thread, every pair, then the C selection on one thread."""
    out = []
    for j, i in pair_list:
        d = native.dtw_windows(qz[j], db[i], mu[i], sd[i], band)
        out += native.dtw_select_rows(d[None, :], P, E, 1)
    return out


def peer_module():
    """dtaidistance's dtw module and whether its OpenMP library loaded, or (None, False)."""
    try:
        from dtaidistance import dtw
    except ImportError:
        return None, False
    return dtw, getattr(dtw, "dtw_cc_omp", None) is not None


def peer_run(dtw, qz, db, mu, sd, m, band, E, pair_list):
    """dtaidistance, parallel=True, every pair: (seconds in its calls and the selection,
    the selections). The windows of a recording dimension are normalised once (outside
    the clock) with the statistics every side uses, the last row the pair's query."""
    seconds, out = 0.0, {}
    by_x: dict[int, list[int]] = {}
    for j, i in pair_list:
        by_x.setdefault(i, []).append(j)
    W = db.shape[1] - m + 1
    for i, js in by_x.items():
        block = np.empty((W + 1, m))
        windows = np.lib.stride_tricks.sliding_window_view(db[i], m)
        block[:W] = (windows - mu[i][:, None]) / sd[i][:, None]
        for j in js:
            block[W] = qz[j]
            start = time.perf_counter()
            d = dtw.distance_matrix_fast(block, window=band + 1, block=((0, W), (W, W + 1)),
                                         compact=True, parallel=True)  # fmt: skip
            out[(j, i)] = native.dtw_select_rows(np.asarray(d)[None, :], P, E, 1)[0]
            seconds += time.perf_counter() - start
    return seconds, [out[pair] for pair in pair_list]


def run_case(spec: str, args, threads: int, cupy, device, h: dict, timings: Rows, ratios: Rows,
             bounds: dict):  # fmt: skip
    k, n, m = (int(v) for v in spec.split(":"))
    band, E = max(1, int(round(SF * m))), max(1, m // 2)
    pair_list = mddtw.pairs(k, k, NR)
    W = n - m + 1
    db, query = case_inputs(k, n, m)
    start = time.perf_counter()
    stats = [mddtw.running_stats(row, m) for row in db]
    stats_s = time.perf_counter() - start
    mu, sd = np.stack([s[0] for s in stats]), np.stack([s[1] for s in stats])
    qz = np.stack([mddtw.znorm(row) for row in query])
    data = native.DtwSearchInput(qz, db, mu, sd, pair_list)
    brute = len(pair_list) * W * cells_per_window(m, band) / 1e9
    base = {"case": spec, "k": k, "n": n, "m": m, "band": band, "pairs": len(pair_list),
            "windows": len(pair_list) * W, "brute_gcells": brute, **h}  # fmt: skip
    print(f"\n## {spec}: k = {k}, n = {n:,}, m = {m}, band {band}, {len(pair_list)} pairs, "
          f"{brute:.2f} G DTW cells brute force", flush=True)  # fmt: skip
    timings.add({**base, "side": "stats", "code": "mddtw.running_stats (NumPy)", "threads": 1,
                 "seconds": stats_s, "repeats": 1,
                 "note": "every side's input, outside every clock"})  # fmt: skip
    reference, _ = native.dtw_best_search(data, band, P, E, threads)
    found = {}

    def cpu_row(side, code, nthreads, t, result=None, extra=None, note=""):
        rate = brute / t["seconds"]
        equal = "" if result is None else bool(result == reference)
        eff = {}
        if code in CELL_OPS and nthreads in bounds["peak"]:
            eff = efficiency(code, nthreads, t["seconds"], (extra or {})["dtw_gcells_computed"],
                             m, band, bounds)  # fmt: skip
        row = {**base, "side": side, "code": code, "threads": nthreads, **t,
               "brute_gcells_per_s": rate, "brute_gcells_per_s_core": rate / nthreads,
               "equal_to_reference": equal, "note": note, **(extra or {}), **eff}  # fmt: skip
        timings.add(row)
        found[(side, code, nthreads)] = t
        print(f"  {side:>9} {code:<34} {nthreads:>3} thr: {t['seconds']:9.4f} s "
              f"[{t['seconds_min']:.4f}, {t['seconds_max']:.4f}]  {rate:7.2f} G brute cells/s "
              f"({rate / nthreads:.2f} a core){'' if equal == '' else f', equal: {equal}'}",
              flush=True)  # fmt: skip
        if eff:
            print(f"            DTW cells computed {eff['dtw_gcells_per_s']:.3f} G/s "
                  f"({eff['dtw_gcells_per_s_core']:.3f} a core, {eff['cell_ops']} ops a cell): "
                  f"{eff['pct_of_peak']:.1f} % of the float64 peak's {eff['peak_gcells_per_s']:.2f}"
                  f", {eff['pct_of_chain']:.1f} % of the chain's {eff['chain_gcells_per_s']:.2f};"
                  f" bound by the {eff['bound']}", flush=True)  # fmt: skip
        if equal is False:
            raise AssertionError(f"{spec}: {code} selects other windows than dtw_best_search")

    # the best CPU code, every core: the pruned search and the SIMD brute force
    t = timed(lambda: native.dtw_best_search(data, band, P, E, threads), args.ch7_repeats)
    _, counters = native.dtw_best_search(data, band, P, E, threads)
    total = counters.sum(axis=0)
    counts = dict(zip(native.DTW_STATS, total.tolist(), strict=True))
    windows = len(pair_list) * W
    extra = {"dtw_gcells_computed": counts["dtw_cells"] / 1e9,
             **{f"drop_{name}": counts[name] / windows
                for name in ("lb_kim", "lb_keogh_eq", "lb_keogh_ec", "dtw_abandoned")},
             "dtw_completed": counts["dtw_completed"] / windows}  # fmt: skip
    cpu_row(
        "best_cpu",
        "dtw_best.c dtw_best_search",
        threads,
        t,
        reference,
        extra,
        "UCR-suite cascade, exact top-p",
    )
    print(f"            dropped by LB_Kim {extra['drop_lb_kim']:.1%}, LB_Keogh EQ "
          f"{extra['drop_lb_keogh_eq']:.1%}, EC {extra['drop_lb_keogh_ec']:.1%}, DTW abandoned "
          f"{extra['drop_dtw_abandoned']:.1%}, completed {extra['dtw_completed']:.2%}; DTW cells "
          f"{counts['dtw_cells'] / 1e9 / brute:.2%} of the brute force's", flush=True)  # fmt: skip
    t = timed(lambda: native.dtw_best_all(data, band, P, E, threads), args.ch7_repeats)
    cpu_row("best_cpu", "dtw_best.c dtw_best_all (SIMD)", threads, t,
            native.dtw_best_all(data, band, P, E, threads), {"dtw_gcells_computed": brute},
            "every window's distance, then the selection")  # fmt: skip
    if threads > 1 and brute <= args.ch7_one_thread_max_gcells:
        t = timed(lambda: native.dtw_best_search(data, band, P, E, 1), args.ch7_repeats)
        cpu_row("best_cpu", "dtw_best.c dtw_best_search", 1, t, None, extra)
    # the peer
    dtw, omp = peer_module()
    if dtw is None:
        print("  dtaidistance is not installed: no peer row", flush=True)
    elif not omp:
        print("  dtaidistance has no OpenMP library here: parallel=True would fork processes; "
              "no peer row", flush=True)  # fmt: skip
    elif brute > args.ch7_peer_max_gcells:
        print(f"  dtaidistance: not run (over --ch7-peer-max-gcells {args.ch7_peer_max_gcells})")
    else:
        peer_run(dtw, qz, db, mu, sd, m, band, E, pair_list[:1])  # warm-up
        runs = [
            peer_run(dtw, qz, db, mu, sd, m, band, E, pair_list)
            for _ in range(args.ch7_peer_repeats)
        ]
        times = [r[0] for r in runs]
        t = {"seconds": statistics.median(times), "seconds_min": min(times),
             "seconds_max": max(times), "repeats": len(times)}  # fmt: skip
        cpu_row(
            "peer",
            "dtaidistance parallel=True",
            threads,
            t,
            runs[0][1],
            None,
            "OpenMP over windows; window = band + 1; selection in C",
        )
    # the document's kind of baseline: one C thread, every pair
    if brute <= args.ch7_baseline_max_gcells:
        native.dtw_windows(qz[0], db[0][: 4 * m], mu[0][: 3 * m + 1], sd[0][: 3 * m + 1], band)
        runs = []
        for _ in range(args.ch7_baseline_repeats):
            start = time.perf_counter()
            result = dtw_c_baseline(data, qz, db, mu, sd, pair_list, band, E)
            runs.append(time.perf_counter() - start)
        t = {"seconds": statistics.median(runs), "seconds_min": min(runs),
             "seconds_max": max(runs), "repeats": len(runs)}  # fmt: skip
        cpu_row(
            "document",
            "dtw.c dtw_windows",
            1,
            t,
            result,
            {"dtw_gcells_computed": brute},
            "every pair timed (none scaled); no warm-up beyond a small call",
        )
    else:
        print(f"  dtw.c one thread: not run ({brute:.1f} G cells, over "
              f"--ch7-baseline-max-gcells {args.ch7_baseline_max_gcells})", flush=True)  # fmt: skip
    if cupy is None:
        print("  no CuPy or no GPU: the GPU rows and the ratios are not measured here", flush=True)
        return
    from pfresample_studies.moazeni2013 import mddtw_experiments, mddtw_gpu

    rec = mddtw_gpu.Recording(db, m, fast_stats=True)
    K = min(W, P * (2 * E - 1))

    def gpu_top_p():
        D = rec.distances(query, pair_list, band)
        idx = cupy.argsort(D, axis=1)[:, :K]
        near = cupy.take_along_axis(D, idx, axis=1)
        return native.dtw_select_candidates(idx.get(), near.get(), P, E)

    kernel = timed(lambda: mddtw_experiments._gpu_seconds(rec, query, pair_list, band),
                   args.ch7_repeats)  # fmt: skip
    task = timed(gpu_top_p, args.ch7_repeats)
    gpu_result = gpu_top_p()
    same = bool(gpu_result == reference)
    for code, t in (("gpu_kernel (CUDA events)", kernel), ("gpu_top_p (kernel + argsort + "
                                                           "selection, wall)", task)):  # fmt: skip
        timings.add({**base, "side": "gpu", "code": code, "threads": 0, **t, "device": device,
                     "equal_to_reference": same if "top_p" in code else "",
                     "brute_gcells_per_s": brute / t["seconds"]})  # fmt: skip
        lo, hi = t["seconds_min"] * 1e3, t["seconds_max"] * 1e3
        print(f"  {'gpu':>9} {code:<48}: {t['seconds'] * 1e3:9.3f} ms [{lo:.3f}, {hi:.3f}]",
              flush=True)  # fmt: skip
    if not same:
        raise AssertionError(f"{spec}: the GPU's selection differs from the CPU's")
    best_cpu = min((key for key in found if key[0] == "best_cpu" and key[2] == threads),
                   key=lambda key: found[key]["seconds"])  # fmt: skip
    overs = [(f"best CPU ({best_cpu[1]}, {threads} threads)", found[best_cpu])]
    for key, label in (
        (("document", "dtw.c dtw_windows", 1), "document baseline (dtw.c, 1 thread)"),
        (("peer", "dtaidistance parallel=True", threads),
         f"dtaidistance parallel=True ({threads} threads)"),
    ):  # fmt: skip
        if key in found:
            overs.append((label, found[key]))
    for scope, g in (("kernel only", kernel), ("top-p task", task)):
        for label, c in overs:
            ratio = c["seconds"] / g["seconds"]
            ratios.add({**base, "gpu_scope": scope, "gpu_s": g["seconds"], "over": label,
                        "cpu_s": c["seconds"], "speedup": ratio,
                        "speedup_low": c["seconds_min"] / g["seconds_max"],
                        "speedup_high": c["seconds_max"] / g["seconds_min"],
                        "device": device})  # fmt: skip
            print(f"  GPU ({scope}) over {label}: {ratio:.1f}x "
                  f"[{c['seconds_min'] / g['seconds_max']:.1f}, "
                  f"{c['seconds_max'] / g['seconds_min']:.1f}]", flush=True)  # fmt: skip
    rec = None  # the device arrays freed before the next case
    cupy.get_default_memory_pool().free_all_blocks()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--out", type=Path, required=True, help="folder of ch7_timings.csv, ch7_ratios.csv"
    )
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="all cores")
    p.add_argument("--ch7-quick", action="store_true", help=f"the cases {QUICK_CASES}")
    p.add_argument(
        "--ch7-cases",
        nargs="+",
        default=list(CASES),
        metavar="K:N:M",
        help="recording dimensions : length : query length, in order",
    )
    p.add_argument("--ch7-repeats", type=int, default=5)
    p.add_argument("--ch7-peer-repeats", type=int, default=3)
    p.add_argument("--ch7-baseline-repeats", type=int, default=1)
    p.add_argument(
        "--ch7-baseline-max-gcells",
        type=float,
        default=10.0,
        help="dtw.c one thread where the task's DTW cells are at most this (G)",
    )
    p.add_argument("--ch7-peer-max-gcells", type=float, default=20.0)
    p.add_argument("--ch7-one-thread-max-gcells", type=float, default=10.0)
    # PASSIVE: under ACTIVE the best code's idle threads, and dtaidistance's own OpenMP
    # runtime's, keep spinning through the one-thread baseline and the peer that follow
    # them, which ran 2.2x slow so (evidence/2026-11-28-h200-cb91f83/MANIFEST.md); the best
    # code, with no barrier inside a pair, is not slowed by sleeping threads.
    p.add_argument("--wait-policy", default="PASSIVE", choices=["ACTIVE", "PASSIVE"])
    args = p.parse_args(argv)
    os.environ["OMP_WAIT_POLICY"] = args.wait_policy  # before libgomp loads
    if args.ch7_repeats < 3 or args.ch7_peer_repeats < 1 or args.ch7_baseline_repeats < 1:
        p.error("--ch7-repeats must be >= 3 and the other repeats >= 1")
    if args.ch7_quick:
        args.ch7_cases = list(QUICK_CASES)
    for spec in args.ch7_cases:
        parts = spec.split(":")
        if len(parts) != 3 or not all(v.isdigit() and int(v) > 0 for v in parts) \
                or int(parts[2]) > int(parts[1]):  # fmt: skip
            p.error(f"a case is K:N:M with 0 < M <= N, got {spec!r}")
    h = {**host(), "omp_wait_policy": args.wait_policy}
    cupy, device = gpu()
    dtw, omp = peer_module()
    print(f"# {h['cpu']}, {h['cores']} CPUs, {args.threads} threads for 'all cores'; commit "
          f"{h['commit']}, {h['date']}; GPU: {device or 'none'}; dtaidistance: "
          f"{getattr(dtw, '__name__', None) and 'installed' or 'none'}"
          f"{' (OpenMP)' if omp else ''}", flush=True)  # fmt: skip
    native.dtw_best_library(), native.dtw_library(), native.peak_library()  # before any clock
    timings = Rows(args.out / "ch7_timings.csv", TIMING_FIELDS)
    ratios = Rows(args.out / "ch7_ratios.csv", RATIO_FIELDS)
    started = time.perf_counter()
    print("\n## the machine's bound", flush=True)
    bounds = machine_bounds(args.threads, 3, h, timings)  # about 2 s
    for spec in args.ch7_cases:
        run_case(spec, args, args.threads, cupy, device, h, timings, ratios, bounds)
    print(f"\n# {time.perf_counter() - started:.0f} s; wrote {args.out / 'ch7_timings.csv'}"
          f"{'' if cupy is None else ' and ch7_ratios.csv'}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
