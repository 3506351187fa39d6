"""Quality metrics (thesis §2.5, eqs. 2.29-2.32)."""

import numpy as np
import pytest

import pfresample as pr
from pfresample.metrics import OffspringStats, confidence_interval
from pfresample_studies.dulger2017.weights import generate


def test_hand_computed_small_case():
    """w = (1, 1, 2): target e = (0.75, 0.75, 1.5).
    Draw 1 ancestors (0, 2, 2) -> o = (1, 0, 2): SE = 1/16 + 9/16 + 1/4 = 7/8.
    Draw 2 ancestors (1, 1, 2) -> o = (0, 2, 1): SE = 9/16 + 25/16 + 1/4 = 19/8.
    MSE = 13/8; mean o = (1/2, 1, 3/2); bias^2 = 1/16 + 1/16 + 0 = 1/8;
    Var (divisor K) = 1/4 + 1 + 1/4 = 3/2; MSE = Var + bias^2."""
    stats = OffspringStats(np.array([1.0, 1.0, 2.0]))
    stats.add(np.array([0, 2, 2]))
    stats.add(np.array([1, 1, 2]))
    np.testing.assert_allclose(stats.squared_errors, [7 / 8, 19 / 8])
    q = stats.quality()
    assert (q.k, q.n) == (2, 3)
    assert q.mse == pytest.approx(13 / 8)
    assert q.bias2 == pytest.approx(1 / 8)
    assert q.variance == pytest.approx(3 / 2)
    assert q.mse_per_n == pytest.approx(13 / 24)
    assert q.bias_fraction == pytest.approx(1 / 13)
    np.testing.assert_allclose(stats.mean_offspring, [0.5, 1.0, 1.5])


@pytest.mark.parametrize("method", ["systematic", "multinomial", "uphill", "metropolis-c1"])
def test_mse_is_variance_plus_bias_and_batches_do_not_matter(method):
    w = generate("eq233-y3", 512, 0, 0)
    anc = pr.resample_many(w, method, seeds=range(64))
    whole, pieces = OffspringStats(w), OffspringStats(w)
    whole.add(anc)
    for row in anc:
        pieces.add(row)
    a, b = whole.quality(), pieces.quality()
    assert a.mse == pytest.approx(a.variance + a.bias2, rel=1e-12)
    assert (a.mse, a.variance, a.bias2) == pytest.approx((b.mse, b.variance, b.bias2), rel=1e-12)


def test_systematic_beats_multinomial_in_mse():
    w = generate("gamma-k1-s2", 1024, 0, 0)
    q = {}
    for method in ("systematic", "multinomial"):
        s = OffspringStats(w)
        s.add(pr.resample_many(w, method, seeds=range(100)))
        q[method] = s.quality()
    assert q["systematic"].mse_per_n < q["multinomial"].mse_per_n / 3
    # multinomial: Var(o_i) = N p_i (1 - p_i), so MSE/N is about 1 - sum p^2
    p = w / w.sum()
    assert q["multinomial"].mse_per_n == pytest.approx(1 - np.sum(p**2), rel=0.05)


def test_confidence_interval():
    mean, half = confidence_interval([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5
    # z_{0.995} = 2.5758; sd = 1.29099; sqrt(4) = 2
    assert half == pytest.approx(2.5758293 * 1.2909944 / 2, rel=1e-6)
    with pytest.raises(ValueError):
        confidence_interval([1.0])
    with pytest.raises(ValueError):
        OffspringStats(np.ones(3)).quality()
