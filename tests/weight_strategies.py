"""Hypothesis strategies for the weight contract of ``pfresample``, and the
Hypothesis profiles of the property tests that use them.

A resampler takes linear weights (1-D float32 or float64, finite, >= 0, not
all zero) or, with ``log=True``, log-weights (values in [-inf, finite], not all
-inf; they mean ``exp(lw - max lw)`` rounded to the input dtype). Resamplers
are fast paths over prefix sums, ratios and comparisons, and each of these
breaks on some class of valid input: sums that overflow, reciprocals of
subnormals, zero prefix sums, one term that swamps the rest, ties, sizes that
are not powers of two, strided buffers. Each strategy here draws one such
class and says which; :func:`linear_weights` and :func:`log_weights` draw from
all of them and lay the result out contiguously or as a strided view.

An array is built by NumPy from a drawn generator seed and a few drawn
parameters (dtype, N, the class's shape), not element by element: an example
costs a handful of draws whatever N is, and Hypothesis shrinks towards small N
and simple parameters. Values where the exact edge matters (tie values, the
dtype's maximum, its smallest subnormal, log-weight centres) are drawn by
Hypothesis itself, so that it reaches those edges.

Profiles (``HYPOTHESIS_PROFILE``, default ``ci``): ``ci`` runs 40 examples a
test, ``gpu`` 200 (for ``make test-gpu``). Both are derandomized (the same
examples on every run, as the project's tests are reproducible), have no
deadline (the first call of a CUDA kernel compiles it) and no example
database (nothing is written into the checkout).
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

MAX_N = 3000
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

settings.register_profile(
    "ci",
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    # Examples are whole arrays of up to MAX_N weights, and the Rejection
    # tests filter out the weights it would take too long on (see
    # tests/library/test_weight_properties.py).
    suppress_health_check=(
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ),
)
settings.register_profile("gpu", settings.get_profile("ci"), max_examples=200)

#: The settings every property test is decorated with.
SETTINGS = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: N: small sizes (N < 32, a partial warp, and N = 1), the awkward sizes near
#: powers of two, and anything up to MAX_N.
SIZES = st.one_of(
    st.integers(1, 64),
    st.sampled_from((96, 100, 1000, 1023, 1024, 2047, 2048, 2049, MAX_N)),
    st.integers(1, MAX_N),
)

#: Seeds of a resampling call: the whole 64-bit range.
seeds = st.integers(0, 2**64 - 1)

_generator_seeds = st.integers(0, 2**32 - 1)


def positive_values(dtype) -> st.SearchStrategy[float]:
    """Positive finite values of ``dtype``: from the smallest subnormal to the maximum."""
    top = float(np.finfo(dtype).max)
    width = np.dtype(dtype).itemsize * 8
    return st.floats(0.0, top, exclude_min=True, allow_subnormal=True, width=width)


def finite_values(dtype) -> st.SearchStrategy[float]:
    """Any finite value of ``dtype``, from minus its maximum to its maximum."""
    width = np.dtype(dtype).itemsize * 8
    return st.floats(allow_nan=False, allow_infinity=False, width=width)


def _keep_one_positive(w: np.ndarray, rng: np.random.Generator, value) -> np.ndarray:
    """``w`` with one entry set to ``value`` (> 0) when no entry is positive."""
    if not (w > 0).any():
        w[rng.integers(w.size)] = value
    return w


def _weight_class(build):
    """A strategy of one class of linear weights: it draws a dtype out of
    ``dtypes``, N out of ``sizes`` and a generator, and calls
    ``build(draw, dtype, n, rng)``, which returns a valid contiguous array."""

    @st.composite
    def strategy(draw, dtypes=DTYPES, sizes=SIZES):
        dtype = np.dtype(draw(st.sampled_from(dtypes)))
        n = draw(sizes)
        rng = np.random.default_rng(draw(_generator_seeds))
        w = build(draw, dtype, n, rng)
        assert w.dtype == dtype and w.shape == (n,), (w.dtype, w.shape)
        assert np.isfinite(w).all() and (w >= 0).all() and (w > 0).any()
        return w

    strategy.__name__ = strategy.__qualname__ = build.__name__
    strategy.__doc__ = build.__doc__
    return strategy


# ------------------------------------------------------------------ linear weights


@_weight_class
def ordinary_weights(draw, dtype, n, rng):
    """Everyday weights with no structure: gamma(k, 1) with shape k in
    [0.05, 5] (below 1, many near zero and, in float32, some rounded to 0),
    times 10^e with e in [-20, 20]."""
    k = draw(st.floats(0.05, 5.0))
    scale = 10.0 ** draw(st.integers(-20, 20))
    w = (rng.gamma(k, 1.0, n) * scale).astype(dtype)
    return _keep_one_positive(w, rng, scale)


@_weight_class
def huge_weights(draw, dtype, n, rng):
    """Weights near the dtype's maximum (float32 3.4e38, float64 1.8e308):
    uniform in [max/4, max], a drawn share exactly max, optionally half of them
    replaced by zeros and ordinary weights. Their sum overflows the dtype as
    soon as a few are near the top: a backend must scale, not sum in the
    input dtype."""
    top = np.finfo(dtype).max
    w = np.minimum(rng.uniform(0.25, 1.0, n) * float(top), float(top)).astype(dtype)
    w[rng.random(n) < draw(st.sampled_from((0.0, 0.1, 1.0)))] = top
    if draw(st.booleans()):
        mixed = rng.random(n) < 0.5
        w[mixed] = rng.choice(np.array([0.0, 1e-3, 1.0, 1e3], dtype=dtype), mixed.sum())
    return _keep_one_positive(w, rng, top)


@_weight_class
def subnormal_weights(draw, dtype, n, rng):
    """Every weight below the smallest normal: k times the smallest
    subnormal (float32 1.4e-45, float64 4.9e-324), k log-uniform in
    [1, 2^mantissa bits), a tenth exactly the smallest subnormal and a drawn
    share 0. The reciprocal of the maximum overflows, and scaling by the sum
    or a product with another weight underflows to 0."""
    fi = np.finfo(dtype)
    k = np.floor(np.exp2(rng.uniform(0.0, fi.nmant, n))).astype(np.int64)
    k[rng.random(n) < 0.1] = 1
    k[rng.random(n) < draw(st.sampled_from((0.0, 0.2, 0.9)))] = 0
    w = k.astype(dtype) * fi.smallest_subnormal  # exact: k < 2^nmant
    return _keep_one_positive(w, rng, fi.smallest_subnormal)


@_weight_class
def sparse_weights(draw, dtype, n, rng):
    """Many exact zeros: runs of zeros at the start, in the middle and at the
    end (each a drawn share of N, up to all of it), and scattered zeros of
    drawn density up to all; one survivor (first, last or anywhere) stays
    positive; optionally half the zeros are -0.0 (a zero weight too:
    -0.0 >= 0). The other survivors are ordinary weights. Covers a single
    positive weight among N, flat stretches of the prefix sum, and s-segments
    and warps with no weight at all."""
    w = rng.gamma(draw(st.floats(0.2, 3.0)), 1.0, n).astype(dtype)
    zero = rng.random(n) < draw(st.sampled_from((0.0, 0.5, 0.9, 0.99, 1.0)))
    head, middle, tail = (int(n * draw(st.sampled_from((0.0, 0.1, 0.5, 1.0)))) for _ in range(3))
    zero[:head] = True
    start = rng.integers(0, n - middle + 1)
    zero[start : start + middle] = True
    zero[n - tail :] = True
    survivor = {"first": 0, "last": n - 1, "any": int(rng.integers(n))}[
        draw(st.sampled_from(("first", "last", "any")))
    ]
    zero[survivor] = False
    w[survivor] = max(w[survivor], 1.0)
    w[zero] = 0.0
    if draw(st.booleans()):
        w[zero & (rng.random(n) < 0.5)] = -0.0
    return w


@_weight_class
def dominant_weights(draw, dtype, n, rng):
    """One dominant weight and a tiny rest: 10^a (a in [0, 30]) at the first,
    last or any slot, the others 10^b (b in [-30, 0]) times uniform(0.5, 1],
    or exactly 1e6 and 1e-6; optionally a tenth of the rest 0. The rest lies
    below the rounding unit of the prefix sum, acceptance ratios are near 0
    and Murray's B is far beyond any budget (the tests pass B)."""
    if draw(st.booleans()):
        big, small = 1e6, 1e-6
    else:
        big, small = 10.0 ** draw(st.integers(0, 30)), 10.0 ** draw(st.integers(-30, 0))
    w = (small * rng.uniform(0.5, 1.0, n)).astype(dtype)
    if draw(st.booleans()):
        w[rng.random(n) < 0.1] = 0.0
    where = draw(st.sampled_from(("first", "last", "any")))
    w[{"first": 0, "last": n - 1, "any": int(rng.integers(n))}[where]] = big
    return w


@_weight_class
def tied_weights(draw, dtype, n, rng):
    """Ties: all weights equal, or 2 to 4 distinct values (0 possibly one of
    them) assigned at random. Hypothesis draws the values over the dtype's
    whole positive range, so the smallest subnormal, 1 and the maximum come
    up. Covers equal comparisons (Uphill keeps the first seen), acceptance
    ratios of exactly 1, B = 0, and N w / sum w exactly 1 (Systematic must
    then give every particle one child)."""
    values = draw(st.lists(positive_values(dtype), min_size=1, max_size=4))
    if len(values) > 1 and draw(st.booleans()):
        values[0] = 0.0
    w = np.asarray(values, dtype=dtype)[rng.integers(0, len(values), n)]
    return _keep_one_positive(w, rng, max(values))


@_weight_class
def wide_weights(draw, dtype, n, rng):
    """Weights over the dtype's whole range in one array: log2 w uniform from
    the smallest subnormal's exponent to the maximum's (float32 2^-149 to
    2^128, float64 2^-1074 to 2^1024), optionally with the maximum itself.
    Subnormal, tiny, ordinary and huge weights together: the sum overflows
    and most terms are far below its rounding unit."""
    fi = np.finfo(dtype)
    e = rng.integers(fi.minexp - fi.nmant, fi.maxexp + 1, n)
    w = np.minimum(np.ldexp(rng.uniform(0.5, 1.0, n), e), float(fi.max)).astype(dtype)
    if draw(st.booleans()):
        w[rng.integers(n)] = fi.max
    return _keep_one_positive(w, rng, fi.max)


#: Every class of valid linear weights, each a function (dtypes, sizes) -> strategy.
WEIGHT_CLASSES = (
    ordinary_weights,
    huge_weights,
    subnormal_weights,
    sparse_weights,
    dominant_weights,
    tied_weights,
    wide_weights,
)


@st.composite
def laid_out(draw, w: np.ndarray):
    """``w`` as it is (contiguous), or the same values as a strided view:
    every second or third entry of a larger array, or reversed (stride -1 or
    -2), from a drawn offset. The entries between hold NaN, so a backend that
    reads the buffer as if it were contiguous meets a NaN and fails."""
    step = draw(st.sampled_from((1, 2, 3, -1, -2)))
    if step == 1:
        return w
    gap = abs(step)
    offset = draw(st.integers(0, gap - 1))
    base = np.full(w.size * gap + offset, np.nan, dtype=w.dtype)
    view = (base if step > 0 else base[::-1])[offset::gap]
    view[...] = w
    return view


def _with_zeros(w: np.ndarray, rng: np.random.Generator, share: float, zero) -> np.ndarray:
    """A copy of ``w`` with at least one entry (N > 1) and about ``share`` of
    them set to ``zero``; the largest entry is kept, so one stays positive."""
    w = w.copy()
    if w.size > 1:
        keep = int(np.argmax(w))
        mask = rng.random(w.size) < share
        mask[(keep + 1 + rng.integers(w.size - 1)) % w.size] = True
        mask[keep] = False
        w[mask] = zero
    return w


@st.composite
def linear_weights(draw, dtypes=DTYPES, sizes=SIZES, zeros=False, strided=True):
    """Any valid linear weights: one of :data:`WEIGHT_CLASSES`, laid out by
    :func:`laid_out` (when ``strided``). ``zeros=True`` also sets a drawn
    share of the weights to 0 (at least one whenever N > 1, never the
    largest), for the zero-weight properties."""
    w = draw(st.one_of([c(dtypes, sizes) for c in WEIGHT_CLASSES]))
    if zeros:
        rng = np.random.default_rng(draw(_generator_seeds))
        w = _with_zeros(w, rng, draw(st.sampled_from((0.0, 0.1, 0.5, 0.9))), 0.0)
    return draw(laid_out(w)) if strided else w


# ------------------------------------------------------------------ log-weights


@st.composite
def shifted_log_weights(draw, dtypes=DTYPES, sizes=SIZES):
    """The logarithm of any class of linear weights (zeros become -inf),
    shifted by a drawn constant: 0, +-1e3, +-1e30, or +-1e300 in float64.
    Far from 0, max lw makes exp(lw) itself overflow or underflow (only
    exp(lw - max lw) is meaningful), and a shift beyond the spread rounds the
    log-weights into ties."""
    w = draw(st.one_of([c(dtypes, sizes) for c in WEIGHT_CLASSES]))
    shifts = (0.0, 1e3, -1e3, 1e30, -1e30)
    if w.dtype == np.float64:
        shifts += (1e300, -1e300)
    with np.errstate(divide="ignore"):
        return (np.log(w.astype(np.float64)) + draw(st.sampled_from(shifts))).astype(w.dtype)


@st.composite
def extreme_log_weights(draw, dtypes=DTYPES, sizes=SIZES):
    """One to five distinct log-weights that Hypothesis draws over the dtype's
    whole finite range (so +-max, 0 and huge negatives come up), and -inf
    at a drawn share, assigned at random; at least one finite. Covers
    lw - max lw overflowing to -inf (lw = -max beside max lw = +max), every
    exp underflowing to 0 but the maximum's, and ties in the log domain."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    n = draw(sizes)
    rng = np.random.default_rng(draw(_generator_seeds))
    values = np.asarray(draw(st.lists(finite_values(dtype), min_size=1, max_size=5)), dtype)
    lw = values[rng.integers(0, values.size, n)]
    lw[rng.random(n) < draw(st.sampled_from((0.0, 0.5, 0.99)))] = -np.inf
    if not np.isfinite(lw).any():
        lw[rng.integers(n)] = values[0]
    return lw


@st.composite
def near_tie_log_weights(draw, dtypes=DTYPES, sizes=SIZES):
    """Log-weights within 1 to 8 units in the last place of a drawn centre
    (0, +-1, +-1e7, +-1e30 or any value in [-1e30, 1e30]), some -inf. Their
    exponentials are 1 or 1 less a few rounding units: near-ties that every
    backend must round alike and order as the input does."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    n = draw(sizes)
    rng = np.random.default_rng(draw(_generator_seeds))
    bound = float(dtype.type(1e30))  # 1e30 as the dtype holds it
    centre = draw(
        st.one_of(
            st.sampled_from((0.0, 1.0, -1.0, 1e7, -1e7, bound, -bound)),
            st.floats(-bound, bound, width=dtype.itemsize * 8),
        )
    )
    ulps = draw(st.integers(1, 8))
    up = down = np.asarray(centre, dtype=dtype)
    values = [up]
    for _ in range(ulps):
        up, down = np.nextafter(up, dtype.type(np.inf)), np.nextafter(down, dtype.type(-np.inf))
        values += [up, down]
    lw = np.asarray(values, dtype=dtype)[rng.integers(0, len(values), n)]
    lw[rng.random(n) < draw(st.sampled_from((0.0, 0.3)))] = -np.inf
    if not np.isfinite(lw).any():
        lw[rng.integers(n)] = centre
    return lw


#: Every class of valid log-weights, each a function (dtypes, sizes) -> strategy.
LOG_WEIGHT_CLASSES = (shifted_log_weights, extreme_log_weights, near_tie_log_weights)


@st.composite
def log_weights(draw, dtypes=DTYPES, sizes=SIZES, zeros=False, strided=True):
    """Any valid log-weights: one of :data:`LOG_WEIGHT_CLASSES`, laid out by
    :func:`laid_out` (when ``strided``). ``zeros=True`` also sets a drawn
    share to -inf (at least one whenever N > 1, never the largest)."""
    lw = draw(st.one_of([c(dtypes, sizes) for c in LOG_WEIGHT_CLASSES]))
    assert not np.isnan(lw).any() and (lw < np.inf).all() and (lw > -np.inf).any()
    if zeros:
        rng = np.random.default_rng(draw(_generator_seeds))
        lw = _with_zeros(lw, rng, draw(st.sampled_from((0.0, 0.1, 0.5, 0.9))), -np.inf)
    return draw(laid_out(lw)) if strided else lw


# ------------------------------------------------------------------ bad input


def _bad_values(dtype, kinds) -> dict[str, float]:
    top = float(np.finfo(dtype).max)
    tiny = float(np.finfo(dtype).smallest_subnormal)
    table = {
        "nan": np.nan,
        "+inf": np.inf,
        "-inf": -np.inf,
        "-subnormal": -tiny,
        "-1": -1.0,
        "-max": -top,
    }
    return {k: table[k] for k in kinds}


@st.composite
def _spoiled(draw, valid, kinds):
    """``(array, first bad index)``: a drawn valid array with 1 to 3 entries
    replaced by bad values of ``kinds``, then laid out by :func:`laid_out`."""
    w = draw(valid).copy()
    index = draw(st.lists(st.integers(0, w.size - 1), min_size=1, max_size=3, unique=True))
    bad = _bad_values(w.dtype, kinds)
    w[index] = [bad[draw(st.sampled_from(sorted(bad)))] for _ in index]
    return draw(laid_out(w)), min(index)


def bad_linear_weights(dtypes=DTYPES, sizes=SIZES):
    """Invalid linear weights and the index of the first bad entry: any valid
    class with 1 to 3 entries (first, last or anywhere) made NaN, +inf, -inf
    or negative (minus the smallest subnormal, -1, minus the maximum),
    contiguous or strided."""
    valid = linear_weights(dtypes, sizes, strided=False)
    return _spoiled(valid, ("nan", "+inf", "-inf", "-subnormal", "-1", "-max"))


def bad_log_weights(dtypes=DTYPES, sizes=SIZES):
    """Invalid log-weights and the index of the first bad entry: any valid
    class with 1 to 3 entries made NaN or +inf (-inf is a valid zero weight),
    contiguous or strided."""
    return _spoiled(log_weights(dtypes, sizes, strided=False), ("nan", "+inf"))


@st.composite
def all_zero_weights(draw, dtypes=DTYPES, sizes=SIZES):
    """Linear weights that are all zero (some -0.0), contiguous or strided."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    n = draw(sizes)
    w = np.zeros(n, dtype=dtype)
    w[np.random.default_rng(draw(_generator_seeds)).random(n) < 0.5] = -0.0
    return draw(laid_out(w))


@st.composite
def all_minus_inf_log_weights(draw, dtypes=DTYPES, sizes=SIZES):
    """Log-weights that are all -inf (every weight zero), contiguous or strided."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    return draw(laid_out(np.full(draw(sizes), -np.inf, dtype=dtype)))
