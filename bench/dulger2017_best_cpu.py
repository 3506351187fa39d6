#!/usr/bin/env python3
"""Dülger (2017) Fig 6.23: the GPU SIR filter with Uphill on the growth model against the
best CPU filter we can write, on every core of the same host, in one run.

Every filter runs thesis Algorithm 2.4 on the growth model (eqs. 2.34-2.35, T = 100) on the
pipeline's trajectories (``growth_trajectories(16, 100, seed 2017)``); repeat r runs
trajectory r mod 16 with the pipeline's seed of that run (``filter_experiments.run_seed``):

* **GPU**: ``run_filter(GrowthModel(), y, N, "uphill", backend="cuda", **SIR_OPTIONS)``, the
  call the fig6_23 cell makes (one CUDA graph a run, stage times from CUDA events); its
  ``total_seconds`` (the stages' device time, what Fig 6.23 divides by) and wall seconds.
* **the document's kind of baseline**: the same call with ``backend="cpu"`` on one core
  (``PFRESAMPLE_THREADS=1``), the NumPy filter the fig6_23 CPU cell runs (the thesis's CPU
  filter was one i7-4790K; §6.10 names no threads), up to ``--numpy-max-n``.
* **the best CPU code** (``studies.dulger2017.native``, ``native/sir_growth.c``): OpenMP
  on ``--threads`` (all CPUs) and on one thread (up to ``--one-thread-max-n``), with Uphill
  (the same algorithm as the GPU's) and with Systematic (the algorithm a CPU expert picks
  for this filter: O(N), exact, no B). Its efficiency, measured in the same run: effective
  GB/s (the bytes its fused passes must move a step: 28 + 4 B bytes a particle for Uphill,
  B the step's candidates counted at 4 bytes each; 28 for Systematic) as % of a STREAM-style
  copy (``pf_stream_copy``, 256 MiB a side) on as many threads; and, for Uphill's stage 4,
  candidates a second as % of ``gather_bound`` (the same random loads, nothing compared) on
  the same weights and threads.
* **the public peer**: ``particles`` (Chopin), its bootstrap filter with systematic
  resampling (``bench/filter_peers.py``'s model; it has no Uphill and runs on one thread),
  up to ``--peer-max-n``; its resampling stage is timed as T calls of
  ``particles.resampling.systematic`` on the C filter's last weights.

OpenMP's threads are bound a thread a core (``--bind close``) and spin at barriers
(``--wait-policy ACTIVE``: an idle machine). Every time is the median of ``--repeats``
runs (``--slow-repeats`` for the NumPy filter, the peer and one thread) after an untimed
warm-up (5 steps; the GPU's a full run, which captures its graph), with min and max. The
ratios (``ratios.csv``) divide the GPU's
Uphill filter's whole-filter and stage-4 seconds into each CPU side's: the headline is the
best CPU code with Systematic on all cores (the best filter a CPU runs), the same code with
Uphill beside it (the same algorithm), then the document's baseline and the peer.

    python bench/dulger2017_best_cpu.py --out OUT                 # N = 2^14 ... 2^22, ~3 min
    python bench/dulger2017_best_cpu.py --out OUT --quick         # N = 2^10, 2^12
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from pfresample.filters import SIR_OPTIONS, rmse, run_filter
from pfresample.models import GrowthModel
from pfresample.tuning import cached_ssd_table, ssd_table
from pfresample_studies.dulger2017.filter_experiments import run_seed
from pfresample_studies.dulger2017.trajectories import growth_trajectories

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Rows, gpu, host, parse_size  # noqa: E402 -- sibling module

SEED = 2017  # config/config.yaml's seed
TRAJECTORIES = 16  # config/studies/dulger2017.yaml's filter_trajectories
STEPS = 100
WARMUP_STEPS = 5
COPY_N = 1 << 25  # 256 MiB of float64 a side, past any cache
FIELDS = ["section", "code", "method", "threads", "n", "seconds", "seconds_min", "seconds_max",
          "resampling_s", "resampling_s_min", "resampling_s_max", "stage1_s", "stage23_s",
          "wall_s", "repeats",
          "rmse", "mean_B", "rate", "unit", "pct_of_bound", "bound", "stage4_rate",
          "stage4_pct_of_gather", "device", "math", "cpu", "cores", "commit", "date",
          "omp_wait_policy", "omp_bind"]  # fmt: skip
RATIO_FIELDS = ["n", "gpu", "gpu_s", "gpu_resampling_s", "gpu_wall_s", "over", "cpu_code",
                "cpu_threads", "cpu_s", "cpu_resampling_s", "speedup", "speedup_resampling",
                "speedup_wall", "headline", "cpu", "cores", "commit", "date"]  # fmt: skip


def summary(results: list[dict]) -> dict:
    """Median, min and max of the runs' whole-filter and stage-4 seconds; the median wall
    seconds, the mean RMSE and the mean B."""
    total = [r["seconds"] for r in results]
    res = [r["resampling_s"] for r in results]
    stages = np.median([r["stages"] for r in results], axis=0)
    return {"seconds": statistics.median(total), "seconds_min": min(total),
            "stage1_s": float(stages[0]), "stage23_s": float(stages[1] + stages[2]),
            "seconds_max": max(total), "resampling_s": statistics.median(res),
            "resampling_s_min": min(res), "resampling_s_max": max(res),
            "wall_s": statistics.median(r["wall_s"] for r in results),
            "repeats": len(results), "rmse": float(np.mean([r["rmse"] for r in results])),
            "mean_B": float(np.mean([r["mean_B"] for r in results]))}  # fmt: skip


def measured(run, repeats: int, traj: dict, n: int, warm_steps: int | None) -> dict:
    """``run(y, seed)`` -> (total seconds, the 4 stages' seconds, wall seconds, estimates, Bs),
    ``repeats`` times after an untimed run of ``warm_steps`` steps (None: all of them);
    repeat r on trajectory r mod 16, with the pipeline's seed of that run."""
    run(traj["y"][0], 1, warm_steps)
    out = []
    for r in range(repeats):
        j = r % TRAJECTORIES
        total, stages, wall, estimates, B = run(traj["y"][j], run_seed(SEED, "growth", n, j, r))
        B = np.asarray(B, dtype=np.float64)
        out.append({"seconds": total, "resampling_s": float(stages[3]), "stages": stages,
                    "wall_s": wall,
                    "rmse": rmse(estimates, traj["truth"][j][1:]),
                    "mean_B": float(B.mean()) if (B >= 0).all() else float("nan")})  # fmt: skip
    return summary(out)


def library_run(backend: str, n: int):
    model = GrowthModel()

    def run(y, seed, steps=None):
        y = y if steps is None else y[:steps]
        r = run_filter(model, y, n, "uphill", seed=seed, backend=backend, **SIR_OPTIONS)
        stages = np.asarray(r.stage_seconds, dtype=np.float64).sum(axis=0)
        return float(r.total_seconds), stages, float(r.wall_seconds), r.estimates, r.B

    return run


def native_run(f, method: str, table):
    def run(y, seed, steps=None):
        y = y if steps is None else y[:steps]
        r = f.run(y, seed, method, ssd_table=table)
        return r.total_seconds, r.stage_seconds.sum(axis=0), r.wall_seconds, r.estimates, r.B

    return run


def peer_run(n: int):
    """particles' bootstrap filter (bench/filter_peers.py), wall seconds, no stage split."""
    from filter_peers import run_particles

    model = GrowthModel()

    def run(y, seed, steps=None):
        y = y if steps is None else y[:steps]
        start = time.perf_counter()
        est = run_particles(model, y, n, seed % 2**32)
        wall = time.perf_counter() - start
        return wall, np.full(4, np.nan), wall, est, np.full(len(y), -1)

    return run


def copy_rows(threads_all: int, repeats: int, h: dict, out: Rows) -> dict:
    from pfresample_studies.dulger2017 import native

    src, dst = np.ones(COPY_N), np.empty(COPY_N)
    rates = {}
    for threads in sorted({1, threads_all}):
        native.stream_copy(dst, src, 1, threads)  # first touch on these threads
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            native.stream_copy(dst, src, 4, threads)
            times.append(time.perf_counter() - start)
        t = statistics.median(times)
        rates[threads] = 2 * 8 * COPY_N * 4 / t / 1e9
        out.add({"section": "bound", "code": "pf_stream_copy", "threads": threads, "n": COPY_N,
                 "seconds": t, "seconds_min": min(times), "seconds_max": max(times),
                 "repeats": repeats, "rate": rates[threads], "unit": "GB/s", **h})  # fmt: skip
        print(f"copy {threads:>3} thread(s): {rates[threads]:8.1f} GB/s", flush=True)
    return rates


def gather_rate(native, w, per_particle: int, threads: int, repeats: int) -> float:
    """Candidates a second of ``gather_bound`` over STEPS rounds, as a run's stage 4 (the
    median of ``repeats`` calls after one)."""
    native.gather_bound(w, per_particle, 1, 7, threads)
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        native.gather_bound(w, per_particle, STEPS, 8 + r, threads)
        times.append(time.perf_counter() - start)
    return per_particle * w.size * STEPS / statistics.median(times)


def print_row(label: str, s: dict) -> None:
    print(f"  {label:<34} {s['seconds']:9.4f} s [{s['seconds_min']:.4f}, {s['seconds_max']:.4f}]"
          f"  resampling {s['resampling_s']:9.4f} s  RMSE {s['rmse']:.3f}"
          + (f"  mean B {s['mean_B']:.1f}" if s["mean_B"] == s["mean_B"] else ""),
          flush=True)  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of timings.csv, ratios.csv")
    p.add_argument("--n", type=parse_size, nargs="+",
                   default=[2**14, 2**16, 2**18, 2**20, 2**22])  # fmt: skip
    p.add_argument("--quick", action="store_true", help="N = 2^10, 2^12, 3 repeats")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="all cores")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--slow-repeats", type=int, default=3, help="NumPy, peer, one thread")
    p.add_argument("--numpy-max-n", type=parse_size, default=2**18)
    p.add_argument("--peer-max-n", type=parse_size, default=2**18)
    p.add_argument("--one-thread-max-n", type=parse_size, default=2**20)
    p.add_argument("--bind", default="close", choices=["close", "none"],
                   help="close: OMP_PROC_BIND=close, OMP_PLACES=cores (a thread a core, "
                   "its range's pages near it); none: the OS places them")  # fmt: skip
    p.add_argument("--wait-policy", default="ACTIVE", choices=["ACTIVE", "PASSIVE"],
                   help="OMP_WAIT_POLICY: ACTIVE (threads spin at a barrier) suits an idle "
                   "machine")  # fmt: skip
    args = p.parse_args(argv)
    # before the compiled library loads libgomp, which reads it once
    os.environ["OMP_WAIT_POLICY"] = args.wait_policy
    if args.bind == "close":
        os.environ.setdefault("OMP_PROC_BIND", "close")
        os.environ.setdefault("OMP_PLACES", "cores")
    if args.quick:
        args.n, args.repeats, args.slow_repeats = [2**10, 2**12], 3, 3
    if min(args.repeats, args.slow_repeats) < 1:
        p.error("--repeats and --slow-repeats must be >= 1")
    from pfresample_studies.dulger2017 import native

    native.library()
    h = {
        **host(),
        "omp_wait_policy": args.wait_policy,
        "omp_bind": f"{os.environ.get('OMP_PROC_BIND', '')}/{os.environ.get('OMP_PLACES', '')}",
    }
    cupy, device = gpu()
    try:
        import particles  # noqa: F401 -- the peer is optional
    except ImportError:
        particles = None
    print(f"# {h['cpu']}, {h['cores']} CPUs, {args.threads} threads for 'all cores'; commit "
          f"{h['commit']}, {h['date']}; GPU: {device or 'none'}; particles: "
          f"{'yes' if particles else 'not installed'}; vector math: {native.MATH}",
          flush=True)  # fmt: skip
    started = time.perf_counter()
    table_rows = []
    rows = Rows(args.out / "timings.csv", FIELDS)
    ratios = Rows(args.out / "ratios.csv", RATIO_FIELDS)
    copies = copy_rows(args.threads, max(3, args.slow_repeats), h, rows)
    traj = growth_trajectories(TRAJECTORIES, STEPS, SEED)
    base = {**h, "math": native.MATH}
    for n in args.n:
        print(f"N = {n} (2^{n.bit_length() - 1}):", flush=True)
        # the SSD table of this N, outside every clock (the pipeline caches it too)
        table = ssd_table(n, xp=cupy) if cupy is not None else cached_ssd_table(n)
        cells = {}
        for method in ("uphill", "systematic"):
            for threads in sorted({args.threads, 1}, reverse=True):
                if threads == 1 and threads != args.threads and n > args.one_thread_max_n:
                    continue
                f = native.GrowthFilter(n, threads)
                run = native_run(f, method, table)
                reps = args.repeats if threads == args.threads else args.slow_repeats
                s = measured(run, reps, traj, n, WARMUP_STEPS)
                B = s["mean_B"] if method == "uphill" else 0.0
                bytes_step = (28 + 4 * B) * n
                rate = bytes_step * STEPS / s["seconds"] / 1e9
                row = {"section": "filter", "code": "sir_growth.c", "method": method,
                       "threads": threads, "n": n, **s, "rate": rate, "unit": "GB/s effective",
                       "pct_of_bound": 100 * rate / copies[threads],
                       "bound": "pf_stream_copy", **base}  # fmt: skip
                if method == "uphill":
                    g = gather_rate(native, f.w, max(1, round(B)), threads, args.slow_repeats)
                    row["stage4_rate"] = B * n * STEPS / s["resampling_s"]
                    row["stage4_pct_of_gather"] = 100 * row["stage4_rate"] / g
                rows.add(row)
                cells[("c", method, threads)] = s
                label = f"sir_growth.c {method}, {threads} thread(s)"
                print_row(label, s)
                extra = (f"; stage 4 {row['stage4_rate'] / 1e9:.2f} G candidates/s, "
                         f"{row['stage4_pct_of_gather']:.0f} % of gather_bound"
                         if method == "uphill" else "")  # fmt: skip
                per = 1e9 / (n * STEPS)  # ns a particle-step
                print(f"  {'':<34} {rate:6.1f} GB/s effective, {row['pct_of_bound']:.0f} % of "
                      f"the copy on {threads} thread(s){extra}; stage 1 "
                      f"{s['stage1_s'] * per:.2f}, stages 2-3 {s['stage23_s'] * per:.2f}, "
                      f"stage 4 {s['resampling_s'] * per:.2f} ns a particle-step",
                      flush=True)  # fmt: skip
        if n <= args.numpy_max_n:
            os.environ["PFRESAMPLE_THREADS"] = "1"
            run = library_run("cpu", n)
            s = measured(run, args.slow_repeats, traj, n, WARMUP_STEPS)
            del os.environ["PFRESAMPLE_THREADS"]
            rows.add({"section": "filter", "code": "run_filter cpu (NumPy)", "method": "uphill",
                      "threads": 1, "n": n, **s, **base})  # fmt: skip
            cells[("numpy", "uphill", 1)] = s
            print_row("NumPy run_filter uphill, 1 thread", s)
        if particles is not None and n <= args.peer_max_n:
            from particles import resampling as presampling

            run = peer_run(n)
            s = measured(run, args.slow_repeats, traj, n, WARMUP_STEPS)
            f = native.GrowthFilter(n, args.threads)
            f.run(traj["y"][0][:20], 3, "systematic")
            W = f.w.astype(np.float64)
            W /= W.sum()
            presampling.systematic(W, n)
            start = time.perf_counter()
            for _ in range(STEPS):
                presampling.systematic(W, n)
            s["resampling_s"] = s["resampling_s_min"] = s["resampling_s_max"] = (
                time.perf_counter() - start
            )
            rows.add({"section": "filter", "code": "particles (peer)", "method": "systematic",
                      "threads": 1, "n": n, **s, **base})  # fmt: skip
            cells[("peer", "systematic", 1)] = s
            print_row("particles systematic, 1 thread", s)
        if cupy is None:
            continue
        run = library_run("cuda", n)
        s = measured(run, args.repeats, traj, n, None)  # a full run captures the graph
        rows.add({"section": "filter", "code": "run_filter cuda (fig6_23's GPU cell)",
                  "method": "uphill", "threads": 0, "n": n, **s, "device": device,
                  **base})  # fmt: skip
        print_row(f"GPU run_filter uphill ({device})", s)
        cupy.get_default_memory_pool().free_all_blocks()
        for over, key, headline in (
            ("best CPU code, Systematic, all cores (the best algorithm)",
             ("c", "systematic", args.threads), True),
            ("best CPU code, Uphill, all cores (the same algorithm)",
             ("c", "uphill", args.threads), False),
            ("best CPU code, Uphill, one thread", ("c", "uphill", 1), False),
            ("document's kind: NumPy run_filter, Uphill, one thread",
             ("numpy", "uphill", 1), False),
            ("peer: particles, systematic, one thread", ("peer", "systematic", 1), False),
        ):  # fmt: skip
            if key not in cells or (key[2] == 1 and key[0] == "c" and args.threads == 1):
                continue
            c = cells[key]
            r = {"n": n, "gpu": device, "gpu_s": s["seconds"],
                 "gpu_resampling_s": s["resampling_s"], "gpu_wall_s": s["wall_s"],
                 "over": over, "cpu_code": key[0], "cpu_threads": key[2],
                 "cpu_s": c["seconds"], "cpu_resampling_s": c["resampling_s"],
                 "speedup": c["seconds"] / s["seconds"],
                 "speedup_resampling": c["resampling_s"] / s["resampling_s"],
                 "speedup_wall": c["wall_s"] / s["wall_s"], "headline": headline,
                 **h}  # fmt: skip
            ratios.add(r)
            table_rows.append(r)
            print(f"  GPU over {over}: {r['speedup']:.1f}x whole filter, "
                  f"{r['speedup_resampling']:.1f}x resampling, {r['speedup_wall']:.1f}x wall",
                  flush=True)  # fmt: skip
    if table_rows:
        print("\n| N | GPU s (resampling s) | over | whole filter | resampling |")
        print("|---:|---:|---|---:|---:|")
        for r in table_rows:
            print(
                f"| 2^{r['n'].bit_length() - 1} | {r['gpu_s']:.4f} ({r['gpu_resampling_s']:.4f})"
                f" | {r['over']} | {r['speedup']:.1f}x | {r['speedup_resampling']:.1f}x |"
            )
    print(f"# wrote {args.out / 'timings.csv'} and {args.out / 'ratios.csv'}; "
          f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
