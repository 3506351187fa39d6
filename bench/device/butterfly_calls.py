#!/usr/bin/env python3
"""Two butterfly-multinomial calls at N = 2^24 (float32, default radix): the
kernels an ncu run profiles, e.g.
    ncu -k regex:stage_ --launch-skip 6 --launch-count 6 python3 bench/device/butterfly_calls.py
"""

import cupy
import numpy as np

import pfresample as pr

x = np.random.default_rng(0).uniform(-10, 10, 1 << 24)
w = cupy.asarray(np.exp(-(x**2) / 200).astype(np.float32))
for seed in range(2):
    pr.resample(w, "butterfly-multinomial", seed=seed, backend="cuda")
cupy.cuda.Device().synchronize()
