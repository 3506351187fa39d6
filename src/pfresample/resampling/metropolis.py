"""Metropolis resampling and its memory-coalescing variants.

* Metropolis (Murray et al.; thesis Algorithm 3.3)
* Metropolis-C1 (thesis Algorithm 5.1): one s-segment per warp for the whole loop
* Metropolis-C2 (thesis Algorithm 5.2): a new s-segment per warp at every iteration
* Megopolis (Chesser, Nguyen and Ranasinghe 2021, "The Megopolis Resampler:
  Memory Coalesced Resampling on GPUs", Digital Signal Processing; arXiv
  2109.13504): one offset per iteration shared by every particle, so that
  consecutive particles read consecutive candidates

Draw layout, iteration m = 0 ... B-1, in the lane's particle stream:

* packed, where the candidate offset's range R (N, or the s-segment's DC) is
  a power of two of at most 256 (``Candidates.packed``; the thesis's
  32-weight s-segments are): the word at counter m gives the acceptance
  uniform u (its high 23 bits, ``uniform_float23``) and the offset (its low
  log2 R bits); one Philox block serves four iterations;
* otherwise u at counter 2m and the offset at counter 2m+1
  (``uniform_int``); one block serves two.

C1 draws its s-segment from the warp stream at counter 0, C2 at counter m.
Megopolis: u at counter m of the particle stream, and the iteration's offset
o_m = uniform_int(draw, N) at counter m of the call's global stream
(DOMAIN_GLOBAL, stream 0).

Every method of the family moves to candidate j when ``accepts(u, w[j],
w[t])``: u < w[j] / w[t] tested as fl(u * w[t]) < w[j] (see there), on
weights scaled by a power of two where their maximum is tiny
(:func:`product_ready`).
"""

from __future__ import annotations

import numpy as np

from ..constants import CandidateScope
from ..rng import DOMAIN_GLOBAL, uniform_float23, uniform_int
from ..sums import ratio_scale
from .lanes import Candidates, Stream, map_chunks


def accepts(u_draw: np.ndarray, wj: np.ndarray, wt: np.ndarray) -> np.ndarray:
    """Whether ``u < wj / wt``, in the weights' precision, as the kernels test
    it (metropolis.cu, metropolis_accepts): u = ``uniform_float23`` in [0, 1),
    tested as ``fl(u * wt) < wj``. The product rounds once, as the ratio
    would, and spares the GPU an IEEE division per iteration. A zero weight
    is never a move's target (0 < 0 fails) and a zero ``wt`` moves to any
    positive one. The weights come scaled by ``sums.ratio_scale``
    (:func:`product_ready`), so that no product falls to the subnormal range."""
    return uniform_float23(u_draw).astype(wt.dtype) * wt < wj


def product_ready(w: np.ndarray) -> np.ndarray:
    """``w`` times ``sums.ratio_scale`` of its maximum (the same array when
    that is 1; the device's twin is ``cuda.iterative._product_ready``). The
    scaling is exact, so both backends see the same weights."""
    scale = ratio_scale(float(w.max()), w.dtype)
    return w if scale == 1.0 else w * w.dtype.type(scale)


def metropolis_family(
    w: np.ndarray, keys, *, B: int, scope: str, per_segment: int, segments: int
) -> np.ndarray:
    """Ancestors (K x N, int32) of ``K = len(keys[0])`` Metropolis runs.

    A candidate j replaces the current ancestor t when ``accepts(u, w[j],
    w[t])``; the draws are packed or not as the module docstring says.
    """

    w = product_ready(w)

    def kernel(chunk):
        own = chunk.particle_stream()
        candidates = Candidates(chunk, scope, per_segment, segments)
        t = chunk.particle.copy()
        wt = w.take(t)
        for m in range(B):
            if candidates.packed:
                u = own.word(m)
                j = candidates.pick_packed(m, u)
            else:
                u, j = own.word(2 * m), candidates.pick(m, own.word(2 * m + 1))
            wj = w.take(j)
            move = accepts(u, wj, wt)
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
    moving when ``accepts(u, w[j], w[t])`` as in Metropolis. For one particle the
    candidates are i.i.d. uniform, as Metropolis's, so its ancestor has
    Metropolis's distribution (``expectation.metropolis``); particles'
    chains are correlated instead. ``per_segment`` and ``segments`` are not
    used (Megopolis has no s-segments; the family's launchers take them).
    """
    n = w.size
    w = product_ready(w)

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
        for m in range(B):
            u = own.word(m)
            j = i + uniform_int(shared.word(m), n).astype(np.int64)
            j -= n * (j >= n)
            wj = w.take(j)
            move = accepts(u, wj, wt)
            t += (j - t) * move
            wt = np.where(move, wj, wt)
        return t

    return map_chunks(n, keys, kernel)
