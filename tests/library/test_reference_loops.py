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
from pfresample_studies.dulger2017.weights import generate


def draw(seed, domain, stream, counter):
    return draws(seed, stream, counter, domain)


def packed(n, mode, per_segment):
    """Whether u and the offset share one word: the offset's range R is a
    power of two of at most 2^8 (the bits below u's 24)."""
    r = per_segment if mode else n
    return r <= 256 and r & (r - 1) == 0


def candidate(seed, i, m, offset_counter, mode, n, per_segment, segments, low_bits=False):
    """Index j of iteration m for particle i (s-segment modes of lanes.Candidates);
    ``low_bits``: the offset is the draw's low log2(R) bits (a packed draw)."""
    word = draw(seed, DOMAIN_PARTICLE, i, offset_counter)
    r = per_segment if mode else n
    offset = int(word) % r if low_bits else int(uniform_int(word, r))
    if mode is None:
        return offset
    counter = 0 if mode == CandidateScope.FIXED_SEGMENT else m
    s = int(uniform_int(draw(seed, DOMAIN_WARP, i // WARP_SIZE, counter), segments))
    return s * per_segment + offset


def accepted(word, wj, wt):
    """u < w_j / w_t as the contract tests it: u = (word >> 9) 2^-23, and
    fl(u * w_t) < w_j in the weights' precision."""
    u = wt.dtype.type((int(word) >> 9) * 2.0**-23)
    return u * wt < wj


def product_scaled(w):
    """The Metropolis family's weights: times 2^E, E = half the exponent
    range, where the maximum is below 2^(2 - E)."""
    half = np.finfo(w.dtype).maxexp // 2
    return w * w.dtype.type(2.0**half) if w.max() < 2.0 ** (2 - half) else w


def metropolis_loop(w, seed, B, mode=None, per_segment=None, segments=None):
    """Algorithms 3.3 / 5.1 / 5.2: packed, u and the candidate from the word at
    counter m; otherwise u at counter 2m, candidate at 2m+1."""
    n, w = len(w), product_scaled(w)
    one_word = packed(n, mode, per_segment)
    out = []
    for i in range(n):
        t = i
        for m in range(B):
            u_counter, j_counter = (m, m) if one_word else (2 * m, 2 * m + 1)
            u = draw(seed, DOMAIN_PARTICLE, i, u_counter)
            j = candidate(seed, i, m, j_counter, mode, n, per_segment, segments, one_word)
            if accepted(u, w[j], w[t]):
                t = j
        out.append(t)
    return np.array(out)


def megopolis_loop(w, seed, B, mode=None, per_segment=None, segments=None):
    """Megopolis: u at counter m of the particle stream, the offset o_m at
    counter m of the global stream, candidate (i + o_m) mod N."""
    n, w = len(w), product_scaled(w)
    offsets = [int(uniform_int(draw(seed, DOMAIN_GLOBAL, 0, m), n)) for m in range(B)]
    out = []
    for i in range(n):
        t = i
        for m in range(B):
            u = draw(seed, DOMAIN_PARTICLE, i, m)
            j = (i + offsets[m]) % n
            if accepted(u, w[j], w[t]):
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
@pytest.mark.slow
def test_iterative_methods(w, seed, method, loop, mode, ss):
    per_segment, segments = (ss // 4, N // (ss // 4)) if ss else (None, None)
    kw = {"segment_bytes": ss} if ss else {}
    got = pr.resample(w, method, seed=seed, B=9, **kw)
    np.testing.assert_array_equal(got, loop(w, seed, 9, mode, per_segment, segments))


@pytest.mark.parametrize(
    "method, mode, n, ss",
    [
        ("metropolis", None, 64, None),  # packed over the whole array
        ("metropolis-c1", CandidateScope.FIXED_SEGMENT, 96, 384),  # 96-weight segments
        ("metropolis-c2", CandidateScope.SEGMENT_PER_ITERATION, 1024, 1024),  # R = 256
        ("metropolis-c2", CandidateScope.SEGMENT_PER_ITERATION, 1024, 2048),  # R = 512
    ],
)
@pytest.mark.slow
def test_metropolis_layouts_packed_and_not(method, mode, n, ss):
    """Both sides of the packing rule: R = N = 64 and R = 256 pack, R = 96 and
    R = 512 do not; continued through 13 iterations (odd, past a block)."""
    w = generate("gamma-k1-s2", n, 0, 1)
    per_segment, segments = (ss // 4, n // (ss // 4)) if ss else (None, None)
    kw = {"segment_bytes": ss} if ss else {}
    got = pr.resample(w, method, seed=SEEDS[1], B=13, **kw)
    want = metropolis_loop(w, SEEDS[1], 13, mode, per_segment, segments)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.slow
def test_metropolis_acceptance_with_zero_and_subnormal_weights(dtype):
    """Zeros, subnormals and normals under one maximum of 1: the vectorised
    test agrees with the loop, and a chain at a positive weight never moves to
    a zero one (B = 1 and 2 catch a single wrong move)."""
    info = np.finfo(dtype)
    tiny, least = float(info.tiny), float(info.smallest_subnormal)
    levels = np.array([0.0, least, tiny / 8, tiny * 2.0**20, tiny * 2.0**30, 1.0], dtype)
    w = np.resize(levels, 64)
    for method, loop in (("metropolis", metropolis_loop), ("megopolis", megopolis_loop)):
        for B in (1, 2, 40):
            got = pr.resample(w, method, seed=SEEDS[0], B=B)
            np.testing.assert_array_equal(got, loop(w, SEEDS[0], B))
            assert (w[got][w > 0] > 0).all()  # a positive weight never moves to a zero


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.slow
def test_metropolis_acceptance_when_every_weight_is_subnormal(dtype):
    """Weights 7 and 2 times the smallest subnormal, alternating: from a 7, one
    step ends on a 2 with probability 1/2 x 2/7 = 1/7. Unscaled, u * 7 would
    round on the subnormal grid (u * 7 < 2 for u < 1.5/7, not 2/7: 0.107 in
    place of 0.143); ``product_ready`` scales first. K = 10 seeds x 2048
    chains; 5 sigma of a binomial proportion is 0.012."""
    least = np.finfo(dtype).smallest_subnormal
    w = np.resize(np.array([7 * least, 2 * least], dtype), 4096)
    ends = pr.resample_many(w, "metropolis", seeds=range(10), B=1)[:, ::2]
    p = float((ends % 2 == 1).mean())
    k = ends.size
    assert abs(p - 1 / 7) < 5 * np.sqrt((1 / 7) * (6 / 7) / k), p
    np.testing.assert_array_equal(ends[0], metropolis_loop(w, 0, 1)[::2])


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
