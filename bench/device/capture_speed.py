#!/usr/bin/env python3
"""A user's model on the GPU, a step captured against the CuPy loop: the
linear-Gaussian model (written only with the array module it is handed)
through ``run_filter(..., backend="cuda")`` with ``capture=True`` (the T
steps and the resampler as one CUDA graph, ``filters/capture.py``) and
``capture=False`` (the loop, ``filters/device.py``), Systematic, T steps;
beside them the built-in growth model's SIR graph (its CUDA twin) at the
same N. Each: the median over ``--repeats`` runs (after ``--warmup``, which
builds or captures) of the host's clock around the whole call, divided by T.

    python3 bench/device/capture_speed.py --n 2^14 2^20 --csv OUT/capture_speed.csv
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from pfresample.filters import run_filter
from pfresample.models import GrowthModel, LinearGaussianModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import parse_size  # noqa: E402 -- the bench folder's helpers


def timed(call, repeats: int, warmup: int) -> tuple[float, object]:
    """Median seconds of ``call(seed)`` over ``repeats`` seeds after ``warmup``."""
    walls, last = [], None
    for s in range(warmup + repeats):
        start = time.perf_counter()
        last = call(s)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls[warmup:]), last


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=parse_size, nargs="+", default=[2**14, 2**20])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--csv", type=Path, required=True)
    args = p.parse_args(argv)
    lg, growth = LinearGaussianModel(), GrowthModel()
    _, y_lg = lg.simulate(args.steps, seed=3)
    _, y_growth = growth.simulate(args.steps, np.random.default_rng(3))
    rows = []
    for n in args.n:
        paths = {
            "lg-captured": lambda s, n=n: run_filter(lg, y_lg, n, "systematic", seed=s,
                                                     backend="cuda", capture=True),
            "lg-loop": lambda s, n=n: run_filter(lg, y_lg, n, "systematic", seed=s,
                                                 backend="cuda", capture=False),
            "growth-twin-graph": lambda s, n=n: run_filter(growth, y_growth, n, "systematic",
                                                           seed=s, backend="cuda"),
        }  # fmt: skip
        for name, call in paths.items():
            try:
                seconds, result = timed(call, args.repeats, args.warmup)
            except Exception as error:  # one path failing leaves the others' numbers
                print(f"N={n} {name}: {type(error).__name__}: {error}", flush=True)
                continue
            per_step = 1e3 * seconds / args.steps
            rows.append({"n": n, "path": name, "steps": args.steps, "repeats": args.repeats,
                         "ms_per_step": f"{per_step:.5g}", "wall_ms": f"{1e3 * seconds:.5g}",
                         "log_likelihood": f"{result.log_likelihood:.6g}"})  # fmt: skip
            print(f"N={n:>9,} {name:<18} {per_step:9.4f} ms a step", flush=True)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["n"])
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
