"""Lanes and draw streams for the CPU reference kernels.

A *lane* is one particle of one replica: a call that draws K offspring
sequences from the same weights (K seeds) has K*N lanes, walked in chunks of
``CPU_CHUNK`` so that NumPy's temporaries stay in cache. Every lane reads its
random numbers from the streams of the Philox contract (``pfresample.rng``):
the particle stream ``(seed, DOMAIN_PARTICLE, i)`` and the warp stream
``(seed, DOMAIN_WARP, i // 32)``. The CUDA kernels address the same draws, so
both backends make the same choices.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..constants import CPU_CHUNK, WARP_SIZE, CandidateScope
from ..rng import DOMAIN_PARTICLE, DOMAIN_WARP, StreamBlocks, uniform_int

# The largest offset range a packed draw serves: the 8 bits below
# uniform_accept's 24 (lanes.cuh repeats it).
PACKED_RANGE = 256


class Stream:
    """Draws ``counter = 0, 1, 2, ...`` of one stream per lane; each Philox
    block (four counters) is evaluated once and kept while it is in use.
    ``gather`` maps lanes to the streams evaluated (one per warp)."""

    def __init__(self, key, streams, domain: int, gather=None):
        self.blocks = StreamBlocks(key, streams, domain)
        self.gather = gather
        self.block = -1
        self.words = None

    def word(self, counter: int) -> np.ndarray:
        block = counter >> 2
        if block != self.block:
            self.block = block
            self.words = self.blocks(block)
        word = self.words[counter & 3]
        return word if self.gather is None else word[self.gather]


class Chunk:
    """Lanes ``start .. stop-1`` of a ``K x n`` call; lane ``f`` is particle
    ``f % n`` of replica ``f // n``."""

    def __init__(self, start: int, stop: int, n: int, keys):
        lane = np.arange(start, stop, dtype=np.int64)
        self.n = n
        self.lanes = slice(start, stop)
        self.replica = lane // n
        self.particle = lane - self.replica * n
        self.keys = keys
        if self.replica[0] == self.replica[-1]:  # one seed: scalar keys are faster
            r = self.replica[0]
            self.key = (keys[0][r], keys[1][r])
        else:
            self.key = (keys[0][self.replica], keys[1][self.replica])

    def particle_stream(self) -> Stream:
        return Stream(self.key, self.particle, DOMAIN_PARTICLE)

    def warp_stream(self) -> Stream:
        """The warp stream of every lane. Consecutive lanes visit consecutive
        (replica, warp) pairs, so Philox runs once per warp, not per lane."""
        warps_per_replica = -(-self.n // WARP_SIZE)
        warp_id = self.replica * warps_per_replica + self.particle // WARP_SIZE
        local = warp_id - warp_id[0]
        unique = warp_id[0] + np.arange(local[-1] + 1)
        replica = unique // warps_per_replica
        key = (self.keys[0][replica], self.keys[1][replica])
        return Stream(key, unique - replica * warps_per_replica, DOMAIN_WARP, gather=local)


def chunks(n: int, keys, chunk: int | None = None):
    """The chunks of a call with ``len(keys[0])`` replicas of ``n`` particles."""
    chunk = chunk or CPU_CHUNK  # read at call time, so tests can shrink it
    total = n * len(keys[0])
    for start in range(0, total, chunk):
        yield Chunk(start, min(start + chunk, total), n, keys)


def cpu_threads() -> int:
    """Threads for the CPU kernels: ``PFRESAMPLE_THREADS`` or the usable cores."""
    value = os.environ.get("PFRESAMPLE_THREADS")
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"PFRESAMPLE_THREADS must be a positive integer, got {value!r}")
        return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def map_chunks(n: int, keys, kernel) -> np.ndarray:
    """Ancestors (K x n, int32): ``kernel(chunk)`` gives the ancestors of each
    chunk's lanes. Chunks are independent and NumPy releases the GIL inside
    its loops, so a thread pool runs them in parallel; the result does not
    depend on the number of threads."""
    out = np.empty(n * len(keys[0]), dtype=np.int32)

    def run(chunk: Chunk) -> None:
        out[chunk.lanes] = kernel(chunk)

    workers = cpu_threads()
    if workers == 1 or n * len(keys[0]) <= CPU_CHUNK:
        for c in chunks(n, keys):
            run(c)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, chunks(n, keys)))  # list() re-raises a worker's error
    return out.reshape(-1, n)


class Candidates:
    """Where candidate ``j`` comes from at each iteration of the inner loop
    (``scope``: :class:`pfresample.constants.CandidateScope`). In the segment
    scopes the warp draws the segment from its warp stream, at counter 0 once
    (``FIXED_SEGMENT``) or at counter m (``SEGMENT_PER_ITERATION``).

    The offset inside the segment (or the index, for ``ARRAY``) is the
    lane's own particle-stream draw, so with one segment (``segments`` = 1,
    ``per_segment`` = N) every scope draws exactly what ``ARRAY`` draws.

    :meth:`pick` takes the offset from the draw's high bits (``uniform_int``).
    Where the offset range R (``per_segment``) is a power of two of at most
    ``PACKED_RANGE``, :meth:`pick_packed` takes it from the draw's low log2(R)
    bits instead, so that the high 24 bits stay free for an acceptance
    uniform (``uniform_accept``) and one word serves a Metropolis iteration.
    """

    def __init__(self, chunk: Chunk, scope: CandidateScope, per_segment: int, segments: int):
        self.scope, self.per_segment, self.segments = scope, per_segment, segments
        if scope == CandidateScope.ARRAY:
            self.per_segment, self.segments = chunk.n, 1
        elif scope in (CandidateScope.FIXED_SEGMENT, CandidateScope.SEGMENT_PER_ITERATION):
            self.warp = chunk.warp_stream()
            if scope == CandidateScope.FIXED_SEGMENT:
                self.segment = uniform_int(self.warp.word(0), segments)
        else:
            raise ValueError(f"unknown candidate scope {scope!r}")
        r = self.per_segment
        self.packed = r <= PACKED_RANGE and r & (r - 1) == 0

    def pick(self, m: int, offset_word: np.ndarray) -> np.ndarray:
        """Candidate index of iteration ``m`` given the lane's offset draw."""
        return self._place(m, uniform_int(offset_word, self.per_segment))

    def pick_packed(self, m: int, word: np.ndarray) -> np.ndarray:
        """The same from a packed draw (only where ``packed``): the offset is
        the draw's low log2(R) bits."""
        return self._place(m, np.asarray(word, np.uint64) & np.uint64(self.per_segment - 1))

    def _place(self, m: int, offset: np.ndarray) -> np.ndarray:
        """The candidate index of an offset inside iteration ``m``'s segment."""
        if self.scope == CandidateScope.ARRAY:
            return offset.astype(np.int64)
        segment = (
            self.segment
            if self.scope == CandidateScope.FIXED_SEGMENT
            else uniform_int(self.warp.word(m), self.segments)
        )
        return (segment * np.uint64(self.per_segment) + offset).astype(np.int64)
