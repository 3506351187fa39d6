"""Launcher of Rejection (Algorithm 3.4, ``rejection.cu``)."""

from __future__ import annotations

import numpy as np

from ..constants import WARP_SIZE
from . import geometry
from .geometry import block_size, blocks, resident_threads
from .kernels import NULL, kernel


def rejection(call):
    """Rejection (Algorithm 3.4); w_max from the statistics kernel. With few
    lanes a group of threads shares each lane; with many, each warp works
    through a chunk of lanes, a thread starting the next as soon as its lane
    has accepted (rejection.cu, :func:`geometry.queue_chunk`). Where the lanes
    fit the device about once and one or two threads share a lane, a lane
    that has not accepted after about twice the mean number of attempts goes
    to the tail pass, a warp a lane (:func:`geometry.tail_factor`)."""
    block = block_size(call.n)
    grouped = f"rejection_grouped<{call.ctype}>"
    capacity = resident_threads("rejection.cu", grouped, block)
    group = geometry.lane_group(call.lanes, block, capacity)
    factor = geometry.tail_factor(call.lanes, capacity, group)
    queue = NULL
    if factor:
        queue = call.ws.rejection_queue(call.lanes)
        queue[:1].fill(0)  # the count; the first pass appends to it
    tail = (np.float32(factor), queue, call.out)
    if group > 1:
        args = (*call.lane_args(), call.ws.stats, np.uint32(group), *tail)
        kernel("rejection.cu", grouped)((blocks(call.lanes * group, block),), (block,), args)
    else:
        queued = f"rejection_queued<{call.ctype}>"
        chunk = geometry.queue_chunk(
            call.lanes, block, resident_threads("rejection.cu", queued, block)
        )
        args = (*call.lane_args(), call.ws.stats, np.uint32(chunk), *tail)
        warps = -(-call.lanes // chunk)
        grid = blocks(warps, -(-block // WARP_SIZE))  # a block holds ceil(block / 32) warps
        kernel("rejection.cu", queued)((grid,), (block,), args)
    if factor:
        # A warp a queued lane: whole warps a block, so that none straddles two.
        name, tail_block = f"rejection_tail<{call.ctype}>", max(WARP_SIZE, block & -WARP_SIZE)
        warps = resident_threads("rejection.cu", name, tail_block) // WARP_SIZE
        args = (call.w, np.uint32(call.n), call.keys, np.int32(call.n_keys), call.k0, call.k1)
        args += (call.ws.stats, np.uint32(group), *tail)
        kernel("rejection.cu", name)((blocks(warps * WARP_SIZE, tail_block),), (tail_block,), args)
