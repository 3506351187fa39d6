#!/usr/bin/env python3
"""The cellular particle filter on the GPU, every configuration of
Gelencsér-Horváth et al. 2013 (N in {2048, ..., 16384} x r in {32, ..., 256})
in one run on one device, next to the SIR filter with systematic resampling
at the same N (issue "Gelencsér-Horváth 2013", Speed).

For each model (growth, T = 100; bearings-only, T = 24), N and r:

* ``kernel_us``: the device time of one step kernel (CUDA events around each
  of 50 launches of the middle step, the median) -- the paper's "kernel time
  per state";
* ``graph_us_per_step``: the device time of a whole run's CUDA graph over T
  (the initial kernel included), median over ``--runs`` runs;
* ``run_ms``: the whole run on the host's clock -- inputs built, uploaded,
  graph replayed, estimates downloaded -- median over the runs (the
  paper's "global running time", which also counted file I/O);
* ``search`` (the default kernel: each particle finds its neighbour in the
  tile's prefix sums, O(log r)) and ``scan`` (each particle scans its whole
  neighbourhood, as the paper's kernel does, O(r));
* with ``--fast-math`` each configuration again with the --use_fast_math build
  (the paper's Fig 11 compares -use_fast_math with an older target).

The SIR filter (Dülger's Algorithm 2.4, ``run_sir``, systematic resampling,
no timing marks between its stages) on the growth model at each N gives the
same three numbers for a filter with global resampling (its kernels
per step instead of one).

    python bench/cpf_gpu.py --csv results/bench/cpf_gpu.csv
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

from pfresample.filters import CPF_OPTIONS, SIR_OPTIONS, run_filter
from pfresample.filters.cellular_gpu import cpf_graph
from pfresample.models import BearingsOnlyModel, GrowthModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cuda_device_info, write_rows  # noqa: E402 -- sibling module

SIZES = (2048, 4096, 8192, 16384)
RADII = (32, 64, 128, 256)
MODELS = {"growth": (GrowthModel(), 100), "bot": (BearingsOnlyModel(), 24)}
FIELDS = ["date", "device", "cuda", "cupy", "model", "filter", "n", "radius", "fast_math",
          "neighbourhood", "kernel_us", "graph_us_per_step", "run_ms", "runs"]  # fmt: skip


def run_sir(model, y, n, method, seed, **kw):
    """Dülger's Algorithm 2.4: ``run_filter`` with ``SIR_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


def _cpf_row(name, n: int, radius: int, fast: bool, scan: bool, runs: int, info: dict) -> dict:
    model, steps = MODELS[name]
    _, y = model.simulate(steps, np.random.default_rng(0))
    neighbourhood = "scan" if scan else "search"
    # the paper's kernel alone (weighted=False), the graph cpf_graph looks up below
    kw = {"backend": "cuda", "fast_math": fast, "neighbourhood": neighbourhood, "weighted": False}
    timed = [run_filter(model, y, n, "cellular", seed=s, radius=radius, **CPF_OPTIONS, **kw)
             for s in range(runs + 1)]  # fmt: skip
    results = timed[1:]  # run 0 captures the graph
    kernel = cpf_graph(model, n, radius, steps, fast, neighbourhood).step_kernel_seconds()
    row = {**info, "model": name, "filter": "cpf", "n": n, "radius": radius, "fast_math": fast,
           "neighbourhood": neighbourhood,
           "kernel_us": 1e6 * kernel,
           "graph_us_per_step": 1e6 * statistics.median(
               r.total_seconds / len(r.estimates) for r in results),
           "run_ms": 1e3 * statistics.median(r.wall_seconds for r in results),
           "runs": runs}  # fmt: skip
    label = f"cpf-{row['neighbourhood']}{'-fast' if fast else ''}"
    print(f"{name:6s} {label:16s} N={n:6d} r={radius:4d} "
          f"kernel {row['kernel_us']:8.2f} us  graph {row['graph_us_per_step']:8.2f} us/step  "
          f"run {row['run_ms']:8.3f} ms", flush=True)  # fmt: skip
    return row


def _sir_row(n: int, runs: int, info: dict) -> dict:
    model, steps = MODELS["growth"]
    _, y = model.simulate(steps, np.random.default_rng(0))
    kw = {"backend": "cuda", "stage_times": False}
    results = [run_sir(model, y, n, "systematic", s, **kw) for s in range(runs + 1)][1:]
    row = {**info, "model": "growth", "filter": "sir-systematic", "n": n, "radius": -1,
           "fast_math": False, "neighbourhood": "", "kernel_us": float("nan"),
           "graph_us_per_step": 1e6 * statistics.median(r.total_seconds for r in results) / steps,
           "run_ms": 1e3 * statistics.median(r.wall_seconds for r in results),
           "runs": runs}  # fmt: skip
    print(f"growth sir-systematic N={n:6d}        graph {row['graph_us_per_step']:8.2f} us/step  "
          f"run {row['run_ms']:8.3f} ms", flush=True)  # fmt: skip
    return row


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--fast-math", action="store_true", help="also time the fast-math build")
    p.add_argument("--csv", type=Path, default=Path("results/bench/cpf_gpu.csv"))
    args = p.parse_args(argv)
    info = cuda_device_info()
    rows = []
    for n in SIZES:
        rows.append(_sir_row(n, args.runs, info))
        for name in MODELS:
            for radius in RADII:
                for scan in (False, True):
                    for fast in (False, True) if args.fast_math else (False,):
                        rows.append(_cpf_row(name, n, radius, fast, scan, args.runs, info))
    write_rows(args.csv, rows, FIELDS)
    top = [r for r in rows if r["filter"] == "cpf" and r["n"] == 16384 and r["radius"] == 256]
    for r in top:
        print(f"N=16384 r=256 {r['model']} {r['neighbourhood']} fast_math={r['fast_math']}: "
              f"kernel {r['kernel_us']:.2f} us/step, run {r['run_ms']:.3f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
