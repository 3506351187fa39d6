"""Launchers of butterfly resampling (``butterfly.cu``; Güldaş 2015, Fig 3.6
and §3.2): per stage, the segment sums of the compact array, then every
(replica, slot) draws its block member and composes its ancestor; stage 1
in one kernel where r_1 fits a block. The adaptive butterfly (Fig 3.7)
adds :class:`Gates`: the device decides before each stage whether it runs,
so that a filter needs no host round trip per step."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..contracts import BUTTERFLY_DRAWS as DRAWS
from ..sums import frexp_scale
from .geometry import (
    BUTTERFLY_BLOCK,
    BUTTERFLY_FUSED_MIN,
    BUTTERFLY_SEGMENT_MAX,
    BUTTERFLY_SUMS_WARPS,
    MAX_GRID_Y,
    REDUCE_THREADS,
    blocks,
    reduction_parts,
)
from .kernels import CTYPES, NULL, kernel
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


def ess_gate(
    source,
    prev_r: int,
    count: int,
    span: int,
    precision,
    parts,
    ticket,
    *,
    threshold: float = 0.0,
    go_prev=NULL,
    go=NULL,
    ess=NULL,
    total=NULL,
) -> None:
    """``butterfly.cu``'s ess_gate on the compact array (``source``,
    ``prev_r``) of ``count`` values that stand for ``span`` slots each: the
    ESS into ``ess`` and the sum into ``total`` (float64 slots, or NULL), and
    ``go`` set when ``go_prev`` is (or is NULL) and the ESS is below
    ``threshold``. ``parts``: 2 reduction_parts(count) float64 values;
    ``ticket``: a zeroed uint32."""
    name = f"ess_gate<{CTYPES[source.dtype]},{CTYPES[np.dtype(precision)]}>"
    kernel("butterfly.cu", name)(
        (reduction_parts(count),),
        (REDUCE_THREADS,),
        (source, np.int32(prev_r), np.int64(count), np.float64(span), np.float64(threshold),
         go_prev, go, ess, total, parts, ticket),
    )  # fmt: skip


@dataclass
class Gates:
    """The adaptive butterfly's decisions on the device (Fig 3.7): before
    stage k, ``butterfly.cu``'s ess_gate sets ``go[k]`` to 1 when stage k - 1
    ran and the ESS of the current stage weights is below ``threshold``
    (tau N), and the stage's kernels read it. ``ess`` (a float64 slot or
    None) gets the ESS of the input weights, ``total`` their sum; ``w_out``
    and ``log_w`` (float32, N, or None) the output weights of the last stage
    run, linear and as logarithms, in the scale of the stage sums (each
    slot: its segment's sum; untouched when no stage runs). ``parts`` and
    ``ticket`` are the float64 sums' scratch (2 reduction_parts(N) values,
    one zeroed uint32)."""

    go: object
    threshold: float
    parts: object
    ticket: object
    ess: object = None
    total: object = None
    w_out: object = None
    log_w: object = None

    def gate(self, k: int, source, prev_r: int, span: int, n: int, precision) -> None:
        """go[k] from the compact array (``source``, ``prev_r``) of n / span values."""
        first = k == 0
        ess_gate(
            source, prev_r, n // span, span, precision, self.parts, self.ticket,
            threshold=self.threshold, go_prev=NULL if first else self.go[k - 1 : k],
            go=self.go[k : k + 1],
            ess=self.ess if first and self.ess is not None else NULL,
            total=self.total if first and self.total is not None else NULL,
        )  # fmt: skip

    def weights(self, k: int, source, prev_r: int, span: int, n: int) -> None:
        """The output weights, if stage k is the last that ran."""
        if self.w_out is None:
            return
        last = k == self.go.size - 1
        kernel("butterfly.cu", f"stage_weights<{CTYPES[source.dtype]}>")(
            (blocks(n, BUTTERFLY_BLOCK),),
            (BUTTERFLY_BLOCK,),
            (source, np.int32(prev_r), np.uint32(n), np.uint32(span), self.go[k : k + 1],
             NULL if last else self.go[k + 1 : k + 2], self.w_out, self.log_w),
        )  # fmt: skip


def butterfly(call: Call, *, draw: str, radix, precision=None, gates: Gates | None = None):
    """The stages of ``radix`` on ``call.w`` into ``call.out`` (ancestors of
    every replica), sums in ``precision`` (the weights' own when None); with
    ``gates``, each stage only if the device decides so (one gate per
    stage: ``gates.go`` has ``len(radix)`` entries). Returns the compact
    sums after each stage, ``(array, prev_r)`` as ``compact_value`` reads
    them (stale after a stage that did not run; none for N = 1)."""
    n, replicas = call.n, call.out.shape[0]
    dtype = np.dtype(precision) if precision is not None else call.w.dtype
    if not radix:  # N = 1
        call.out[...] = 0
        return []
    buffers = call.ws.scan(dtype)
    spare = call.ws.spare(call.out.shape) if len(radix) > 1 else None
    draws_name = f"stage_draws<{CTYPES[dtype]},{DRAWS.index(draw)}>"
    source, prev_r, stride, prev = call.w, 0, 1, None
    compact = []
    # The stages alternate between out and spare so that the last writes out;
    # their sums between the N values of stage 1 and the N / r_1 of stage 2.
    targets = [call.out if (len(radix) - k) % 2 == 1 else spare for k in range(len(radix))]
    for k, r in enumerate(radix):
        cum = buffers.values() if k % 2 == 0 else buffers.second_values()
        out = targets[k]
        go = NULL
        if gates is not None:
            gates.gate(k, source, prev_r, stride, n, dtype)
            if k > 0:
                gates.weights(k - 1, source, prev_r, stride, n)
            go = gates.go[k : k + 1]
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
                     cum, out, go),
                )  # fmt: skip
            source, prev_r, prev, stride = cum, 0, out, r
            compact.append((source, prev_r))
            continue
        segments = n // (stride * r)
        kernel("butterfly.cu", f"stage_sums<{CTYPES[source.dtype]},{CTYPES[dtype]}>")(
            (blocks(segments, BUTTERFLY_SUMS_WARPS),),
            (32 * BUTTERFLY_SUMS_WARPS,),
            (source, np.int32(prev_r), np.float64(_scale(call) if k == 0 else 1.0),
             np.int64(segments), np.int32(r), cum, go),
        )  # fmt: skip
        for first in range(0, replicas, MAX_GRID_Y):
            kernel("butterfly.cu", draws_name)(
                (blocks(n, BUTTERFLY_BLOCK), min(MAX_GRID_Y, replicas - first)),
                (BUTTERFLY_BLOCK,),
                (cum, np.uint32(n), np.int32(r), np.uint32(stride), *_log2_pair(r, stride),
                 np.int32(k),
                 np.uint32(first), call.keys, np.int32(call.n_keys), call.k0, call.k1,
                 NULL if prev is None else prev, out, go,
                 NULL if gates is None else gates.go[0:1]),
            )  # fmt: skip
        source, prev_r, prev = cum, r, out
        stride *= r
        compact.append((source, prev_r))
    if gates is not None:
        gates.weights(len(radix) - 1, source, prev_r, stride, n)
    return compact


def adaptive(call: Call, *, draw: str, radix, tau: float, max_stages=None, precision=None):
    """The adaptive butterfly (Fig 3.7) on the device, one replica or more:
    ``resampling.butterfly.adaptive_butterfly``'s ``(ancestors, weights,
    stages)``, ancestors in ``call.out``, the weights as NumPy. The decisions
    are ess_gate's, on the device; its float64 sums run in another order
    than the reference's sequential ones, so the two can only disagree when
    an ESS is within rounding (about 1e-15 relative) of tau N."""
    import cupy

    n = call.n
    dtype = np.dtype(precision) if precision is not None else call.w.dtype
    radix = tuple(radix[: len(radix) if max_stages is None else max_stages])
    if not radix:  # nothing may run
        stages, span = 0, 1
    else:
        parts = cupy.empty(2 * reduction_parts(n), dtype=np.float64)
        gates = Gates(cupy.zeros(len(radix), dtype=np.int32), tau * n, parts,
                      cupy.zeros(1, dtype=np.uint32))  # fmt: skip
        compact = butterfly(call, draw=draw, radix=radix, precision=dtype, gates=gates)
        stages = int(gates.go.get().sum())
        span = math.prod(radix[:stages])
        if stages:
            array, prev_r = compact[stages - 1]
            count = n // span
            sums = array[:count] if prev_r == 0 else array[prev_r - 1 : count * prev_r : prev_r]
    scale = _scale(call)
    if (
        not stages
    ):  # no kernel wrote ancestors: identity; the input weights as the contract scales them
        call.out[...] = cupy.arange(n, dtype=np.int32)
        sums = (call.w.astype(np.float64) * scale).astype(dtype)
    means = cupy.repeat(sums.astype(np.float64) / (span * scale), span).astype(dtype)
    return call.out, means.get(), stages


def butterfly_multinomial(call: Call, *, radix, precision=None, gates=None):
    return butterfly(call, draw="multinomial", radix=radix, precision=precision, gates=gates)


def butterfly_stratified(call: Call, *, radix, precision=None, gates=None):
    return butterfly(call, draw="stratified", radix=radix, precision=precision, gates=gates)


def butterfly_systematic(call: Call, *, radix, precision=None, gates=None):
    return butterfly(call, draw="systematic", radix=radix, precision=precision, gates=gates)
