"""Rejection resampling (Murray et al.; thesis Algorithm 3.4).

Each particle starts at itself (j = i) and accepts j when ``u <= w[j] / w_max``;
otherwise it draws a new j uniformly and a new u, until one is accepted.
Draw layout on the lane's particle stream: u of the first test at counter 0,
then for attempt k = 1, 2, ...: the candidate at counter 2k-1, its u at 2k.
"""

from __future__ import annotations

import numpy as np

from ..rng import DOMAIN_PARTICLE, philox_block, uniform_accept, uniform_int
from .lanes import map_chunks


def _attempt_words(key, streams, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The draws at counters 2k-1 (candidate) and 2k (its u); they share a
    Philox block when k is odd."""
    first = philox_block(key, streams, (2 * k - 1) >> 2, DOMAIN_PARTICLE)
    second = first if k % 2 else philox_block(key, streams, (2 * k) >> 2, DOMAIN_PARTICLE)
    return first[(2 * k - 1) & 3], second[(2 * k) & 3]


def rejection(w: np.ndarray, keys, **_) -> np.ndarray:
    """Ancestors (K x N, int32) of ``K = len(keys[0])`` Rejection runs."""
    n = w.size
    w_max = w.max()

    def kernel(chunk):
        j = chunk.particle.copy()
        u = uniform_accept(chunk.particle_stream().word(0))
        active = np.flatnonzero(u > w[j] / w_max)  # lanes still searching
        k = 1
        while active.size:
            key = tuple(x if np.ndim(x) == 0 else x[active] for x in chunk.key)
            streams = chunk.particle[active]
            j_word, u_word = _attempt_words(key, streams, k)
            cand = uniform_int(j_word, n).astype(np.int64)
            u = uniform_accept(u_word)
            j[active] = cand
            active = active[u > w[cand] / w_max]
            k += 1
        return j

    return map_chunks(n, keys, kernel)
