"""pfresample.rng: the NumPy side of the Philox4x32-10 contract (no nvcc needed).

The CUDA side (gpu_kernels/philox.cuh) is checked against this module in
test_philox_cuda.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfresample import rng
from philox_kat import KAT  # Random123's known-answer vectors (kat_vectors): ctr, key, output

SEED = 0x0123456789ABCDEF  # above 2^32: both key words non-zero
EDGE_DRAWS = np.array(
    [0, 1, 0xFF, 0x100, 0x1FF, 0x7FFFFFFF, 0x80000000, 0xFFFFFEFF, 0xFFFFFF00, 0xFFFFFFFF],
    dtype=np.uint64,
)


def _sample_draws(size: int = 4096) -> np.ndarray:
    rand = np.random.default_rng(7).integers(0, 2**32, size=size, dtype=np.uint64)
    return np.concatenate([EDGE_DRAWS, rand])


# --------------------------------------------------------------------------- Philox


@pytest.mark.parametrize(("ctr", "key", "out"), KAT)
def test_known_answers(ctr, key, out):
    got = rng.philox4x32_10(ctr, key)
    assert [int(w) for w in got] == list(out)


def test_known_answers_broadcast():
    """Arrays of counters and keys give, element by element, the scalar answers."""
    ctr = np.array([k[0] for k in KAT], dtype=np.uint64).T
    key = np.array([k[1] for k in KAT], dtype=np.uint64).T
    got = np.stack(rng.philox4x32_10(tuple(ctr), tuple(key)))
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, np.array([k[2] for k in KAT], dtype=np.uint64).T)


def test_draws_are_block_words():
    key = rng.split_seed(SEED)
    for domain in (rng.DOMAIN_PARTICLE, rng.DOMAIN_WARP, rng.DOMAIN_GLOBAL):
        for stream in (0, 3, 2**32 - 1):
            got = rng.draws(SEED, stream, np.arange(8), domain)
            blocks = [rng.philox_block(key, stream, b, domain) for b in (0, 1)]
            want = [int(w) for block in blocks for w in block]
            assert [int(d) for d in got] == want


def test_draw_address_layout():
    """draws() follows ctr = (block lo, block hi, stream, domain), word counter & 3,
    also for blocks >= 2^32 (block hi word in use)."""
    stream, domain = 12345, rng.DOMAIN_WARP
    for block in (0, 5, 2**32 - 1, 2**32, 2**32 + 5, 2**62 - 1):
        counters = np.uint64(4 * block) + np.arange(4, dtype=np.uint64)
        got = rng.draws(SEED, stream, counters, domain)
        want = rng.philox4x32_10(
            (block & 0xFFFFFFFF, block >> 32, stream, domain), (SEED & 0xFFFFFFFF, SEED >> 32)
        )
        assert [int(d) for d in got] == [int(w) for w in want]
        blk = rng.philox_block(rng.split_seed(SEED), stream, block, domain)
        assert [int(w) for w in blk] == [int(w) for w in want]


def test_draws_broadcast():
    streams = np.arange(5, dtype=np.uint64)[:, None]
    counters = np.arange(11, dtype=np.uint64)[None, :]
    got = rng.draws(SEED, streams, counters, rng.DOMAIN_PARTICLE)
    assert got.shape == (5, 11)
    for s in range(5):
        for c in range(11):
            assert got[s, c] == rng.draws(SEED, s, c, rng.DOMAIN_PARTICLE)


def test_streams_are_distinct():
    """Different seeds, domains and streams give unrelated draws; particle 3's
    stream is not warp 3's, and seeds differing only in the high word differ."""
    seeds = [SEED, SEED ^ 1, SEED + 2**32, SEED & 0xFFFFFFFF, 0, 1, 2**32]
    addresses = [(s, d, 3) for s in seeds for d in (0, 1, 2)]
    addresses += [(SEED, rng.DOMAIN_PARTICLE, st) for st in (0, 1, 2, 4, 2**32 - 1)]
    counters = np.arange(64)
    seqs = [rng.draws(s, st, counters, d) for s, d, st in addresses]
    values = np.concatenate(seqs)
    # 2^32-bit values: with this fixed input, no two of the 1,664 draws coincide.
    assert len(np.unique(values)) == len(values)


def test_seed_keys():
    k0, k1 = rng.seed_keys(np.array([0, 5, 2**32 + 7, 2**64 - 1], dtype=np.uint64))
    assert k0.dtype == k1.dtype == np.uint64
    assert k0.tolist() == [0, 5, 7, 0xFFFFFFFF]
    assert k1.tolist() == [0, 0, 1, 0xFFFFFFFF]
    k0, k1 = rng.seed_keys([3, 2**32 + 7])
    assert k0.tolist() == [3, 7] and k1.tolist() == [0, 1]
    k0, k1 = rng.seed_keys(2**64 - 1)
    assert k0.tolist() == [0xFFFFFFFF] and k1.tolist() == [0xFFFFFFFF]
    assert rng.split_seed(SEED) == (0x89ABCDEF, 0x01234567)
    assert rng.split_seed(np.uint64(2**64 - 1)) == (0xFFFFFFFF, 0xFFFFFFFF)


def test_seed_keys_mixed_python_list():
    k0, k1 = rng.seed_keys([0, 2**64 - 1])
    assert k0.tolist() == [0, 0xFFFFFFFF] and k1.tolist() == [0, 0xFFFFFFFF]


@pytest.mark.parametrize("seed", [-1, 2**64, 2**70, np.int64(-5)])
def test_seed_out_of_range(seed):
    with pytest.raises(ValueError):
        rng.split_seed(seed)
    with pytest.raises(ValueError):
        rng.draws(seed, 0, 0, rng.DOMAIN_PARTICLE)


@pytest.mark.parametrize("seed", [1.0, 1.5, "1", None, True, np.float64(3.0)])
def test_seed_not_integer(seed):
    with pytest.raises(TypeError):
        rng.split_seed(seed)
    with pytest.raises(TypeError):
        rng.draws(seed, 0, 0, rng.DOMAIN_PARTICLE)


def test_seed_keys_validation():
    with pytest.raises(ValueError):
        rng.seed_keys([1, -1])
    with pytest.raises(TypeError):
        rng.seed_keys([1.5])


# --------------------------------------------------------------------------- uniforms


def test_uniform_float_endpoints():
    f = rng.uniform_float(EDGE_DRAWS)
    assert f.dtype == np.float32
    assert f[0] == 0.0 and f[2] == 0.0  # draws 0 and 0xFF
    assert f[3] == np.float32(2.0**-24)  # draw 0x100
    assert f[-1] == np.float32(1.0 - 2.0**-24)  # draw 0xFFFFFFFF
    assert f[-1] < 1.0


def test_uniform_accept_endpoints():
    a = rng.uniform_accept(EDGE_DRAWS)
    assert a.dtype == np.float32
    assert a[0] == np.float32(2.0**-24) and a[2] == np.float32(2.0**-24)
    assert a[3] == np.float32(2.0**-23)
    assert a[-1] == 1.0
    assert a[0] > 0.0


def test_uniform_floats_exact():
    """Every value is exactly (draw >> 8) * 2^-24, resp. ((draw >> 8) + 1) * 2^-24."""
    top = np.concatenate([np.arange(0, 2**24, 97), [2**24 - 2, 2**24 - 1]]).astype(np.uint64)
    draws = (top << np.uint64(8)) | np.uint64(0xA5)
    f = rng.uniform_float(draws).astype(np.float64)
    a = rng.uniform_accept(draws).astype(np.float64)
    np.testing.assert_array_equal(f, top.astype(np.float64) * 2.0**-24)
    np.testing.assert_array_equal(a, (top + np.uint64(1)).astype(np.float64) * 2.0**-24)
    assert np.all(np.diff(f) > 0) and np.all(np.diff(a) > 0)
    assert np.all((f >= 0) & (f < 1)) and np.all((a > 0) & (a <= 1))


def test_uniform_int_power_of_two_exact():
    draws = _sample_draws()
    for k in range(33):
        got = rng.uniform_int(draws, 2**k)
        np.testing.assert_array_equal(got, draws >> np.uint64(32 - k))


@pytest.mark.parametrize("n", [1, 3, 7, 10, 1000, 1025, 999_983, 2**31 + 1, 2**32 - 1, 2**32])
def test_uniform_int_range(n):
    draws = _sample_draws()
    got = rng.uniform_int(draws, n)
    assert np.all(got < np.uint64(n))
    np.testing.assert_array_equal(got, [(int(d) * n) >> 32 for d in draws])
    assert int(rng.uniform_int(0, n)) == 0
    assert int(rng.uniform_int(0xFFFFFFFF, n)) == n - 1


# --------------------------------------------------------------------------- uniformity


def _normal_upper_quantile(alpha: float) -> float:
    """z with P(Z > z) = alpha for a standard normal Z (bisection on erfc)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 0.5 * math.erfc(mid / math.sqrt(2.0)) > alpha:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _chi2_bounds(df: int, alpha: float) -> tuple[float, float]:
    """Two-sided acceptance interval for a chi-square statistic with `df`
    degrees of freedom and false-alarm rate `alpha` per tail.

    Wilson-Hilferty (1931): for X ~ chi2(k), (X/k)^(1/3) is close to normal
    with mean 1 - 2/(9k) and variance 2/(9k). Hence the quantile at level p is
    k * (1 - 2/(9k) + z_p * sqrt(2/(9k)))^3, z_p the normal quantile. For
    k >= 255 the approximation's error, even ~6 sigma out, is a fraction of a
    percent of the quantile -- immaterial at alpha = 1e-9, where a sound
    generator essentially never fails and a broken one fails by orders of
    magnitude.
    """
    z = _normal_upper_quantile(alpha)
    v = 2.0 / (9.0 * df)
    return df * (1.0 - v - z * math.sqrt(v)) ** 3, df * (1.0 - v + z * math.sqrt(v)) ** 3


def _chi2(counts: np.ndarray, expected: float) -> float:
    counts = counts.astype(np.float64)
    return float(np.sum((counts - expected) ** 2) / expected)


@pytest.fixture(scope="module")
def many_draws() -> np.ndarray:
    """2^22 draws: block 0 of 2^20 particle streams, as a (4, 2^20) array."""
    words = rng.philox_block(
        rng.split_seed(SEED), np.arange(2**20, dtype=np.uint64), 0, rng.DOMAIN_PARTICLE
    )
    return np.stack(words)


def test_chi2_bounds_sane():
    # chi2(255) has mean 255 and sd sqrt(510) ~ 22.6; at alpha = 1e-9 (z ~ 6.0)
    # the bounds sit roughly 6 sd either side (skewed upward).
    lo, hi = _chi2_bounds(255, 1e-9)
    assert abs(_normal_upper_quantile(1e-9) - 5.9978) < 1e-3
    assert 130 < lo < 150 and 400 < hi < 420


ALPHA = 1e-9  # false-alarm rate per tail and per statistic


def test_uniformity_top_byte(many_draws):
    """Top 8 bits (what uniform_float leans on) in 256 bins: all words together,
    each of the four words of a block alone, and the low byte for good measure."""
    lo, hi = _chi2_bounds(255, ALPHA)
    samples = [many_draws.ravel(), *many_draws]
    for sample in samples:
        counts = np.bincount((sample >> np.uint64(24)).astype(np.intp), minlength=256)
        stat = _chi2(counts, sample.size / 256)
        assert lo < stat < hi, (stat, lo, hi)
    counts = np.bincount((many_draws.ravel() & np.uint64(0xFF)).astype(np.intp), minlength=256)
    stat = _chi2(counts, many_draws.size / 256)
    assert lo < stat < hi, (stat, lo, hi)


def test_uniformity_uniform_int(many_draws):
    """uniform_int(., 1000) in 1000 bins. Its bias (< 1000 / 2^32 relative per
    value) is far below what 2^22 draws can see, so plain 1/n is the expectation."""
    sample = many_draws.ravel()
    counts = np.bincount(rng.uniform_int(sample, 1000).astype(np.intp), minlength=1000)
    assert counts.size == 1000
    lo, hi = _chi2_bounds(999, ALPHA)
    stat = _chi2(counts, sample.size / 1000)
    assert lo < stat < hi, (stat, lo, hi)


@pytest.mark.parametrize(
    "streams, counters, domain",
    [(2**32, 0, 0), (-1, 0, 0), (0, -1, 0), (0, 0, 2**32), (np.array([0.5]), 0, 0)],
)
def test_draws_address_out_of_range(streams, counters, domain):
    with pytest.raises(ValueError):
        rng.draws(1, streams, counters, domain)


@pytest.mark.parametrize("key", [(5, 7), (0xFFFFFFFF, 0xFFFFFFFF), (0, 0)])
@pytest.mark.parametrize("domain", [0, 1, 2])
def test_stream_blocks_equal_philox_block(key, domain):
    streams = np.arange(0, 5000, 7)
    blocks = rng.StreamBlocks(key, streams, domain)
    assert blocks.fast
    for b in (0, 1, 2, 77, 2**31 + 5, 2**32 - 1, 2**32 + 3, 2**40):
        for x, y in zip(blocks(b), rng.philox_block(key, streams, b, domain), strict=True):
            np.testing.assert_array_equal(x, y)
    arrays = (np.full(streams.size, key[0]), np.full(streams.size, key[1]))
    assert not rng.StreamBlocks(arrays, streams, domain).fast  # array keys: generic path
