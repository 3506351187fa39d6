#!/usr/bin/env python3
"""Moazeni (2013) chapter 3 on one GPU: the bottom-up order with one launch a
block-diagonal (``dp_gpu.solve_bottom_up``, the thesis's final implementation)
at n = 1,024 ... 8,192 and block sizes 16 ... 256, beside the compiled CPU
baseline on one thread and on every core of the host, in one run.

Each GPU cell: ``--repeats`` runs (the first also compiles nothing: a warm-up
run at the smallest n precedes), the minimum GPU time (CUDA events, the upload
excluded, as the thesis's "minimum time over multiple runs"; the thesis
includes the transfer: ``upload_s`` is beside), checked equal bit for bit to
the C result of the same matrix, then one run more with each kind's device time
(``diagonal_s``, ``triangular_s``, ``rectangular_s``: an event pair around every
launch). Writes ``--out``/gpu.csv and cpu.csv.

    python bench/moazeni2013_ch3_gpu.py --out OUT --deadline 400
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from pfresample_studies.moazeni2013 import dp, dp_gpu, experiments, native

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_rows  # noqa: E402 -- sibling module


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--n", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    p.add_argument("--blocks", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    p.add_argument("--dtypes", nargs="+", default=list(dp.DTYPES))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--one-thread-max", type=int, default=4096, help="n of the 1-thread C runs")
    p.add_argument("--deadline", type=float, default=400.0, help="seconds: no new cell after")
    args = p.parse_args(argv)
    import cupy

    args.out.mkdir(parents=True, exist_ok=True)
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    started = time.perf_counter()
    dp_gpu.solve_bottom_up(dp.transformed(experiments.weights(64, "float32", 0)), 16)  # compile
    gpu_rows, cpu_rows = [], []
    for n in args.n:
        for dtype in args.dtypes:
            if time.perf_counter() - started > args.deadline:
                print(f"deadline: stop before n={n} {dtype}", flush=True)
                break
            m = dp.transformed(experiments.weights(n, dtype, 2013), dtype=dtype)
            reference = None
            for threads in sorted({1, os.cpu_count() or 1}):
                if threads == 1 and n > args.one_thread_max:
                    continue
                work = m.copy()
                begin = time.perf_counter()
                native.solve(work, threads)
                seconds = time.perf_counter() - begin
                reference = work
                cpu_rows.append({"n": n, "dtype": dtype, "threads": threads, "seconds": seconds,
                                 "cpu_count": os.cpu_count()})  # fmt: skip
                print(f"C n={n} {dtype} {threads} thread(s): {seconds:.3f} s", flush=True)
            for s in args.blocks:
                best, calls = np.inf, None
                for _ in range(args.repeats):
                    begin = time.perf_counter()
                    upload = cupy.asarray(m)
                    cupy.cuda.get_current_stream().synchronize()
                    upload_s = time.perf_counter() - begin
                    result, calls, seconds = dp_gpu.solve_bottom_up(upload, s)
                    best = min(best, seconds)
                same = bool(np.array_equal(result.get(), reference))
                # one more run with an event pair around every launch: each kind's share
                _, profiled, _ = dp_gpu.solve_bottom_up(upload, s, profile=True)
                gpu_rows.append({"device": device, "n": n, "dtype": dtype, "block": s,
                                 "seconds": best, "upload_s": upload_s, "equal_to_c": same,
                                 "launches": calls.triangular + calls.rectangular + 1,
                                 "gop_per_s": dp.operations(n) / best / 1e9,
                                 **{f"{k}_s": profiled.seconds[k] for k in dp.KINDS}})  # fmt: skip
                kinds = " ".join(f"{k} {profiled.seconds[k]:.4f}" for k in dp.KINDS)
                print(f"GPU n={n} s={s} {dtype}: {best:.4f} s, equal {same} ({kinds})", flush=True)
    for name, rows in (("gpu.csv", gpu_rows), ("cpu.csv", cpu_rows)):
        if rows:
            write_rows(args.out / name, rows)
    print(f"done in {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
