#!/usr/bin/env python3
"""Four Systematic calls at N = 2^22 on gamma(1, 2) float32 weights: the
kernels bench/device/compare_trees.sh profiles with ncu."""

import numpy as np

import pfresample as pr

w = np.random.default_rng(1).gamma(1.0, 2.0, 1 << 22).astype(np.float32)
for seed in range(4):
    pr.resample(w, "systematic", seed=seed, backend="cuda")
