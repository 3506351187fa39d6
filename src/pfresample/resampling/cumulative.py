"""Resamplers built on the cumulative sum of the weights (thesis §3.2).

* Systematic (Algorithm 3.1, cumulative offspring; Algorithm 3.2, to ancestors)
* Stratified, Multinomial, Residual (the classical schemes; Douc et al. 2005)

All four work on ``r_i = N * C_i / C_N`` with ``C`` the inclusive prefix sum
of the weights, computed in ``precision`` (the weights' own dtype unless asked
otherwise) and in the device's order (:mod:`.prefix_sum`), so that the CPU and
the GPU give the same ancestors for any weights. In float32, ``C`` carries the
rounding error that makes Systematic biased above about 2^18 particles (thesis
§6.6) -- a result the figures show, kept on purpose; ask for
``precision="float64"`` to remove it.

``precision="log32"`` (Systematic, Stratified, Multinomial) computes r from
the float32 log-domain scan of Güldaş (2015) Appendix A instead
(:mod:`.log_scan`, its level set by ``log_offset``), the kernel behind that
thesis's float32 instability.

Zero weights are never chosen: ``C`` is flat over them, so they own no part
of [0, N) (:mod:`.prefix_sum`, step 3).

Draw layout: Systematic's single u is counter 0 of stream 0 in the global
domain; Stratified and Multinomial use counter 0 of particle stream s for
output slot s; Residual uses counter 0 of particle stream s for its s-th
residual draw. All uniforms are in [0, 1).
"""

from __future__ import annotations

import numpy as np

from ..rng import DOMAIN_GLOBAL, philox_block, uniform_float
from ..sums import frexp_scale, weight_sums
from .lanes import map_chunks
from .log_scan import log_scaled_prefix_sum
from .prefix_sum import prefix_sum

LOG32 = "log32"  # the precision of the log-domain scan (float32 log-sums)


def _dtype(w: np.ndarray, precision) -> np.dtype:
    if precision == LOG32:
        return np.dtype(np.float32)
    return np.dtype(precision) if precision is not None else w.dtype


def _ratios(w: np.ndarray, precision, count: int, log_offset) -> tuple[np.ndarray, int]:
    """r = count * C / C_N and the last positive index, by the tiled linear
    scan or, for ``precision="log32"``, the log-domain scan."""
    if precision == LOG32:
        return log_scaled_prefix_sum(w, count, 0.0 if log_offset is None else log_offset)
    return scaled_prefix_sum(w, _dtype(w, precision), count)


def scaled_prefix_sum(w: np.ndarray, dtype, total: int, scaled=None) -> tuple[np.ndarray, int]:
    """``total * C / C_N`` in ``dtype`` (Algorithm 3.1, lines 3 and 5, total = N),
    and the index of the last positive weight (``scaled``: see
    :func:`.prefix_sum.prefix_sum`)."""
    c, last = prefix_sum(w, dtype, scaled)
    total_weight = c[-1]
    c *= dtype.type(total)  # in place, in the order of Algorithm 3.1: (N * C) / C_N
    c /= total_weight
    return c, last


def cumulative_offspring_to_ancestors(cum: np.ndarray) -> np.ndarray:
    """Algorithm 3.2: cumulative offspring O (non-decreasing, ending at N) to
    ancestors. Slot k's ancestor is the first i with O_i > k, which is the
    number of i with O_i <= k: a histogram of O, summed up (measured 1.6x
    faster than repeating each index by its offspring count)."""
    n = cum.size
    return np.cumsum(np.bincount(cum, minlength=n + 1)[:n], dtype=np.int32)


def systematic(w: np.ndarray, keys, *, precision=None, log_offset=None) -> np.ndarray:
    """Systematic resampling (Algorithm 3.1 + 3.2): ``O_i = min(N, floor(r_i + u))``.

    ``O`` is set to N from the last positive weight on: in float32
    ``N * C_N / C_N`` may round below N, which would leave the last slots
    without an ancestor, and the zero weights after it take none.
    """
    n = w.size
    r, last = _ratios(w, precision, n, log_offset)
    u = uniform_float(philox_block(keys, 0, 0, DOMAIN_GLOBAL)[0]).astype(r.dtype)
    out = np.empty((u.size, n), dtype=np.int32)
    cum = np.empty(n, dtype=np.int64)  # int64: what bincount takes without a copy
    for row, u_k in zip(out, u, strict=True):
        np.add(r, u_k, out=cum, casting="unsafe")  # truncation is floor here: r + u >= 0
        cum[np.searchsorted(cum, n) :] = n  # min(N, .); cum is non-decreasing
        cum[last:] = n
        row[:] = cumulative_offspring_to_ancestors(cum)
    return out


def inverse_cdf_draws(
    w: np.ndarray, keys, count: int, dtype, *, stratify: bool, scaled=None, ratios=None
) -> np.ndarray:
    """``count`` draws per replica by inverting ``r = count * C / C_N``: slot s
    looks up ``s + U_s`` (stratified) or ``count * U_s`` (multinomial), with U_s
    from particle stream s. A value lands in particle i when it falls in
    ``[r_{i-1}, r_i)``, so zero-weight particles are never chosen; one that
    rounding pushes past the end goes to the last particle of positive weight.
    """
    r, last = scaled_prefix_sum(w, dtype, count, scaled) if ratios is None else ratios

    def kernel(chunk):
        u = uniform_float(chunk.particle_stream().word(0)).astype(dtype)
        v = chunk.particle.astype(dtype) + u if stratify else dtype.type(count) * u
        return np.minimum(np.searchsorted(r, v, side="right"), last)

    return map_chunks(count, keys, kernel)


def _draws(w, keys, precision, log_offset, stratify: bool) -> np.ndarray:
    ratios = _ratios(w, precision, w.size, log_offset) if precision == LOG32 else None
    return inverse_cdf_draws(w, keys, w.size, _dtype(w, precision), stratify=stratify,
                             ratios=ratios)  # fmt: skip


def stratified(w: np.ndarray, keys, *, precision=None, log_offset=None) -> np.ndarray:
    """Stratified resampling: output slot s draws inside stratum ``[s, s+1)`` of r."""
    return _draws(w, keys, precision, log_offset, True)


def multinomial(w: np.ndarray, keys, *, precision=None, log_offset=None) -> np.ndarray:
    """Multinomial resampling: every output slot draws anywhere in ``[0, N)``."""
    return _draws(w, keys, precision, log_offset, False)


def residual_expected(w: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``N w_i / sum w`` and its floor (the copies), as cumulative.cu's
    residual_split computes them: on the weights and their sum (the device's,
    :func:`pfresample.sums.weight_sums`) scaled so that the largest weight is
    in [0.5, 1), which no finite input overflows; in ``dtype``, or in float64
    when rounding there gives more than N copies in all."""
    n = w.size
    total, maximum, stats_scale = weight_sums(w)
    scale = frexp_scale(maximum)
    a = w.astype(np.float64) * scale
    s = total * (scale / stats_scale)
    expected = dtype.type(n) * a.astype(dtype) / dtype.type(s)
    copies = np.floor(expected).astype(np.int64)
    if copies.sum() > n:  # low precision rounded some N w_i / sum w up past an integer
        expected = float(n) * a / s
        copies = np.floor(expected).astype(np.int64)
    return expected, copies


def residual(w: np.ndarray, keys, *, precision=None) -> np.ndarray:
    """Residual resampling: ``floor(N w_i / sum w)`` copies of each particle,
    then the remaining R slots by multinomial draws on the fractional parts."""
    n = w.size
    dtype = _dtype(w, precision)
    expected, copies = residual_expected(w, dtype)
    k = len(keys[0])
    deterministic = np.tile(np.repeat(np.arange(n, dtype=np.int32), copies), (k, 1))
    rest = n - int(copies.sum())
    if rest == 0:
        return deterministic
    fraction = (expected - copies).astype(dtype)
    if not (fraction > 0).any():  # every fraction rounded to zero: draw on the weights
        fraction = (w.astype(np.float64) * frexp_scale(float(w.max()))).astype(dtype)
    # The draws' values lie in [0, 1): their sum cannot overflow, and they are
    # summed unscaled (only fractions all below 2^-100 would lose bits there).
    drawn = inverse_cdf_draws(fraction, keys, rest, dtype, stratify=False, scaled=False)
    return np.concatenate([deterministic, drawn], axis=1)
