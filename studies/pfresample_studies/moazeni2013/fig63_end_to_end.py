"""Moazeni (2013) Fig 63 timed end to end: MD-DTW's search from the query to the ranked
list, on the GPU and with the best CPU code on every core, stage by stage.

The pipeline's Fig 63 and bench/moazeni2013_ch7_best_cpu.py time the single-dimensional
search (the distances, and their top-p selection); the search goes on to the feasible
sets and their ranking (§7.4.2, §7.4.6). Here every side runs the whole of it
(``mddtw.search`` without segmentation or exhausting) on the pipeline timing cell's
inputs (``mddtw_experiments.timing_inputs``: random walks, seed 2017, a query cut from
the recording with noise 0.3; band round(0.05 m), nr = 2, p = 10, exclusion m / 2):

* **GPU** (``mddtw_gpu.search_stages``): ``distances_s`` the kernel (CUDA events);
  ``top_p_s`` the rest of the wall time to the selected windows (the query's upload and
  launch, CuPy's stable argsort on the device, the candidates' copy, the selection in
  C on the host); ``matching_s`` the feasible sets, ranking and one result a location on
  the host (``mddtw.combine``); ``total_s`` wall, query to ranked list.
* **Best CPU code, all cores** (native/dtw_best.c, the faster of ``dtw_best_search`` and
  ``dtw_best_all`` on this case, each the median of the repeats): ``top_p_s`` its call
  (the distances and the selection in one), then the same ``matching_s`` on the host;
  ``total_s`` wall, query to ranked list.

The window statistics (``mddtw.running_stats``) are the recording's, computed once
before any clock on both sides. Both sides' ranked lists are checked equal (starts,
distances and sets, bit for bit) in the run. Each stage: the median, min and max of
``--repeats`` runs after a warm-up. Rows go to ``fig63_end_to_end.csv`` one at a time
(a killed run keeps what it measured); ``total_s`` over the CPU's ``total_s`` is the
end-to-end ratio (``fig63_ratios.csv``: the medians' ratio, and min/max to max/min).
Without CuPy or a GPU the CPU rows alone are written.

The pipeline's rule ``moazeni2013_ch7_fig63_runs`` runs :func:`run` where the cells have a
GPU (``moazeni2013_ch7_fig63_*`` of config/studies/moazeni2013.yaml); without one the rule
draws both files from the committed run (``pipeline.gpu_runs``), and
``moazeni2013_ch7_fig63_tables`` derives :func:`tables` from them. By hand:

    python -m pfresample_studies.moazeni2013.fig63_end_to_end --out OUT          # the grid
    python -m pfresample_studies.moazeni2013.fig63_end_to_end --out OUT --quick  # small cases
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import pandas as pd

from pfresample_studies.moazeni2013 import mddtw, mddtw_experiments, native
from pfresample_studies.moazeni2013.runs_io import Rows, host
from pfresample_studies.pipeline.jobs import gpu

SEED = 2017  # config/config.yaml's seed
QUERIES = (32, 64, 128, 256)  # moazeni2013_ch7_timing_queries: the order of the cell's draws
SF, NR, P, ALPHA = 0.05, 2, 10, 1.0  # moazeni2013_ch7_sf, _nr, _p, _alpha
# Fig 63's axes (recording length, query length) at the shoe's 99 dimensions, and the
# activity monitor's 3 and 9
CASES = ("99:16384:32", "99:16384:64", "99:16384:128", "99:65536:64", "99:65536:128",
         "9:65536:64", "3:262144:64")  # fmt: skip
QUICK_CASES = ("9:4096:32", "3:8192:32")
STAGES = ("distances_s", "top_p_s", "matching_s", "total_s")
FIELDS = ["case", "k", "n", "m", "band", "pairs", "side", "code", "threads", "stage", "seconds",
          "seconds_min", "seconds_max", "repeats", "results", "equal_to_cpu", "device", "cpu",
          "cores", "commit", "date"]  # fmt: skip
RATIO_FIELDS = ["case", "k", "n", "m", "pairs", "gpu_total_s", "cpu_total_s", "cpu_code",
                "speedup", "speedup_low", "speedup_high", "gpu_matching_share", "device", "cpu",
                "cores", "commit", "date"]  # fmt: skip


def summary(times: list[float]) -> dict:
    return {"seconds": statistics.median(times), "seconds_min": min(times),
            "seconds_max": max(times), "repeats": len(times)}  # fmt: skip


def cpu_end_to_end(data, pair_list, m: int, band: int, threads: int, code: str):
    """The best CPU code's search end to end: (results, {stage: seconds})."""
    fn = getattr(native, code)
    begin = time.perf_counter()
    out = fn(data, band, P, max(1, m // 2), threads)
    top = out[0] if code == "dtw_best_search" else out
    selected = time.perf_counter()
    results = mddtw.combine(mddtw.tuples_from_top(top, pair_list), m, ALPHA)
    done = time.perf_counter()
    return results, {"top_p_s": selected - begin, "matching_s": done - selected,
                     "total_s": done - begin}  # fmt: skip


def run_case(spec: str, args, cupy, device, h: dict, rows: Rows, ratios: Rows) -> None:
    k, n, m = (int(v) for v in spec.split(":"))
    band, pair_list = max(1, int(round(SF * m))), mddtw.pairs(k, k, NR)
    db, query = mddtw_experiments.timing_inputs(k, n, m, QUERIES, SEED)
    data = mddtw_experiments._search_input(db, query, m, pair_list)[0]  # the statistics: outside
    base = {"case": spec, "k": k, "n": n, "m": m, "band": band, "pairs": len(pair_list), **h}
    print(f"\n## {spec}: {len(pair_list)} pairs, band {band}", flush=True)
    # the faster CPU code on this case (its call alone), then its whole search
    calls = {}
    for code in mddtw_experiments.BEST_CPU_CODES:
        fn = getattr(native, code)
        fn(data, band, P, max(1, m // 2), args.threads)  # warm-up
        times = []
        for _ in range(args.repeats):
            begin = time.perf_counter()
            fn(data, band, P, max(1, m // 2), args.threads)
            times.append(time.perf_counter() - begin)
        calls[code] = statistics.median(times)
    code = min(calls, key=calls.get)
    cpu_runs = [cpu_end_to_end(data, pair_list, m, band, args.threads, code)
                for _ in range(args.repeats)]  # fmt: skip
    reference = cpu_runs[0][0]
    cpu = {stage: summary([t[stage] for _, t in cpu_runs]) for stage in STAGES[1:]}
    for stage, t in cpu.items():
        rows.add({**base, "side": "cpu", "code": f"dtw_best.c {code} + mddtw.combine",
                  "threads": args.threads, "stage": stage, **t, "results": len(reference),
                  "device": "CPU"})  # fmt: skip
    print(f"  CPU ({code}, {args.threads} threads): " + ", ".join(
        f"{s} {t['seconds'] * 1e3:.1f} ms" for s, t in cpu.items()), flush=True)  # fmt: skip
    if cupy is None:
        return
    from pfresample_studies.moazeni2013 import mddtw_gpu

    rec = mddtw_gpu.Recording(db, m, fast_stats=True)
    s = mddtw.Search(nr=NR, p=P, band=band, alpha=ALPHA)
    mddtw_gpu.search_stages(rec, query, pair_list, s)  # warm-up
    gpu_runs = [mddtw_gpu.search_stages(rec, query, pair_list, s) for _ in range(args.repeats)]
    same = all(results == reference for results, _ in gpu_runs)
    g = {stage: summary([t[stage] for _, t in gpu_runs]) for stage in STAGES}
    for stage, t in g.items():
        rows.add({**base, "side": "gpu", "code": "mddtw_gpu.search_stages", "threads": 0,
                  "stage": stage, **t, "results": len(gpu_runs[0][0]), "equal_to_cpu": same,
                  "device": device})  # fmt: skip
    c, t = cpu["total_s"], g["total_s"]
    ratio, low, high = (c["seconds"] / t["seconds"], c["seconds_min"] / t["seconds_max"],
                        c["seconds_max"] / t["seconds_min"])  # fmt: skip
    ratios.add({**base, "gpu_total_s": t["seconds"], "cpu_total_s": c["seconds"],
                "cpu_code": code, "speedup": ratio, "speedup_low": low, "speedup_high": high,
                "gpu_matching_share": g["matching_s"]["seconds"] / t["seconds"],
                "device": device})  # fmt: skip
    print("  GPU: " + ", ".join(f"{s_} {v['seconds'] * 1e3:.1f} ms" for s_, v in g.items())
          + f"; end to end {ratio:.2f}x the CPU's; equal: {same}", flush=True)  # fmt: skip
    rec = None
    cupy.get_default_memory_pool().free_all_blocks()
    if not same:
        raise AssertionError(f"{spec}: the GPU's ranked list differs from the CPU's")


FILES = ("fig63_end_to_end.csv", "fig63_ratios.csv")
NAMES = FILES
# The committed run the rule draws from: its folder's marker and the folder inside it.
BASE = "fig63"
MARKER = f"{BASE}/fig63_end_to_end.csv"
# The derived tables and the run's files each reads.
TABLES = {"fig63_end_to_end": ("fig63_end_to_end.csv",)}


def run(args, out, log=print) -> set[str]:
    """The cases of ``args.cases`` until ``args.deadline`` into ``out``; returns the files
    (NAMES) written with at least one row (the ratios need the GPU's)."""
    out = Path(out)
    h = host()
    cupy, device = gpu()
    log(f"# {h['cpu']}, {h['cores']} CPUs, {args.threads} threads; commit {h['commit']}, "
        f"{h['date']}; GPU: {device or 'none'}")  # fmt: skip
    native.dtw_best_library()  # built before any clock
    rows = Rows(out / FILES[0], FIELDS)
    ratios = Rows(out / FILES[1], RATIO_FIELDS)
    started = time.perf_counter()
    for spec in args.cases:
        if time.perf_counter() - started > args.deadline:
            log(f"# deadline: {spec} and after not run")
            break
        run_case(spec, args, cupy, device, h, rows, ratios)
    log(f"# {time.perf_counter() - started:.0f} s; wrote {out}")
    return {t.path.name for t in (rows, ratios) if t.count}


def settings(cfg) -> argparse.Namespace:
    """The run's parameters from the configuration's ``moazeni2013_ch7_fig63_*`` keys."""
    deadline = cfg["moazeni2013_ch7_fig63_deadline_s"]
    return argparse.Namespace(
        cases=list(cfg["moazeni2013_ch7_fig63_cases"]), threads=os.cpu_count() or 1,
        repeats=cfg["moazeni2013_ch7_fig63_repeats"],
        deadline=float("inf") if deadline is None else float(deadline),
    )  # fmt: skip


def end_to_end(stages: pd.DataFrame) -> pd.DataFrame:
    """A row a case of ``fig63_end_to_end.csv``: each side's median time of each stage
    (``gpu_<stage>``, ``cpu_<stage>``), the GPU's end to end over the CPU's (the medians'
    ratio, and min over max to max over min), the matching's share of the GPU's time and
    whether the two ranked lists are equal. A case without its GPU rows keeps its CPU
    times and NaN ratios."""
    rows = []
    for _, part in stages.groupby("case", sort=False):
        first = part.iloc[0]
        row = {k: first[k] for k in ("case", "k", "n", "m", "band", "pairs")}
        got = {(r.side, r.stage): r for r in part.itertuples()}
        for side in ("gpu", "cpu"):
            for stage in STAGES:
                r = got.get((side, stage))
                row[f"{side}_{stage}"] = r.seconds if r is not None else float("nan")
        g, c = got.get(("gpu", "total_s")), got.get(("cpu", "total_s"))
        nan = float("nan")
        row["speedup"] = c.seconds / g.seconds if g is not None else nan
        row["speedup_low"] = c.seconds_min / g.seconds_max if g is not None else nan
        row["speedup_high"] = c.seconds_max / g.seconds_min if g is not None else nan
        row["gpu_matching_share"] = row["gpu_matching_s"] / row["gpu_total_s"]
        row["equal_to_cpu"] = g.equal_to_cpu if g is not None else None
        row["cpu_code"] = c.code if c is not None else None
        row["device"] = g.device if g is not None else None
        row["cpu"] = first["cpu"]
        rows.append(row)
    return pd.DataFrame(rows)


def tables(runs) -> dict[str, pd.DataFrame]:
    """The derived tables (TABLES) of the run's files under ``runs``."""
    return {"fig63_end_to_end": end_to_end(pd.read_csv(Path(runs) / FILES[0]))}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of the two CSVs")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="all cores")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--quick", action="store_true", help=f"the cases {QUICK_CASES}")
    p.add_argument("--cases", nargs="+", default=list(CASES), metavar="K:N:M")
    p.add_argument("--deadline", type=float, default=150.0,
                   help="seconds after which no case starts")  # fmt: skip
    args = p.parse_args(argv)
    if args.repeats < 3 or args.threads < 1:
        p.error("--repeats must be >= 3 and --threads >= 1")
    args.cases = list(QUICK_CASES) if args.quick else args.cases
    try:
        mddtw_experiments.parse_cases(args.cases)
    except ValueError as err:
        p.error(str(err))
    run(args, args.out, log=lambda m: print(m, flush=True))


if __name__ == "__main__":
    main()
