"""Butterfly (augmented) resampling: Güldaş 2015, §3.1-3.3 (after Heine,
Whiteley, Cemgil and Güldaş 2014).

Instead of one prefix sum over all N weights, m stages each resample inside
small blocks (Fig 3.6). With the radix sequence ``(r_1, ..., r_m)``
(``pfresample.radix``), S_k = r_1 ... r_k and S_0 = 1, slot i at stage k
belongs to the block of the r_k slots

    base + t' S_{k-1},  t' = 0 ... r_k - 1,  base = floor(i / S_k) S_k + i mod S_{k-1}

(the non-zero pattern of A_k in eq. 3.4; eqs. 3.6-3.7), and draws one member
of its block in proportion to the members' stage weights; the ancestors
compose, a_k[i] = a_{k-1}[base + j S_{k-1}] for the member j drawn. A
member's stage weight is the sum of the input weights over the aligned
segment of S_{k-1} slots it stands for (Fig 3.6 line 9 gives every member of
a block the block's total / r_k: a segment's mean, so the sums here are those
means times S_{k-1}, the same proportions). So a stage needs only the
compact array ``c`` of the N / S_{k-1} segment sums, and a block's members
are r_k consecutive entries of it (the "shrinking weights" of Table A.3).

The contract both backends follow, bit for bit:

1. **Scale.** ``c_0 = w * 2^-e`` with 2^e the power of two that puts the
   largest weight in [0.5, 1) (``sums.frexp_scale``), computed in float64
   and rounded to the precision T (the weights' own, or ``precision``). No
   finite input overflows a sum of N such values, and a power of two changes
   no ratio.
2. **Sums.** Stage k scans ``c_{k-1}`` in segments of r_k, in T, in two
   levels: a segment is cut into BUTTERFLY_RUNS = 32 runs of s = ceil(r_k /
   32) consecutive values (the last ones shorter or empty); L_j is the
   sequential inclusive sum of value j's run up to j, P_b the sequential sum
   of the totals of runs 0 ... b-1 (P_0 = 0), and C_j = P_b + L_j for j in
   run b. (On the device a warp sums a segment, a run per lane.) ``C`` is
   non-decreasing and flat over zero weights: a run's first C is P_b plus a
   value >= 0, and P_b is exactly the previous run's last C. ``c_k`` is each
   segment's last C.
3. **Draws.** Slot i's uniform at stage k is ``uniform_float`` of counter
   k - 1 of its particle stream i (``DOMAIN_PARTICLE``); butterfly
   Systematic uses the draw of its block's first slot (``base``) for the
   whole block. With W the block's total, rounded in T:
   multinomial ``v = u * W``; stratified and systematic
   ``v = ((t + u) * W) / r_k`` with t the slot's position in its block.
4. **Search.** The member drawn is the first j with C_j > v; if none (v
   rounded up to W), the first j with C_j >= W, which is the last member of
   positive weight. A block of total 0 (its weights underflowed in step 1)
   keeps every slot's own member, j = t: no later stage draws from it, so
   zero weights are never ancestors.

With ``radix=(N,)`` there is one stage and one block: butterfly multinomial
is standard multinomial resampling ("with m = 1 and A_1 = 1_N, augmented
resampling corresponds to standard multinomial resampling", §3.1), and the
systematic and stratified variants are the standard ones, each with its own
arithmetic (this file's, not ``cumulative.py``'s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..constants import BUTTERFLY_RUNS
from ..contracts import BUTTERFLY_DRAWS
from ..rng import DOMAIN_PARTICLE, philox_block, uniform_float
from ..sums import frexp_scale

DRAWS = BUTTERFLY_DRAWS


def scaled_input(w: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, float]:
    """Step 1 of the contract: ``c_0`` in ``dtype`` and the scale 2^-e."""
    scale = frexp_scale(float(w.max()))
    return (w.astype(np.float64) * scale).astype(dtype), scale


def stage_sums(c: np.ndarray, r: int) -> np.ndarray:
    """Step 2: the two-level inclusive sums of ``c`` in segments of ``r``, as
    a (len(c) / r, r) array in c's dtype (``np.cumsum`` adds left to right,
    one value at a time)."""
    rows = c.size // r
    run = -(-r // BUTTERFLY_RUNS)
    padded = np.zeros((rows, BUTTERFLY_RUNS * run), dtype=c.dtype)  # zeros change no sum
    padded[:, :r] = c.reshape(rows, r)
    local = np.cumsum(padded.reshape(rows, BUTTERFLY_RUNS, run), axis=2, dtype=c.dtype)
    before = np.zeros((rows, BUTTERFLY_RUNS), dtype=c.dtype)
    before[:, 1:] = np.cumsum(local[:, :-1, -1], axis=1, dtype=c.dtype)
    return (before[:, :, None] + local).reshape(rows, -1)[:, :r]


def stage_uniforms(key, streams: np.ndarray, stage: int, dtype) -> np.ndarray:
    """Step 3's uniforms: counter ``stage`` of the particle streams."""
    word = philox_block(key, streams, stage >> 2, DOMAIN_PARTICLE)[stage & 3]
    return uniform_float(word).astype(dtype)


def first_above(cum: np.ndarray, rows: np.ndarray, v: np.ndarray, strict: bool) -> np.ndarray:
    """For each i, the first j with cum[rows[i], j] > v[i] (``strict``) or
    >= v[i]: a binary search per slot, over its own row (r if none)."""
    r = cum.shape[1]
    flat = cum.ravel()
    lo = np.zeros(v.shape, dtype=np.int64)
    hi = np.full(v.shape, r, dtype=np.int64)
    offset = rows.astype(np.int64) * r
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = (lo + hi) >> 1
        value = flat[offset + np.minimum(mid, r - 1)]  # closed searches may sit at r
        below = (value <= v) if strict else (value < v)
        go_right = open_ & below
        lo = np.where(go_right, mid + 1, lo)
        hi = np.where(open_ & ~below, mid, hi)


def stage_members(cum: np.ndarray, q: np.ndarray, t: np.ndarray, u: np.ndarray, draw: str):
    """Steps 3-4 for the slots whose block is row q of ``cum`` and whose
    position in it is t: the member each slot draws."""
    dtype = cum.dtype.type
    r = cum.shape[1]
    total = cum[q, -1]
    if draw == "multinomial":
        v = u * total
    else:
        v = (t.astype(cum.dtype) + u) * total / dtype(r)
    j = first_above(cum, q, v, strict=True)
    over = j == r
    if over.any():
        j[over] = first_above(cum, q[over], total[over], strict=False)
    empty = total == 0
    j[empty] = t[empty]
    return j


@dataclass(frozen=True)
class Stage:
    """Stage k's geometry for every slot i: its block's row q in the stage's
    sums, its position t in the block, and the block's first slot ``base``."""

    q: np.ndarray
    t: np.ndarray
    base: np.ndarray

    @classmethod
    def of(cls, n: int, stride: int, r: int) -> Stage:
        i = np.arange(n, dtype=np.int64)
        span = stride * r  # S_k
        q = i // span
        return cls(q, (i // stride) % r, q * span + i % stride)


def plan_stages(c: np.ndarray, radix, go_on=None):
    """The stage sums of Fig 3.6 on the scaled weights ``c``, one (N / S_{k-1}
    / r_k, r_k) array per stage run: they do not depend on the draws, so
    every replica shares them. ``go_on(sums, span)`` decides before each
    stage from the current compact sums and the span S_{k-1} they cover
    (None: every stage runs). Returns the list, the compact sums after the
    last stage run and their span."""
    plan, sums, span = [], c, 1
    for r in radix:
        if go_on is not None and not go_on(sums, span):
            break
        cum = stage_sums(sums, r)
        plan.append(cum)
        sums, span = cum[:, -1].copy(), span * r
    return plan, sums, span


def draw_ancestors(plan: list, key, draw: str, n: int) -> np.ndarray:
    """One replica's ancestors (Philox ``key``) through the planned stages
    (:func:`plan_stages`): a_k[i] = a_{k-1}[base + j S_{k-1}]."""
    ancestors, stride = np.arange(n), 1
    for k, cum in enumerate(plan):
        r = cum.shape[1]
        geometry = Stage.of(n, stride, r)
        streams = geometry.base if draw == "systematic" else np.arange(n)
        u = stage_uniforms(key, streams, k, cum.dtype)
        j = stage_members(cum, geometry.q, geometry.t, u, draw)
        ancestors = ancestors[geometry.base + j * stride]
        stride *= r
    return ancestors


def _replica_keys(keys):
    """Each replica's Philox key (k0, k1) of the (k0 array, k1 array) pair."""
    k0, k1 = keys
    return zip(np.atleast_1d(k0), np.atleast_1d(k1), strict=True)


def butterfly(w: np.ndarray, keys, *, draw: str, radix, precision=None) -> np.ndarray:
    """Butterfly resampling (Fig 3.6) with the in-block ``draw``, for every
    seed's Philox key: (K, N) int32 ancestors. ``radix`` is checked
    (``radix.check_radix``) by the caller."""
    dtype = np.dtype(precision) if precision is not None else w.dtype
    c, _ = scaled_input(w, dtype)
    plan, _, _ = plan_stages(c, radix)
    out = np.empty((np.size(keys[0]), w.size), dtype=np.int32)
    for row, key in zip(out, _replica_keys(keys), strict=True):
        row[:] = draw_ancestors(plan, key, draw, w.size)
    return out


def butterfly_multinomial(w, keys, *, radix, precision=None):
    """Butterfly multinomial resampling (Fig 3.6, eqs. 3.4, 3.6, 3.7)."""
    return butterfly(w, keys, draw="multinomial", radix=radix, precision=precision)


def butterfly_stratified(w, keys, *, radix, precision=None):
    """Butterfly stratified resampling (end of §3.2): stratified inside each block."""
    return butterfly(w, keys, draw="stratified", radix=radix, precision=precision)


def butterfly_systematic(w, keys, *, radix, precision=None):
    """Butterfly systematic resampling (end of §3.2): systematic inside each block."""
    return butterfly(w, keys, draw="systematic", radix=radix, precision=precision)


def effective_sample_size(c: np.ndarray, stride: int) -> float:
    """ESS (eq. 1.11) of the stage weights whose segment sums over ``stride``
    slots are ``c``: every slot of a segment weighs c / stride, so
    ESS = stride (sum c)^2 / sum c^2. In float64, each sum sequential (left
    to right): an order fixed by the values alone."""
    c64 = c.astype(np.float64)
    total = np.cumsum(c64)[-1]
    squares = np.cumsum(c64 * c64)[-1]
    return float(stride * (total * total / squares))


@dataclass(frozen=True)
class AdaptiveResult:
    """The adaptive butterfly's output: ancestors (K, N), each replica's
    output weights (K, N) in the input's scale (the mean of the input
    weights over each slot's segment; the input weights when no stage ran),
    and the number of stages each replica ran."""

    ancestors: np.ndarray
    weights: np.ndarray
    stages: np.ndarray


def adaptive_butterfly(
    w, keys, *, draw: str, radix, tau: float, max_stages=None, precision=None
) -> AdaptiveResult:
    """The adaptive butterfly (Fig 3.7): stage k runs while the ESS of the
    current stage weights is below ``tau * N`` (the thesis's relative
    threshold, §4.2.3: tau = 0.6), and at most ``max_stages`` stages (None:
    all of ``radix``). The weights after each stage do not depend on the
    draws, so the number of stages is the same for every seed."""
    dtype = np.dtype(precision) if precision is not None else w.dtype
    n = w.size
    limit = len(radix) if max_stages is None else max_stages
    c, scale = scaled_input(w, dtype)
    plan, sums, span = plan_stages(
        c,
        radix[:limit],
        lambda sums, span: effective_sample_size(sums, span) < tau * n,
    )
    replicas = np.size(keys[0])
    ancestors = np.empty((replicas, n), dtype=np.int32)
    for row, key in zip(ancestors, _replica_keys(keys), strict=True):
        row[:] = draw_ancestors(plan, key, draw, n)
    means = np.repeat(sums.astype(np.float64) / (span * scale), span)
    weights = np.broadcast_to(means.astype(dtype), (replicas, n))
    return AdaptiveResult(ancestors, weights, np.full(replicas, len(plan), dtype=np.int64))


def adaptive_multinomial(w, keys, *, radix, tau, max_stages=None, precision=None):
    """Adaptive butterfly multinomial (Fig 3.7); ``radix=(N,)``: adaptive multinomial."""
    return adaptive_butterfly(
        w,
        keys,
        draw="multinomial",
        radix=radix,
        tau=tau,
        max_stages=max_stages,
        precision=precision,
    )


def adaptive_stratified(w, keys, *, radix, tau, max_stages=None, precision=None):
    """Adaptive butterfly stratified (Fig 3.7 with §3.2's stratified blocks)."""
    return adaptive_butterfly(
        w,
        keys,
        draw="stratified",
        radix=radix,
        tau=tau,
        max_stages=max_stages,
        precision=precision,
    )


def adaptive_systematic(w, keys, *, radix, tau, max_stages=None, precision=None):
    """Adaptive butterfly systematic (Fig 3.7 with §3.2's systematic blocks)."""
    return adaptive_butterfly(
        w,
        keys,
        draw="systematic",
        radix=radix,
        tau=tau,
        max_stages=max_stages,
        precision=precision,
    )
