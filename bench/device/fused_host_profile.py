#!/usr/bin/env python3
"""Where the host's time of one run_sir(..., backend="cuda", stage_times=False)
call goes for the fused run (growth model, Systematic, T = 100, N given on the
command line, 2^14 by default): cProfile over 50 calls after warm-up, the top
entries by own time."""

import sys
import time

from _timing import growth_inputs, print_profile

from pfresample.filters import SIR_OPTIONS, run_filter

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2**14
model, y = growth_inputs()
for s in range(3):
    run_filter(model, y, n, "systematic", seed=s, backend="cuda", stage_times=False, **SIR_OPTIONS)
start = time.perf_counter()
for s in range(50):
    r = run_filter(
        model, y, n, "systematic", seed=s, backend="cuda", stage_times=False, **SIR_OPTIONS
    )
print(
    f"per call {1e3 * (time.perf_counter() - start) / 50:.3f} ms, run's wall "
    f"{1e3 * r.wall_seconds:.3f} ms, kernel {1e3 * r.total_seconds:.3f} ms"
)
print_profile(
    lambda s: run_filter(
        model, y, n, "systematic", seed=s, backend="cuda", stage_times=False, **SIR_OPTIONS
    ),
    50,
    18,
)
