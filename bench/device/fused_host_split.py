#!/usr/bin/env python3
"""The host's share of one fused filter call (growth model, Systematic,
T = 100) at each N given, without a profiler's overhead: the median over
100 calls of the whole run_sir call, of common.graph_inputs alone, and of
FusedRun.run's upload-launch-wait (its wall) and kernel (its clock).

    python bench/device/fused_host_split.py 16384 65536
"""

import statistics
import sys
import time

import numpy as np

from pfresample.filters import SIR_OPTIONS, run_filter
from pfresample.filters.common import graph_inputs
from pfresample.models import GrowthModel

CALLS = 100
model = GrowthModel()
_, y = model.simulate(100, np.random.default_rng(1))
for n in [int(a) for a in sys.argv[1:]] or [2**14]:
    for s in range(3):
        run_filter(
            model, y, n, "systematic", seed=s, backend="cuda", stage_times=False, **SIR_OPTIONS
        )
    call, keys, wall, kernel = [], [], [], []
    for s in range(CALLS):
        start = time.perf_counter()
        r = run_filter(
            model, y, n, "systematic", seed=s, backend="cuda", stage_times=False, **SIR_OPTIONS
        )
        call.append(time.perf_counter() - start)
        wall.append(r.wall_seconds)
        kernel.append(r.total_seconds)
        start = time.perf_counter()
        graph_inputs(y, s, 100)
        keys.append(time.perf_counter() - start)
    ms = lambda v: f"{1e3 * statistics.median(v):.3f}"  # noqa: E731
    print(
        f"N={n}: call {ms(call)} ms, graph_inputs {ms(keys)} ms, "
        f"upload-launch-wait {ms(wall)} ms, kernel {ms(kernel)} ms"
    )
