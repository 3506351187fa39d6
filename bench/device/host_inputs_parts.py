#!/usr/bin/env python3
"""The parts of common.graph_inputs (T = 100) on this host, each the best of
5 x 1000 calls in µs, with NumPy's version and the CPU model: the host's key
derivation differs several-fold between machines."""

import platform
import timeit

import numpy as np

from pfresample.filters.common import derive_seeds, graph_inputs
from pfresample.rng import seed_keys

y = np.zeros(100)
ss = np.random.SeedSequence(7)
noise, draws = ss.spawn(2)
rng = np.random.default_rng(noise)
parts = {
    "graph_inputs": lambda: graph_inputs(y, 7, 100),
    "derive_seeds": lambda: derive_seeds(7, 100),
    "SeedSequence": lambda: np.random.SeedSequence(7),
    "spawn(2)": lambda: ss.spawn(2),
    "default_rng(child)": lambda: np.random.default_rng(noise),
    "generate_state(100)": lambda: draws.generate_state(100, np.uint64),
    "integers(2)": lambda: rng.integers(0, 2**32, size=2, dtype=np.uint64),
    "seed_keys(100)": lambda: seed_keys(draws.generate_state(100, np.uint64)),
}
print(f"numpy {np.__version__}, python {platform.python_version()}, {platform.processor()}")
for name, f in parts.items():
    best = min(timeit.repeat(f, number=1000, repeat=5)) / 1000
    print(f"{name:>22}: {1e6 * best:8.1f} µs")
