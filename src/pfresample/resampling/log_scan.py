"""The prefix sum of Güldaş (2015) Appendix A.1: a work-efficient scan in the
log domain, float32, in tiles of 2048 -- the standard methods' ``precision=
"log32"`` (``cumulative.py``), the kernel whose float32 instability §4.1.4
reports. ``gpu_kernels/log_scan.cu`` computes the same bits.

The values scanned are l_i = log w_i + ``offset``, rounded to float32 (log 0
= -inf): ``offset`` sets their level, which Appendix A leaves where the
filter's log-weights are (the study passes the largest raw log g, e.g. 96.8
for the Poisson sets of Fig 4.6; 0 is the level of weights whose largest is
1). The level matters: a float32 log-sum near L is known to ulp(L) / 2, an
absolute error, so the sums it stands for carry a relative error up to
ulp(L) / 2 each, against a particle's share of about 1/N of the total.

Order (thesis Tables A.1-A.2 and the text between them):

1. Tiles of LOG_TILE = 2048 values (a block of 1024 threads, two values
   each; -inf past the end). Inside a tile, the reduction phase: for stride
   = 1, 2, ..., 1024, c[k] = lse(c[k], c[k - stride]) for k = (t + 1) 2
   stride - 1 < 2048; then the distribution phase: for stride = 512, ...,
   1, c[k + stride] = lse(c[k + stride], c[k]) for k = (t + 1) 2 stride -
   1, k + stride < 2048. The tile's inclusive log-sums.
2. The tile totals (each tile's last log-sum), scanned in chunks of 2048 by
   the same two phases, one chunk after the other; every value of chunk c >
   0 then takes lse with the last value of chunk c - 1.
3. Value i of tile b > 0: lse(its local log-sum, the scanned total of tile
   b - 1).

lse(a, b) = log(e^a + e^b) = m + log1p(exp(d)), m = max(a, b), d = min -
max, in float64 with the library's own exponential
(``logweights.exp_nonpositive``) and :func:`log1p_unit`, rounded once to
float32 (``lse(-inf, -inf) = -inf``); symmetric, so an operand's place does
not matter. Only IEEE operations in a fixed order, so the GPU (compiled
without fused multiply-adds) gets the same bits.

From the log-sums to the methods: r_i = fl32(count exp(L_i - L_N)) with L_N
the last log-sum, then a running maximum (exact in any order), since
rounding can put a log-sum an ulp below the one before it and Algorithm 3.2
and the searches need r non-decreasing. From there the float32 methods run
unchanged (``cumulative.py``). The thesis's multinomial compares log U +
L_N with the log-sums; r = count exp(L_i - L_N) searched for count U finds
the same plateaus of equal float32 log-sums, which are what the instability
is made of (docs/guldas2015.md).
"""

from __future__ import annotations

import math

import numpy as np

from ..contracts import ATANH_COEFFICIENTS, ATANH_TERMS, LOG_THREADS, LOG_TILE
from ..logweights import LN2_HI, LN2_LO, exp_nonpositive

# log(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| <= 0.172 for m in [sqrt(1/2), sqrt(2)):
# the series to z^23 / 23, remainder below 0.172^25 (1e-19).
LOG_TERMS = 12
SQRT_HALF = math.sqrt(0.5)


def _atanh_series(z: np.ndarray, terms: int) -> np.ndarray:
    """2 (z + z^3/3 + ... ) to ``terms`` terms, Horner in z^2 (highest first)."""
    z2 = z * z
    p = np.full_like(z, ATANH_COEFFICIENTS[terms - 1])
    for c in ATANH_COEFFICIENTS[terms - 2 :: -1]:
        p = p * z2 + c
    return 2.0 * (z * p)


def log1p_unit(t: np.ndarray) -> np.ndarray:
    """log(1 + t) for float64 t in [0, 1] (``log_scan.cu``'s log1p_unit)."""
    t = np.asarray(t, dtype=np.float64)
    return _atanh_series(t / (2.0 + t), ATANH_TERMS)


def log_positive(w: np.ndarray) -> np.ndarray:
    """log w for float64 w >= 0 (0 gives -inf): w = m 2^e with m in
    [sqrt(1/2), sqrt(2)), log w = (e ln2_hi + e ln2_lo) + log m."""
    w = np.asarray(w, dtype=np.float64)
    zero = w == 0
    m, e = np.frexp(np.where(zero, 1.0, w))  # m in [0.5, 1)
    low = m < SQRT_HALF
    m = np.where(low, 2.0 * m, m)
    e = (e - low).astype(np.float64)
    out = (e * LN2_HI + e * LN2_LO) + _atanh_series((m - 1.0) / (m + 1.0), LOG_TERMS)
    return np.where(zero, -np.inf, out)


def lse(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """fl32(log(e^a + e^b)) of float32 arrays (module docstring)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    m, low = np.maximum(a64, b64), np.minimum(a64, b64)
    empty = m == -np.inf
    d = np.where(empty, 0.0, low - np.where(empty, 0.0, m))
    out = (m + log1p_unit(exp_nonpositive(d))).astype(np.float32)
    return np.where(empty, np.float32(-np.inf), out)


def _tile_scan(c: np.ndarray) -> np.ndarray:
    """Step 1 on every row of ``c`` (tiles, LOG_TILE), float32: the two
    phases of Tables A.1-A.2."""
    c = c.copy()
    t = np.arange(LOG_THREADS)
    stride = 1
    while stride <= LOG_THREADS:  # reduction phase
        k = (t + 1) * stride * 2 - 1
        k = k[k < LOG_TILE]
        c[:, k] = lse(c[:, k], c[:, k - stride])
        stride *= 2
    stride = LOG_THREADS // 2
    while stride > 0:  # distribution phase
        k = (t + 1) * stride * 2 - 1
        k = k[k + stride < LOG_TILE]
        c[:, k + stride] = lse(c[:, k + stride], c[:, k])
        stride //= 2
    return c


def log_values(w: np.ndarray, offset: float) -> np.ndarray:
    """l_i = fl32(log w_i + offset), -inf for a zero weight."""
    return (log_positive(w.astype(np.float64)) + float(offset)).astype(np.float32)


def log_prefix_sum(values: np.ndarray) -> np.ndarray:
    """The inclusive float32 log-sums of ``values`` (float32 log-values) in
    Appendix A's order (module docstring, steps 1-3)."""
    n = values.size
    tiles = -(-n // LOG_TILE)
    c = np.full(tiles * LOG_TILE, -np.inf, dtype=np.float32)
    c[:n] = values
    c = _tile_scan(c.reshape(tiles, LOG_TILE))
    if tiles > 1:
        chunks = -(-tiles // LOG_TILE)
        v = np.full(chunks * LOG_TILE, -np.inf, dtype=np.float32)
        v[:tiles] = c[:, -1]
        v = _tile_scan(v.reshape(chunks, LOG_TILE))
        for chunk in range(1, chunks):  # serially, as the thesis's one block does
            v[chunk] = lse(v[chunk], np.full(LOG_TILE, v[chunk - 1, -1], dtype=np.float32))
        before = v.ravel()[: tiles - 1]
        c[1:] = lse(c[1:], np.broadcast_to(before[:, None], c[1:].shape))
    return c.ravel()[:n]


def ratios(log_sums: np.ndarray, count: int) -> np.ndarray:
    """r_i = fl32(count exp(L_i - L_N)), then the running maximum (float32)."""
    top = np.float64(log_sums[-1])
    r = (float(count) * exp_nonpositive(log_sums.astype(np.float64) - top)).astype(np.float32)
    return np.maximum.accumulate(r)


def log_scaled_prefix_sum(w: np.ndarray, count: int, offset: float) -> tuple[np.ndarray, int]:
    """``count * C / C_N`` from the log-domain scan, float32, and the index
    of the last positive weight (``cumulative.scaled_prefix_sum``'s contract)."""
    r = ratios(log_prefix_sum(log_values(w, offset)), count)
    return r, int(np.flatnonzero(w > 0)[-1])
