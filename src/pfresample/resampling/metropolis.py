"""Metropolis resampling and its memory-coalescing variants.

* Metropolis (Murray et al.; thesis Algorithm 3.3)
* Metropolis-C1 (thesis Algorithm 5.1): one s-segment per warp for the whole loop
* Metropolis-C2 (thesis Algorithm 5.2): a new s-segment per warp at every iteration
* Megopolis (Chesser, Nguyen and Ranasinghe 2021, "The Megopolis Resampler:
  Memory Coalesced Resampling on GPUs", Digital Signal Processing; arXiv
  2109.13504): one offset per iteration shared by every particle, so that
  consecutive particles read consecutive candidates

Draw layout, iteration m = 0 ... B-1: the lane's particle stream gives the
acceptance uniform u at counter 2m and the candidate offset at counter 2m+1;
C1 draws its s-segment from the warp stream at counter 0, C2 at counter m.
Megopolis: u at counter m of the particle stream, and the iteration's offset
o_m = uniform_int(draw, N) at counter m of the call's global stream
(DOMAIN_GLOBAL, stream 0).
"""

from __future__ import annotations

import numpy as np

from ..constants import CandidateScope
from ..rng import DOMAIN_GLOBAL, uniform_accept, uniform_int
from .lanes import Candidates, Stream, map_chunks


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


def megopolis(w, keys, *, B, per_segment, segments):
    """Megopolis resampling (Chesser et al. 2021, arXiv 2109.13504): particle i
    starts at t = i and at iteration m takes candidate j = (i + o_m) mod N,
    with o_m uniform on [0, N) and the same for every particle of a call,
    moving when ``u <= w[j] / w[t]`` as in Metropolis. For one particle the
    candidates are i.i.d. uniform, as Metropolis's, so its ancestor has
    Metropolis's distribution (``expectation.metropolis``); particles'
    chains are correlated instead. ``per_segment`` and ``segments`` are not
    used (Megopolis has no s-segments; the family's launchers take them).
    """
    n = w.size

    def kernel(chunk):
        own = chunk.particle_stream()
        first = chunk.replica[0]
        replicas = np.arange(first, chunk.replica[-1] + 1)
        # One global stream per replica, read by each of its lanes.
        key = (chunk.keys[0][replicas], chunk.keys[1][replicas])
        shared = Stream(
            key, np.zeros(replicas.size, np.uint64), DOMAIN_GLOBAL, chunk.replica - first
        )
        i = chunk.particle
        t = i.copy()
        wt = w.take(t)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for m in range(B):
                u = uniform_accept(own.word(m))
                j = i + uniform_int(shared.word(m), n).astype(np.int64)
                j -= n * (j >= n)
                wj = w.take(j)
                move = u <= wj / wt
                t += (j - t) * move
                wt = np.where(move, wj, wt)
        return t

    return map_chunks(n, keys, kernel)
