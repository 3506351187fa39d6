"""Log-weights (``log=True``): what they mean, and their conversion to weights.

A filter computes a weight as exp(log-likelihood); the log-likelihoods of a
step can lie hundreds of units apart, and their exponentials over- or
underflow. With ``log=True`` the API takes the log-weights ``lw`` themselves
and resamples the weights

    w_i = exp(lw_i - max_j lw_j),

rounded to the precision of ``lw`` (float32 or float64): the largest weight
is exactly 1, ``lw_i = -inf`` is a zero weight, and a log-weight more than
about 103 (float32) or 745 (float64) below the maximum gives a weight that
rounds to 0. The common factor exp(max lw) cancels in every method. Each
method then runs on ``w`` exactly as on linear input (docs/library.md).

Both backends compute the exponential with the same IEEE operations in the
same order (:func:`exp_nonpositive` here, ``logweights.cu`` on the device,
compiled without fused multiply-adds), so ``w`` has the same bits on the CPU
and on the GPU and CPU/GPU parity holds for log input as for linear input.
The library's exponential, not NumPy's or CUDA's ``exp``: those two differ
in the last bit for some inputs.
"""

from __future__ import annotations

import math

import numpy as np

# exp(x) = 2^k exp(r), k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2]
# (Cody and Waite: ln 2 in two parts, the first with trailing zero bits, so
# that k * LN2_HI is exact), and exp(r) by its Taylor polynomial of degree
# 13, whose remainder is below 2^-60 there.
LOG2_E = 1.4426950408889634
LN2_HI = 0.6931471803691238
LN2_LO = 1.9082149292705877e-10
TAYLOR = np.array([1.0 / math.factorial(i) for i in range(14)])  # 1/0! ... 1/13!

# Below this exp(x) is 0 in float64 (exp(-745.2) < 2^-1075, half the least subnormal).
EXP_ZERO_BELOW = -746.0


def exp_nonpositive(x: np.ndarray) -> np.ndarray:
    """exp(x) for float64 ``x`` <= 0 (``-inf`` gives 0), with the operations
    of ``logweights.cu``'s ``exp_nonpositive``, one IEEE operation at a time."""
    x = np.asarray(x, dtype=np.float64)
    zero = x < EXP_ZERO_BELOW
    x = np.where(zero, 0.0, x)
    k = np.floor(x * LOG2_E + 0.5)
    r = (x - k * LN2_HI) - k * LN2_LO
    p = np.full_like(r, TAYLOR[-1])
    for c in TAYLOR[-2::-1]:
        p = p * r + c
    return np.where(zero, 0.0, np.ldexp(p, k.astype(np.int32)))


def first_bad(lw, xp=np) -> int | None:
    """Index of the first NaN or +inf log-weight, None if there is none."""
    bad = xp.isnan(lw) | (lw == np.inf)
    return int(xp.flatnonzero(bad)[0]) if bool(bad.any()) else None


def check_log_weights(lw, xp=np) -> float:
    """Raise on a NaN or +inf log-weight (naming the first), or on all -inf;
    return the largest log-weight."""
    bad = first_bad(lw, xp)
    if bad is not None:
        value = float(lw[bad])
        what = "NaN" if value != value else "+inf"
        raise ValueError(
            f"log-weights[{bad}] is {what}: log-weights must be finite or -inf (a zero weight)"
        )
    top = float(lw.max())
    if top == -np.inf:
        raise ValueError("all log-weights are -inf: at least one weight must be positive")
    return top


def to_weights(lw: np.ndarray) -> np.ndarray:
    """The weights exp(lw - max lw) of checked host log-weights, in their dtype."""
    top = check_log_weights(lw)
    return exp_nonpositive(lw.astype(np.float64) - top).astype(lw.dtype)
