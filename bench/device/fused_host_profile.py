#!/usr/bin/env python3
"""Where the host's time of one run_sir(..., backend="cuda", stage_times=False)
call goes for the fused run (growth model, Systematic, T = 100, N given on the
command line, 2^14 by default): cProfile over 50 calls after warm-up, the top
entries by own time."""

import cProfile
import pstats
import sys
import time

import numpy as np

from pfresample.filters import run_sir
from pfresample.models import GrowthModel

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2**14
model = GrowthModel()
_, y = model.simulate(100, np.random.default_rng(1))
for s in range(3):
    run_sir(model, y, n, "systematic", s, backend="cuda", stage_times=False)
start = time.perf_counter()
for s in range(50):
    r = run_sir(model, y, n, "systematic", s, backend="cuda", stage_times=False)
print(
    f"per call {1e3 * (time.perf_counter() - start) / 50:.3f} ms, run's wall "
    f"{1e3 * r.wall_seconds:.3f} ms, kernel {1e3 * r.total_seconds:.3f} ms"
)
prof = cProfile.Profile()
prof.enable()
for s in range(50):
    run_sir(model, y, n, "systematic", s, backend="cuda", stage_times=False)
prof.disable()
pstats.Stats(prof).sort_stats("tottime").print_stats(18)
