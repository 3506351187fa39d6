"""Checks of user input, shared by every backend: each failure is a
``ValueError`` or ``TypeError`` whose message names the problem."""

from __future__ import annotations

import numbers

import numpy as np

from .constants import MAX_PARTICLES


def weight_array(weights, xp=np) -> object:
    """``weights`` as a 1-D float32/float64 array of the backend ``xp``, its
    shape and type checked (the values are :func:`check_weights`'s job).

    Float32 and float64 arrays are kept as they are; float16 becomes float32
    and other real types float64 (a Python list of floats is float64 already).
    """
    w = xp.asarray(weights)
    if w.dtype == np.float16:
        w = w.astype(np.float32)
    elif w.dtype.kind in "iub":
        w = w.astype(np.float64)
    elif w.dtype.kind != "f":
        raise TypeError(f"weights must be real numbers, got dtype {w.dtype}")
    if w.ndim != 1:
        raise ValueError(f"weights must be a 1-D array, got shape {tuple(w.shape)}")
    n = int(w.shape[0])
    if n == 0:
        raise ValueError("weights is empty: need at least one particle")
    if n > MAX_PARTICLES:
        raise ValueError(f"{n} particles do not fit int32 ancestors (at most {MAX_PARTICLES})")
    return w


def bad_weight_error(index: int, value: float) -> ValueError:
    """The error for a NaN, infinite or negative weight at ``index``."""
    what = "NaN" if value != value else ("infinite" if abs(value) == float("inf") else "negative")
    return ValueError(f"weights[{index}] is {what} ({value}): weights must be finite and >= 0")


ALL_ZERO = "all weights are zero: at least one must be positive"


def check_weights(weights, xp=np) -> object:
    """Return ``weights`` as a 1-D float32/float64 array of the backend ``xp``
    (see :func:`weight_array`), or raise naming the first bad entry.

    Weights need not sum to one, but must be finite, non-negative and not all
    zero.
    """
    w = weight_array(weights, xp)
    low, high = w.min(), w.max()  # NaN propagates into both
    if not (low >= 0 and high < float("inf")):
        i = int(xp.flatnonzero(~xp.isfinite(w) | (w < 0))[0])
        raise bad_weight_error(i, float(w[i]))
    if not high > 0:
        raise ValueError(ALL_ZERO)
    return w


def check_int(value, name: str, *, minimum: int = 0) -> int:
    """An integer parameter (``B``, a seed, a segment size) at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def segment_geometry(n: int, segment_bytes: int, itemsize: int) -> tuple[int, int]:
    """``(DC, SC)`` of an s-segment of ``segment_bytes`` bytes over ``n``
    weights of ``itemsize`` bytes (thesis §5.1: DC = SS/4, SC = 4N/SS).

    SS is clamped to the whole array (``n * itemsize`` bytes), so that a large
    SS turns the coalesced variants into their parents. N must then be a
    multiple of DC; the thesis asks for powers of two, which always are.
    """
    segment_bytes = check_int(segment_bytes, "segment_bytes", minimum=1)
    if segment_bytes % itemsize:
        raise ValueError(
            f"segment_bytes={segment_bytes} is not a multiple of the weight size ({itemsize} bytes)"
        )
    dc = min(segment_bytes // itemsize, n)
    if n % dc:
        raise ValueError(
            f"N={n} is not compatible with segment_bytes={segment_bytes}: an s-segment holds "
            f"{dc} weights and N must be a multiple of that (use a power of two for N)"
        )
    return dc, n // dc
