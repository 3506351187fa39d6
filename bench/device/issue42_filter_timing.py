#!/usr/bin/env python3
"""Issue 42's speed check: the GPU filters through the source tree on
PYTHONPATH, before the engine (``run_sir``, ``run_cpf``, ``run_d3``,
``run_bootstrap``) or after it (``run_filter`` with the documents' options),
on one device; one CSV row a configuration: the median over ``--repeats``
runs (after one untimed run that compiles and captures) of the host's clock
around the whole call and of the filter's own device time.

    PYTHONPATH=build/base42/src python3 bench/device/issue42_filter_timing.py base OUT.csv
    PYTHONPATH=src python3 bench/device/issue42_filter_timing.py head OUT.csv

Configurations (``CONFIGS``): Dülger's filter on the growth model (T = 100)
with Systematic in the fused one-kernel run (no stage marks) and in the
timed graph, and with Metropolis in the graph; the CPF (radius 64, T = 100);
Das et al.'s D3 filter on the UUV model (T = 200); Güldaş's bootstrap filter
with multinomial resampling on the bimodal model (T = 100); each at
N = 2^14 and 2^18. bench/device/issue42_gpu.sh alternates the two trees and
bench/device/issue42_compare.py puts them side by side.
"""

from __future__ import annotations

import csv
import statistics
import sys
import time

import numpy as np

from pfresample.backend import cuda_device
from pfresample.models import BimodalModel, GrowthModel, UuvModel

try:  # after the engine (issue 42)
    from pfresample.filters import (
        BOOTSTRAP_OPTIONS,
        CPF_OPTIONS,
        D3_OPTIONS,
        SIR_OPTIONS,
        run_filter,
    )

    API = "run_filter"
except ImportError:  # before it
    from pfresample.filters import run_bootstrap, run_cpf, run_d3, run_sir

    API = "old"

SIZES = (2**14, 2**18)
REPEATS = 11


def _growth():
    model = GrowthModel()
    return model, model.simulate(100, np.random.default_rng(2017))[1]


def _sir(method, stage_times):
    def go(n, seed, data):
        model, y = data
        if API == "old":
            r = run_sir(model, y, n, method, seed, backend="cuda", stage_times=stage_times)
        else:
            r = run_filter(model, y, n, method, seed=seed, backend="cuda",
                           stage_times=stage_times, **SIR_OPTIONS)  # fmt: skip
        return r.total_seconds

    return go


def _cpf(n, seed, data):
    model, y = data
    if API == "old":
        r = run_cpf(model, y, n, 64, seed, backend="cuda")
        return r.step_seconds * len(y)
    r = run_filter(
        model, y, n, "cellular", seed=seed, backend="cuda", radius=64, weighted=False, **CPF_OPTIONS
    )  # fmt: skip  (the old run_cpf's default: no weighted mean)
    return r.total_seconds


def _uuv():
    model = UuvModel(duration=20.0)
    return model, model.simulate(1)[1]


def _d3(n, seed, data):
    model, y = data
    if API == "old":
        return run_d3(model, y, n, seed, method="d3", backend="cuda").device_seconds
    return run_filter(model, y, n, "d3", seed=seed, backend="cuda", **D3_OPTIONS).device_seconds


def _bimodal():
    model = BimodalModel()
    return model, model.simulate(100)[1]


def _bootstrap(n, seed, data):
    model, y = data
    if API == "old":
        return run_bootstrap(model, y, n, "multinomial", seed, backend="cuda").seconds
    r = run_filter(model, y, n, "multinomial", seed=seed, backend="cuda", **BOOTSTRAP_OPTIONS)
    return r.total_seconds  # the graph's device time (guldas_gpu), as the old .seconds


# name -> (data, run(n, seed, data) -> the filter's own device seconds)
CONFIGS = {
    "sir-systematic-fused": (_growth, _sir("systematic", False)),
    "sir-systematic-timed-graph": (_growth, _sir("systematic", True)),
    "sir-metropolis-graph": (_growth, _sir("metropolis", False)),
    "cpf-r64": (_growth, _cpf),
    "d3-uuv": (_uuv, _d3),
    "bootstrap-multinomial": (_bimodal, _bootstrap),
}
FIELDS = ["tree", "api", "config", "n", "repeats", "wall_s", "device_s", "device"]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tree, out = argv
    device = cuda_device()
    if device is None:
        print("issue42_filter_timing.py: no CUDA device", file=sys.stderr)
        return 1
    rows = []
    for name, (make, run) in CONFIGS.items():
        data = make()
        for n in SIZES:
            run(n, 0, data)  # compiles the kernels and captures the graph
            walls, devices = [], []
            for seed in range(1, REPEATS + 1):
                start = time.perf_counter()
                devices.append(run(n, seed, data))
                walls.append(time.perf_counter() - start)
            rows.append({"tree": tree, "api": API, "config": name, "n": n, "repeats": REPEATS,
                         "wall_s": statistics.median(walls),
                         "device_s": statistics.median(devices), "device": device})  # fmt: skip
            print(f"{tree} {name} N={n}: wall {1e3 * rows[-1]['wall_s']:.3f} ms, "
                  f"device {1e3 * rows[-1]['device_s']:.3f} ms", flush=True)  # fmt: skip
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
