"""D3 resampling as Table 1's sequential loop (Das, Mazumdar & Banerjee 2014):
the CPU baseline the paper times (Table 5's "D3 resampling (CPU)").

Table 1 walks the slots once: for each i it advances the stride j while u
exceeds the cumulative weight (``WHILE (u greater than CSW[j]) j = j + 1``),
scans m over the particles between i and j for the largest likelihood and
prior weights, and moves x[i] and x[j]. This is that loop, one slot after
another, with the contract of :mod:`pfresample.resampling.d3` (so that it
returns the same particles as the sparse-table implementation, tested):

* the stride test is Systematic's ``floor(r_j + u) <= i`` on the same
  scaled prefix sum r = N C / C_N (Table 1's ``u1 + (i - 1)/N > CSW[j]``
  multiplied by N), j capped at the last positive weight; for
  ``cdf="local"`` and ``"paper"`` (whose searches start at particle 0 for
  every slot) the strides are computed first and the loop does the rest;
* the scan covers R_i = [min(i, j), max(i, j)] and starts at its first
  particle (Table 1 starts its maxima at w[1], pw[1], an error);
* the moves read the input particles; move (b) of the last slot claiming a
  particle overwrites move (a) there (a slot whose particle an earlier slot
  claimed skips its move (a)).

The work is O(N + sum |j_i - i|), sequential. Compiled by numba where numba
is installed (``pip install numba``; the benchmark needs it for a compiled
baseline), plain Python otherwise (the same particles, for the tests).
"""

from __future__ import annotations

import numpy as np

from ..rng import DOMAIN_GLOBAL, DOMAIN_PARTICLE, philox_block, uniform_float
from .cumulative import _dtype, scaled_prefix_sum

__all__ = ["d3_loop", "compiled"]


def _move(to, frm, u, code, one_half):
    """d3.move for one value (the same operations, in the state's precision:
    ``one_half`` is 0.5 in it, so that numba does not widen a float32 product)."""
    d = to - frm
    if code == 0:  # eq5
        return to + u * abs(d)
    if code == 1:  # table1
        return to + u * d
    if code == 2:  # fig9
        half = d * one_half
        return (to + half) + half * u
    if code == 3:  # between
        return to - u * d
    half = (frm - to) * one_half  # fig9neg
    return (to + half) + half * u


def _table1(x, w, pw, r, u, last, j_given, ua, ub, code, one_half, out):
    """The loop over the slots: x (N, D), w and pw (N,), r the scaled
    prefix sum (N,) and u (Systematic's, in r's dtype) -- or j_given (N,)
    when its first entry is not -1 --, ua and ub the uniforms (N, D) of
    moves (a) and (b), ``code`` the noise's index in NOISES; writes out."""
    n, dims = x.shape
    claimed = np.zeros(n, dtype=np.bool_)
    j = 0
    for i in range(n):
        if j_given[0] >= 0:
            j = j_given[i]
        else:
            # Table 1's WHILE (u > CSW[j]) j = j + 1, as Systematic's test
            while j < last and min(n, int(r[j] + u)) <= i:
                j += 1
        lo, hi = (i, j) if i <= j else (j, i)
        lw, pmax, l_, p = w[lo], pw[lo], lo, lo
        for m in range(lo + 1, hi + 1):
            if w[m] > lw:
                lw, l_ = w[m], m
            if pw[m] > pmax:
                pmax, p = pw[m], m
        if not claimed[i]:
            for d in range(dims):
                out[i, d] = _move(x[p, d], x[i, d], ua[i, d], code, one_half)
        last_claimer = i == n - 1
        if not last_claimer:
            if j_given[0] >= 0:
                last_claimer = j_given[i + 1] != j
            else:  # the next slot's stride, without moving j
                k = j
                while k < last and min(n, int(r[k] + u)) <= i + 1:
                    k += 1
                last_claimer = k != j
        if last_claimer:
            for d in range(dims):
                out[j, d] = _move(x[l_, d], x[j, d], ub[i, d], code, one_half)
            claimed[j] = True


try:  # a compiled loop where numba is installed (bench extra), Python otherwise
    import numba

    _move = numba.njit(cache=False)(_move)
    _table1 = numba.njit(cache=False)(_table1)
    compiled = True
except ImportError:  # pragma: no cover - depends on the environment
    compiled = False


def d3_loop(x, w, pw, key, *, noise_code: int, j=None, precision=None):
    """:func:`pfresample.resampling.d3.d3` by Table 1's loop (``impl="loop"``,
    which calls it): the same arguments, checked by the caller, with the
    noise as its index in ``d3.NOISES`` and, for ``cdf`` "local" and "paper",
    the strides ``j`` computed first (None: the prefix stride, in the loop);
    the same particles."""
    n = w.size
    x2 = np.ascontiguousarray(x.reshape(n, -1))
    dims = x2.shape[1]
    if j is None:
        r, last = scaled_prefix_sum(w, _dtype(w, precision), n)
        u = uniform_float(philox_block(key, 0, 0, DOMAIN_GLOBAL)[0]).astype(r.dtype)
        u = r.dtype.type(np.ravel(u)[0])
        j_given = np.full(1, -1, dtype=np.int64)
    else:
        r, u, last = np.zeros(1), 0.0, 0
        j_given = np.asarray(j, dtype=np.int64)
    streams = np.arange(n, dtype=np.uint64)
    ua = np.empty_like(x2)
    ub = np.empty_like(x2)
    for d in range(dims):  # the contract's draws: stream i, counters 2d and 2d + 1
        block = philox_block(key, streams, (2 * d) >> 2, DOMAIN_PARTICLE)
        ua[:, d] = uniform_float(block[(2 * d) & 3])
        ub[:, d] = uniform_float(block[(2 * d + 1) & 3])
    out = np.empty_like(x2)
    _table1(x2, w, pw, r, u, int(last), j_given, ua, ub, int(noise_code), x2.dtype.type(0.5), out)
    return out.reshape(x.shape)
