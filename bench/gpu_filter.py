#!/usr/bin/env python3
"""The GPU SIR filter against the thesis's Tesla K40 and against our CPU filter.

For every N of ``--n`` and every method of thesis Table 6.2 (the growth model,
eqs. 2.34-2.35, T = 100) or Table 7.2 (``--model radar``: scenario 1), runs
``pfresample.filters.run_sir(..., backend="cuda")`` ``--repeats`` times on one
fixed trajectory, after one untimed warm-up run (it compiles or loads the
kernels), and reports per 100-step run:

* ``gpu_s``: the median of the summed CUDA-event stage times (the four stages
  of Algorithm 2.4, as the thesis's tables count them);
* ``wall_s``: the median host time of the whole ``run_sir`` call (seeds,
  upload, the graph's replay, the final synchronisation and the copies back)
  -- at small N this shows whether the filter is launch-bound;
* ``wall_no_stage_times_s``: the same with ``stage_times=False`` (no timing
  marks between the stages in the graph: 400 fewer graph nodes);
* ``k40_s``: the thesis's "Exec. Time" for that method and N (Tables 6.2 and
  7.2, Tesla K40), and ``speedup_vs_k40`` = k40_s / wall_s;
* ``cpu_s``: our CPU filter's median wall time on the same trajectory, for N
  up to ``--cpu-max`` (the CPU is slow at large N), and ``speedup_vs_cpu``.

    python bench/gpu_filter.py                              # growth model, 2^14 ... 2^22
    python bench/gpu_filter.py --model radar --repeats 3 --out results/bench/gpu_filter_radar.csv
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from _common import parse_size, write_rows  # bench/, the scripts' own folder

from pfresample.backend import cuda_device
from pfresample.filters import SIR_OPTIONS, run_filter
from pfresample.models import SCENARIOS, GrowthModel, RadarModel, truth_trajectory

# (method, segment_bytes, the thesis's column name)
METHODS = [
    ("systematic", None, "Systematic"),
    ("metropolis", None, "Metropolis"),
    ("rejection", None, "Rejection"),
    ("uphill", None, "Uphill"),
    ("uphill-ca", 128, "UCA-128"),
    ("uphill-c1", 128, "UC1-128"),
]
# "Exec. Time" (seconds per 100-step run on a Tesla K40) of thesis Table 6.2
# (growth model) and Table 7.2 (radar, scenario 1), by log2 N, in METHODS' order.
K40_SECONDS = {
    "growth": {
        14: (0.014, 0.035, 0.020, 0.025, 0.017, 0.016),
        16: (0.021, 0.092, 0.043, 0.059, 0.036, 0.030),
        18: (0.046, 0.312, 0.137, 0.197, 0.115, 0.090),
        20: (0.149, 2.277, 0.777, 1.407, 0.429, 0.328),
        22: (0.556, 12.602, 3.524, 7.631, 1.751, 1.271),
    },
    "radar": {
        14: (0.030, 0.071, 0.045, 0.039, 0.031, 0.029),
        16: (0.046, 0.183, 0.099, 0.084, 0.060, 0.053),
        18: (0.105, 0.675, 0.358, 0.308, 0.179, 0.148),
        20: (0.343, 4.770, 1.883, 1.856, 0.648, 0.519),
        22: (1.285, 26.014, 8.253, 9.258, 2.584, 1.982),
    },
}


def run_sir(model, y, n, method, seed, **kw):
    """Dülger's Algorithm 2.4: ``run_filter`` with ``SIR_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


def trajectory(model_name: str):
    """(model, truth, y) of one fixed trajectory (seed 2017)."""
    rng = np.random.default_rng(2017)
    if model_name == "growth":
        model = GrowthModel()
        truth, y = model.simulate(100, rng)
        return model, truth, y
    model = RadarModel()
    truth = truth_trajectory(SCENARIOS["scenario1"], model)
    return model, truth, model.simulate_measurements(truth[1:], rng)


def median_run(model, y, n, method, ss, backend, repeats, stage_times=True):
    """(median of the event-timed totals, median wall seconds) of ``repeats`` runs."""
    kw = dict(segment_bytes=ss, backend=backend, stage_times=stage_times)
    run_sir(model, y, n, method, 0, **kw)  # warm-up: builds the GPU filter's graph
    totals, walls = [], []
    for r in range(repeats):
        start = time.perf_counter()
        result = run_sir(model, y, n, method, r + 1, **kw)
        walls.append(time.perf_counter() - start)
        totals.append(result.total_seconds)
    return statistics.median(totals), statistics.median(walls)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(K40_SECONDS), default="growth")
    ap.add_argument("--n", type=parse_size, nargs="+", default=[2**k for k in range(14, 23, 2)])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cpu-max", type=parse_size, default=2**16)
    ap.add_argument("--methods", nargs="+", default=[m for m, _, _ in METHODS])
    ap.add_argument("--out", type=Path, default=Path("results/bench/gpu_filter.csv"))
    args = ap.parse_args(argv)
    device = cuda_device()
    if device is None:
        print("gpu_filter.py: no CUDA device visible; nothing to measure", file=sys.stderr)
        return 1
    model, _, y = trajectory(args.model)
    date = datetime.date.today().isoformat()
    rows = []
    for n in args.n:
        log2n = n.bit_length() - 1
        for col, (method, ss, label) in enumerate(METHODS):
            if method not in args.methods:
                continue
            gpu_s, wall_s = median_run(model, y, n, method, ss, "cuda", args.repeats)
            bare_s = median_run(model, y, n, method, ss, "cuda", args.repeats, False)[1]
            k40 = K40_SECONDS[args.model].get(log2n, (None,) * len(METHODS))[col]
            cpu_s = None
            if n <= args.cpu_max:
                cpu_s = median_run(model, y, n, method, ss, "cpu", max(1, args.repeats // 2))[1]
            row = {
                "date": date,
                "device": device,
                "model": args.model,
                "method": label,
                "n": n,
                "gpu_s": gpu_s,
                "wall_s": wall_s,
                "wall_no_stage_times_s": bare_s,
                "k40_s": k40,
                "speedup_vs_k40": None if k40 is None else k40 / wall_s,
                "cpu_s": cpu_s,
                "speedup_vs_cpu": None if cpu_s is None else cpu_s / wall_s,
            }
            rows.append(row)
            write_rows(args.out, rows, announce=False)  # a run cut off keeps what it measured
            print(
                f"{args.model} {label:>10} N=2^{log2n}: gpu {gpu_s * 1e3:8.2f} ms, "
                f"wall {wall_s * 1e3:8.2f} ms (no stage times {bare_s * 1e3:6.2f})"
                + ("" if k40 is None else f", K40 {k40 * 1e3:8.1f} ms ({k40 / wall_s:5.1f}x)")
                + ("" if cpu_s is None else f", CPU {cpu_s * 1e3:8.1f} ms"),
                flush=True,
            )
    write_rows(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
