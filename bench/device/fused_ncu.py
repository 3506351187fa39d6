#!/usr/bin/env python3
"""One fused filter run (growth model, Systematic, T = 100) at N given on the
command line, for Nsight Compute: the first run compiles and warms up, the
second is the one to profile (``ncu --launch-skip 1 --launch-count 1 -k
growth_systematic_run``). bench/device/fused_ncu.sh drives it."""

import sys

import numpy as np

from pfresample.filters import sir_fused
from pfresample.models import GrowthModel

model = GrowthModel()
_, y = model.simulate(100, np.random.default_rng(1))
n = int(sys.argv[1]) if len(sys.argv) > 1 else 2**14
run = sir_fused.FusedRun(model, n, 100)
for seed in range(2):
    r = run.run(y, seed)
kernel_ms, wall_ms = 1e3 * r.total_seconds, 1e3 * r.wall_seconds
print(f"N={n} blocks={run.blocks}: kernel {kernel_ms:.3f} ms, wall {wall_ms:.3f} ms")
