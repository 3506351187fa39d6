"""Pieces the host-share probes of bench/device share (they import it as a
sibling: Python puts a script's own folder on sys.path)."""

from __future__ import annotations

import cProfile
import pstats
import statistics
import time

import numpy as np


def growth_inputs(steps: int = 100):
    """The growth model and the measurements the probes filter."""
    from pfresample.models import GrowthModel

    model = GrowthModel()
    _, y = model.simulate(steps, np.random.default_rng(1))
    return model, y


def host_share(model, y, n: int, calls: int = 200) -> tuple[float, float]:
    """Medians (seconds) of a fused run_sir call (Systematic, no stage
    marks) and of its kernel's own clock, over ``calls`` calls after 3."""
    from pfresample.filters import SIR_OPTIONS, run_filter

    def call(seed):
        return run_filter(
            model, y, n, "systematic", seed=seed, backend="cuda", stage_times=False, **SIR_OPTIONS
        )

    for s in range(3):
        call(s)
    walls, kernels = [], []
    for s in range(calls):
        start = time.perf_counter()
        r = call(s)
        walls.append(time.perf_counter() - start)
        kernels.append(r.total_seconds)
    return statistics.median(walls), statistics.median(kernels)


def print_profile(run, calls: int, top: int) -> None:
    """cProfile over ``run(seed)`` for seeds 0 .. calls-1: the ``top``
    entries by own time."""
    prof = cProfile.Profile()
    prof.enable()
    for s in range(calls):
        run(s)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)
