#!/usr/bin/env python3
"""Whether PyTorch and JAX in the same process slow our filter's host path:
run_sir's median call (growth model, Systematic, T = 100, N = 2^14 unless
given, 200 calls) alone, after PyTorch has run a filter on the GPU, and
after JAX has too (bench/gpu_filter_peers.py runs all three in one process)."""

import os
import sys
from pathlib import Path

from _timing import growth_inputs, host_share

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2**14
model, y = growth_inputs()


def ours(label: str) -> None:
    call, k = host_share(model, y, n)
    host = call - k
    print(f"{label:>20}: call {1e3 * call:.3f}, kernel {1e3 * k:.3f}, host {1e3 * host:.3f} ms")


ours("alone")
from gpu_filter_peers import jax_runs, torch_runs  # noqa: E402 -- after the first timing

torch_runs(y, n, model, 3, 1, graph=True)
ours("after torch")
jax_runs(y, n, model, 3, 1)
ours("after torch and JAX")
