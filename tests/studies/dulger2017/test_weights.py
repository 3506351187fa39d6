"""Weight generators (thesis §2.5)."""

import math

import numpy as np
import pytest

from pfresample_studies.dulger2017 import weights as W


def test_distribution_lists():
    assert W.GAMMA_DISTRIBUTIONS == (
        "gamma-k1-s2",
        "gamma-k2-s2",
        "gamma-k3-s2",
        "gamma-k5-s1",
        "gamma-k9-s0.5",
    )
    assert W.EQ233_DISTRIBUTIONS == tuple(f"eq233-y{y}" for y in range(5))
    assert W.EQ233_SWEEP_DISTRIBUTIONS[0] == "eq233-y3.5"
    assert W.EQ233_SWEEP_DISTRIBUTIONS[-1] == "eq233-y4.5"
    assert len(W.EQ233_SWEEP_DISTRIBUTIONS) == 11


@pytest.mark.parametrize("name", W.GAMMA_DISTRIBUTIONS + W.EQ233_DISTRIBUTIONS)
def test_deterministic_float32_and_distinct_per_address(name):
    w = W.generate(name, 1000, sequence=3, seed=5)
    assert w.dtype == np.float32 and w.shape == (1000,) and (w > 0).all()
    np.testing.assert_array_equal(w, W.generate(name, 1000, sequence=3, seed=5))
    for other in ({"sequence": 4, "seed": 5}, {"sequence": 3, "seed": 6}):
        assert not np.array_equal(w, W.generate(name, 1000, **other))
    assert W.generate(name, 1000, 3, 5, dtype=np.float64).dtype == np.float64


def test_gamma_moments():
    """Mean shape*scale and variance shape*scale^2: 6-sigma bands for n = 2^18."""
    n = 1 << 18
    for shape, scale in ((1, 2), (9, 0.5)):
        w = W.generate(W.gamma_name(shape, scale), n, 0, 0).astype(np.float64)
        sd = math.sqrt(shape) * scale
        assert abs(w.mean() - shape * scale) < 6 * sd / math.sqrt(n)
        assert w.var() == pytest.approx(shape * scale**2, rel=0.05)


def test_eq233_is_a_normal_density_at_standard_normal_points():
    """w = phi(x - y) with x ~ N(0, 1): E[w] = phi_{sd=sqrt 2}(y) = exp(-y^2/4)/sqrt(4 pi)."""
    n = 1 << 18
    for y in (0.0, 2.0, 4.0):
        w = W.generate(W.eq233_name(y), n, 0, 0).astype(np.float64)
        assert w.max() <= np.float32(1 / math.sqrt(2 * math.pi))  # float32 rounding
        expected = math.exp(-(y**2) / 4) / math.sqrt(4 * math.pi)
        assert w.mean() == pytest.approx(expected, rel=0.02)


@pytest.mark.parametrize("bad", ["gamma", "gamma-k0-s2", "eq233", "normal-y4", "eq233-yfour"])
def test_bad_distribution_names(bad):
    with pytest.raises(ValueError, match="distribution"):
        W.generate(bad, 10)


def test_bad_sizes_and_dtypes():
    with pytest.raises(ValueError, match="N must be"):
        W.generate("eq233-y1", 0)
    with pytest.raises(ValueError, match="dtype"):
        W.generate("eq233-y1", 10, dtype=np.int32)
    with pytest.raises(TypeError):
        W.generate(4, 10)
