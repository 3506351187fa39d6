"""Rejection resampling (Murray et al.; thesis Algorithm 3.4).

Each particle starts at itself (j = i) and accepts j when ``u <= w[j] / w_max``;
otherwise it draws a new j uniformly and a new u, until one is accepted.
Draw layout on the lane's particle stream: u of the first test at counter 0,
then for attempt k = 1, 2, ...: the candidate at counter 2k-1, its u at 2k.
"""

from __future__ import annotations

import numpy as np

from ..rng import DOMAIN_PARTICLE, philox4x32_10, uniform_accept, uniform_int
from .lanes import map_chunks

# Attempts a lane may take in one vectorised pass once few lanes still search:
# the draws of attempt k do not depend on the others, so a pass evaluates the
# next ``batch`` attempts of every searching lane and keeps each lane's first
# acceptance (the same one the attempt-by-attempt loop finds). Heavy-tailed
# weights (radar) leave a few lanes searching for hundreds of attempts; one
# pass per attempt then cost most of a filter run.
MAX_BATCH = 256
PASS_DRAWS = 1 << 14  # about this many attempts evaluated in one pass


def _attempt_words(key, streams, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The candidate and u draws of attempts ``first .. first + count - 1``
    (counters 2k-1 and 2k) of each stream, as ``(count, lanes)`` arrays."""
    lo, hi = 2 * first - 1, 2 * (first + count - 1)
    blocks = np.arange(lo >> 2, (hi >> 2) + 1, dtype=np.uint64)[:, None]
    words = philox4x32_10(
        (blocks & np.uint64(0xFFFFFFFF), blocks >> np.uint64(32), streams, DOMAIN_PARTICLE), key
    )
    words = np.stack(words)  # (4, blocks, lanes)
    counters = np.arange(lo, hi + 1)
    picked = words[counters & 3, (counters >> 2) - (lo >> 2)]  # (2 count, lanes)
    return picked[0::2], picked[1::2]


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
            batch = int(min(MAX_BATCH, max(1, PASS_DRAWS // active.size)))
            key = tuple(x if np.ndim(x) == 0 else x[active] for x in chunk.key)
            j_words, u_words = _attempt_words(key, chunk.particle[active], k, batch)
            cand = uniform_int(j_words, n).astype(np.int64)
            accept = uniform_accept(u_words) <= w[cand] / w_max
            first = accept.argmax(axis=0)  # the first accepted attempt of each lane
            done = accept[first, np.arange(active.size)]
            j[active[done]] = cand[first[done], np.flatnonzero(done)]
            active = active[~done]
            k += batch
        return j

    return map_chunks(n, keys, kernel)
