#!/usr/bin/env python3
"""Gelencser-Horvath et al. (2013), the cellular particle filter: the GPU's whole run
against the document's kind of CPU baseline and against the best CPU code we can write
on every core of the same host, in one run.

The paper's 164x is its GPU run at N = 4,096 (100 ms) over "the CPU code of ref. [21]"
(16.417 s on a 2-core laptop CPU). Here, one host, one process, in three phases (the
compiled code's OpenMP threads start only in the last, so that no spinning thread
shares a core with the GPU's host side or with NumPy):

1. **GPU** (with CuPy and a device): the pipeline's timing cells
   (``experiments.timing_cell``: the CPF's float64 search kernel, the default build
   and --use_fast_math taking turns run by run, one untimed warm-up run of each), the
   whole run's wall time (inputs built and uploaded, the CUDA graph, the estimates
   downloaded: the CPF's ``wall_seconds``, Fig 12's and Table 1's time) and the device
   time a step.
2. **The document's kind of baseline**: the library's NumPy CPF (``run_filter`` with
   ``CPF_OPTIONS`` on the CPU: float64, the contract's scan in array operations, one
   process), the whole run's ``wall_seconds``, as ``pfresample_studies.cpf2013.gpu_runs
   .cpu_reference`` times it; at ``--numpy-n`` only (it takes 0.1-0.5 s a run at 4,096).
3. **The best CPU code** (``native/cpf_best.c``, ``studies.cpf2013.native.run``): the
   same filter in C, OpenMP on ``--threads`` threads (every CPU), created before the
   clock starts (a warm-up run first), the host's clock around the whole call; at
   ``--one-thread-n`` also on one thread. Its efficiency, against bounds measured in the
   same run: the choice stage's neighbour visits a second (N (r + 1) T over thread 0's
   time in the stage: the weights' exp, the uniforms, the scan, the gather) against the
   scan's own ceiling (``scan_peak``: the same vectorised scan on an L1-resident block on
   every thread, no barriers); and the bytes a step must move (the state read and
   written in the prediction, the log-weights written and read, the gather's reads and
   writes: 48 bytes a particle for the growth model, 144 for the bearings-only one)
   against ``pf_stream_copy`` (256 MiB a side, every thread). At the paper's N the state
   (32 KiB at N = 4,096) lives in the cores' caches: the run is compute-bound there and
   the scan's ceiling is the bound that matters; the copy's only from N ~ 2^20.
   Before the timings, a check: the C choice equals ``cellular_log``'s ancestors on the
   same log-weights and uniforms, and the C filter replaying the NumPy filter's own
   draws gives its estimates (to rounding).

Ratios (``ratios.csv``): per model, N, r and GPU build, the GPU's median whole run
against the NumPy CPF's (ratio 1, beside the paper's 164x) and against the best CPU
code on all cores (ratio 2, the headline), each a ratio of medians with a 95% bootstrap
interval over the repeats of both sides. No public CPU implementation of the CPF is
known to us, so there is no third ratio.

    python bench/cpf2013_best_cpu.py --out OUT            # the full grid, about 3 minutes
    python bench/cpf2013_best_cpu.py --out OUT --quick    # N <= 4,096, r in {32, 256}
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Rows, gpu, host  # noqa: E402 -- sibling module

SEED = 2017  # config/config.yaml's seed
STEPS = {"growth": 100, "bot": 24}
BYTES_PER_PARTICLE = {"growth": 48, "bot": 144}  # a step's reads and writes (docstring)
PAPER = {"n": 4096, "cpu_s": 16.417, "gpu_s": 0.100}  # the text after Fig 12
FIELDS = ["section", "model", "code", "threads", "n", "radius", "build", "repeats", "seconds",
          "seconds_min", "seconds_max", "step_us", "rate", "unit", "bound", "pct_of_bound",
          "note", "device", "cpu", "cores", "commit", "date"]  # fmt: skip
RATIO_FIELDS = ["model", "n", "radius", "gpu_build", "gpu", "gpu_s", "over", "cpu_s",
                "speedup", "speedup_lo", "speedup_hi", "paper_speedup", "cpu", "commit",
                "date"]  # fmt: skip


def spread(times) -> dict:
    return {"seconds": statistics.median(times), "seconds_min": min(times),
            "seconds_max": max(times), "repeats": len(times)}  # fmt: skip


def ratio_interval(cpu, gpu_times, rng, resamples: int = 2000) -> tuple[float, float]:
    """95% percentile bootstrap interval of median(cpu) / median(gpu), each side's
    repeats resampled on their own."""
    c, g = np.asarray(cpu), np.asarray(gpu_times)
    rc = np.median(c[rng.integers(0, c.size, (resamples, c.size))], axis=1)
    rg = np.median(g[rng.integers(0, g.size, (resamples, g.size))], axis=1)
    lo, hi = np.percentile(rc / rg, [2.5, 97.5])
    return float(lo), float(hi)


def configs(args) -> list[tuple[str, int, int]]:
    out = [("growth", n, r) for n in args.growth_n for r in args.radii]
    return out + [("bot", n, r) for n in args.bot_n for r in args.bot_radii]


def phase_gpu(args, data, device, h, out) -> dict:
    """The pipeline's timing cells on the GPU: {(model, n, r, build): wall times}."""
    from pfresample_studies.cpf2013 import experiments

    times = {}
    groups = {}
    for model, n, r in configs(args):
        groups.setdefault((model, n), []).append(r)
    for (model, n), radii in groups.items():
        arrays, meta = experiments.timing_cell(
            model, data[model], n, radii, seed=SEED, backend="cuda", repeats=args.gpu_repeats
        )  # fmt: skip
        for k, v in enumerate(meta["variants"]):
            walls, steps = arrays["wall_seconds"][k], arrays["step_seconds"][k]
            key = (model, n, v["radius"], v["build"])
            times[key] = list(walls)
            row = {"section": "gpu", "model": model, "n": n, "radius": v["radius"],
                   "build": v["build"], "threads": 0, **spread(walls),
                   "step_us": 1e6 * float(np.median(steps)),
                   "code": f"timing_cell: CPF {v['precision']}-{v['neighbourhood']}",
                   "device": device, **h}  # fmt: skip
            out.add(row)
            print(f"gpu   {model:6s} N={n:8d} r={v['radius']:4d} {v['build']:9s} run "
                  f"{row['seconds'] * 1e3:9.3f} ms [{row['seconds_min'] * 1e3:.3f}, "
                  f"{row['seconds_max'] * 1e3:.3f}]  step {row['step_us']:8.2f} us",
                  flush=True)  # fmt: skip
    return times


def phase_numpy(args, data, h, out) -> dict:
    """The library's NumPy CPF, one process, at ``--numpy-n``: {(model, n, r): walls}."""
    from pfresample.filters import CPF_OPTIONS, run_filter
    from pfresample_studies.cpf2013 import targets

    times = {}
    for model, n, r in configs(args):
        if n not in args.numpy_n:
            continue
        m, y = targets.model(model), data[model]["y"][0]
        # seed 1 warms up; seeds 2 ... repeats + 1 are timed (gpu_runs.cpu_reference)
        runs = [run_filter(m, y, n, "cellular", seed=s, radius=r, backend="cpu", **CPF_OPTIONS)
                for s in range(1, 2 + args.numpy_repeats)]  # fmt: skip
        walls = [run.wall_seconds for run in runs[1:]]
        times[(model, n, r)] = walls
        row = {"section": "numpy", "model": model, "n": n, "radius": r, "threads": 1,
               "code": "run_filter CPF_OPTIONS (NumPy, float64 scan, one process)",
               **spread(walls), "step_us": 1e6 * statistics.median(walls) / len(y),
               **h}  # fmt: skip
        out.add(row)
        print(f"numpy {model:6s} N={n:8d} r={r:4d}           run "
              f"{row['seconds'] * 1e3:9.2f} ms [{row['seconds_min'] * 1e3:.2f}, "
              f"{row['seconds_max'] * 1e3:.2f}]", flush=True)  # fmt: skip
    return times


def check(native, data) -> str:
    """The C choice against cellular_log, and the C filter replaying the NumPy filter's
    draws against its estimates; raises AssertionError where they differ."""
    from pfresample.filters import CPF_OPTIONS, run_filter
    from pfresample.resampling.cellular import cellular_log, draws_of
    from pfresample_studies.cpf2013 import targets

    rng = np.random.default_rng(SEED)
    lw = rng.normal(0.0, 30.0, 4096)
    lw[rng.random(lw.size) < 0.3] -= 900.0  # neighbourhoods that underflow
    key = (np.uint64(SEED), np.uint64(41))
    u = draws_of(key, lw.size)
    from pfresample.rng import uniform_float

    u = uniform_float(u).astype(np.float64)
    for r in (32, 256):
        if not np.array_equal(native.choose(lw, u, r), cellular_log(lw, key, r)):
            raise AssertionError(f"the C choice differs from cellular_log at r = {r}")
    worst = 0.0
    for model in ("growth", "bot"):
        y = data[model]["y"][0]
        ref = run_filter(targets.model(model), y, 1024, "cellular", seed=7, radius=64,
                         backend="cpu", **CPF_OPTIONS).resampled_estimates  # fmt: skip
        got = native.run(model, y, 1024, 64, draws=native.numpy_draws(model, 1024, len(y), 7))
        diff = float(np.abs(got - ref).max())
        if diff > 1e-9 * max(1.0, float(np.abs(ref).max())):
            raise AssertionError(f"{model}: the C filter replaying NumPy's draws differs by {diff}")
        worst = max(worst, diff)
    return f"choice equal to cellular_log; replayed runs within {worst:.2g} of NumPy's"


def phase_best(args, data, h, out) -> dict:
    """The bounds, the check, then the best CPU code: {(model, n, r, threads): walls}."""
    from pfresample_studies.cpf2013 import native

    threads = args.threads
    note = check(native, data)
    out.add({"section": "check", "code": "cpf_best.c", "note": note, **h})
    print(f"check: {note}", flush=True)
    n_copy = 1 << 25  # 256 MiB a side
    src, dst = np.ones(n_copy), np.empty(n_copy)
    native.stream_copy(dst, src, 1, threads)  # first touch, the threads started
    walls = []
    for _ in range(5):
        start = time.perf_counter()
        native.stream_copy(dst, src, 4, threads)
        walls.append(time.perf_counter() - start)
    copy = 2 * 8 * n_copy * 4 / statistics.median(walls) / 1e9
    out.add({"section": "bound", "code": "pf_stream_copy", "threads": threads, "n": n_copy,
             **spread(walls), "rate": copy, "unit": "GB/s", **h})  # fmt: skip
    print(f"bound: stream copy {copy:.1f} GB/s on {threads} threads", flush=True)
    del src, dst
    peaks = {}
    thread_counts = sorted({threads, 1}) if args.one_thread_n else [threads]
    for r in sorted(set(args.radii) | set(args.bot_radii)):
        for th in thread_counts:
            rounds = max(50, int(2e8 / (256 * (r + 1))))  # about 0.05-0.1 s a thread
            native.scan_peak(256, r, 10, th)
            runs = [native.scan_peak(256, r, rounds, th) for _ in range(3)]
            rate = statistics.median(v / s for s, v in runs) / 1e9
            peaks[(r, th)] = rate
            out.add({"section": "bound", "code": "cpf_scan_peak (256 particles, L1)",
                     "threads": th, "radius": r, "rate": rate, "unit": "G visits/s",
                     **spread([s for s, _ in runs]), **h})  # fmt: skip
            print(f"bound: scan ceiling r={r:4d} {rate:8.2f} G visits/s on {th} thread(s)",
                  flush=True)  # fmt: skip
    times = {}
    for model, n, r in configs(args):
        y = data[model]["y"][0]
        steps = len(y)
        for th in sorted({threads, 1} if n in args.one_thread_n else {threads}):
            native.run(model, y, n, r, seed=0, threads=th)  # warm-up: threads, pages, caches
            walls, stage_b = [], []
            for s in range(1, 1 + args.repeats):
                start = time.perf_counter()
                _, (_, b) = native.run(model, y, n, r, seed=s, threads=th, stages=True)
                walls.append(time.perf_counter() - start)
                stage_b.append(b)
            times[(model, n, r, th)] = walls
            med = statistics.median(walls)
            visits = n * (r + 1) * steps / statistics.median(stage_b) / 1e9
            gbs = BYTES_PER_PARTICLE[model] * n * steps / med / 1e9
            base = {"section": "best_cpu", "model": model, "n": n, "radius": r, "threads": th,
                    "code": "cpf_best.c", **spread(walls), "step_us": 1e6 * med / steps,
                    **h}  # fmt: skip
            scan_bound = peaks[(r, th)]
            out.add({**base, "rate": visits, "unit": "G visits/s (choice stage)",
                     "bound": scan_bound, "pct_of_bound": 100 * visits / scan_bound})  # fmt: skip
            out.add({**base, "rate": gbs, "unit": "GB/s (bytes a step must move)",
                     "bound": copy, "pct_of_bound": 100 * gbs / copy,
                     "note": "copy bound all threads"})  # fmt: skip
            print(f"best  {model:6s} N={n:8d} r={r:4d} {th:3d} thr  run {med * 1e3:9.3f} ms "
                  f"[{min(walls) * 1e3:.3f}, {max(walls) * 1e3:.3f}]  step "
                  f"{1e6 * med / steps:8.2f} us  choice {visits:6.2f} G visits/s "
                  f"({100 * visits / scan_bound:.0f}% of the scan's ceiling)  {gbs:6.1f} GB/s "
                  f"({100 * gbs / copy:.0f}% of the copy)", flush=True)  # fmt: skip
    return times


def ratios(args, gpu_times, numpy_times, best_times, device, h, out) -> list[dict]:
    rng = np.random.default_rng(SEED)
    rows = []
    for (model, n, r, build), g in gpu_times.items():
        sides = [("document's kind: NumPy CPF, one process", numpy_times.get((model, n, r))),
                 (f"best CPU: cpf_best.c, {args.threads} threads",
                  best_times.get((model, n, r, args.threads))),
                 ("cpf_best.c, 1 thread", best_times.get((model, n, r, 1)))]  # fmt: skip
        for over, c in sides:
            if c is None:
                continue
            speedup = statistics.median(c) / statistics.median(g)
            lo, hi = ratio_interval(c, g, rng)
            paper = (
                PAPER["cpu_s"] / PAPER["gpu_s"] if model == "growth" and n == PAPER["n"] else None
            )
            row = {"model": model, "n": n, "radius": r, "gpu_build": build, "gpu": device,
                   "gpu_s": statistics.median(g), "over": over, "cpu_s": statistics.median(c),
                   "speedup": speedup, "speedup_lo": lo, "speedup_hi": hi,
                   "paper_speedup": paper, **h}  # fmt: skip
            out.add(row)
            rows.append(row)
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of timings.csv, ratios.csv")
    p.add_argument("--quick", action="store_true", help="N <= 4,096, r in {32, 256}")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="all cores")
    p.add_argument("--repeats", type=int, default=7, help="timed runs of the C code")
    p.add_argument("--gpu-repeats", type=int, default=21, help="the timing cells' (Fig 11)")
    p.add_argument("--numpy-repeats", type=int, default=3)
    p.add_argument("--growth-n", type=int, nargs="+",
                   default=[2048, 4096, 8192, 16384, 1 << 16, 1 << 18, 1 << 20,
                            1 << 22])  # fmt: skip
    p.add_argument("--radii", type=int, nargs="+", default=[32, 64, 128, 256])
    p.add_argument("--bot-n", type=int, nargs="+", default=[2048, 16384], help="Table 1's")
    p.add_argument("--bot-radii", type=int, nargs="+", default=[256], help="Table 1's")
    p.add_argument("--numpy-n", type=int, nargs="+", default=[2048, 4096, 16384])
    p.add_argument("--one-thread-n", type=int, nargs="*", default=[4096])
    p.add_argument("--wait-policy", default="ACTIVE", choices=["ACTIVE", "PASSIVE"],
                   help="OMP_WAIT_POLICY: ACTIVE (threads spin at the step's barrier) suits "
                   "an idle host; the compiled code's threads start only in phase 3")  # fmt: skip
    args = p.parse_args(argv)
    # before the compiled library loads libgomp, which reads it once
    os.environ["OMP_WAIT_POLICY"] = args.wait_policy
    if args.repeats < 5 or args.gpu_repeats < 5 or args.numpy_repeats < 1:
        p.error("--repeats and --gpu-repeats must be at least 5, --numpy-repeats at least 1")
    if args.quick:
        args.growth_n = [n for n in args.growth_n if n <= 4096]
        args.radii = [r for r in args.radii if r in (32, 256)] or args.radii[:1]
        args.bot_n = [n for n in args.bot_n if n <= 4096] or args.bot_n[:1]
        args.numpy_n = [n for n in args.numpy_n if n <= 4096]
    from pfresample_studies.cpf2013 import targets

    h = host()
    cupy, device = gpu()
    data = {m: targets.simulate(m, 1, STEPS[m], SEED) for m in STEPS}  # trajectory 0
    timings = Rows(args.out / "timings.csv", FIELDS)
    ratio_out = Rows(args.out / "ratios.csv", RATIO_FIELDS)
    print(f"# {h['cpu']}, {h['cores']} CPUs, {args.threads} threads for 'all cores'; commit "
          f"{h['commit']}, {h['date']}; GPU: {device or 'none (its rows are skipped)'}",
          flush=True)  # fmt: skip
    started = time.perf_counter()
    gpu_times = phase_gpu(args, data, device, h, timings) if cupy is not None else {}
    numpy_times = phase_numpy(args, data, h, timings)
    best_times = phase_best(args, data, h, timings)
    rows = ratios(args, gpu_times, numpy_times, best_times, device, h, ratio_out)
    if rows:
        print("\nGPU (default build) over ...      model   N        r     GPU ms    CPU ms  "
              "speed-up [95% interval]")  # fmt: skip
        for r in rows:
            if r["gpu_build"] != "default":
                continue
            print(f"  {r['over'][:34]:34s} {r['model']:6s} {r['n']:8d} {r['radius']:4d} "
                  f"{r['gpu_s'] * 1e3:9.3f} {r['cpu_s'] * 1e3:9.3f}  {r['speedup']:8.2f}x "
                  f"[{r['speedup_lo']:.2f}, {r['speedup_hi']:.2f}]"
                  + (f"  (paper: {r['paper_speedup']:.0f}x)" if r["paper_speedup"]
                     else ""))  # fmt: skip
    else:
        print("# no GPU: no ratios (the CPU rows are in timings.csv)")
    print(f"# {time.perf_counter() - started:.0f} s; wrote {timings.path}, {ratio_out.path}",
          flush=True)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
