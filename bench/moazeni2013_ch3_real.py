#!/usr/bin/env python3
"""Moazeni (2013) chapter 3 on real instances, on one GPU host: the recurrence with its
triangle term w(i, k, j) (``dp_weighted``: the least-perimeter triangulation of a convex
polygon, float32, and the matrix-chain order, int32) at n vertices (default 8,192, the
size Ito and Nakano's GTX 680 solved in 5.57 s), on the GPU (``dp_weighted_gpu``, the
strip order at each block size, CUDA events behind ``delay_ns``, the median and minimum
of --repeats runs, the upload beside) and on the best CPU code on every core
(``native/dp_weighted.c``, the median and minimum of --cpu-repeats runs after a warm-up
call on a small instance), each GPU matrix checked equal bit for bit to the CPU's.

With --chapter-cells, also chapter 3's GPU cell from n = 64 (``experiments.gpu_cell``:
the strip order at every block size and Table 1's orders, each checked against the
compiled C code) and Fig 12 behind ``delay_ns`` (``experiments.fig12_cell``). Writes
--out/real.csv (and gpu_cell.csv, fig12.csv); every row names the device, the CPU and
the commit ($PFRESAMPLE_COMMIT, else git's HEAD: ``pipeline.jobs.git_revision``).

    python bench/moazeni2013_ch3_real.py --out OUT --chapter-cells
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from pfresample_studies.moazeni2013 import dp_weighted, dp_weighted_gpu, experiments, native
from pfresample_studies.pipeline.jobs import git_revision

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_rows  # noqa: E402 -- sibling module

INSTANCES = {"perimeter": lambda n: dp_weighted.random_polygon(n, 2013),
             "chain": lambda n: dp_weighted.random_chain(n, 2013)}  # fmt: skip


def _frame_rows(arrays: dict, meta: dict) -> list[dict]:
    keys = list(arrays)
    return [{**{k: arrays[k][i].item() for k in keys}, **meta}
            for i in range(len(arrays[keys[0]]))]  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument(
        "--n", type=int, default=8192, help="vertices of the polygon (chain: n - 1 matrices)"
    )
    p.add_argument("--families", nargs="+", default=list(INSTANCES), choices=list(INSTANCES))
    p.add_argument("--blocks", type=int, nargs="+", default=[32, 64, 128])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cpu-repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--chapter-cells", action="store_true", help="also the GPU cell and Fig 12")
    p.add_argument("--cpu-only", action="store_true", help="the best CPU code alone (no GPU)")
    p.add_argument("--cell-n", type=int, nargs="+", default=[64, 128, 256, 512, 1024])
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    device = "none"
    if not args.cpu_only:
        import cupy

        device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    meta = {"device": device, "cpu": experiments.host()["cpu"], "cpu_count": os.cpu_count(),
            "commit": git_revision(Path(__file__).resolve().parent)}  # fmt: skip
    rows = []
    for family in args.families:
        warm = INSTANCES[family](200)
        native.solve_weighted(warm, args.threads)  # the build and OpenMP's start, untimed
        if not args.cpu_only:
            dp_weighted_gpu.solve(warm, min(args.blocks))  # the kernels' compile, untimed
        inst = INSTANCES[family](args.n)
        times, reference = [], None
        for _ in range(args.cpu_repeats):
            begin = time.perf_counter()
            reference = native.solve_weighted(inst, args.threads)
            times.append(time.perf_counter() - begin)
        answer = dp_weighted.answer(reference).item()
        rows.append({"family": family, "n": args.n, "side": "cpu", "code": "native/dp_weighted.c",
                     "block": 64, "threads": args.threads, "seconds": float(np.median(times)),
                     "seconds_min": min(times), "repeats": len(times), "upload_s": 0.0,
                     "checked": "reference", "answer": answer, **meta})  # fmt: skip
        print(f"CPU {family} n={args.n} {args.threads} threads: {np.median(times):.3f} s "
              f"(answer {answer})", flush=True)  # fmt: skip
        for s in [] if args.cpu_only else args.blocks:
            result, gtimes, upload_s = dp_weighted_gpu.solve(inst, s, repeats=args.repeats)
            same = bool(np.array_equal(result, reference))
            rows.append({"family": family, "n": args.n, "side": "gpu",
                         "code": "kernels/" + dp_weighted_gpu.SOURCES[family][0], "block": s,
                         "threads": 0, "seconds": float(np.median(gtimes)),
                         "seconds_min": min(gtimes), "repeats": len(gtimes), "upload_s": upload_s,
                         "checked": "equal" if same else "DIFFERS",
                         "answer": dp_weighted.answer(result).item(), **meta})  # fmt: skip
            print(f"GPU {family} n={args.n} s={s}: {np.median(gtimes):.4f} s, equal to C: {same}",
                  flush=True)  # fmt: skip
        write_rows(args.out / "real.csv", rows)
    if args.chapter_cells and not args.cpu_only:
        arrays, cell_meta = experiments.fig12_cell([64, 128, 256, 512, 1024, 2048, 4096],
                                                   repeats=20)  # fmt: skip
        write_rows(args.out / "fig12.csv", _frame_rows(arrays, {**meta,
                   "delay_ns": cell_meta["delay_ns"]}))  # fmt: skip
        print("Fig 12 written", flush=True)
        arrays, _ = experiments.gpu_cell(args.cell_n, [16, 32, 64, 128, 256],
                                         ["float32", "int32"], seed=2013, repeats=5)  # fmt: skip
        write_rows(args.out / "gpu_cell.csv", _frame_rows(arrays, meta))
        print("GPU cell written", flush=True)


if __name__ == "__main__":
    main()
