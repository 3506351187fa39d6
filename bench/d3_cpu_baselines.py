#!/usr/bin/env python3
"""Table 5's CPU columns, comparable with the GPU's (issue 39): the CPU filters
of Das et al. (2014) over the same window of steps as ``bench/d3_2014_gpu_runs.py``
times on the GPU -- steps 3 ... 502 of trajectory 0 of the d3_2014 model, in
the paper's regime (no process noise in the filter) -- one process, one
thread (BLAS and OpenMP pinned to 1 before NumPy loads).

* ``systematic``: the SIR filter with systematic resampling (Table 5's first
  column);
* ``d3-loop``: the D3 filter (eq. 5, prefix stride) whose resampling is
  Table 1's sequential loop (``impl="loop"``, compiled by numba: the paper's
  CPU D3 "as written");
* ``d3-table``: the same filter with our sparse-table range maxima (the
  library's default, the same particles).

A step's time is (run of 502 steps - run of 2 steps) / 500, so that the
initial particles, the first two steps and the start-up cancel. Each is taken
``--repeats`` times, as wall time (``time.perf_counter``) and as the
process's CPU time (``time.process_time``: on a shared machine the time the
process itself ran, which other processes' load does not add to); the
median and the min-max of the repeats, and the 1-minute load average before
each repeat, are written.

    python bench/d3_cpu_baselines.py --csv results/bench/d3_2014/cpu_baselines.csv

(the committed run: evidence/2026-11-26-xeon2-ba6cc49/d3_2014/cpu_baselines.csv)
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"  # one thread, before NumPy and numba load

import argparse  # noqa: E402
import datetime  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

from pfresample.filters import D3_OPTIONS, run_filter  # noqa: E402
from pfresample.resampling import d3_loop  # noqa: E402
from pfresample.timing import cpu_name  # noqa: E402
from pfresample_studies.d3_2014 import catalog, experiments  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import d3_2014_config as config  # noqa: E402
from _common import write_rows  # noqa: E402 -- sibling module

REGIMES = catalog.regimes(config())  # the filter's process noise (None: the truth's)

FILTERS = {
    "systematic": {"method": "systematic"},
    "d3-loop": {"method": "d3", "noise": "eq5", "cdf": "prefix", "impl": "loop"},
    "d3-table": {"method": "d3", "noise": "eq5", "cdf": "prefix", "impl": "table"},
}
WINDOW = 502  # the GPU's: two eager steps, then five graph replays of 100 steps
SKIP = 2
FIELDS = ["date", "cpu", "cores", "filter", "n", "window_first", "window_last", "repeats",
          "wall_ms_median", "wall_ms_min", "wall_ms_max", "cpu_ms_median", "cpu_ms_min",
          "cpu_ms_max", "load1_before", "numba"]  # fmt: skip


def run_d3(model, y, n, seed, *, method="d3", **kw):
    """Das et al.'s filter: ``run_filter`` with ``D3_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **D3_OPTIONS, **kw)


def clocks(model, y, n, seed, spec) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run_d3(model, y, n, seed, **spec)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=list(catalog.PUBLISHED_TABLE5))
    p.add_argument("--filters", nargs="+", default=list(FILTERS), choices=list(FILTERS))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--csv", type=Path, required=True)
    args = p.parse_args(argv)
    if "d3-loop" in args.filters and not d3_loop.compiled:
        sys.exit("d3-loop needs numba (pip install numba): Table 1's loop is timed compiled")
    cfg = config()
    full = replace(catalog.model(cfg), filter_process_sd=REGIMES["paper"])
    model, short = (catalog.truncated(full, k * full.dt) for k in (WINDOW, SKIP))
    traj, _ = experiments.trajectory(catalog.model(cfg), cfg["seed"], 0)
    y = traj["y"][:WINDOW]
    rows = []
    for n in args.sizes:
        seed = experiments.run_seed(cfg["seed"], n, 0, 0)
        for label in args.filters:
            spec = FILTERS[label]
            clocks(short, y[:SKIP], n, seed, spec)  # numba compiles, caches warm
            walls, cpus, loads = [], [], []
            for _ in range(args.repeats):
                loads.append(os.getloadavg()[0])
                w_long, c_long = clocks(model, y, n, seed, spec)
                w_short, c_short = clocks(short, y[:SKIP], n, seed, spec)
                walls.append(1e3 * (w_long - w_short) / (WINDOW - SKIP))
                cpus.append(1e3 * (c_long - c_short) / (WINDOW - SKIP))
            rows.append({
                "date": datetime.date.today().isoformat(), "cpu": cpu_name(),
                "cores": os.cpu_count(), "filter": label, "n": n, "window_first": SKIP + 1,
                "window_last": WINDOW, "repeats": args.repeats,
                "wall_ms_median": f"{statistics.median(walls):.5g}",
                "wall_ms_min": f"{min(walls):.5g}", "wall_ms_max": f"{max(walls):.5g}",
                "cpu_ms_median": f"{statistics.median(cpus):.5g}",
                "cpu_ms_min": f"{min(cpus):.5g}", "cpu_ms_max": f"{max(cpus):.5g}",
                "load1_before": " ".join(f"{v:.2f}" for v in loads),
                "numba": d3_loop.compiled,
            })  # fmt: skip
            r = rows[-1]
            print(f"N={n:>6} {label:<10} wall {r['wall_ms_median']} ms/step "
                  f"({r['wall_ms_min']}-{r['wall_ms_max']}), CPU {r['cpu_ms_median']} "
                  f"({r['cpu_ms_min']}-{r['cpu_ms_max']}), load {r['load1_before']}",
                  flush=True)  # fmt: skip
    write_rows(args.csv, rows, FIELDS)


if __name__ == "__main__":
    main()
