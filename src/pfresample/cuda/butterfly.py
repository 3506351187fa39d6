"""Launchers of butterfly resampling (``butterfly.cu``; Güldaş 2015, Fig 3.6
and §3.2): per stage, the segment sums of the compact array, then every
(replica, slot) draws its block member and composes its ancestor; stage 1
in one kernel where r_1 fits a block."""

from __future__ import annotations

import numpy as np

from ..resampling.butterfly import DRAWS
from ..sums import frexp_scale
from .geometry import (
    BUTTERFLY_BLOCK,
    BUTTERFLY_FUSED_MIN,
    BUTTERFLY_SEGMENT_MAX,
    BUTTERFLY_SUMS_WARPS,
    MAX_GRID_Y,
    blocks,
)
from .kernels import CTYPES, kernel
from .workspace import Call


def _scale(call: Call) -> float:
    """Contract step 1's 2^-e from the largest weight (read on the host by
    the call's check; taken from the device when not known)."""
    top = call.ws.max if call.ws.max is not None else float(call.w.max())
    return frexp_scale(top)


def _log2_pair(r: int, stride: int) -> tuple[np.int32, np.int32]:
    """stage_draws' (log_r, log_stride): log2 of both where both are powers of
    two (shifts instead of divisions), (-1, -1) otherwise."""
    if r & (r - 1) or stride & (stride - 1):
        return np.int32(-1), np.int32(-1)
    return np.int32(r.bit_length() - 1), np.int32(stride.bit_length() - 1)


def butterfly(call: Call, *, draw: str, radix, precision=None) -> None:
    """The stages of ``radix`` on ``call.w`` into ``call.out`` (ancestors of
    every replica), sums in ``precision`` (the weights' own when None)."""
    import cupy

    n, replicas = call.n, call.out.shape[0]
    dtype = np.dtype(precision) if precision is not None else call.w.dtype
    if not radix:  # N = 1
        call.out[...] = 0
        return
    buffers = call.ws.scan(dtype)
    spare = cupy.empty_like(call.out) if len(radix) > 1 else None
    draws_name = f"stage_draws<{CTYPES[dtype]},{DRAWS.index(draw)}>"
    source, prev_r, stride, prev = call.w, 0, 1, None
    # The stages alternate between out and spare so that the last writes out;
    # their sums between the N values of stage 1 and the N / r_1 of stage 2.
    targets = [call.out if (len(radix) - k) % 2 == 1 else spare for k in range(len(radix))]
    for k, r in enumerate(radix):
        cum = buffers.values() if k % 2 == 0 else buffers.second_values()
        out = targets[k]
        if k == 0 and BUTTERFLY_FUSED_MIN <= r <= BUTTERFLY_SEGMENT_MAX:
            # Stage 1 in one kernel, a block a segment; cum gets the segment
            # totals c_1, which stage 2 sums as compact values (prev_r 0, scale 1).
            fused = f"first_stage<{CTYPES[call.w.dtype]},{CTYPES[dtype]},{DRAWS.index(draw)}>"
            for first in range(0, replicas, MAX_GRID_Y):
                kernel("butterfly.cu", fused)(
                    (n // r, min(MAX_GRID_Y, replicas - first)),
                    (r,),
                    (call.w, np.float64(_scale(call)), np.uint32(n), np.int32(r),
                     np.uint32(first), call.keys, np.int32(call.n_keys), call.k0, call.k1,
                     cum, out),
                )  # fmt: skip
            source, prev_r, prev, stride = cum, 0, out, r
            continue
        segments = n // (stride * r)
        kernel("butterfly.cu", f"stage_sums<{CTYPES[source.dtype]},{CTYPES[dtype]}>")(
            (blocks(segments, BUTTERFLY_SUMS_WARPS),),
            (32 * BUTTERFLY_SUMS_WARPS,),
            (source, np.int32(prev_r), np.float64(_scale(call) if k == 0 else 1.0),
             np.int64(segments), np.int32(r), cum),
        )  # fmt: skip
        for first in range(0, replicas, MAX_GRID_Y):
            kernel("butterfly.cu", draws_name)(
                (blocks(n, BUTTERFLY_BLOCK), min(MAX_GRID_Y, replicas - first)),
                (BUTTERFLY_BLOCK,),
                (cum, np.uint32(n), np.int32(r), np.uint32(stride), *_log2_pair(r, stride),
                 np.int32(k),
                 np.uint32(first), call.keys, np.int32(call.n_keys), call.k0, call.k1,
                 np.uint64(0) if prev is None else prev, out),
            )  # fmt: skip
        source, prev_r, prev = cum, r, out
        stride *= r


def butterfly_multinomial(call: Call, *, radix, precision=None) -> None:
    butterfly(call, draw="multinomial", radix=radix, precision=precision)


def butterfly_stratified(call: Call, *, radix, precision=None) -> None:
    butterfly(call, draw="stratified", radix=radix, precision=precision)


def butterfly_systematic(call: Call, *, radix, precision=None) -> None:
    butterfly(call, draw="systematic", radix=radix, precision=precision)
