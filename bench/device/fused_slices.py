#!/usr/bin/env python3
"""The fused run's phase-4 slice size against N (growth model, Systematic,
T = 100, the default grid): for each N given and each slice size, the median
over 15 runs of the kernel's clock, each run checked against the first size's
estimates bit for bit. This is what ``geometry.fused_slice_items`` is chosen
from; sizes beyond its two are compiled here only.

    python bench/device/fused_slices.py 262144 1048576
"""

import statistics
import sys

import numpy as np

from pfresample.cuda import geometry, kernels
from pfresample.filters import sir_fused
from pfresample.models import GrowthModel

SIZES = (4, 8, 16)
kernels._TEMPLATES["fused.cu"] = [sir_fused.function(k) for k in SIZES]
model = GrowthModel()
_, y = model.simulate(100, np.random.default_rng(1))
for n in [int(a) for a in sys.argv[1:]] or [2**18, 2**20]:
    reference = None
    for items in SIZES:
        run = sir_fused.FusedRun(model, n, 100)
        run.function = sir_fused.function(items)
        out = [run.run(y, s) for s in range(16)][1:]
        if reference is None:
            reference = [r.estimates for r in out]
        assert all(np.array_equal(r.estimates, e) for r, e in zip(out, reference, strict=True))
        ms = statistics.median(1e3 * r.total_seconds for r in out)
        phases = "/".join(
            f"{np.median([r.stage_totals[s] for r in out]) / 100 * 1e6:.2f}" for s in range(4)
        )
        default = geometry.fused_slice_items(n, run.blocks)
        tag = " (default)" if items == default else ""
        print(f"N={n:>9,} blocks {run.blocks} slices of {items:>2}{tag:<10}: {ms:.3f} ms  {phases}")
