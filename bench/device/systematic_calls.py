#!/usr/bin/env python3
"""Four Systematic calls on gamma(1, 2) float32 weights, N = 2^22 or the
first argument: the kernels bench/device/compare_trees.sh and peer_check.sh
profile with ncu."""

import sys

import numpy as np

import pfresample as pr

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 22
w = np.random.default_rng(1).gamma(1.0, 2.0, n).astype(np.float32)
for seed in range(4):
    pr.resample(w, "systematic", seed=seed, backend="cuda")
