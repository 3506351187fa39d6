"""The sums of the weight contract, computed in the same order on both backends.

Where a result depends on a sum of the weights (Residual's copies, the B of
the Metropolis and Uphill families), the CPU computes the sum the device
computes, in its order: a parallel sum rounds differently from a sequential
one, and an ulp of difference can move an ancestor. The order is that of
``gpu_kernels/reduce.cu``: ``reduction_parts(N)`` blocks of REDUCE_THREADS
threads, thread t of block b adding entries ``b * REDUCE_THREADS + t +
k * stride`` in turn, a fixed tree inside each block, then the block results
in the same way. It is a function of N alone, so the CPU can follow it.

Scaling. A float64 sum of float32 weights never overflows and keeps their
subnormals. Float64 weights can overflow the sum (above ~1e308 / N) or lose
their precision in it (deep in the subnormal range): there the weights are
multiplied by a power of two (:func:`frexp_scale` of the maximum) before
they are summed, which is exact and cancels in every ratio the methods use.
"""

from __future__ import annotations

import math

import numpy as np

from .contracts import REDUCE_THREADS, reduction_parts

# Float64 weights whose maximum lies outside [2^-SAFE_EXPONENT, 2^SAFE_EXPONENT]
# are scaled before they are summed: below, subnormal terms lose bits; above,
# a sum of up to 2^31 of them (2^991 at most) still fits.
SAFE_EXPONENT = 960


def scale_exponents(values) -> np.ndarray:
    """frexp's exponent e of each value (value = f 2^e, f in [0.5, 1)), not
    below -1022 so that 2^-e fits a float64; 0 for 0 (stats.cuh's
    scale_exponent)."""
    _, exponent = np.frexp(np.asarray(values, dtype=np.float64))
    return np.maximum(exponent, -1022)


def frexp_scale(maximum: float) -> float:
    """The power of two ``s`` with ``maximum * s`` in [0.5, 1); 1 for 0."""
    return math.ldexp(1.0, -int(scale_exponents(maximum)))


def stats_scale(maximum: float, dtype) -> float:
    """The factor the weight statistics multiply the weights by before
    summing them: 1, except for float64 weights whose maximum is outside the
    safe range (see the module docstring)."""
    if np.dtype(dtype) == np.float32 or maximum == 0:
        return 1.0
    if 2.0**-SAFE_EXPONENT <= maximum <= 2.0**SAFE_EXPONENT:
        return 1.0
    return frexp_scale(maximum)


def ratio_scale(maximum: float, dtype) -> float:
    """The power of two the Metropolis family multiplies the weights by
    before its acceptance products ``u * w_t`` (resampling/metropolis.py,
    ``accepts``): 2^E, E half the format's exponent range (64 in float32,
    512 in float64), when the maximum is below 2^(2 - E); else 1. Scaled,
    every positive weight is at least 2^-85 (float32; 2^-562 in float64), so
    no product with u >= 2^-23 reaches the subnormal range; unscaled, only
    weights below 2^-40 (2^-488) of the maximum can. The scaling is exact and
    cancels in every ratio."""
    half = np.finfo(np.dtype(dtype)).maxexp // 2
    return 2.0**half if maximum < 2.0 ** (2 - half) else 1.0


def needs_scaling(maximum: float, dtype) -> bool:
    """Whether the cumulative family's prefix sum in ``dtype`` scales the
    weights tile by tile (:mod:`pfresample.resampling.prefix_sum`): when a sum
    of up to 2^32 weights of this maximum could overflow ``dtype``, or the
    maximum is so small (below 2^-100 in float32, 2^-1000 in float64) that
    the sums would run into the subnormal range and lose their bits. Other
    weights are summed as they are, which gives the same C up to a power of
    two, and the same ancestors, at less cost."""
    info = np.finfo(np.dtype(dtype))
    low = 2.0**-100 if info.bits == 32 else 2.0**-1000
    return not low <= maximum <= float(info.max) * 2.0**-32


def _tree(values: np.ndarray) -> np.ndarray:
    """reduce.cuh's block_reduce along the last axis (REDUCE_THREADS wide):
    ``s[t] = s[t] + s[t + half]`` for half = 128, 64, ..., 1."""
    while values.shape[-1] > 1:
        half = values.shape[-1] // 2
        values = values[..., :half] + values[..., half:]
    return values[..., 0]


def _strided_sums(values: np.ndarray, threads: int) -> np.ndarray:
    """Per thread t of ``threads``, the sum of ``values[t + k * threads]``
    for k = 0, 1, ... in turn (zeros pad the end: adding 0.0 is exact)."""
    rows = -(-values.size // threads)
    padded = np.zeros(rows * threads, dtype=np.float64)
    padded[: values.size] = values
    acc = np.zeros(threads, dtype=np.float64)
    for row in padded.reshape(rows, threads):
        acc += row
    return acc


def device_sum(values) -> float:
    """The float64 sum of ``values`` in reduce.cu's order (see the module
    docstring): ``weight_stats``'s sum, and the SSD of ``uphill_b``."""
    values = np.asarray(values, dtype=np.float64).ravel()
    parts = reduction_parts(values.size)
    per_thread = _strided_sums(values, parts * REDUCE_THREADS).reshape(parts, REDUCE_THREADS)
    block_sums = _tree(per_thread)
    return float(_tree(_strided_sums(block_sums, REDUCE_THREADS)))


def weight_sums(w: np.ndarray) -> tuple[float, float, float]:
    """``(sum, max, scale)`` as the device's weight statistics hold them: the
    maximum as it is, the sum of ``w * scale`` (``scale``: :func:`stats_scale`)."""
    maximum = float(w.max())
    scale = stats_scale(maximum, w.dtype)
    return device_sum(w.astype(np.float64) * scale), maximum, scale
