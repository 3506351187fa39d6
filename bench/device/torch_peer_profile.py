#!/usr/bin/env python3
"""Where the PyTorch peer of bench/gpu_filter_peers.py spends a run (eager,
growth model, T = 100) at each N given: torch.profiler's CUDA kernel times,
the top entries, after two untimed runs. A probe of the peer, not a
benchmark.

    python bench/device/torch_peer_profile.py 4194304
"""

import sys
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_filter_peers import torch_filter  # noqa: E402

from pfresample.models import GrowthModel  # noqa: E402

model = GrowthModel()
_, y_host = model.simulate(100, np.random.default_rng(1))
y = torch.tensor(y_host, dtype=torch.float32, device="cuda")
for n in [int(a) for a in sys.argv[1:]] or [2**22]:
    for _ in range(2):
        torch_filter(y, n, model).cpu()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch_filter(y, n, model).cpu()
    print(f"== N = {n}")
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=12)
    print(table)
