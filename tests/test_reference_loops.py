"""The vectorised CPU kernels against a plain per-particle transcription of
each algorithm box, drawing every number one by one through
``pfresample.rng.draws`` at the addresses the module docstrings state.

This is what a CUDA thread does, so it pins the draw layout the GPU kernels
must follow, and it checks the chunking, the thread pool, the precomputed
Philox rounds and the warp-stream gathering of the fast kernels.
"""

import numpy as np
import pytest

import pfresample as pr
from pfresample.constants import WARP_SIZE, CandidateScope
from pfresample.rng import (
    DOMAIN_GLOBAL,
    DOMAIN_PARTICLE,
    DOMAIN_WARP,
    draws,
    uniform_accept,
    uniform_float,
    uniform_int,
)
from pfresample.studies.dulger2017.weights import generate


def draw(seed, domain, stream, counter):
    return draws(seed, stream, counter, domain)


def candidate(seed, i, m, offset_counter, mode, n, per_segment, segments):
    """Index j of iteration m for particle i (s-segment modes of lanes.Candidates)."""
    offset = int(
        uniform_int(draw(seed, DOMAIN_PARTICLE, i, offset_counter), per_segment if mode else n)
    )
    if mode is None:
        return offset
    counter = 0 if mode == CandidateScope.FIXED_SEGMENT else m
    s = int(uniform_int(draw(seed, DOMAIN_WARP, i // WARP_SIZE, counter), segments))
    return s * per_segment + offset


def metropolis_loop(w, seed, B, mode=None, per_segment=None, segments=None):
    """Algorithms 3.3 / 5.1 / 5.2: u at counter 2m, candidate at 2m+1."""
    n = len(w)
    out = []
    for i in range(n):
        t = i
        for m in range(B):
            u = uniform_accept(draw(seed, DOMAIN_PARTICLE, i, 2 * m))
            j = candidate(seed, i, m, 2 * m + 1, mode, n, per_segment, segments)
            if u <= w[j] / w[t]:
                t = j
        out.append(t)
    return np.array(out)


def megopolis_loop(w, seed, B, mode=None, per_segment=None, segments=None):
    """Megopolis: u at counter m of the particle stream, the offset o_m at
    counter m of the global stream, candidate (i + o_m) mod N."""
    n = len(w)
    offsets = [int(uniform_int(draw(seed, DOMAIN_GLOBAL, 0, m), n)) for m in range(B)]
    out = []
    for i in range(n):
        t = i
        for m in range(B):
            u = uniform_accept(draw(seed, DOMAIN_PARTICLE, i, m))
            j = (i + offsets[m]) % n
            if u <= w[j] / w[t]:
                t = j
        out.append(t)
    return np.array(out)


def uphill_loop(w, seed, B, mode=None, per_segment=None, segments=None):
    """Algorithms 6.1 / 6.2 / 6.3: candidate at counter m."""
    n = len(w)
    out = []
    for i in range(n):
        t = i
        for m in range(B):
            j = candidate(seed, i, m, m, mode, n, per_segment, segments)
            if w[t] < w[j]:
                t = j
        out.append(t)
    return np.array(out)


def rejection_loop(w, seed):
    """Algorithm 3.4: u of the first test at counter 0; attempt k: j at 2k-1, u at 2k."""
    n, w_max = len(w), w.max()
    out = []
    for i in range(n):
        j, k = i, 0
        u = uniform_accept(draw(seed, DOMAIN_PARTICLE, i, 0))
        while u > w[j] / w_max:
            k += 1
            j = int(uniform_int(draw(seed, DOMAIN_PARTICLE, i, 2 * k - 1), n))
            u = uniform_accept(draw(seed, DOMAIN_PARTICLE, i, 2 * k))
        out.append(j)
    return np.array(out)


def systematic_loop(w, seed):
    """Algorithms 3.1 + 3.2 in float64."""
    n = len(w)
    c = np.cumsum(w.astype(np.float64))
    u = float(uniform_float(draw(seed, DOMAIN_GLOBAL, 0, 0)))
    cum = [min(n, int(np.floor(n * c[i] / c[-1] + u))) for i in range(n)]
    cum[-1] = n
    out, start = [], 0
    for i in range(n):
        out += [i] * (cum[i] - start)
        start = cum[i]
    return np.array(out)


def stratified_loop(w, seed, stratify=True):
    n = len(w)
    r = n * np.cumsum(w.astype(np.float64)) / w.astype(np.float64).sum()
    out = []
    for s in range(n):
        u = float(uniform_float(draw(seed, DOMAIN_PARTICLE, s, 0)))
        v = s + u if stratify else n * u
        out.append(min(int(np.sum(r <= v)), n - 1))
    return np.array(out)


N = 96  # three warps; not a power of two
SEEDS = [5, 2**33 + 7]


@pytest.fixture(scope="module")
def w():
    return generate("eq233-y3", N, 0, 0)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "method, loop, mode, ss",
    [
        ("metropolis", metropolis_loop, None, None),
        ("metropolis-c1", metropolis_loop, CandidateScope.FIXED_SEGMENT, 128),
        ("metropolis-c2", metropolis_loop, CandidateScope.SEGMENT_PER_ITERATION, 128),
        ("metropolis-c2", metropolis_loop, CandidateScope.SEGMENT_PER_ITERATION, 384),
        ("megopolis", megopolis_loop, None, None),
        ("uphill", uphill_loop, None, None),
        ("uphill-ca", uphill_loop, CandidateScope.SEGMENT_PER_ITERATION, 128),
        ("uphill-c1", uphill_loop, CandidateScope.FIXED_SEGMENT, 384),
    ],
)
def test_iterative_methods(w, seed, method, loop, mode, ss):
    per_segment, segments = (ss // 4, N // (ss // 4)) if ss else (None, None)
    kw = {"segment_bytes": ss} if ss else {}
    got = pr.resample(w, method, seed=seed, B=9, **kw)
    np.testing.assert_array_equal(got, loop(w, seed, 9, mode, per_segment, segments))


@pytest.mark.parametrize("seed", SEEDS)
def test_rejection(w, seed):
    np.testing.assert_array_equal(pr.resample(w, "rejection", seed=seed), rejection_loop(w, seed))


@pytest.mark.parametrize("seed", SEEDS)
def test_cumulative_methods_in_float64(w, seed):
    w64 = w.astype(np.float64)
    np.testing.assert_array_equal(
        pr.resample(w64, "systematic", seed=seed), systematic_loop(w64, seed)
    )
    np.testing.assert_array_equal(
        pr.resample(w64, "stratified", seed=seed), stratified_loop(w64, seed)
    )
    np.testing.assert_array_equal(
        pr.resample(w64, "multinomial", seed=seed), stratified_loop(w64, seed, stratify=False)
    )


def test_chunking_and_threads_do_not_change_results(monkeypatch):
    """Many replicas: lanes cross chunk and replica boundaries, keys become
    arrays, and the pool runs chunks in any order."""
    from pfresample.resampling import lanes

    w = generate("gamma-k1-s2", 1000, 0, 0)  # 1000: warps straddle replicas
    seeds = list(range(40))
    methods = ("metropolis-c2", "megopolis", "uphill-ca", "uphill-c1", "rejection", "multinomial")
    for method in methods:
        kw = {"segment_bytes": 4000} if "-c" in method else {}
        kw.update({"B": 7} if method != "rejection" and method != "multinomial" else {})
        many = pr.resample_many(w, method, seeds=seeds, **kw)
        monkeypatch.setattr(lanes, "CPU_CHUNK", 1 << 12)
        monkeypatch.setenv("PFRESAMPLE_THREADS", "1")
        single = [pr.resample(w, method, seed=s, **kw) for s in seeds[:3]]
        monkeypatch.undo()
        np.testing.assert_array_equal(many[:3], np.array(single))
