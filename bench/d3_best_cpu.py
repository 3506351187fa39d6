#!/usr/bin/env python3
"""Das et al. (2014) Table 5 on one machine: the GPU D3 filter against the document's
kind of CPU baseline and against the best CPU code we can write on every core, in one
run, with the three ratios.

The filters run the pipeline's timing inputs (``catalog.timing_model``: the d3_2014
model in the paper's regime, no process noise in the filter; trajectory 0's readings;
the timing cell's seed ``experiments.run_seed``), over the window of the
first one-thread baselines (evidence/2026-11-26-xeon2-ba6cc49/d3_2014/cpu_baselines.csv)
and of Table 5's GPU column: steps 3 ... 502 of a run of
502 steps (500 steps, milliseconds a step), at the paper's N (500 ... 50,000):

* **GPU** (with CuPy and a GPU): the pipeline's GPU filter as the Table 5 cell times it
  (``experiments.gpu_cell`` at 160 threads a block: an untimed warm-up run, then the
  run, CUDA events around each graph replay of 100 steps; the five replays of steps
  3 ... 502 are the repeats): ``gpu/d3-paper`` (the paper's algorithm as printed, Table
  5's GPU column) and ``gpu/d3`` (ours: eq. 5, the prefix-sum stride).
* **The document's kind of baseline** (``seq/...``): the pipeline's CPU filters
  (``run_filter``, NumPy), one process pinned to one thread in a child process while
  this one waits (an idle host), ``(run of 502 steps - run of 2) / 500`` a repeat
  (the pipeline's timing cells, ``d3_2014``'s Table 5 CPU columns, time the same
  filters one run over their window): ``seq/systematic`` (Table 5's first column),
  ``seq/d3-table`` (the D3 filter the pipeline's timing cell runs) and ``seq/d3-loop``
  (Table 1's loop, compiled by numba; only where numba is installed). Wall and CPU time.
* **The best CPU code** (``best/...``, ``studies/d3_2014/native/d3_best.c``): the same
  filters on every core -- ``best/systematic``, ``best/d3`` (eq. 5, prefix stride) and
  ``best/d3-paper`` (the paper's thresholds and Fig 9's noise: the GPU column's
  algorithm) -- the clock in C around steps 3 ... 502, after an untimed run. Its
  efficiency: the bytes its passes move a step (``native.bytes_per_step``) against a
  STREAM-style copy of as many bytes on as many threads (``pf_stream_copy``, measured
  here) or the barriers a step waits at times one barrier's cost (measured here),
  whichever is longer: ``bound_ms``, and ``efficiency`` = bound / measured (near 1 or
  above: the step runs at the speed of a copy of its bytes, which pays a fork and join a
  round where the step's passes pay barriers). At these N a step's data fit the caches,
  so the copy measures cache bandwidth; the search is O(N) here (a prefix sum and a
  sliding window), not the paper's O(N^2), so no flop bound applies.
* **The ratios** (``ratios.csv``): each GPU time against each CPU time, median over
  median with the min-max interval (CPU min / GPU max ... CPU max / GPU min), and the
  paper's printed ratio beside the document's baseline. No public peer runs D3; the
  ``particles`` library has SIR filters only, one NumPy thread like ``seq/systematic``
  (``bench/filter_peers.py``): not run here.

Files (under ``--out``, a row at a time, so a killed run keeps what it measured):
``times.csv`` and, at the end, ``ratios.csv`` (``--tables-only`` rebuilds it and the
printed table from ``times.csv``). Order: the best CPU code at every N, then the GPU,
then the one-thread baselines N by N until ``--deadline`` seconds have passed.

    python bench/d3_best_cpu.py --out OUT                       # ~3-4 minutes on an H100 host
    python bench/d3_best_cpu.py --out OUT --quick               # N <= 5,000, one repeat
    python bench/d3_best_cpu.py --out OUT --tables-only
"""

from __future__ import annotations

import os

# OpenMP's team for the best CPU code, before its library loads: threads spin at the
# barriers (an idle machine) and stay on their CPUs. A caller's settings win.
os.environ.setdefault("OMP_WAIT_POLICY", "ACTIVE")
os.environ.setdefault("OMP_PROC_BIND", "close")
os.environ.setdefault("OMP_PLACES", "threads")

import argparse  # noqa: E402
import csv  # noqa: E402
import datetime  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import Rows  # noqa: E402 -- sibling module

WINDOW, SKIP = 502, 2  # the first CPU baselines' and the GPU's window: steps 3 ... 502
# The one-thread baselines: the pipeline's timing filters (config/studies/d3_2014.yaml:
# systematic, d3 -- the sparse table -- and d3-loop, Table 1's loop).
SEQ_FILTERS = {
    "systematic": {"method": "systematic"},
    "d3-loop": {"method": "d3", "noise": "eq5", "cdf": "prefix", "impl": "loop"},
    "d3-table": {"method": "d3", "noise": "eq5", "cdf": "prefix", "impl": "table"},
}
SIZES = (500, 1000, 5000, 10000, 15000, 20000, 50000)  # catalog.PUBLISHED_TABLE5
TPB = 160  # Table 5's threads per block
FIELDS = ["date", "cpu", "cores", "device", "commit", "what", "n", "threads", "steps",
          "repeats", "ms_median", "ms_min", "ms_max", "cpu_ms_median", "load1",
          "bytes_per_step", "gbs", "copy_gbs", "barrier_us", "bound_ms", "efficiency",
          "rmse_x", "rmse_y"]  # fmt: skip
RATIO_FIELDS = ["n", "gpu", "cpu", "baseline", "gpu_ms", "cpu_ms", "ratio", "ratio_lo",
                "ratio_hi", "paper_printed"]  # fmt: skip
# the best CPU code's filters: (kind, cdf, noise)
BEST = {"systematic": ("systematic", "prefix", "eq5"), "d3": ("d3", "prefix", "eq5"),
        "d3-paper": ("d3", "paper", "fig9")}  # fmt: skip
SEQ = ("systematic", "d3-table", "d3-loop")


def commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)  # fmt: skip
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def inputs():
    """(model of WINDOW steps, its readings y, the truth x_1 ... x_WINDOW, cfg): the
    timing cells' model and trajectory 0."""
    from _common import d3_2014_config as config

    from pfresample_studies.d3_2014 import catalog, experiments

    cfg = config()
    model = catalog.truncated(catalog.timing_model(cfg), WINDOW * float(cfg["d3_2014_model"]["dt"]))
    traj, _ = experiments.trajectory(catalog.model(cfg), cfg["seed"], 0)
    return model, traj["y"][:WINDOW], traj["truth"][1 : WINDOW + 1], cfg, traj


def base_row(what: str, n: int, host: dict) -> dict:
    return {**host, "what": what, "n": n, "steps": WINDOW - SKIP}


def fmt(v: float) -> str:
    return f"{v:.5g}"


# --- the best CPU code ---------------------------------------------------------------


def best_rows(sizes, repeats: int, threads, host: dict, table: Rows) -> None:
    from pfresample.filters import velocity_errors
    from pfresample_studies.d3_2014 import experiments, native

    model, y, truth, cfg, _ = inputs()
    team = threads or native.max_threads()
    for n in sizes:
        seed = experiments.run_seed(cfg["seed"], n, 0, 0)
        barrier = native.barrier_seconds(20000, team)
        for label, (kind, cdf, noise) in BEST.items():
            call = dict(seed=seed, cdf=cdf, noise=noise, block=TPB, threads=team, skip=SKIP)
            native.run(model, y[:52], n, kind, **{**call, "skip": 0})  # untimed
            runs = [native.run(model, y, n, kind, **call) for _ in range(repeats)]
            ms = [1e3 * r.window_seconds / (WINDOW - SKIP) for r in runs]
            nbytes = native.bytes_per_step(kind, n)
            rounds = max(20, int(4e8 // nbytes))
            copy = native.copy_seconds(max(1, nbytes // 16), rounds, team)
            copy_gbs = nbytes * rounds / copy / 1e9
            # the bound: the copy of as many bytes (its own fork and join included) or the
            # step's barriers, whichever is longer: a step cannot beat either
            bound_ms = 1e3 * max(copy / rounds, native.BARRIERS[kind] * barrier)
            med = statistics.median(ms)
            rmse, _ = velocity_errors(runs[0].estimates, truth)
            row = {**base_row(f"best/{label}", n, host), "threads": team, "repeats": repeats,
                   "ms_median": fmt(med), "ms_min": fmt(min(ms)), "ms_max": fmt(max(ms)),
                   "load1": f"{os.getloadavg()[0]:.2f}", "bytes_per_step": nbytes,
                   "gbs": fmt(nbytes / (med * 1e-3) / 1e9), "copy_gbs": fmt(copy_gbs),
                   "barrier_us": fmt(1e6 * barrier), "bound_ms": fmt(bound_ms),
                   "efficiency": fmt(bound_ms / med), "rmse_x": fmt(rmse[0]),
                   "rmse_y": fmt(rmse[1])}  # fmt: skip
            table.add(row)
            print(
                f"N={n:>6} {row['what']:<18} {med:9.4f} ms/step ({min(ms):.4f}-{max(ms):.4f})"
                f" {team} threads, {row['gbs']} GB/s of {row['copy_gbs']} (copy), "
                f"bound {bound_ms:.4f} ms, efficiency {bound_ms / med:.2f}",
                flush=True,
            )


# --- the GPU, through the pipeline's Table 5 cell -------------------------------------


def gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 -- no CuPy, no driver, no device: the CPU side runs
        return False


def gpu_rows(sizes, host: dict, table: Rows) -> None:
    from pfresample_studies.d3_2014 import catalog, experiments

    model, _, _, cfg, traj = inputs()
    specs = catalog.all_filters(cfg)
    for n in sizes:
        for label in ("d3-paper", "d3"):
            arrays, meta = experiments.gpu_cell(model, traj, specs[label], n, [TPB],
                                                seed=cfg["seed"], algorithm=label,
                                                window_steps=WINDOW)  # fmt: skip
            row = {**base_row(f"gpu/{label}", n, host), "device": meta["device"],
                   "threads": TPB, "repeats": int(arrays["chunks"][0]),
                   "ms_median": fmt(arrays["chunk_ms_median"][0]),
                   "ms_min": fmt(arrays["chunk_ms_min"][0]),
                   "ms_max": fmt(arrays["chunk_ms_max"][0]),
                   "rmse_x": fmt(arrays["rmse"][0][0]),
                   "rmse_y": fmt(arrays["rmse"][0][1])}  # fmt: skip
            table.add(row)
            print(
                f"N={n:>6} {row['what']:<18} {row['ms_median']:>9} ms/step "
                f"({row['ms_min']}-{row['ms_max']}) on {meta['device']}",
                flush=True,
            )


# --- the document's kind of baseline, one thread, in a child process ------------------


def seq_worker(n: int, repeats: int, out: Path, host: dict) -> None:
    """Runs in the child (one thread): the pipeline's CPU filters at N."""
    from pfresample.filters import velocity_errors  # one thread: seq_rows's environment
    from pfresample.resampling import d3_loop
    from pfresample_studies.d3_2014 import catalog, experiments

    model, y, truth, cfg, _ = inputs()
    short = catalog.truncated(model, SKIP * model.dt)
    table = Rows(out / "times.csv", FIELDS, fresh=False)
    seed = experiments.run_seed(cfg["seed"], n, 0, 0)

    def clocks(model, y, spec) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        experiments.run_d3(model, y, n, seed, backend="cpu", **spec)
        return time.perf_counter() - wall, time.process_time() - cpu

    for what in SEQ:
        if what == "d3-loop" and not d3_loop.compiled:
            print(f"N={n:>6} seq/d3-loop        skipped: numba is not installed", flush=True)
            continue
        spec = SEQ_FILTERS[what]
        clocks(short, y[:SKIP], spec)  # warm-up (numba compiles)
        walls, cpus, loads = [], [], []
        for _ in range(repeats):
            loads.append(os.getloadavg()[0])
            wall, cpu = time.perf_counter(), time.process_time()
            run = experiments.run_d3(model, y, n, seed, backend="cpu", **spec)
            w_long, c_long = time.perf_counter() - wall, time.process_time() - cpu
            w_short, c_short = clocks(short, y[:SKIP], spec)
            walls.append(1e3 * (w_long - w_short) / (WINDOW - SKIP))
            cpus.append(1e3 * (c_long - c_short) / (WINDOW - SKIP))
        rmse, _ = velocity_errors(run.estimates, truth)
        med = statistics.median(walls)
        row = {**base_row(f"seq/{what}", n, host), "threads": 1, "repeats": repeats,
               "ms_median": fmt(med), "ms_min": fmt(min(walls)), "ms_max": fmt(max(walls)),
               "cpu_ms_median": fmt(statistics.median(cpus)),
               "load1": " ".join(f"{v:.2f}" for v in loads), "rmse_x": fmt(rmse[0]),
               "rmse_y": fmt(rmse[1])}  # fmt: skip
        table.add(row)
        print(
            f"N={n:>6} {row['what']:<18} {med:9.4f} ms/step ({min(walls):.4f}-"
            f"{max(walls):.4f}), CPU {row['cpu_ms_median']}, load {row['load1']}",
            flush=True,
        )


def seq_rows(sizes, repeats: int, out: Path, deadline: float, started: float) -> None:
    env = {**os.environ, **{v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                             "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}}  # fmt: skip
    for n in sizes:
        if time.perf_counter() - started > deadline:
            print(f"N={n:>6} seq/*              not run: past --deadline {deadline:g} s",
                  flush=True)  # fmt: skip
            continue
        subprocess.run([sys.executable, __file__, "--out", str(out), "--seq-worker", str(n),
                        "--seq-repeats", str(repeats)], env=env, check=True)  # fmt: skip


# --- the ratios --------------------------------------------------------------------


def ratios(out: Path) -> list[dict]:
    from pfresample_studies.d3_2014.catalog import PUBLISHED_TABLE5

    with open(out / "times.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    t = {(r["what"], int(r["n"])): r for r in rows}
    result = []
    printed = {"seq/systematic": 0, "seq/d3-loop": 1, "seq/d3-table": 1}
    for n in sorted({int(r["n"]) for r in rows}):
        for gpu in ("gpu/d3-paper", "gpu/d3"):
            if (gpu, n) not in t:
                continue
            g = t[(gpu, n)]
            for cpu in ("seq/systematic", "seq/d3-loop", "seq/d3-table", "best/systematic",
                        "best/d3-paper", "best/d3"):  # fmt: skip
                if (cpu, n) not in t:
                    continue
                c = t[(cpu, n)]
                paper = ""
                if cpu in printed and gpu == "gpu/d3-paper" and n in PUBLISHED_TABLE5:
                    cols = PUBLISHED_TABLE5[n]
                    paper = fmt(cols[printed[cpu]] / cols[2])
                result.append({
                    "n": n, "gpu": gpu, "cpu": cpu,
                    "baseline": "document" if cpu.startswith("seq/") else "best",
                    "gpu_ms": g["ms_median"], "cpu_ms": c["ms_median"],
                    "ratio": fmt(float(c["ms_median"]) / float(g["ms_median"])),
                    "ratio_lo": fmt(float(c["ms_min"]) / float(g["ms_max"])),
                    "ratio_hi": fmt(float(c["ms_max"]) / float(g["ms_min"])),
                    "paper_printed": paper,
                })  # fmt: skip
    path = out / "ratios.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=RATIO_FIELDS)
        writer.writeheader()
        writer.writerows(result)
    print_table(t, result)
    return result


def print_table(t: dict, result: list[dict]) -> None:
    cols = ("gpu/d3-paper", "gpu/d3", "seq/systematic", "seq/d3-loop", "seq/d3-table",
            "best/systematic", "best/d3-paper", "best/d3")  # fmt: skip
    sizes = sorted({n for (_, n) in t})
    print("\nms a step, median (steps 3-502):")
    print(f"{'N':>7} " + " ".join(f"{c:>15}" for c in cols))
    for n in sizes:
        cells = [t[(c, n)]["ms_median"] if (c, n) in t else "-" for c in cols]
        print(f"{n:>7} " + " ".join(f"{v:>15}" for v in cells))
    eff = [(n, c) for (c, n) in t if c.startswith("best/")]
    if eff:
        print("\nbest CPU code: efficiency (bound / measured), GB/s of the copy's GB/s:")
        for n, c in sorted(eff):
            r = t[(c, n)]
            print(f"{n:>7} {c:<16} {r['efficiency']:>8}  {r['gbs']:>8} of {r['copy_gbs']:>8}"
                  f"  ({r['threads']} threads)")  # fmt: skip
    print("\nspeed-ups of the GPU (ratio, min-max) [paper's printed]:")
    for r in result:
        paper = f" [paper {r['paper_printed']}x]" if r["paper_printed"] else ""
        print(
            f"{r['n']:>7} {r['gpu']:<13} over {r['cpu']:<16} ({r['baseline']:<8}) "
            f"{r['ratio']:>9}x ({r['ratio_lo']}-{r['ratio_hi']}){paper}"
        )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    p.add_argument("--repeats", type=int, default=7, help="runs of the best CPU code an N")
    p.add_argument("--seq-repeats", type=int, default=3, help="repeats of the one-thread codes")
    p.add_argument("--threads", type=int, default=None, help="best CPU code's team (all)")
    p.add_argument("--deadline", type=float, default=200.0,
                   help="seconds after which no one-thread N starts")  # fmt: skip
    p.add_argument("--quick", action="store_true", help="N <= 5,000, one repeat each")
    p.add_argument("--no-gpu", action="store_true")
    p.add_argument("--tables-only", action="store_true", help="ratios.csv from times.csv")
    p.add_argument("--seq-worker", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    from pfresample.timing import cpu_name

    host = {"date": datetime.date.today().isoformat(), "cpu": cpu_name(),
            "cores": os.cpu_count(), "device": "cpu", "commit": commit()}  # fmt: skip
    if args.seq_worker is not None:
        seq_worker(args.seq_worker, args.seq_repeats, args.out, host)
        return
    if args.tables_only:
        ratios(args.out)
        return
    if args.quick:
        args.sizes = [n for n in args.sizes if n <= 5000]
        args.repeats, args.seq_repeats = 1, 1
    for name, value in (("repeats", args.repeats), ("seq-repeats", args.seq_repeats)):
        if value < 1:
            p.error(f"--{name} must be >= 1")
    started = time.perf_counter()
    table = Rows(args.out / "times.csv", FIELDS, fresh=True)
    best_rows(args.sizes, args.repeats, args.threads, host, table)
    if args.no_gpu or not gpu_available():
        print("no GPU (or --no-gpu): the GPU rows are not measured", flush=True)
    else:
        gpu_rows(args.sizes, host, table)
    seq_rows(args.sizes, args.seq_repeats, args.out, args.deadline, started)
    ratios(args.out)
    print(
        f"# {time.perf_counter() - started:.0f} s; wrote {args.out / 'times.csv'} and "
        f"{args.out / 'ratios.csv'}"
    )


if __name__ == "__main__":
    main()
