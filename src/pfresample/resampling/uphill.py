"""Uphill resampling and its memory-coalescing variants (thesis chapter 6).

* Uphill (Algorithm 6.1): keep the heaviest of the particle itself and B
  uniformly drawn candidates; on ties the one seen first stays.
* Uphill-CA (Algorithm 6.2): candidates from an s-segment the warp draws anew
  at every iteration; same expectation as Uphill (eq. 6.2).
* Uphill-C1 (Algorithm 6.3): candidates from one s-segment per warp for the
  whole loop; expectation eq. 6.3.

Draw layout, iteration m = 0 ... B-1: the candidate offset is the lane's
particle-stream draw at counter m; Uphill-CA draws its s-segment from the warp
stream at counter m, Uphill-C1 at counter 0.
"""

from __future__ import annotations

import numpy as np

from ..constants import CandidateScope
from .lanes import Candidates, map_chunks


def uphill_family(
    w: np.ndarray, keys, *, B: int, scope: str, per_segment: int, segments: int
) -> np.ndarray:
    """Ancestors (K x N, int32) of ``K = len(keys[0])`` Uphill runs."""

    def kernel(chunk):
        own = chunk.particle_stream()
        candidates = Candidates(chunk, scope, per_segment, segments)
        t = chunk.particle.copy()
        wt = w.take(t)
        for m in range(B):
            j = candidates.pick(m, own.word(m))
            wj = w.take(j)
            up = wt < wj
            # Branch-free select (a masked copy is 2-3x slower on a random mask).
            t += (j - t) * up
            np.maximum(wt, wj, out=wt)
        return t

    return map_chunks(w.size, keys, kernel)


def uphill(w, keys, *, B, per_segment, segments):
    """Uphill resampling (Algorithm 6.1)."""
    return uphill_family(
        w, keys, B=B, scope=CandidateScope.ARRAY, per_segment=per_segment, segments=segments
    )


def uphill_ca(w, keys, *, B, per_segment, segments):
    """Uphill-CA resampling (Algorithm 6.2)."""
    return uphill_family(
        w,
        keys,
        B=B,
        scope=CandidateScope.SEGMENT_PER_ITERATION,
        per_segment=per_segment,
        segments=segments,
    )


def uphill_c1(w, keys, *, B, per_segment, segments):
    """Uphill-C1 resampling (Algorithm 6.3)."""
    return uphill_family(
        w, keys, B=B, scope=CandidateScope.FIXED_SEGMENT, per_segment=per_segment, segments=segments
    )
