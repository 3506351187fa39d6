#!/usr/bin/env python3
"""Moazeni (2013) chapters 3 and 6: the best CPU code we can write, on every core,
against the machine's bounds and against the GPU, in one run.

* **The bounds.** The core's min-plus peak (``native/minplus_peak.c``: a register
  tile of accumulators, acc = min(acc, x + y), no memory operand, built with the
  flags of the blocked solver), on one thread and on all; a STREAM-style copy
  (``stream_copy_f32``, 256 MiB a side, GB/s = bytes read + bytes written), on one
  thread and on all.
* **Chapter 3** (eq. 2, n = 1,024 ... 8,192, float32 and int32, the pipeline's
  matrices ``experiments.weights``): the best CPU code (``native.solve_blocked``,
  ``native/dp_blocked.c``) on one thread (up to ``--one-thread-max-n``) and on all,
  in G min-plus/s (n^3 / 6 operations) and % of the peak of as many threads; the
  document's baseline, the compiled diagonal code ``native/dp.c`` on one thread (up
  to ``--baseline-max-n``; the thesis's CPU is one thread) and, for reference, on all;
  with CuPy and a GPU, the pipeline's GPU solver (``dp_gpu.solve_bottom_up``, the
  device time between CUDA events, the upload apart) at block sizes 32 and 64, the
  faster kept, its matrix checked equal to the CPU's.
* **Chapter 6** (GlobalSync's iteration, the pipeline's phantom ``tv_experiments.
  make_case``, 64^3 ... 256^3): the best CPU code (``native/tv_best.c``) and the
  document's baseline (``native/tv.c``, one thread), seconds an iteration (the C call
  on channel-major arrays, no layout copy in the clock), effective GB/s (144 bytes a
  voxel, what the two passes must move: tv_best.c's header) and % of the copy's rate
  at the same thread count; with a GPU, the pipeline's ``tv_gpu.Solver`` (global_sync,
  tiles 8 and 16, the faster kept; ``iterate`` over 100 iterations, CUDA events);
  scikit-image's ``denoise_tv_chambolle`` where installed (the public peer, six
  channels, float32, ``--skimage-iterations`` iterations: seconds an iteration).
* **The ratios** (``ratios.csv``): the GPU over the document's baseline, over the
  best CPU code on all cores (the headline), and (chapter 6) over scikit-image.

Every time: a warm-up call first (for calls over half a second, the previous size's cell of
the same code served as the warm-up), then the median of ``--repeats`` (>= 5) runs,
with min and max. "All cores" is ``os.cpu_count()`` threads unless ``--threads``;
OpenMP's threads spin at barriers (``--wait-policy ACTIVE``: an idle machine).
Every row carries the host (CPU model, cores), the commit and the date.

    python bench/moazeni2013_best_cpu.py --out OUT            # the full grid
    python bench/moazeni2013_best_cpu.py --out OUT --quick    # n <= 2,048, sides <= 128
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from pfresample_studies.moazeni2013 import dp, experiments, native, tv_experiments

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import gpu, host, write_rows  # noqa: E402 -- sibling module

TV_BYTES_PER_VOXEL = 144  # what tv_best.c's two passes must move (its header)
TV_SETTINGS = {"lam": 3.0, "eps": 0.01, "step": 0.003}  # config/studies/moazeni2013.yaml
SEED = 2017  # config/config.yaml's seed
WARM_SECONDS = 0.5  # a cell whose first run takes longer is warmed by the size before


def timed(run, repeats: int, prepare=None, warm: bool = True) -> dict:
    """Median, min and max seconds of ``run(prepare())`` over ``repeats`` runs, after
    one warm-up run (unless ``warm`` is False); ``prepare``'s time is not counted.
    ``run`` may return its own seconds (a device time) instead of None."""
    args = () if prepare is None else (prepare(),)
    if warm:
        run(*args)
    times = []
    for _ in range(repeats):
        args = () if prepare is None else (prepare(),)
        start = time.perf_counter()
        own = run(*args)
        seconds = time.perf_counter() - start
        times.append(float(own) if isinstance(own, float) else seconds)
    return {"seconds": statistics.median(times), "seconds_min": min(times),
            "seconds_max": max(times), "repeats": repeats}  # fmt: skip


class Warmth:
    """Whether a (code, threads, dtype) has run a call over WARM_SECONDS already: such
    a call is the warm-up of the next size's cell, which then runs no warm-up of its own."""

    def __init__(self):
        self.warm = set()

    def needs(self, key) -> bool:
        return key not in self.warm

    def mark(self, key, seconds: float) -> None:
        if seconds > WARM_SECONDS:
            self.warm.add(key)


def _solve(solve, threads: int, m: np.ndarray) -> None:
    solve(m, threads)


def _gpu_solve(dp_gpu, device_m, s: int) -> float:
    return float(dp_gpu.solve_bottom_up(device_m, s)[2])  # the device seconds


def _tv_run(code: str, dh: np.ndarray, size: int, iterations: int, threads: int,
            L: np.ndarray) -> None:  # fmt: skip
    """``iterations`` steps of tv.c (one thread) or tv_best.c on channel-major L in place."""
    shape = (L.ctypes.data, dh.ctypes.data, size, size, size, *TV_SETTINGS.values())
    if code == "tv.c":
        status = native.tv_library().tv_solve_f32(*shape, iterations)
    else:
        status = native.tv_best_library().tv_best_solve_f32(*shape, iterations, threads)
    if status:
        raise MemoryError(f"{code}: could not allocate its work arrays")


def _tv_gpu_run(tv_gpu, case, tile: int, iterations: int) -> float:
    """Device seconds an iteration of GlobalSync from the case's start (as the pipeline)."""
    solver = tv_gpu.Solver(case.L0, case.d_hat, "global_sync", tile, **TV_SETTINGS)
    return float(solver.iterate(iterations) / iterations)


def peak_rows(threads_all: int, repeats: int, h: dict) -> list[dict]:
    rows = []
    for dtype in dp.DTYPES:
        for threads in sorted({1, threads_all}):
            rounds = 1000
            while native.minplus_peak(rounds, threads, dtype)[0] < 0.1:  # about 0.1-0.2 s a run
                rounds *= 2
            ops = native.minplus_peak(1, threads, dtype)[1] * rounds
            t = timed(partial(native.minplus_peak, rounds, threads, dtype), repeats)
            rate = ops / t["seconds"] / 1e9
            rows.append({"section": "peak", "code": "minplus_peak.c", "dtype": dtype,
                         "threads": threads, **t, "rate": rate, "unit": "G min-plus/s",
                         **h})  # fmt: skip
            print(f"peak {dtype} {threads:>3} thread(s): {rate:8.1f} G min-plus/s "
                  f"({rate / threads:.1f} a core)", flush=True)  # fmt: skip
    return rows


def copy_rows(threads_all: int, repeats: int, h: dict) -> list[dict]:
    n = 1 << 26  # 256 MiB a side, past any cache
    src, dst = np.ones(n, np.float32), np.empty(n, np.float32)
    rows = []
    for threads in sorted({1, threads_all}):
        native.stream_copy(dst, src, 1, threads)  # first touch on these threads
        rounds = 4
        t = timed(partial(native.stream_copy, dst, src, rounds, threads), repeats)
        rate = 2 * 4 * n * rounds / t["seconds"] / 1e9
        rows.append({"section": "copy", "code": "stream_copy_f32", "dtype": "float32",
                     "threads": threads, "n": n, **t, "rate": rate, "unit": "GB/s",
                     **h})  # fmt: skip
        print(f"copy {threads:>3} thread(s): {rate:8.1f} GB/s", flush=True)
    return rows


def dp_rows(args, threads_all: int, peaks: dict, cupy, device: str | None, h: dict):
    rows, ratios, warmth = [], [], Warmth()
    for n in args.n:
        for dtype in args.dtypes:
            m = dp.transformed(experiments.weights(n, dtype, SEED), dtype=dtype)
            ops = n**3 / 6
            best = {}
            cells = [("dp_blocked.c", t) for t in sorted({1, threads_all})
                     if t > 1 or n <= args.one_thread_max_n]  # fmt: skip
            cells += [("dp.c", t) for t in sorted({1, threads_all}) if n <= args.baseline_max_n]
            reference = None
            for code, threads in cells:
                solve = native.solve_blocked if code == "dp_blocked.c" else native.solve
                key = (code, threads, dtype)
                t = timed(partial(_solve, solve, threads), args.repeats, prepare=m.copy,
                          warm=warmth.needs(key))  # fmt: skip
                warmth.mark(key, t["seconds_min"])
                rate = ops / t["seconds"] / 1e9
                pct = 100 * rate / peaks[(dtype, threads)]
                rows.append({"section": "dp", "code": code, "dtype": dtype, "threads": threads,
                             "n": n, **t, "rate": rate, "unit": "G min-plus/s",
                             "pct_of_peak": pct, **h})  # fmt: skip
                best[(code, threads)] = t["seconds"]
                print(f"dp n={n} {dtype} {code:>12} {threads:>3} thread(s): {t['seconds']:9.4f} s "
                      f"[{t['seconds_min']:.4f}, {t['seconds_max']:.4f}] {rate:7.1f} G/s "
                      f"({pct:.0f} % of peak)", flush=True)  # fmt: skip
            work = native.solve_blocked(m.copy(), threads_all)
            reference = native.solve(m.copy(), threads_all) if n <= 2048 else None
            if reference is not None and work.tobytes() != reference.tobytes():
                raise AssertionError(f"dp n={n} {dtype}: dp_blocked.c differs from dp.c")
            if cupy is None:
                continue
            from pfresample_studies.moazeni2013 import dp_gpu

            gpu_best = None
            for s in args.gpu_blocks:
                device_m = cupy.asarray(m)
                cupy.cuda.get_current_stream().synchronize()
                t = timed(partial(_gpu_solve, dp_gpu, device_m, s), args.repeats)
                result = cupy.asnumpy(dp_gpu.solve_bottom_up(device_m, s)[0])
                if not np.array_equal(result, work):
                    raise AssertionError(f"GPU n={n} {dtype} s={s} differs from the CPU's matrix")
                start = time.perf_counter()
                cupy.asarray(m)
                cupy.cuda.get_current_stream().synchronize()
                upload = time.perf_counter() - start
                rows.append({"section": "dp", "code": f"dp_gpu.solve_bottom_up s={s}",
                             "dtype": dtype, "threads": 0, "n": n, **t,
                             "rate": ops / t["seconds"] / 1e9, "unit": "G min-plus/s",
                             "upload_s": upload, "device": device, **h})  # fmt: skip
                print(f"dp n={n} {dtype} GPU s={s}: {t['seconds'] * 1e3:.2f} ms (upload "
                      f"{upload * 1e3:.1f} ms), equal to the CPU's matrix", flush=True)  # fmt: skip
                if gpu_best is None or t["seconds"] < gpu_best[0]:
                    gpu_best = (t["seconds"], s, upload)
                del device_m
                cupy.get_default_memory_pool().free_all_blocks()
            g, s, upload = gpu_best
            for over, key in (("document baseline (dp.c, 1 thread)", ("dp.c", 1)),
                              (f"best CPU (dp_blocked.c, {threads_all} threads)",
                               ("dp_blocked.c", threads_all)),
                              (f"dp.c, {threads_all} threads", ("dp.c", threads_all))):  # fmt: skip
                if key in best:
                    ratios.append({"chapter": 3, "n": n, "dtype": dtype, "gpu": device,
                                   "gpu_code": f"dp_gpu.solve_bottom_up s={s}", "gpu_s": g,
                                   "gpu_upload_s": upload, "over": over, "cpu_s": best[key],
                                   "speedup": best[key] / g,
                                   "speedup_with_upload": best[key] / (g + upload),
                                   **h})  # fmt: skip
                    print(f"  GPU over {over}: {best[key] / g:.1f}x", flush=True)
    return rows, ratios


def tv_rows(args, threads_all: int, copies: dict, cupy, device: str | None, h: dict):
    rows, ratios, warmth = [], [], Warmth()
    for size in args.tv_sizes:
        case = tv_experiments.make_case(size, SEED, 12, 0.05)
        L0 = np.ascontiguousarray(np.moveaxis(case.L0.astype(np.float32), -1, 0))
        dh = np.ascontiguousarray(np.moveaxis(case.d_hat.astype(np.float32), -1, 0))
        voxels = size**3
        per_iter, cell_rows = {}, {}
        cells = [("tv.c", 1)] + [("tv_best.c", t) for t in sorted({1, threads_all})]
        for code, threads in cells:
            # about 0.3 s a run: tv.c takes some 80 ns a voxel, tv_best.c 30 on one core
            guess = (80e-9 if code == "tv.c" else 30e-9 / threads) * voxels
            iterations = int(min(20, max(1, round(0.3 / guess))))

            key = (code, threads)
            run = partial(_tv_run, code, dh, size, iterations, threads)
            t = timed(run, args.repeats, prepare=L0.copy, warm=warmth.needs(key))
            warmth.mark(key, t["seconds_min"])
            for k in ("seconds", "seconds_min", "seconds_max"):
                t[k] /= iterations
            rate = TV_BYTES_PER_VOXEL * voxels / t["seconds"] / 1e9
            pct = 100 * rate / copies[threads]
            per_iter[key] = t["seconds"]
            rows.append({"section": "tv", "code": code, "dtype": "float32", "threads": threads,
                         "n": size, "iterations": iterations, **t, "rate": rate,
                         "unit": "GB/s effective", "pct_of_peak": pct, **h})  # fmt: skip
            cell_rows[key] = rows[-1]
            print(f"tv {size}^3 {code:>10} {threads:>3} thread(s): {t['seconds'] * 1e3:9.2f} ms "
                  f"an iteration [{t['seconds_min'] * 1e3:.2f}, {t['seconds_max'] * 1e3:.2f}], "
                  f"{rate:6.1f} GB/s effective ({pct:.0f} % of the copy)", flush=True)  # fmt: skip
        # the check: two iterations of each from L0, tv_best.c the same on 1 thread and all
        # (its sums' order is fixed), and its distance from tv.c's (the sums' rounding)
        check = {}
        for code, threads in cells:
            L = L0.copy()
            _tv_run(code, dh, size, 2, threads, L)
            check[(code, threads)] = L
        best_runs = [v for k, v in check.items() if k[0] == "tv_best.c"]
        if len({v.tobytes() for v in best_runs}) != 1:
            raise AssertionError(f"tv {size}^3: tv_best.c differs between thread counts")
        diff = float(np.abs(best_runs[0] - check[("tv.c", 1)]).max())
        for key, row in cell_rows.items():
            row["max_diff_vs_tv_c"] = diff if key[0] == "tv_best.c" else 0.0
        print(f"tv {size}^3: tv_best.c the same on every thread count; max |L - tv.c's L| "
              f"after 2 iterations {diff:.3g}", flush=True)  # fmt: skip
        try:
            from skimage.restoration import denoise_tv_chambolle
        except ImportError:
            denoise_tv_chambolle = None
            print("scikit-image is not installed: no peer row", flush=True)
        if denoise_tv_chambolle is not None:
            d32, k = case.d_hat.astype(np.float32), args.skimage_iterations
            peer = partial(denoise_tv_chambolle, d32, weight=0.1, max_num_iter=k, channel_axis=-1)
            t = timed(peer, args.repeats)
            for q in ("seconds", "seconds_min", "seconds_max"):
                t[q] /= k
            per_iter[("skimage", 1)] = t["seconds"]
            rows.append({"section": "tv", "code": "skimage.denoise_tv_chambolle",
                         "dtype": "float32", "threads": 1, "n": size, "iterations": k, **t,
                         **h})  # fmt: skip
            print(f"tv {size}^3 scikit-image: {t['seconds'] * 1e3:9.2f} ms an iteration",
                  flush=True)  # fmt: skip
        if cupy is None:
            continue
        from pfresample_studies.moazeni2013 import tv_gpu

        gpu_best = None
        for tile in (8, 16):
            iterations = 100
            t = timed(partial(_tv_gpu_run, tv_gpu, case, tile, iterations), args.repeats)
            rows.append({"section": "tv", "code": f"tv_gpu global_sync tile {tile}",
                         "dtype": "float32", "threads": 0, "n": size, "iterations": iterations,
                         **t, "device": device, **h})  # fmt: skip
            print(f"tv {size}^3 GPU tile {tile}: {t['seconds'] * 1e3:.3f} ms an iteration",
                  flush=True)  # fmt: skip
            if gpu_best is None or t["seconds"] < gpu_best[0]:
                gpu_best = (t["seconds"], tile)
        cupy.get_default_memory_pool().free_all_blocks()
        g, tile = gpu_best
        for over, key in (("document baseline (tv.c, 1 thread)", ("tv.c", 1)),
                          (f"best CPU (tv_best.c, {threads_all} threads)",
                           ("tv_best.c", threads_all)),
                          ("scikit-image denoise_tv_chambolle (1 thread)",
                           ("skimage", 1))):  # fmt: skip
            if key in per_iter:
                ratios.append({"chapter": 6, "n": size, "dtype": "float32", "gpu": device,
                               "gpu_code": f"tv_gpu global_sync tile {tile}", "gpu_s": g,
                               "over": over, "cpu_s": per_iter[key],
                               "speedup": per_iter[key] / g, **h})  # fmt: skip
                print(f"  GPU over {over}: {per_iter[key] / g:.1f}x", flush=True)
    return rows, ratios


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of timings.csv, ratios.csv")
    p.add_argument("--quick", action="store_true", help="n <= 2,048 and sides <= 128")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="all cores")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--n", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    p.add_argument("--dtypes", nargs="+", default=list(dp.DTYPES))
    p.add_argument("--one-thread-max-n", type=int, default=4096, help="dp_blocked.c's 1 thread")
    p.add_argument("--baseline-max-n", type=int, default=4096, help="n of dp.c's runs")
    p.add_argument("--gpu-blocks", type=int, nargs="+", default=[32, 64])
    p.add_argument("--tv-sizes", type=int, nargs="+", default=[64, 128, 256])
    p.add_argument("--skimage-iterations", type=int, default=5)
    p.add_argument("--skip", nargs="*", default=[], choices=["dp", "tv"])
    p.add_argument("--wait-policy", default="ACTIVE", choices=["ACTIVE", "PASSIVE"],
                   help="OMP_WAIT_POLICY: ACTIVE (threads spin at a barrier) suits an idle "
                   "machine; the pipeline's cells use PASSIVE, as they share cores")  # fmt: skip
    args = p.parse_args(argv)
    # before the first compiled library loads libgomp, which reads it once
    os.environ["OMP_WAIT_POLICY"] = args.wait_policy
    if args.repeats < 5:
        p.error("--repeats must be at least 5")
    if args.quick:
        args.n = [n for n in args.n if n <= 2048]
        args.tv_sizes = [s for s in args.tv_sizes if s <= 128]
    h = {**host(), "omp_wait_policy": args.wait_policy}
    cupy, device = gpu()
    print(f"# {h['cpu']}, {h['cores']} CPUs, {args.threads} threads for 'all cores'; "
          f"commit {h['commit']}, {h['date']}; GPU: {device or 'none'}", flush=True)  # fmt: skip
    started = time.perf_counter()
    rows = peak_rows(args.threads, args.repeats, h)
    peaks = {(r["dtype"], r["threads"]): r["rate"] for r in rows}
    copy = copy_rows(args.threads, args.repeats, h)
    rows += copy
    copies = {r["threads"]: r["rate"] for r in copy}
    ratios = []
    if "dp" not in args.skip:
        more, r = dp_rows(args, args.threads, peaks, cupy, device, h)
        rows, ratios = rows + more, ratios + r
    if "tv" not in args.skip:
        more, r = tv_rows(args, args.threads, copies, cupy, device, h)
        rows, ratios = rows + more, ratios + r
    fields = ["section", "code", "dtype", "threads", "n", "iterations", "seconds", "seconds_min",
              "seconds_max", "repeats", "rate", "unit", "pct_of_peak", "upload_s",
              "max_diff_vs_tv_c", "device", "cpu", "cores", "commit", "date",
              "omp_wait_policy"]  # fmt: skip
    write_rows(args.out / "timings.csv", rows, fields)
    if ratios:
        write_rows(args.out / "ratios.csv", ratios)
    print(f"# {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
