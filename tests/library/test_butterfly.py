"""Butterfly resampling (Güldaş 2015, §3.1-3.3; resampling/butterfly.py).

* Radix sequences: the thesis's default rule and clear errors.
* Blocks: slot i's block at stage k is the non-zero pattern of A_k (eq. 3.4,
  as the thesis states it for 1-based indices).
* Unbiasedness (eq. 3.2): the mean offspring counts over K seeds are N w / sum w,
  by ``stat_tools.excess`` (its tolerance comes from the counts' own
  covariance), on radix sequences of depth 1, mixed, and a non-power-of-two
  N = 3 * 5 * 7; with a negative control.
* ``radix=(N,)``: multinomial's offspring distribution (a chi-square
  goodness-of-fit on the exact multinomial law of N = 4), systematic's
  "within one of N w / sum w" and its exact law (chi-square on the count
  vectors, whose probabilities are lengths of u-intervals).
* Theorem 3.4: radix-2 LMSE * N / log2 N near (1 - 1/2) Var under the
  weighted measure, 38.69 for the Fig 4.1 setup.
* Adaptive (Fig 3.7): tau = 0 runs no stage, tau above 1 every stage (then it
  is the full butterfly), and in between the stage count follows the ESS of
  the segment means, computed here by brute force.
"""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest

import pfresample as pr
from pfresample.radix import check_radix, default_radix
from pfresample.resampling.butterfly import Stage
from stat_tools import Z_MAX, excess

BUTTERFLIES = ["butterfly-multinomial", "butterfly-stratified", "butterfly-systematic"]
# One chi-square test at this level, many tests in the file: a false alarm is rare.
FALSE_ALARM = 1e-4


def chi2_quantile(p: float, df: int) -> float:
    """The p-quantile of chi-square(df) (Wilson-Hilferty; within 1 % for df >= 3)."""
    z = NormalDist().inv_cdf(p)
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + z * math.sqrt(a)) ** 3


@pytest.mark.parametrize(
    "n, radix",
    [
        (2, (2,)),
        (2**11, (64, 32)),
        (2**12, (64, 64)),  # §4.1.4's m_N = 2
        (2**20, (1024, 1024)),
        (2**21, (128, 128, 128)),
        (2**22, (256, 128, 128)),  # §4.2.1's example
        (105, (105,)),
        (2**10 * 3, (64, 48)),
    ],
)
def test_default_radix_follows_the_thesis_rule(n, radix):
    assert default_radix(n) == radix
    assert math.prod(radix) == n


@pytest.mark.parametrize(
    "radix, message",
    [
        ((3, 5), "multiply to 15, not to N = 16"),
        ((16, 1), "at least 2"),
        ((4, 4.0), "integers"),
        ("44", "integers"),
    ],
)
def test_a_bad_radix_is_named(radix, message):
    w = np.ones(16, dtype=np.float32)
    with pytest.raises((ValueError, TypeError), match=message):
        pr.resample(w, "butterfly-multinomial", seed=1, radix=radix)
    with pytest.raises((ValueError, TypeError), match=message):
        check_radix(radix, 16)


@pytest.mark.parametrize("radix", [(3, 5, 7), (2, 4, 2), (6,), (2, 3)])
def test_blocks_are_the_nonzero_pattern_of_A_k(radix):
    n = math.prod(radix)
    stride = 1
    for k, r in enumerate(radix, start=1):
        stage = Stage.of(n, stride, r)
        s_k, s_prev = stride * r, stride
        for i, j in itertools.product(range(1, n + 1), repeat=2):  # 1-based, as eq. 3.4
            linked = (i - 1) // s_k == (j - 1) // s_k and (i - 1) % s_prev == (j - 1) % s_prev
            members = stage.base[i - 1] + np.arange(r) * stride
            assert linked == ((j - 1) in members), (k, i, j)
        assert np.array_equal(stage.base + stage.t * stride, np.arange(n))
        stride = s_k


def _weights(n: int, seed: int = 5) -> np.ndarray:
    w = np.random.default_rng(seed).gamma(0.7, 1.0, n)
    w[::7] = 0.0  # zero weights in every block
    return w.astype(np.float32)


@pytest.mark.parametrize("method", BUTTERFLIES)
@pytest.mark.parametrize("radix", [(105,), (3, 5, 7), (7, 15), (5, 21)])
@pytest.mark.slow
def test_butterflies_are_unbiased(method, radix):
    w = _weights(math.prod(radix))
    counts = pr.offspring(pr.resample_many(w, method, seeds=range(4000), radix=radix), w.size)
    expected = w.size * w.astype(np.float64) / w.sum(dtype=np.float64)
    assert excess(counts, expected) < Z_MAX
    assert counts[:, w == 0].sum() == 0
    # Negative control: a target 0.3 offspring off on the two heaviest particles
    # (about 7 % of their shares) is rejected.
    moved = expected.copy()
    moved[np.argsort(expected)[-2:]] += [0.3, -0.3]
    assert excess(counts, moved) > Z_MAX


@pytest.mark.slow
def test_one_block_multinomial_has_the_multinomial_law():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    n, k = 4, 40000
    ancestors = pr.resample_many(p.astype(np.float64), "butterfly-multinomial", seeds=range(k))
    counts = pr.offspring(ancestors, n)
    outcomes = [c for c in itertools.product(range(n + 1), repeat=n) if sum(c) == n]
    index = {c: i for i, c in enumerate(outcomes)}
    observed = np.bincount([index[tuple(c)] for c in counts], minlength=len(outcomes))

    def pmf(c):
        coefficient = math.factorial(n) / math.prod(math.factorial(x) for x in c)
        return coefficient * math.prod(q**x for q, x in zip(p, c, strict=True))

    expected = k * np.array([pmf(c) for c in outcomes])
    stat = float(((observed - expected) ** 2 / expected).sum())
    assert stat < chi2_quantile(1 - FALSE_ALARM, len(outcomes) - 1)


@pytest.mark.parametrize("n", [64, 105])
def test_one_block_systematic_stays_within_one_of_N_w(n):
    w = _weights(n)
    counts = pr.offspring(
        pr.resample_many(w, "butterfly-systematic", seeds=range(500), radix=(n,)), n
    )
    share = n * w.astype(np.float64) / w.sum(dtype=np.float64)
    assert np.all(counts >= np.floor(share) - 1e-9) and np.all(counts <= np.ceil(share) + 1e-9)


def _systematic_law(w: np.ndarray) -> dict:
    """The exact law of systematic resampling's offspring counts: slot k takes
    the particle i with N C_{i-1} <= k + u < N C_i, so the counts are a step
    function of the one uniform u, constant between the fractional parts of
    N C_i; each count vector's probability is the length of its u-intervals."""
    n = w.size
    c = np.cumsum(w / w.sum()) * n
    breaks = np.unique(np.concatenate([[0.0, 1.0], np.mod(c, 1.0)]))
    law: dict = {}
    for a, b in zip(breaks[:-1], breaks[1:], strict=True):
        picks = np.searchsorted(c, np.arange(n) + (a + b) / 2, side="right")
        key = tuple(np.bincount(picks, minlength=n))
        law[key] = law.get(key, 0.0) + (b - a)
    return law


@pytest.mark.parametrize("method", ["butterfly-systematic", "systematic"])
@pytest.mark.slow
def test_one_block_systematic_has_the_systematic_law(method):
    # radix=(N,): one block, so butterfly systematic is standard systematic
    # resampling; both are checked against the exact law by a chi-square
    # goodness-of-fit test (df = outcomes - 1, false alarm 1e-4).
    w = np.array([0.05, 0.3, 0.1, 0.25, 0.2, 0.1])
    law, k = _systematic_law(w), 20000
    assert abs(sum(law.values()) - 1.0) < 1e-12 and len(law) >= 4
    kw = {"radix": (w.size,)} if method.startswith("butterfly") else {}
    counts = pr.offspring(pr.resample_many(w, method, seeds=range(k), **kw), w.size)
    outcomes = list(law)
    index = {c: i for i, c in enumerate(outcomes)}
    assert all(tuple(c) in index for c in counts)  # nothing outside the law's support
    observed = np.bincount([index[tuple(c)] for c in counts], minlength=len(outcomes))
    expected = k * np.array([law[c] for c in outcomes])
    stat = float(((observed - expected) ** 2 / expected).sum())
    assert stat < chi2_quantile(1 - FALSE_ALARM, len(outcomes) - 1)


@pytest.mark.slow
def test_radix_2_lmse_approaches_theorem_3_4():
    # Fig 4.1/4.2 setup: x ~ U[-2 sigma, 2 sigma], g(x) = exp(-x^2 / 2 sigma^2), phi(x) = x.
    # Limit (1 - 1/2) Var under g(x) dx / Z on [-20, 20]: a normal(0, 100) truncated.
    sigma, n, reps = 10.0, 1024, 2000
    a = 2.0
    pdf, mass = math.exp(-a * a / 2) / math.sqrt(2 * math.pi), NormalDist().cdf(a) - 0.5
    variance = sigma**2 * (1 - a * pdf / mass)
    limit = 0.5 * variance  # 38.687
    assert limit == pytest.approx(38.687, abs=1e-3)
    rng = np.random.default_rng(2015)
    errors = np.empty(reps)
    for j in range(reps):
        x = rng.uniform(-2 * sigma, 2 * sigma, n)
        g = np.exp(-(x**2) / (2 * sigma**2))
        a_j = pr.resample(g, "butterfly-multinomial", seed=j, radix=(2,) * 10)
        errors[j] = x[a_j].mean() - (g * x).sum() / g.sum()
    scaled = errors**2 * n / math.log2(n)
    # The mean of reps squared errors: its standard error from their own spread;
    # 3.5 standard errors either side (the finite-N value differs from the limit
    # by about 1 %: 38.3 at N = 256, 38.6 at N = 4096, helper measurements).
    half_width = 3.5 * scaled.std(ddof=1) / math.sqrt(reps)
    assert abs(scaled.mean() - limit) < half_width
    assert half_width < 0.15 * limit  # the test can fail: the band is narrow enough


def _segment_ess(w: np.ndarray, span: int) -> float:
    means = np.repeat(w.reshape(-1, span).mean(axis=1), span)
    return means.sum() ** 2 / (means**2).sum()


@pytest.mark.parametrize("method", BUTTERFLIES)
def test_adaptive_runs_stages_while_the_ess_is_low(method):
    radix = (4, 2, 8, 2)
    w = _weights(128).astype(np.float64) ** 3  # uneven: a low ESS
    none = pr.resample_adaptive(w, method, seed=9, tau=0.0, radix=radix)
    assert none.stages == 0
    np.testing.assert_array_equal(none.ancestors, np.arange(w.size))
    np.testing.assert_allclose(none.weights, w, rtol=1e-15)
    every = pr.resample_adaptive(w, method, seed=9, tau=1.5, radix=radix)
    assert every.stages == len(radix)
    np.testing.assert_array_equal(every.ancestors, pr.resample(w, method, seed=9, radix=radix))
    np.testing.assert_allclose(every.weights, np.full(w.size, w.mean()), rtol=1e-12)
    for tau in (0.2, 0.5, 0.8):
        stages, span = 0, 1
        while stages < len(radix) and _segment_ess(w, span) < tau * w.size:
            span *= radix[stages]
            stages += 1
        result = pr.resample_adaptive(w, method, seed=9, tau=tau, radix=radix)
        assert result.stages == stages
        means = np.repeat(w.reshape(-1, span).mean(axis=1), span)
        np.testing.assert_allclose(result.weights, means, rtol=1e-12)
        assert np.all(w[result.ancestors] > 0)


@pytest.mark.parametrize("method", BUTTERFLIES)
def test_adaptive_max_stages_stops_early(method):
    radix = (4, 2, 8, 2)
    w = _weights(128).astype(np.float64) ** 3
    for cap in range(len(radix) + 1):
        capped = pr.resample_adaptive(w, method, seed=9, tau=1.5, radix=radix, max_stages=cap)
        assert capped.stages == cap
        span = math.prod(radix[:cap])
        means = np.repeat(w.reshape(-1, span).mean(axis=1), span)
        np.testing.assert_allclose(capped.weights, means, rtol=1e-12)
    # The first stage alone draws what the full butterfly's first stage draws:
    # each slot keeps a member of its own block of r_1 slots.
    one = pr.resample_adaptive(w, method, seed=9, tau=1.5, radix=radix, max_stages=1)
    np.testing.assert_array_equal(one.ancestors // radix[0], np.arange(w.size) // radix[0])


def test_adaptive_refuses_what_it_cannot_do():
    w = np.ones(8, dtype=np.float32)
    with pytest.raises(TypeError, match="no adaptive form"):
        pr.resample_adaptive(w, "systematic", seed=1, tau=0.5)
    with pytest.raises(ValueError, match="tau"):
        pr.resample_adaptive(w, "butterfly-multinomial", seed=1, tau=-1)
    with pytest.raises(ValueError, match="max_stages"):
        pr.resample_adaptive(w, "butterfly-multinomial", seed=1, tau=0.5, max_stages=-1)


@pytest.mark.gpu
@pytest.mark.parametrize("method", BUTTERFLIES)
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize(
    "n, radix",
    [
        (2**12, None),
        (105, (3, 5, 7)),
        (105, (105,)),
        (120, (40, 3)),  # stage 1 in one kernel with a partial warp, then stages apart
        (2**10, (2,) * 10),
        (3 * 2**11, (3, 2048)),
        (2**20, None),
        (2**16, (2**16,)),
    ],
)
def test_cuda_butterflies_equal_the_cpu_reference(method, precision, n, radix):
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(n)
    for w in (
        rng.gamma(0.3, 1.0, n).astype(np.float32),
        np.where(rng.random(n) < 0.5, 0.0, rng.gamma(1.0, 1e30, n)).astype(np.float64),
    ):
        w[-1] = 0.0  # a zero weight at the end
        kw = {"radix": radix, "precision": precision}
        cpu = pr.resample_many(w, method, seeds=[1, 2**40 + 3], backend="cpu", **kw)
        gpu = pr.resample_many(cupy.asarray(w), method, seeds=[1, 2**40 + 3], backend="cuda", **kw)
        np.testing.assert_array_equal(gpu.get(), cpu)
        assert np.all(w[cpu] > 0)
