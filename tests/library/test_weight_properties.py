"""Property tests of the weight contract: every method of the registry, on every
class of valid weights that ``tests/weight_strategies.py`` draws (huge,
subnormal, sparse, dominant, tied, wide, ordinary; N from 1 to 3000;
contiguous and strided), as linear weights and as log-weights (``log=True``),
float32 and float64.

The fixed-example tests (``test_api.py``, ``test_gpu.py``) run the thesis's
gamma and eq. 2.33 weights at powers of two. The contract promises more: any
finite non-negative weights, any log-weights in [-inf, finite]. Hypothesis
searches that space for the inputs where a prefix sum overflows, a ratio
divides by a subnormal or a strided buffer is read as contiguous, and shrinks
a failure to a small example. The properties:

* ancestors are int32 of shape (N,) in [0, N), and the input is left as it was;
* the methods that draw in proportion to the weights (the cumulative family
  and Rejection) never choose a zero weight (a log-weight of -inf); in the
  chain methods (Metropolis and Uphill families) a zero weight can only keep
  its own slot;
* Systematic's offspring counts are within 1 of N w_i / sum w, and Residual's
  at least its floor (both with ``precision="float64"``);
* the same seed gives the same ancestors, through ``resample`` and
  ``resample_many`` alike;
* log-weights mean the linear weights exp(lw - max lw) rounded to the input
  dtype: the library's conversion (``pfresample.logweights.to_weights``, its
  own exponential, so that both backends get the same bits) is within 2 units
  in the last place of NumPy's exp, and ``resample``, ``choose_B`` and
  ``resample_each_B`` of log-weights equal those of the weights it gives;
* bad input raises ``ValueError``: NaN, +inf (and, linear, -inf or a negative
  value) naming the first bad index, all-zero weights, all -inf log-weights;
* on the GPU (``gpu`` marker, ``HYPOTHESIS_PROFILE=gpu`` for 200 examples) every
  property holds on a CuPy array too, and every method returns the CPU
  reference's ancestors for the same seed (the cumulative ones with
  ``precision="float64"``, as docs/library.md promises).

Runtime: the chain methods run with an explicit small B (the B they choose on
one dominant weight is enormous), and the segmented ones with one s-segment
(``segment_bytes = N * itemsize``) when N is not a multiple of 32.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import pfresample as pr
from pfresample.logweights import to_weights
from pfresample.resampling.registry import REGISTRY
from weight_strategies import (
    SETTINGS,
    all_minus_inf_log_weights,
    all_zero_weights,
    bad_linear_weights,
    bad_log_weights,
    linear_weights,
    log_weights,
    seeds,
)

pytestmark = pytest.mark.slow  # make test-fast leaves this module out (docs/testing.md)

METHODS = pr.methods()
#: Draw in proportion to the weights: a zero weight is never chosen.
PROPORTIONAL = [m for m in METHODS if REGISTRY[m].B_rule is None]
#: Chains that start at their own slot (Metropolis and Uphill families).
CHAINS = [m for m in METHODS if REGISTRY[m].B_rule is not None]
CUMULATIVE = [m for m in METHODS if "precision" in REGISTRY[m].params]

BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
KINDS = ["linear", "log"]
WEIGHTS = {"linear": linear_weights, "log": log_weights}

#: B of the chain methods: small, so that a call stays cheap on any weights.
SMALL_B = st.integers(0, 16)
PRECISIONS = st.sampled_from((None, "float32", "float64"))

#: Rejection needs about N max w / sum w attempts a particle: on one dominant
#: weight and a tiny rest, millions. Its examples are limited to a mean
#: weight of at least this share of the largest (about a second a call at
#: N = 3000 on a 2-core CPU); the others are filtered out with ``assume``.
REJECTION_MIN_MEAN_OVER_MAX = 1e-3


# ------------------------------------------------------------------ helpers


def exp_reference(lw: np.ndarray) -> np.ndarray:
    """exp(lw - max lw) rounded to the dtype of ``lw``, by NumPy's exp in float64."""
    lw64 = lw.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.exp(lw64 - lw64.max()).astype(lw.dtype)


def linear_meaning(w: np.ndarray, kind: str) -> np.ndarray:
    """The linear weights that ``w`` stands for: ``w`` itself, or for
    log-weights the library's exp(lw - max lw) in their dtype. Its exponential
    and NumPy's differ in the last bit for about a tenth of float64 inputs,
    enough to flip a near-tie; test_log_weights_mean_exp_of_their_shift checks
    that it stays within 2 units in the last place of :func:`exp_reference`."""
    return w if kind == "linear" else to_weights(w)


def zero_mask(w: np.ndarray, kind: str) -> np.ndarray:
    """The zero weights: w == 0, or for log-weights lw == -inf."""
    return w == 0 if kind == "linear" else w == -np.inf


def scaled(w: np.ndarray) -> np.ndarray:
    """Linear weights in float64 divided by their maximum (no overflow in any sum)."""
    w64 = w.astype(np.float64)
    return w64 / w64.max()


def expected_offspring(w: np.ndarray) -> np.ndarray:
    """N w_i / sum w in float64, from the scaled weights."""
    w64 = scaled(w)
    return w.size * w64 / w64.sum()


def affordable(method: str, w_linear: np.ndarray) -> None:
    """Filter out the weights Rejection would take too long on (see
    REJECTION_MIN_MEAN_OVER_MAX)."""
    if method == "rejection":
        assume(scaled(w_linear).mean() >= REJECTION_MIN_MEAN_OVER_MAX)


def method_kwargs(method: str, n: int, itemsize: int, B=None, precision=None) -> dict:
    """Keyword arguments that keep a call cheap and valid: B for the chain
    methods, one s-segment for the segmented ones when N is not a multiple of
    32 (else their default segment size), ``precision`` for the cumulative ones."""
    m = REGISTRY[method]
    kw = {}
    if m.B_rule is not None and B is not None:
        kw["B"] = B
    if m.segmented and n % 32:
        kw["segment_bytes"] = n * itemsize
    if method in CUMULATIVE and precision is not None:
        kw["precision"] = precision
    return kw


def on_backend(w: np.ndarray, backend: str):
    """``w`` for ``backend``: the NumPy array itself, or a CuPy array laid out
    alike (a strided view of a device copy of the whole host buffer, gaps
    included)."""
    if backend == "cpu":
        return w
    import cupy

    if w.flags.c_contiguous or w.base is None:
        return cupy.asarray(w)
    base = w.base
    start = (w.ctypes.data - base.ctypes.data) // w.itemsize
    step = w.strides[0] // w.itemsize
    view = cupy.asarray(base)[start::step][: w.size]
    assert np.array_equal(view.get(), w, equal_nan=True)
    return view


def to_host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


def run_many(w, method, seeds_, backend, kind, **kw) -> np.ndarray:
    """``pr.resample_many`` of ``w`` on ``backend``; ``log=True`` for
    log-weights (linear calls pass no ``log``), the result on the host."""
    if kind == "log":
        kw["log"] = True
    x = on_backend(w, backend)
    return to_host(pr.resample_many(x, method, seeds=seeds_, backend=backend, **kw))


def run(w, method, seed, backend, kind, **kw) -> np.ndarray:
    """``pr.resample`` of ``w``, as :func:`run_many`."""
    if kind == "log":
        kw["log"] = True
    x = on_backend(w, backend)
    return to_host(pr.resample(x, method, seed=seed, backend=backend, **kw))


# ------------------------------------------------------------------ valid weights


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(data=st.data(), seed=seeds, B=SMALL_B, precision=PRECISIONS)
def test_ancestors_are_int32_in_range(method, kind, backend, data, seed, B, precision):
    w = data.draw(WEIGHTS[kind](), label="weights")
    affordable(method, linear_meaning(w, kind))
    before = w.copy()
    kw = method_kwargs(method, w.size, w.itemsize, B, precision)
    a = run(w, method, seed, backend, kind, **kw)
    assert a.dtype == np.int32 and a.shape == w.shape
    assert a.min() >= 0 and a.max() < w.size, (a.min(), a.max())
    assert np.array_equal(w, before), "the call changed its input"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", PROPORTIONAL)
@SETTINGS
@given(data=st.data(), seed=seeds, precision=PRECISIONS)
def test_zero_weights_are_never_chosen(method, kind, backend, data, seed, precision):
    w = data.draw(WEIGHTS[kind](zeros=True), label="weights")
    affordable(method, linear_meaning(w, kind))
    kw = method_kwargs(method, w.size, w.itemsize, None, precision)
    a = run(w, method, seed, backend, kind, **kw)
    chosen = np.flatnonzero(zero_mask(w, kind)[a])
    assert chosen.size == 0, f"slots {chosen[:5]} got zero-weight ancestors {a[chosen[:5]]}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", CHAINS)
@SETTINGS
@given(data=st.data(), seed=seeds, B=SMALL_B)
def test_zero_weights_only_keep_their_own_slot(method, kind, backend, data, seed, B):
    w = data.draw(WEIGHTS[kind](zeros=True), label="weights")
    a = run(w, method, seed, backend, kind, **method_kwargs(method, w.size, w.itemsize, B))
    moved = np.flatnonzero(zero_mask(w, kind)[a] & (a != np.arange(w.size)))
    assert moved.size == 0, f"slots {moved[:5]} got zero-weight ancestors {a[moved[:5]]}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data(), seed=seeds)
def test_systematic_offspring_are_within_one_of_N_w_over_sum(kind, backend, data, seed):
    w = data.draw(WEIGHTS[kind](), label="weights")
    a = run(w, "systematic", seed, backend, kind, precision="float64")
    o = np.bincount(a, minlength=w.size)
    off = np.abs(o - expected_offspring(linear_meaning(w, kind)))
    i = int(np.argmax(off))
    assert off[i] < 1 + 1e-6, f"particle {i}: {o[i]} offspring, off by {off[i]}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(data=st.data(), seed=seeds)
def test_residual_offspring_are_at_least_the_floor(kind, backend, data, seed):
    w = data.draw(WEIGHTS[kind](), label="weights")
    a = run(w, "residual", seed, backend, kind, precision="float64")
    o = np.bincount(a, minlength=w.size)
    floor = np.floor(expected_offspring(linear_meaning(w, kind)) - 1e-9)
    short = np.flatnonzero(o < floor)
    assert short.size == 0, f"particles {short[:5]}: {o[short[:5]]} offspring < {floor[short[:5]]}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(data=st.data(), seed=seeds, B=SMALL_B, precision=PRECISIONS)
def test_same_seed_gives_the_same_ancestors(method, kind, backend, data, seed, B, precision):
    w = data.draw(WEIGHTS[kind](), label="weights")
    affordable(method, linear_meaning(w, kind))
    kw = method_kwargs(method, w.size, w.itemsize, B, precision)
    a = run(w, method, seed, backend, kind, **kw)
    np.testing.assert_array_equal(run(w, method, seed, backend, kind, **kw), a)
    many = run_many(w, method, [seed, seed ^ 1], backend, kind, **kw)
    np.testing.assert_array_equal(many[0], a)


@SETTINGS
@given(lw=log_weights())
def test_log_weights_mean_exp_of_their_shift(lw):
    w = linear_meaning(lw, "log")
    assert w.dtype == lw.dtype and w.shape == lw.shape
    assert (w[lw == -np.inf] == 0).all() and w.max() == 1
    np.testing.assert_array_max_ulp(w, exp_reference(lw), maxulp=2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(data=st.data(), seed=seeds, B=SMALL_B, precision=PRECISIONS)
def test_log_weights_resample_as_their_exponential(method, backend, data, seed, B, precision):
    lw = data.draw(log_weights(), label="log-weights")
    w = linear_meaning(lw, "log")
    affordable(method, w)
    kw = method_kwargs(method, lw.size, lw.itemsize, B, precision)
    np.testing.assert_array_equal(
        run(lw, method, seed, backend, "log", **kw), run(w, method, seed, backend, "linear", **kw)
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", CHAINS)
@SETTINGS
@given(data=st.data(), seed=seeds)
def test_B_calls_read_log_weights_as_their_exponential(method, backend, data, seed):
    # Small N: the Uphill family's choose_B computes an SSD table for each N.
    lw = data.draw(log_weights(sizes=st.integers(1, 256)), label="log-weights")
    w = linear_meaning(lw, "log")
    x, y = on_backend(lw, backend), on_backend(w, backend)
    # choose_B takes no segment_bytes and checks N against the default s-segment
    # (32 float32 or 16 float64 weights), so a segmented method only gets one
    # where that fits; B itself does not depend on the s-segments.
    if not REGISTRY[method].segmented or lw.size % 32 == 0:
        assert pr.choose_B(x, method, log=True) == pr.choose_B(y, method)
    kw = method_kwargs(method, lw.size, lw.itemsize)
    Bs = [0, 3, 9]
    each = pr.resample_each_B(x, method, seeds=[seed], Bs=Bs, backend=backend, log=True, **kw)
    for B, got in zip(Bs, each, strict=True):
        expected = pr.resample_many(y, method, seeds=[seed], B=B, backend=backend, **kw)
        np.testing.assert_array_equal(to_host(got), to_host(expected), err_msg=f"B={B}")


# ------------------------------------------------------------------ GPU parity


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(data=st.data(), seed=seeds, B=SMALL_B)
def test_cuda_ancestors_equal_the_cpu_reference(method, kind, data, seed, B):
    w = data.draw(WEIGHTS[kind](), label="weights")
    affordable(method, linear_meaning(w, kind))
    kw = method_kwargs(method, w.size, w.itemsize, B, "float64")
    cpu = run(w, method, seed, "cpu", kind, **kw)
    dev = run(w, method, seed, "cuda", kind, **kw)
    differ = np.flatnonzero(cpu != dev)
    assert differ.size == 0, f"{differ.size} of {w.size} ancestors differ, first at {differ[:5]}"


# ------------------------------------------------------------------ bad input


BAD = {"linear": bad_linear_weights, "log": bad_log_weights}
NO_WEIGHT = {"linear": all_zero_weights, "log": all_minus_inf_log_weights}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(data=st.data(), seed=seeds)
def test_bad_weights_name_the_first_bad_index(method, kind, backend, data, seed):
    """NaN, infinite or negative weights (log: NaN or +inf) raise, naming the first."""
    w, first = data.draw(BAD[kind](), label="bad")
    with pytest.raises(ValueError, match=re.escape(f"[{first}]")):
        run(w, method, seed, backend, kind, **method_kwargs(method, w.size, w.itemsize, 1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(data=st.data(), seed=seeds)
def test_no_positive_weight_raises(method, kind, backend, data, seed):
    """All-zero weights (log: all -inf) raise."""
    w = data.draw(NO_WEIGHT[kind](), label="weights")
    with pytest.raises(ValueError):
        run(w, method, seed, backend, kind, **method_kwargs(method, w.size, w.itemsize, 1))
