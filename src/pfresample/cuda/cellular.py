"""Launcher of cellular resampling (Gelencsér-Horváth et al. 2013, ``cellular.cu``)."""

from __future__ import annotations

import numpy as np

from .geometry import CELLULAR_THREADS, CELLULAR_TILE_MAX, blocks
from .kernels import flag, kernel
from .workspace import Call


def cellular(call: Call, *, radius: int) -> None:
    """Cellular resampling with neighbourhood radius ``radius``: a block a
    tile of CELLULAR_THREADS particles, grid (tiles, replicas). The weights
    are summed times ``ws.scale`` (``sums.stats_scale``, set by the call's
    check), as the CPU reference scales them."""
    replicas = call.lanes // call.n
    tiled = CELLULAR_THREADS + radius <= CELLULAR_TILE_MAX
    shared = (CELLULAR_THREADS + radius) * 8 if tiled else 0
    args = (call.w, np.uint32(call.n), call.keys, np.int32(call.n_keys), call.k0, call.k1)
    args += (np.uint32(radius), np.float64(call.ws.scale), call.out)
    name = f"cellular<{call.ctype},{flag(tiled)}>"
    grid = (blocks(call.n, CELLULAR_THREADS), replicas)
    kernel("cellular.cu", name)(grid, (CELLULAR_THREADS,), args, shared_mem=shared)
