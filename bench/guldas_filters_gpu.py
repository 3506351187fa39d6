#!/usr/bin/env python3
"""Güldaş's filters on the GPU, each method against the others in one run on
one device (issue "Güldaş 2015, part 2", Speed; thesis §4.2.2-4.3).

* Bootstrap filter (Fig 1.2) on the bimodal model, T = 100: butterfly
  multinomial (full depth, the default radix) against our multinomial and
  our systematic; the device time of a run (its CUDA graph, CUDA events),
  median over ``--runs`` runs of distinct seeds after one untimed run.
* Adaptive filter (Fig 1.3), tau = 0.6: the adaptive butterfly against
  adaptive multinomial (our multinomial, gated on the device by the same
  ESS test); with the share of steps that resampled and the mean stages.
* SMC-EM (§4.3) on the volatility model: the wall time of one EM iteration
  (replay, statistics back, M-step), median over ``--em-iterations``.
* The bound on the filters' speed-up, measured in the same run: the
  adaptive filter with tau = 0 (it never resamples: the work every filter
  shares, per run) and each resampler alone on N weights
  (``pfresample.api.time_resample``, 100 calls, the median), so that a filter's
  time is about floor + 100 x resampler, and the best speed-up butterfly
  filtering can give is (floor + 100 t_multinomial) / (floor + 100 t_butterfly).

    python bench/guldas_filters_gpu.py --sizes 2^20 2^22 --smcem-sizes 2^21
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

from pfresample.api import time_resample
from pfresample.filters import ADAPTIVE_OPTIONS, BOOTSTRAP_OPTIONS, run_filter, run_smcem
from pfresample.models.bimodal import BimodalModel
from pfresample.models.volatility import VolatilityModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cuda_device_info, parse_size, write_rows  # noqa: E402 -- sibling module

BOOTSTRAP = ("butterfly-multinomial", "multinomial", "systematic")
ADAPTIVE = ("butterfly-multinomial", "multinomial")
FIELDS = ["date", "device", "cuda", "cupy", "filter", "method", "n", "median_ms", "runs",
          "resampled_share", "mean_stages"]  # fmt: skip


def run_adaptive(model, y, n, method, seed, *, tau, **kw):
    """Güldaş's Fig 1.3 filter: ``run_filter`` with ``ADAPTIVE_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    if kw.get("radix", 0) is None:
        kw.pop("radix")
    return run_filter(model, y, n, method, seed=seed, ess_threshold=tau, **ADAPTIVE_OPTIONS,
                      **kw)  # fmt: skip


def run_bootstrap(model, y, n, method, seed, **kw):
    """Güldaş's Fig 1.2 filter: ``run_filter`` with ``BOOTSTRAP_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **BOOTSTRAP_OPTIONS, **kw)


def _filter_rows(run, label: str, methods, n: int, runs: int, info: dict, **kw) -> list[dict]:
    model = BimodalModel()
    _, y = model.simulate(100)
    rows = []
    for method in methods:
        run(model, y, n, method, seed=0, backend="cuda", **kw)  # the capture and first replay
        results = [
            run(model, y, n, method, seed=s, backend="cuda", **kw) for s in range(1, runs + 1)
        ]
        ms = statistics.median(1e3 * r.total_seconds for r in results)
        stages = np.concatenate([r.stages for r in results])
        rows.append({**info, "filter": label, "method": method, "n": n, "median_ms": ms,
                     "runs": runs, "resampled_share": float((stages > 0).mean()),
                     "mean_stages": float(stages.mean())})  # fmt: skip
        print(f"{label:10s} {method:22s} N=2^{n.bit_length() - 1:<3d} {ms:9.3f} ms/run "
              f"resampled {rows[-1]['resampled_share']:.2f} stages {rows[-1]['mean_stages']:.2f}",
              flush=True)  # fmt: skip
    return rows


def _bound_rows(n: int, runs: int, info: dict) -> list[dict]:
    """The shared floor (adaptive filter, tau = 0) and the two resamplers alone."""
    import cupy

    rows = _filter_rows(run_adaptive, "floor", ["butterfly-multinomial"], n, runs, info, tau=0.0)
    x = np.random.default_rng(1).normal(0.0, 3.0, n)
    w = cupy.asarray(np.exp(-0.5 * x * x).astype(np.float32))
    for method in ("butterfly-multinomial", "multinomial"):
        ms = time_resample(w, method, seed=1, repeats=100, warmup=5).median_ms
        rows.append({**info, "filter": "resampler", "method": method, "n": n, "median_ms": ms,
                     "runs": 100, "resampled_share": 1.0, "mean_stages": float("nan")})  # fmt: skip
        print(f"resampler  {method:22s} N=2^{n.bit_length() - 1:<3d} {ms:9.4f} ms/call", flush=True)
    return rows


def _smcem_rows(n: int, iterations: int, info: dict) -> list[dict]:
    model = VolatilityModel()
    _, y = model.simulate(100, np.random.default_rng(0))
    rows = []
    for scheme in ("butterfly", "multinomial"):
        run = run_smcem(y, n, scheme, 0, iterations=iterations + 1, backend="cuda")
        ms = statistics.median(1e3 * s for s in run.seconds[1:])  # the first holds the capture
        rows.append({**info, "filter": "smcem", "method": scheme, "n": n, "median_ms": ms,
                     "runs": iterations, "resampled_share": float("nan"),
                     "mean_stages": float("nan")})  # fmt: skip
        print(f"smcem      {scheme:22s} N=2^{n.bit_length() - 1:<3d} {ms:9.3f} ms/iteration "
              f"alpha {run.alpha[-1]:.3f} sigma {run.sigma[-1]:.3f}", flush=True)  # fmt: skip
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", nargs="+", type=parse_size, default=[2**k for k in (14, 18, 20, 22)])
    p.add_argument("--smcem-sizes", nargs="+", type=parse_size, default=[2**17, 2**21])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--em-iterations", type=int, default=10)
    p.add_argument("--csv", type=Path, default=Path("results/bench/guldas_filters_gpu.csv"))
    args = p.parse_args(argv)
    info = cuda_device_info()
    rows = []
    for n in args.sizes:
        rows += _filter_rows(run_bootstrap, "bootstrap", BOOTSTRAP, n, args.runs, info)
        rows += _filter_rows(run_adaptive, "adaptive", ADAPTIVE, n, args.runs, info, tau=0.6)
        rows += _bound_rows(n, args.runs, info)
    for n in args.smcem_sizes:
        rows += _smcem_rows(n, args.em_iterations, info)
    write_rows(args.csv, rows, FIELDS)
    for label in ("bootstrap", "adaptive", "smcem"):
        for n in sorted({r["n"] for r in rows if r["filter"] == label}):
            t = {r["method"]: r["median_ms"] for r in rows if r["filter"] == label and r["n"] == n}
            fast = t.get("butterfly-multinomial", t.get("butterfly"))
            slow = t["multinomial"]
            print(f"{label}: N=2^{n.bit_length() - 1} butterfly {slow / fast:.2f}x multinomial")
    for n in args.sizes:
        t = {(r["filter"], r["method"]): r["median_ms"] for r in rows if r["n"] == n}
        floor = t["floor", "butterfly-multinomial"]
        fast = floor + 100 * t["resampler", "butterfly-multinomial"]
        slow = floor + 100 * t["resampler", "multinomial"]
        print(
            f"bound: N=2^{n.bit_length() - 1} floor {floor:.2f} ms/run, "
            f"(floor + 100 resamplings) {slow:.2f} / {fast:.2f} ms = {slow / fast:.2f}x"
        )


if __name__ == "__main__":
    main()
