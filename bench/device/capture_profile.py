#!/usr/bin/env python3
"""What a captured step of a user's model costs, kernel by kernel: the
linear-Gaussian model through ``run_filter(..., backend="cuda",
capture=True)`` (``filters/capture.py``), Systematic, T = 3 steps, captured
on a first run; the profiler's range then holds one replay, so that
``ncu --profile-from-start off`` (``bench/device/capture_profile.sh``) lists
every kernel node of the graph with its device time.

    ncu --profile-from-start off --csv --metrics gpu__time_duration.sum \
        python3 bench/device/capture_profile.py --n 2^20
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cupy

from pfresample.filters import run_filter
from pfresample.models import LinearGaussianModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import parse_size  # noqa: E402 -- the bench folder's helpers


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=parse_size, default=2**20)
    p.add_argument("--steps", type=int, default=3)
    args = p.parse_args(argv)
    model = LinearGaussianModel()
    _, y = model.simulate(args.steps, seed=3)
    for seed in (0, 1):  # the capture, then a replay outside the profiler's range
        run_filter(model, y, args.n, "systematic", seed=seed, backend="cuda", capture=True)
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.profiler.start()
    run_filter(model, y, args.n, "systematic", seed=2, backend="cuda", capture=True)
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.profiler.stop()


if __name__ == "__main__":
    main()
