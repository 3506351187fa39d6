"""Launcher of Rejection (Algorithm 3.4, ``rejection.cu``)."""

from __future__ import annotations

import numpy as np

from ..constants import WARP_SIZE
from . import geometry
from .geometry import block_size, blocks, resident_threads
from .kernels import kernel


def rejection(call):
    """Rejection (Algorithm 3.4); w_max from the statistics kernel. With few
    lanes a group of threads shares each lane; with many, each warp works
    through a chunk of lanes, a thread starting the next as soon as its lane
    has accepted (rejection.cu, :func:`queue_chunk`)."""
    block = block_size(call.n)
    grouped = f"rejection_grouped<{call.ctype}>"
    group = geometry.lane_group(call.lanes, block, resident_threads("rejection.cu", grouped, block))
    if group > 1:
        args = (*call.lane_args(), call.ws.stats, np.uint32(group), call.out)
        kernel("rejection.cu", grouped)((blocks(call.lanes * group, block),), (block,), args)
        return
    queued = f"rejection_queued<{call.ctype}>"
    chunk = geometry.queue_chunk(call.lanes, block, resident_threads("rejection.cu", queued, block))
    args = (*call.lane_args(), call.ws.stats, np.uint32(chunk), call.out)
    warps = -(-call.lanes // chunk)
    grid = blocks(warps, -(-block // WARP_SIZE))  # a block holds ceil(block / 32) warps
    kernel("rejection.cu", queued)((grid,), (block,), args)
