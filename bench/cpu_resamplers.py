#!/usr/bin/env python3
"""CPU timings of every pfresample method, next to the ``particles`` library's resamplers.

Weights: eq. 2.33 with y = 4 (``weights.generate("eq233-y4", n, 0, 0)`` of the Dülger
study, float32).
Each timing is the median of ``--repeats`` calls after one warm-up call (``time.perf_counter``).
Iterative methods (Metropolis / uphill families) run with a fixed ``--B`` so that timings are
comparable across N; for them the table also gives candidate evaluations per second, N*B/time.
Segmented methods run with ``segment_bytes=128``.

The ``particles`` resamplers (systematic, multinomial, stratified, residual) get the same
weights as float64 normalised to sum 1 (normalisation is done once, outside the timing); their
numba code is compiled by the warm-up call. ``pip install -e '.[bench]'`` installs particles;
without it only pfresample is timed.

    python bench/cpu_resamplers.py                          # N = 2^16, 2^20, 2^22
    python bench/cpu_resamplers.py --sizes 2^16 --repeats 3 --csv results/bench_cpu.csv
"""

from __future__ import annotations

import argparse
import csv
import datetime
import functools
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import parse_size, particles_version  # bench/, the scripts' own folder

import pfresample
from pfresample.resampling.registry import get_method
from pfresample.timing import cpu_name
from pfresample_studies.dulger2017 import weights

try:
    import particles.resampling as particles_resampling
except ImportError:  # optional: pip install -e '.[bench]'
    particles_resampling = None

WEIGHTS = "eq233-y4"
SEGMENT_BYTES = 128
PARTICLES_METHODS = ("systematic", "multinomial", "stratified", "residual")
PARTICLES_PREFIX = "particles."


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--sizes",
        nargs="+",
        type=parse_size,
        default=[2**16, 2**20, 2**22],
        metavar="N",
        help="numbers of particles (default: 2^16 2^20 2^22)",
    )
    p.add_argument("--repeats", type=int, default=5, help="timed calls per case (default: 5)")
    p.add_argument(
        "--B", type=int, default=100, help="fixed B for the iterative methods (default: 100)"
    )
    p.add_argument("--csv", type=Path, metavar="PATH", help="also write the results as CSV")
    p.add_argument(
        "--methods",
        nargs="+",
        metavar="NAME",
        help="time only these: pfresample method names and/or "
        f"{', '.join(PARTICLES_PREFIX + m for m in PARTICLES_METHODS)}",
    )
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    if args.B < 1:
        p.error("--B must be >= 1")
    ours = tuple(pfresample.methods())
    known = ours + tuple(PARTICLES_PREFIX + m for m in PARTICLES_METHODS)
    if args.methods is not None:
        unknown = [m for m in args.methods if m not in known]
        if unknown:
            p.error(f"unknown method(s) {unknown}; choose from {list(known)}")
    chosen = args.methods if args.methods is not None else known
    args.ours = [m for m in ours if m in chosen]
    args.theirs = [m for m in PARTICLES_METHODS if PARTICLES_PREFIX + m in chosen]
    return args


def median_seconds(call: Callable[[int], np.ndarray], n: int, repeats: int) -> float:
    """One warm-up call (checked to return N valid ancestors), then the median of `repeats`."""
    ancestors = np.asarray(call(0))
    if ancestors.shape != (n,) or ancestors.min() < 0 or ancestors.max() >= n:
        raise RuntimeError(f"bad ancestors: shape {ancestors.shape}, expected ({n},) in [0, {n})")
    times = []
    for i in range(1, repeats + 1):
        t0 = time.perf_counter()
        call(i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _ours(weights, name: str, kwargs: dict, seed: int) -> np.ndarray:
    return pfresample.resample(weights, name, seed=seed, backend="cpu", **kwargs)


def _theirs(fn, W: np.ndarray, seed: int) -> np.ndarray:
    return fn(W)  # particles draws from NumPy's global generator (seeded in `cases`)


def cases(args, w: np.ndarray):
    """(library, label, kwargs, call(seed)) for every method to time on weights `w`."""
    out = []
    for name in args.ours:
        entry = get_method(name)
        kwargs = {}
        if entry.B_rule is not None:
            kwargs["B"] = args.B  # fixed B, so that timings compare across N
        if entry.segmented:
            kwargs["segment_bytes"] = SEGMENT_BYTES
        out.append(("pfresample", name, kwargs, functools.partial(_ours, w, name, kwargs)))
    if args.theirs:
        W = w.astype(np.float64)
        W /= W.sum()
        np.random.seed(0)  # noqa: NPY002 -- particles has no generator argument
        for name in args.theirs:
            fn = getattr(particles_resampling, name)
            call = functools.partial(_theirs, fn, W)
            out.append(("particles", PARTICLES_PREFIX + name, {}, call))
    return out


def run(args) -> tuple[list[dict], int]:
    rows, failures = [], 0
    for n in args.sizes:
        w = weights.generate(WEIGHTS, n, 0, 0).astype(np.float32, copy=False)
        for library, name, kwargs, call in cases(args, w):
            row = {
                "library": library,
                "method": name,
                "n": n,
                "B": kwargs.get("B"),
                "segment_bytes": kwargs.get("segment_bytes"),
                "repeats": args.repeats,
            }
            try:
                seconds = median_seconds(call, n, args.repeats)
            except Exception as exc:  # report and carry on with the other methods
                failures += 1
                row.update(median_ms=None, evals_per_s=None, error=f"{type(exc).__name__}: {exc}")
            else:
                B = kwargs.get("B")
                row.update(
                    median_ms=seconds * 1e3, error="", evals_per_s=n * B / seconds if B else None
                )
            print_row(row)
            rows.append(row)
    return rows, failures


def print_row(row: dict) -> None:
    ms = f"{row['median_ms']:12.3f}" if row["median_ms"] is not None else f"{'FAILED':>12}"
    evals = f"{row['evals_per_s']:14.3e}" if row["evals_per_s"] else f"{'':14}"
    B = f"{row['B']:>5}" if row["B"] else f"{'':5}"
    line = f"{row['method']:<24} {row['n']:>9} {B} {ms} {evals}"
    if row["error"]:
        line += f"  {row['error']}"
    print(line, flush=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    meta = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "numpy": np.__version__,
        "particles": particles_version() if particles_resampling else None,
    }
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else meta["cores"]
    print(
        f"# {meta['date']} | {meta['cpu']} | {meta['cores']} cores ({usable} usable) | "
        f"numpy {meta['numpy']} | particles {meta['particles'] or 'not installed'} | "
        f"python {platform.python_version()}"
    )
    print(
        f"# weights {WEIGHTS} float32; median of {args.repeats} after 1 warm-up; "
        f"B = {args.B} for iterative methods; segment_bytes = {SEGMENT_BYTES}"
    )
    if particles_resampling is None and args.theirs:
        print(
            "# note: the 'particles' library is not installed (pip install -e '.[bench]'); "
            "timing pfresample only"
        )
        args.theirs = []
    print(f"{'method':<24} {'N':>9} {'B':>5} {'median ms':>12} {'cand. eval/s':>14}")

    rows, failures = run(args)

    if args.csv is not None:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        fields = [
            "library",
            "method",
            "n",
            "B",
            "segment_bytes",
            "repeats",
            "median_ms",
            "evals_per_s",
            "error",
            *meta,
        ]
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            for row in rows:
                writer.writerow({**row, **meta})
        print(f"# wrote {args.csv}")
    if failures:
        print(f"# {failures} case(s) failed", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
