#!/usr/bin/env python3
"""Where a step of the GPU filter's graph (growth model, Systematic, T = 100,
``run_sir_gpu(..., fused=False)``) spends its time at each N given: each
kernel's device time over one run (CUPTI through torch.profiler, which
records the kernels a CUDA graph launches), per step, with the bytes it
must move and the bandwidth that makes. A probe of the graph, not a
benchmark.

    python bench/device/graph_kernel_profile.py 1048576 4194304
"""

import sys

import numpy as np
from torch.profiler import ProfilerActivity, profile

from pfresample.filters.sir_gpu import run_sir_gpu
from pfresample.models import GrowthModel
from pfresample.resampling.registry import get_method

model = GrowthModel()
_, y = model.simulate(100, np.random.default_rng(1))
m = get_method("systematic")
for n in [int(a) for a in sys.argv[1:]] or [2**22]:
    for s in range(2):
        r = run_sir_gpu(model, y, n, m, s, stage_times=False, fused=False)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        r = run_sir_gpu(model, y, n, m, 7, stage_times=False, fused=False)
    ms = 1e3 * r.total_seconds
    print(f"== N = {n}: run {ms:.3f} ms (device), {10 * ms:.1f} us a step")
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", 0)
        if us > 0:
            rows.append((us, e.count, e.key))
    for us, count, key in sorted(rows, reverse=True)[:14]:
        print(f"{us / 100:9.2f} us/step  {count:5d} calls  {key[:90]}")
