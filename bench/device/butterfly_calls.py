#!/usr/bin/env python3
"""Two butterfly-multinomial calls (float32, default radix) at N = 2^LOG2N
(argument, default 24): the kernels an ncu run profiles, e.g.
    ncu -k regex:stage_ --launch-skip 6 --launch-count 6 python3 bench/device/butterfly_calls.py 22
"""

import sys

import cupy
import numpy as np

import pfresample as pr

log2n = int(sys.argv[1]) if len(sys.argv) > 1 else 24
x = np.random.default_rng(0).uniform(-10, 10, 1 << log2n)
w = cupy.asarray(np.exp(-(x**2) / 200).astype(np.float32))
for seed in range(2):
    pr.resample(w, "butterfly-multinomial", seed=seed, backend="cuda")
cupy.cuda.Device().synchronize()
