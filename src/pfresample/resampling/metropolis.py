"""Metropolis resampling and its memory-coalescing variants.

* Metropolis (Murray et al.; thesis Algorithm 3.3)
* Metropolis-C1 (thesis Algorithm 5.1): one s-segment per warp for the whole loop
* Metropolis-C2 (thesis Algorithm 5.2): a new s-segment per warp at every iteration

Draw layout, iteration m = 0 ... B-1: the lane's particle stream gives the
acceptance uniform u at counter 2m and the candidate offset at counter 2m+1;
C1 draws its s-segment from the warp stream at counter 0, C2 at counter m.
"""

from __future__ import annotations

import numpy as np

from ..constants import CandidateScope
from ..rng import uniform_accept
from .lanes import Candidates, map_chunks


def metropolis_family(
    w: np.ndarray, keys, *, B: int, scope: str, per_segment: int, segments: int
) -> np.ndarray:
    """Ancestors (K x N, int32) of ``K = len(keys[0])`` Metropolis runs.

    A candidate j replaces the current ancestor t when ``u <= w[j] / w[t]``
    (the ratio in the weights' precision, IEEE division as on the GPU).
    """

    def kernel(chunk):
        own = chunk.particle_stream()
        candidates = Candidates(chunk, scope, per_segment, segments)
        t = chunk.particle.copy()
        wt = w.take(t)
        # w[t] = 0 or subnormal gives inf or NaN, as on the GPU. Set here, not
        # around map_chunks: errstate does not reach the pool's worker threads.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for m in range(B):
                u = uniform_accept(own.word(2 * m))
                j = candidates.pick(m, own.word(2 * m + 1))
                wj = w.take(j)
                move = u <= wj / wt
                # t = j where moved; branch-free arithmetic beats a masked copy
                # (measured 2-3x) because the mask is random.
                t += (j - t) * move
                wt = np.where(move, wj, wt)
        return t

    return map_chunks(w.size, keys, kernel)


def metropolis(w, keys, *, B, per_segment, segments):
    """Metropolis resampling (Algorithm 3.3)."""
    return metropolis_family(
        w, keys, B=B, scope=CandidateScope.ARRAY, per_segment=per_segment, segments=segments
    )


def metropolis_c1(w, keys, *, B, per_segment, segments):
    """Metropolis-C1 resampling (Algorithm 5.1)."""
    return metropolis_family(
        w, keys, B=B, scope=CandidateScope.FIXED_SEGMENT, per_segment=per_segment, segments=segments
    )


def metropolis_c2(w, keys, *, B, per_segment, segments):
    """Metropolis-C2 resampling (Algorithm 5.2)."""
    return metropolis_family(
        w,
        keys,
        B=B,
        scope=CandidateScope.SEGMENT_PER_ITERATION,
        per_segment=per_segment,
        segments=segments,
    )
