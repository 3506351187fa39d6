#!/usr/bin/env python3
"""D3 on the GPU against the CPU reference and the SIR filter, in one run on
one machine (issue "Das et al. 2014", Speed; the paper's Table 5).

For each N, on the UUV model of the d3_2014 study (dt = 0.01 s):

* ``gpu_d3`` / ``gpu_sir``: the GPU filter (filters/d3_gpu.py) over the
  whole 360 s run (36,000 steps), D3 with the prefix-sum stride and SIR
  with our Systematic; the device time of the steps (CUDA events), median
  of ``--runs`` runs after one untimed run (compile and graph capture);
* ``gpu_d3_local``: D3 with the paper's local CDF, O(N^2) work a step (at
  N = 15,000 about 0.8 ms a step on an H200, so 5 minutes a whole run at N
  = 50,000): over the first ``--local-steps`` steps, same median;
* ``cpu_d3`` / ``cpu_sir``: the CPU filter (filters/d3.py, NumPy, one process)
  over the first ``--cpu-steps`` steps (the whole run takes minutes at N =
  50,000 on the CPU), the host's clock, one run;
* ``resample_*``: one resampling alone at that N, on the weights and prior
  of a filter step -- ``pr.resample_d3`` on the CPU (median of 5) and on the
  GPU (CUDA events, median of 50), and our GPU Systematic.

Every time is also given per filter step (ms/step), the unit the speed-ups
are taken in: the paper's Table 5 ratio at N = 50,000 is 204.738 / 61.6328
= 3.3 (sequential systematic over GPU D3, its unit not stated).

    python bench/d3_gpu.py --csv evidence/2026-11-25-h200-8314417/d3_gpu.csv
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

import pfresample as pr
from pfresample.filters import D3_OPTIONS, run_filter
from pfresample.models import UuvModel
from pfresample.timing import cpu_name, cuda_event_times
from pfresample_studies.d3_2014.catalog import PUBLISHED_TABLE5
from pfresample_studies.d3_2014.experiments import step_weights

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cuda_device_info, parse_size, write_rows  # noqa: E402 -- sibling module

SIZES = tuple(PUBLISHED_TABLE5)  # the paper's Table 5: N -> (CPU systematic, CPU D3, GPU D3)
FIELDS = ["date", "device", "cuda", "cupy", "cpu", "n", "what", "steps", "seconds",
          "ms_per_step", "runs"]  # fmt: skip


def run_d3(model, y, n, seed, *, method="d3", **kw):
    """Das et al.'s filter: ``run_filter`` with ``D3_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **D3_OPTIONS, **kw)


def _gpu_run(model, y, n: int, runs: int, **kw) -> tuple[float, int]:
    """Median device seconds of a whole GPU run, after one untimed run."""
    times = [run_d3(model, y, n, s, backend="cuda", **kw).device_seconds for s in range(runs + 1)]
    return statistics.median(times[1:]), model.steps


def _resample_rows(model, y, n: int) -> list[tuple[str, float]]:
    import cupy

    # the particles, weights and prior of step 201 of the CPU SIR filter on this trajectory
    x, w, pw, _ = step_weights(model, {"y": y}, {"method": "systematic"}, n, 201, seed=0)
    cpu = []
    for s in range(5):
        start = time.perf_counter()
        pr.resample_d3(x, w, pw, seed=s, backend="cpu")
        cpu.append(time.perf_counter() - start)
    rows = [("resample_d3_cpu", statistics.median(cpu))]
    xd, wd, pwd = (cupy.asarray(a, dtype=np.float32) for a in (x, w, pw))
    for cdf in ("prefix", "local"):

        def call(cdf=cdf):
            pr.resample_d3(xd, wd, pwd, seed=1, cdf=cdf, backend="cuda")

        ms = cuda_event_times(call, 50, 3)
        rows.append((f"resample_d3_gpu_{cdf}", 1e-3 * statistics.median(ms)))
    ms = cuda_event_times(lambda: pr.resample(wd, "systematic", seed=1), 50, 3)
    rows.append(("resample_systematic_gpu", 1e-3 * statistics.median(ms)))
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=parse_size, nargs="+", default=list(SIZES))
    p.add_argument("--runs", type=int, default=3, help="timed GPU runs per N (median)")
    p.add_argument("--cpu-steps", type=int, default=500, help="steps of the timed CPU runs")
    p.add_argument("--local-steps", type=int, default=1000, help="steps of the local-CDF runs")
    p.add_argument("--duration", type=float, default=360.0, help="seconds of the GPU runs")
    p.add_argument("--csv", type=Path, default=Path("results/bench/d3_gpu.csv"))
    args = p.parse_args(argv)
    info = {**cuda_device_info(), "cpu": cpu_name()}
    model = UuvModel(duration=args.duration)
    _, y = model.simulate(2014)
    cpu_model = replace(model, duration=args.cpu_steps * model.dt)
    local_model = replace(model, duration=args.local_steps * model.dt)
    rows = []

    def add(n, what, seconds, steps, runs):
        rows.append({**info, "n": n, "what": what, "steps": steps, "seconds": f"{seconds:.6g}",
                     "ms_per_step": f"{1e3 * seconds / steps:.6g}", "runs": runs})  # fmt: skip
        print(f"N={n:>6} {what:<26} {seconds:10.4f} s  {1e3 * seconds / steps:9.4f} ms/step")

    for n in args.sizes:
        seconds, steps = _gpu_run(model, y, n, args.runs)
        add(n, "gpu_d3", seconds, steps, args.runs)
        seconds, steps = _gpu_run(local_model, y[: local_model.steps], n, args.runs, cdf="local")
        add(n, "gpu_d3_local", seconds, steps, args.runs)
        seconds, steps = _gpu_run(model, y, n, args.runs, method="systematic")
        add(n, "gpu_sir", seconds, steps, args.runs)
        for what, method in (("cpu_sir", "systematic"), ("cpu_d3", "d3")):
            r = run_d3(cpu_model, y[: cpu_model.steps], n, 0, method=method)
            add(n, what, r.wall_seconds, cpu_model.steps, 1)
        for what, seconds in _resample_rows(model, y, n):
            add(n, what, seconds, 1, 5 if "cpu" in what else 50)
    write_rows(args.csv, rows, FIELDS)
    per_step = {(int(r["n"]), r["what"]): float(r["ms_per_step"]) for r in rows}
    print("\nSpeed-ups per filter step (ours, one machine) and the paper's Table 5 ratios:")
    for n in args.sizes:
        gpu = per_step[(n, "gpu_d3")]
        line = (
            f"N={n:>6}: CPU SIR / GPU D3 {per_step[(n, 'cpu_sir')] / gpu:8.1f}x, "
            f"CPU D3 / GPU D3 {per_step[(n, 'cpu_d3')] / gpu:8.1f}x, "
            f"GPU SIR / GPU D3 {per_step[(n, 'gpu_sir')] / gpu:6.2f}x"
        )
        if n in PUBLISHED_TABLE5:
            sys_cpu, d3_cpu, d3_gpu = PUBLISHED_TABLE5[n]
            line += f"; paper {sys_cpu / d3_gpu:.1f}x and {d3_cpu / d3_gpu:.1f}x"
        print(line)


if __name__ == "__main__":
    main()
