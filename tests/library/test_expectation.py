"""The exact expectations against brute-force enumeration of every draw."""

import itertools

import numpy as np
import pytest

from pfresample import expectation
from pfresample.constants import WARP_SIZE


def enumerate_uphill(w, B):
    """Uphill's expected offspring by listing all N^B candidate sequences of
    every thread (Algorithm 6.1, strict comparison)."""
    n = len(w)
    total = np.zeros(n)
    for i in range(n):
        for seq in itertools.product(range(n), repeat=B):
            t = i
            for j in seq:
                if w[t] < w[j]:
                    t = j
            total[t] += 1.0 / n**B
    return total


@pytest.mark.parametrize(
    "w",
    [
        [0.3, 2.0, 1.0, 0.7, 5.0],  # distinct
        [1.0, 2.0, 2.0, 1.0, 3.0],  # ties
        [4.0, 4.0, 4.0, 4.0],  # all tied
        [0.0, 1.0, 0.0, 2.0],  # zeros tie too
    ],
)
@pytest.mark.parametrize("B", [0, 1, 2, 4])
def test_uphill_expectation_matches_enumeration(w, B):
    np.testing.assert_allclose(expectation.uphill(w, B), enumerate_uphill(w, B), atol=1e-12)


def test_uphill_expectation_is_eq_6_1_without_ties():
    rng = np.random.default_rng(0)
    w = rng.permutation(np.arange(1.0, 65.0))
    i = np.argsort(np.argsort(w)) + 1.0
    for B in (1, 3, 17):
        np.testing.assert_allclose(
            expectation.uphill(w, B), (i ** (B + 1) - (i - 1) ** (B + 1)) / 64.0**B
        )


def enumerate_uphill_c1(w, B, per_segment):
    """Uphill-C1 by enumeration: a thread draws its s-segment uniformly, then
    B candidates inside it (Algorithm 6.3). The warp sharing the segment
    does not change a single thread's distribution."""
    n = len(w)
    segments = n // per_segment
    total = np.zeros(n)
    for i in range(n):
        for s in range(segments):
            for seq in itertools.product(range(per_segment), repeat=B):
                t = i
                for off in seq:
                    j = s * per_segment + off
                    if w[t] < w[j]:
                        t = j
                total[t] += 1.0 / (segments * per_segment**B)
    return total


@pytest.mark.parametrize("B", [1, 2, 3])
def test_uphill_c1_expectation_matches_enumeration(B):
    w = np.array([0.5, 3.0, 1.0, 2.0, 7.0, 0.1, 4.0, 6.0], dtype=np.float32)
    np.testing.assert_allclose(
        expectation.uphill_c1(w, B, segment_bytes=8), enumerate_uphill_c1(w, B, 2), atol=1e-12
    )


def test_metropolis_expectation_tends_to_unbiased_and_sums_to_n():
    w = np.array([1.0, 2.0, 3.0, 10.0, 0.5, 0.25, 4.0, 8.0], dtype=np.float32)
    for B in (0, 1, 5):
        assert expectation.metropolis(w, B).sum() == pytest.approx(len(w))
    np.testing.assert_allclose(expectation.metropolis(w, 0), np.ones(8))
    np.testing.assert_allclose(expectation.metropolis(w, 2000), expectation.unbiased(w), atol=1e-5)


def test_metropolis_one_step_by_hand():
    """B = 1, weights (1, 3): thread 0 moves to 1 w.p. 1/2 (candidate 1, always
    accepted); thread 1 moves to 0 w.p. 1/2 * 1/3. E[o_0] = 1/2 + 1/6."""
    e = expectation.metropolis(np.array([1.0, 3.0], dtype=np.float32), 1)
    assert e[0] == pytest.approx(0.5 + (1 / 6), abs=1e-7)


def test_segment_size_constant_is_a_warp():
    assert WARP_SIZE == 32
