"""Exact expected offspring counts, the yardsticks of the statistical tests
and of the bias figures.

* :func:`unbiased` -- ``N w_i / sum w`` (eq. 3.1), what an unbiased method gives;
* :func:`uphill` -- Uphill and Uphill-CA (eq. 6.1 and eq. 6.2; Appendix A.1),
  with ties handled exactly (see the function);
* :func:`uphill_c1` -- Uphill-C1 (eq. 6.3; Appendix A.4);
* :func:`metropolis` -- Metropolis, Metropolis-C1 and -C2 after exactly B
  steps, from the transition matrix of the chain (small N only).

All are float64. Positions i are 1-based ranks in the weights sorted
ascending, as in the thesis.
"""

from __future__ import annotations

import numpy as np

from .backend import is_device_array
from .constants import CandidateScope
from .validation import check_int, check_weights, segment_geometry


def unbiased(weights) -> np.ndarray:
    """``N w_i / sum w`` (eq. 3.1); a CuPy array gives a CuPy array."""
    if is_device_array(weights):
        w = weights.astype(np.float64)
    else:
        w = np.asarray(weights, dtype=np.float64)
    return w.size * w / w.sum()


def uphill(weights, B: int) -> np.ndarray:
    """Expected offspring of Uphill (eq. 6.1) -- and of Uphill-CA, whose
    expectation is the same (eq. 6.2, Appendix A.2 Note 3).

    Without ties, particle of rank i gets ``(i^(B+1) - (i-1)^(B+1)) / N^B``.
    With ties (Appendix A.1, Note 1), let the tie group of a particle hold
    the ranks a..b (g = b - a + 1 particles). It keeps itself when all B
    draws have rank <= b, with probability ``(b/N)^B`` -- Note 1's "largest
    index" -- and each of the a - 1 lighter particles' threads ends in the
    group with probability ``(b^B - (a-1)^B) / N^B``, shared equally by the g
    members because the strict comparison keeps the first one drawn:

        EU = (b/N)^B + (a - 1) / g * ((b/N)^B - ((a-1)/N)^B)

    which is eq. 6.1 when g = 1 and still sums to N.
    """
    w = np.asarray(weights, dtype=np.float64)
    B = check_int(B, "B")
    n = w.size
    order = np.sort(w)
    a = np.searchsorted(order, w, side="left") + 1.0  # first rank of the tie group
    b = np.searchsorted(order, w, side="right") * 1.0  # last rank of the tie group
    top = (b / n) ** B
    return top + (a - 1.0) / (b - a + 1.0) * (top - ((a - 1.0) / n) ** B)


def uphill_c1(weights, B: int, segment_bytes: int) -> np.ndarray:
    """Expected offspring of Uphill-C1 (eq. 6.3, Appendix A.4), for weights
    without ties:

        EUC1(i, B) = (sum_k p_ik^B + (i - 1)(c_i^B - (c_i - 1)^B)) / (SC DC^B)

    where p_ik counts the weights <= w_i in s-segment k and c_i is the rank
    of particle i inside its own s-segment.
    """
    w = check_weights(weights)
    B = check_int(B, "B")
    n = w.size
    if np.unique(w).size != n:
        raise ValueError("uphill_c1 expectation (eq. 6.3) needs weights without ties")
    per_segment, segments = segment_geometry(n, segment_bytes, w.itemsize)
    ordered = np.sort(w.reshape(segments, per_segment), axis=1)
    p = np.stack([np.searchsorted(seg, w, side="right") for seg in ordered])  # (SC, N)
    own = p[np.arange(n) // per_segment, np.arange(n)].astype(np.float64)  # c_i
    i = np.argsort(np.argsort(w)) + 1.0  # global rank
    total = ((p / per_segment) ** B).sum(axis=0) + (i - 1.0) * (
        (own / per_segment) ** B - ((own - 1.0) / per_segment) ** B
    )
    return total / segments


def acceptance(weights) -> np.ndarray:
    """``P(u <= w_j / w_t)`` for every pair (t, j), with u uniform on the 2^24
    points of (0, 1] that ``pfresample.rng.uniform_accept`` produces and the
    ratio rounded in the weights' precision, as the kernels compute it."""
    w = np.asarray(weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (w[None, :] / w[:, None]).astype(np.float64)
    ratio = np.nan_to_num(ratio, nan=0.0, posinf=1.0)
    return np.minimum(np.floor(ratio * 2.0**24), 2.0**24) / 2.0**24


def metropolis(
    weights, B: int, segment_bytes: int | None = None, scope: CandidateScope = CandidateScope.ARRAY
) -> np.ndarray:
    """Expected offspring after B Metropolis steps, from the chain's
    transition matrix (N x N: use N up to a few hundred).

    ``scope`` ARRAY is Metropolis (Algorithm 3.3) and also Metropolis-C2
    (Algorithm 5.2), whose candidate is uniform over all N at every step for
    each thread, so its expectation is the same. ``scope`` FIXED_SEGMENT is
    Metropolis-C1 (Algorithm 5.1): the thread's chain is confined to one
    uniformly chosen s-segment for all B steps.
    """
    w = check_weights(weights)
    B = check_int(B, "B")
    n = w.size
    acc = acceptance(w)
    if scope == CandidateScope.ARRAY:
        groups = [np.arange(n)]
    elif scope == CandidateScope.FIXED_SEGMENT:
        per_segment, segments = segment_geometry(n, segment_bytes, w.itemsize)
        groups = [np.arange(k * per_segment, (k + 1) * per_segment) for k in range(segments)]
    else:
        raise ValueError(f"scope must be CandidateScope.ARRAY or FIXED_SEGMENT, got {scope!r}")
    total = np.zeros(n)
    for cols in groups:
        step = np.zeros((n, n))
        step[:, cols] = acc[:, cols] / cols.size
        step[np.arange(n), np.arange(n)] = 0.0
        step[np.arange(n), np.arange(n)] = 1.0 - step.sum(axis=1)
        total += np.linalg.matrix_power(step, B).sum(axis=0)
    return total / len(groups)
