"""The float32 log-domain scan of Güldaş (2015) Appendix A (resampling/log_scan.py),
the standard methods' precision="log32".

* Its elementary functions against NumPy's float64 ones (a few ulp of float64).
* lse: symmetric, -inf is the neutral value, and within half a float32 ulp
  (plus float64 dust) of log(e^a + e^b).
* The scan against the exact float64 log-sums: every log-sum L_i within
  (D / 2) ulp32(M) + D 2^-50 M of log C_i, with M the largest magnitude of
  the values and log-sums and D the depth of the computation behind L_i: 1
  rounding of the input, 21 lse levels in the tile (11 reduction, 10
  distribution), and for N > 2048 the tile totals' 21 levels, one more per
  earlier chunk, and the final add. lse's partial derivatives are
  non-negative and sum to 1, so an operand's absolute error passes on at
  most once per level: the bound adds one half-ulp per level. Checked from
  one tile to the serial chunk path (N > 2048^2).
* The level: at offset 97 (the Poisson sets' raw log g) the error is the
  ulp of 97 + log N, not of log N: measured larger than at offset 0 (the
  reason the study passes the thesis's level).
* The methods: ancestors in range, zero weights never chosen, r within the
  bound of the exact count * C / C_N; precision log32 only where the method
  has it; bad log_offset names itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pfresample as pr
from pfresample.resampling import log_scan


def _ulp32(x: float) -> float:
    return float(np.spacing(np.float32(abs(x))))


def _depth(n: int) -> int:
    tiles = -(-n // log_scan.LOG_TILE)
    levels = 2 * int(math.log2(log_scan.LOG_TILE)) - 1  # 11 + 10
    depth = 1 + levels
    if tiles > 1:
        chunks = -(-tiles // log_scan.LOG_TILE)
        depth += levels + (chunks - 1) + 1
    return depth


def test_elementary_functions_match_numpy():
    t = np.concatenate([[0.0, 1.0, 1e-300, 1e-17], np.random.default_rng(1).random(1000)])
    assert np.max(np.abs(log_scan.log1p_unit(t) - np.log1p(t))) <= 4 * np.spacing(np.log(2.0))
    special = [1e-45, 1e-310, 0.5, 1.0, 2.0, 3e38]
    w = np.concatenate([special, np.random.default_rng(2).random(1000)])
    exact = np.log(w)
    assert np.all(np.abs(log_scan.log_positive(w) - exact) <= 4 * np.spacing(np.abs(exact) + 1))
    assert log_scan.log_positive(np.array([0.0]))[0] == -np.inf


def test_lse_is_symmetric_and_rounds_once():
    rng = np.random.default_rng(3)
    a = (rng.normal(size=5000) * 20).astype(np.float32)
    b = (a + rng.normal(size=5000) * 3).astype(np.float32)
    out = log_scan.lse(a, b)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, log_scan.lse(b, a))
    exact = np.logaddexp(a.astype(np.float64), b.astype(np.float64))
    bound = 0.5 * np.spacing(np.abs(out)) + 1e-14 * np.abs(exact)
    assert np.all(np.abs(out.astype(np.float64) - exact) <= bound)
    inf = np.float32(-np.inf)
    np.testing.assert_array_equal(log_scan.lse(a, np.full_like(a, inf)), a)
    assert log_scan.lse(np.array([inf]), np.array([inf]))[0] == -np.inf


@pytest.mark.parametrize("n", [1, 7, 2048, 2049, 5000, 300_000])
@pytest.mark.parametrize("offset", [0.0, 97.0])
def test_scan_within_its_bound(n, offset):
    rng = np.random.default_rng(n)
    w = rng.gamma(1.0, 1.0, n)
    w[rng.random(n) < 0.05] = 0.0  # zero weights: -inf values
    w[0] = max(w[0], 0.1)
    values = log_scan.log_values(w, offset)
    got = log_scan.log_prefix_sum(values).astype(np.float64)
    exact = np.log(np.cumsum(w)) + offset
    magnitude = max(np.max(np.abs(exact)), np.max(np.abs(values[np.isfinite(values)])))
    depth = _depth(n)
    bound = depth / 2 * _ulp32(magnitude) + depth * 2.0**-50 * magnitude
    assert np.max(np.abs(got - exact)) <= bound
    # non-decreasing after the running maximum, ending at N
    r = log_scan.ratios(got.astype(np.float32), n)
    assert np.all(np.diff(r) >= 0) and r[-1] == n


@pytest.mark.slow
def test_chunk_path_within_its_bound():
    # N > 2048^2: the tile totals span two chunks, scanned one after the other
    n = log_scan.LOG_TILE**2 + 4097
    w = np.random.default_rng(11).random(n)
    got = log_scan.log_prefix_sum(log_scan.log_values(w, 0.0)).astype(np.float64)
    exact = np.log(np.cumsum(w))
    depth = _depth(n)
    assert depth == 1 + 21 + 21 + 1 + 1
    assert np.max(np.abs(got - exact)) <= depth / 2 * _ulp32(exact[-1]) + 1e-9


def test_level_sets_the_error():
    # The same weights at offset 97 and 0: the absolute error of the log-sums
    # follows ulp(97 + log N) (2^-17) rather than ulp(log N) (2^-20 here): the
    # control that the offset is not a no-op.
    n = 1 << 16
    w = np.random.default_rng(5).random(n)
    exact = np.log(np.cumsum(w))
    errors = {}
    for offset in (0.0, 97.0):
        got = log_scan.log_prefix_sum(log_scan.log_values(w, offset)).astype(np.float64)
        errors[offset] = np.sqrt(np.mean((got - offset - exact) ** 2))
    assert errors[97.0] > 3 * errors[0.0]


@pytest.mark.parametrize("method", ["systematic", "stratified", "multinomial"])
def test_methods_on_the_log_scan(method):
    n = 5000
    rng = np.random.default_rng(8)
    w = rng.random(n).astype(np.float32)
    w[rng.random(n) < 0.3] = 0.0
    for seed in range(5):
        a = pr.resample(w, method, seed=seed, backend="cpu", precision="log32")
        assert a.dtype == np.int32 and a.min() >= 0 and a.max() < n
        assert np.all(w[a] > 0)
    with np.errstate(divide="ignore"):
        lw = np.log(w.astype(np.float64)) + 97.0  # -inf: a zero weight
    a = pr.resample(lw, method, seed=1, backend="cpu", log=True, precision="log32", log_offset=97)
    assert np.all(w[a] > 0)


def test_ratios_close_to_the_exact_ones():
    # r_i = N exp(L_i - L_N) against N C_i / C_N: the bound of the scan, times
    # N exp(.) (|e^x - e^y| <= e^max |x - y|), plus float32 rounding of r.
    n = 1 << 14
    w = np.random.default_rng(4).random(n).astype(np.float32)
    r, last = log_scan.log_scaled_prefix_sum(w, n, 0.0)
    c = np.cumsum(w.astype(np.float64))
    exact = n * c / c[-1]
    depth = _depth(n)
    log_bound = 2 * (depth / 2 * _ulp32(math.log(c[-1])) + 1e-12)  # L_i and L_N
    assert np.all(np.abs(r - exact) <= exact * log_bound * 1.01 + np.spacing(np.float32(n)))
    assert last == n - 1


def test_bad_precision_and_offset():
    w = np.ones(16, dtype=np.float32)
    with pytest.raises(ValueError, match="precision must be one of 'float32', 'float64'"):
        pr.resample(w, "residual", seed=1, backend="cpu", precision="log32")
    with pytest.raises(TypeError, match="needs precision='log32'"):
        pr.resample(w, "multinomial", seed=1, backend="cpu", log_offset=3.0)
    with pytest.raises(ValueError, match="log_offset must be a finite number"):
        pr.resample(w, "multinomial", seed=1, backend="cpu", precision="log32", log_offset=np.inf)
    with pytest.raises(ValueError, match="precision must be one of"):
        pr.resample(w, "systematic", seed=1, backend="cpu", precision="float16")
