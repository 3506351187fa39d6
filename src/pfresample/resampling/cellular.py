"""Cellular resampling on a ring (Gelencsér-Horváth et al. 2013, Fig 6).

Particle i draws its ancestor from its one-sided neighbourhood on the ring,
N_i = {i, i-1, ..., i-r} mod N, with probability L^j / W_i, where
W_i = sum_{k in N_i} L^k (the paper's §"Cellular particle filter"; its
printed ``L[j]/w[j]`` in step 5 of Fig 6 divides by W_i). With r = N - 1
every particle draws from all N, and the offspring are multinomial's.

The contract, so that ``gpu_kernels/cellular.cu`` returns the same ancestors:

* **Draw layout.** One uniform a particle: particle stream
  ``(seed, DOMAIN_PARTICLE, i)``, counter 0, as a float in [0, 1).
* **Sums.** In float64, over the weights times ``sums.stats_scale`` (1 for
  float32 weights; a power of two for float64 weights whose sum could
  overflow or lose its bits), in the paper's order d = 0, 1, ..., r
  (neighbour i - d): W = ((0 + L^i) + L^{i-1}) + ... + L^{i-r}.
* **Choice.** t = u W; the ancestor is neighbour d*, the number of running
  sums s_d = L^i + ... + L^{i-d} that are <= t. The paper adds L^j / W_i and
  stops when the sum exceeds u; comparing s_d with u W is the same choice
  with one product instead of r + 1 divisions. Both loops run over the whole
  neighbourhood, without early exit, as the paper's kernel does.
* **Where the paper is silent.** If every s_d <= t (possible only when W is
  so small that u W rounds up to W) the ancestor is the farthest neighbour
  with positive weight. If the whole neighbourhood has zero weight (the
  paper divides by W_i = 0 there), the ancestor is the nearest particle with
  positive weight beyond it, i - r - 1, i - r - 2, ... around the ring: a
  zero weight is never chosen.

Unbiasedness does not hold for r < N - 1: particle j's expected offspring
is sum_{i : j in N_i} L^j / W_i, not N L^j / sum L (tests/library/test_cellular.py
checks that formula).

The filter's choice (``cellular_log``) also runs in the paper's precision and
with the paper's rule, for ``filters/cellular.py``'s ``precision`` and
``neighbourhood`` options: ``dtype=float32`` makes the weights exp(log w - max),
W and every running sum float32 (the paper's kernel is single precision, its
Fig 6 arrays "at a single precision"); ``divide=True`` adds the quotients
L^j / W_i one by one and counts the running sums <= u, as Fig 6's step III.5
prints it (one division a neighbour, the arithmetic --use_fast_math
approximates on the GPU), instead of comparing s_d with u W_i. In exact
arithmetic all of them make the same choice; in float32 a particle's choice can
differ from the float64 one only where u lies within the rounding of the
running sums of a boundary (tests/library/test_cellular.py bounds how often).
"""

from __future__ import annotations

import numpy as np

from ..rng import DOMAIN_PARTICLE, philox_block, uniform_float
from ..sums import stats_scale
from .lanes import map_chunks


def scaled_weights(w: np.ndarray) -> np.ndarray:
    """The weights the sums read: float64, times ``stats_scale`` (exact)."""
    return w.astype(np.float64) * stats_scale(float(w.max()), w.dtype)


def nearest_positive_before(a: np.ndarray) -> np.ndarray:
    """``before[q]``: the first index q, q - 1, ..., 0, N - 1, ... (around the
    ring) whose weight is positive (at least one is)."""
    idx = np.where(a > 0, np.arange(a.size), -1)
    running = np.maximum.accumulate(idx)
    return np.where(running >= 0, running, running[-1])


def neighbourhood_choice(
    ext: np.ndarray, radius: int, p0: int, p1: int, u: np.ndarray, divide: bool = False
):
    """(d*, W) for the particles p0 ... p1 - 1: the neighbour chosen (the
    count of running sums s_d <= u W, or with ``divide`` of running sums of
    the quotients w / W that are <= u; r + 1 when none is above) and the
    neighbourhood's sum. ``ext[p + radius - d]`` is the weight of neighbour d
    of particle p; the sums are in ``ext``'s precision (``u`` in the same)."""
    total = np.zeros(p1 - p0, dtype=ext.dtype)
    for d in range(radius + 1):
        total += ext[p0 + radius - d : p1 + radius - d]
    s = np.zeros(p1 - p0, dtype=ext.dtype)
    count = np.zeros(p1 - p0, dtype=np.int64)
    if divide:  # Fig 6, III.5: add L^j / W_i, stop where the sum passes u
        live = total > 0
        inv = np.where(live, total, ext.dtype.type(1))
        for d in range(radius + 1):
            s += ext[p0 + radius - d : p1 + radius - d] / inv
            count += s <= u
        return np.where(live, count, 0), total
    t = u * total
    for d in range(radius + 1):
        s += ext[p0 + radius - d : p1 + radius - d]
        count += s <= t
    return count, total


def _choose(
    ext: np.ndarray, radius: int, p0: int, p1: int, u: np.ndarray, n: int, divide: bool = False
):
    """(ancestors, dead) of particles p0 ... p1 - 1 by the contract's scan
    (or the paper's quotients, ``divide``): the neighbour chosen, the
    farthest positive one where the running sums stayed <= u W (rare), and
    the mask of neighbourhoods without weight (their entries of the
    ancestors are still to be set)."""
    d, total = neighbourhood_choice(ext, radius, p0, p1, u, divide)
    particle = np.arange(p0, p1)
    for q in np.flatnonzero((d > radius) & (total > 0)):
        v = ext[particle[q] : particle[q] + radius + 1][::-1]  # neighbours d = 0 ... r
        d[q] = int(np.flatnonzero(v > 0)[-1])
    return (particle - np.minimum(d, radius)) % n, total == 0


def _ancestors(ext, before, radius: int, p0: int, p1: int, u: np.ndarray, n: int) -> np.ndarray:
    """The ancestors of particles p0 ... p1 - 1 under the contract above."""
    anc, dead = _choose(ext, radius, p0, p1, u, n)
    if dead.any():
        anc[dead] = before[(np.arange(p0, p1)[dead] - radius - 1) % n]
    return anc.astype(np.int32)


def _rechoose(
    lw: np.ndarray, radius: int, particles: np.ndarray, u: np.ndarray, dtype=np.float64,
    divide: bool = False,
) -> np.ndarray:  # fmt: skip
    """d* of particles whose neighbourhood has a finite log-weight, with
    their neighbourhood's own maximum as the shift: the scan's rule (or the
    quotients', ``divide``) on the (particles x (r + 1)) matrix of their
    neighbours' weights, running sums in the order d = 0 ... r, in ``dtype``."""
    n = lw.size
    own = lw[(particles[:, None] - np.arange(radius + 1)[None, :]) % n]  # neighbour d in column d
    a = np.exp((own - own.max(axis=1, keepdims=True)).astype(dtype))
    running = np.cumsum(a, axis=1)  # add.accumulate: sequential, in dtype
    if divide:
        quotients = np.cumsum(a / running[:, -1:], axis=1)
        d = np.sum(quotients <= u[:, None], axis=1)
    else:
        d = np.sum(running <= (u * running[:, -1])[:, None], axis=1)
    short = np.flatnonzero(d > radius)  # u W rounded up to W: the farthest positive one
    for q in short:
        d[q] = int(np.flatnonzero(a[q] > 0)[-1])
    return d


def cellular_log(
    log_w: np.ndarray, key, radius: int, *, dtype=np.float64, divide: bool = False
) -> np.ndarray:
    """One cellular resampling (ancestors, int32) from log-weights, as the
    cellular filter needs it: the weights are exp(log w - max log w) in
    ``dtype`` (float64, or the paper's float32: the module docstring), and a
    neighbourhood whose weights all underflow there draws again with its own
    maximum as the shift, so that it draws by its own ratios (the paper's
    local normalisation); only a neighbourhood of -inf log-weights takes the
    nearest finite one beyond it. ``divide``: the paper's running sum of
    quotients (module docstring). The same choices as the GPU filter's
    (cellular.cu, cpf_step), whose shift is the tile's."""
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    lw = np.asarray(log_w, dtype=np.float64)
    n = lw.size
    a = np.exp((lw - lw.max()).astype(dtype))
    ext = np.concatenate([a[n - radius :], a]) if radius else a
    u = uniform_float(draws_of(key, n)).astype(dtype)
    anc, dead_mask = _choose(ext, radius, 0, n, u, n, divide)
    dead = np.flatnonzero(dead_mask)
    if dead.size:
        finite = np.isfinite(lw)
        window = (dead[:, None] - np.arange(radius + 1)[None, :]) % n
        window_has = finite[window].any(axis=1)
        local = dead[window_has]
        if local.size:
            anc[local] = (local - _rechoose(lw, radius, local, u[local], dtype, divide)) % n
        empty = dead[~window_has]
        if empty.size:
            before = nearest_positive_before(finite.astype(np.float64))
            anc[empty] = before[(empty - radius - 1) % n]
    return anc.astype(np.int32)


def draws_of(key, n: int) -> np.ndarray:
    """Counter 0 of the particle streams 0 ... n - 1 under ``key`` (k0, k1)."""
    return philox_block(key, np.arange(n, dtype=np.uint64), 0, DOMAIN_PARTICLE)[0]


def cellular(w: np.ndarray, keys, *, radius: int) -> np.ndarray:
    """Ancestors (K x N, int32) of ``K = len(keys[0])`` cellular resamplings
    with neighbourhood radius ``radius`` (0 <= r <= N - 1, checked by the caller)."""
    n = w.size
    a = scaled_weights(w)
    ext = np.concatenate([a[n - radius :], a]) if radius else a  # ext[p + r - d] = a[(p - d) % n]
    before = nearest_positive_before(a)

    def kernel(chunk):
        u = uniform_float(chunk.particle_stream().word(0)).astype(np.float64)
        p = chunk.particle
        out = np.empty(p.size, dtype=np.int32)
        starts = np.flatnonzero(np.diff(p) != 1) + 1  # a chunk may span replicas
        for lo, hi in zip(np.r_[0, starts], np.r_[starts, p.size], strict=True):
            out[lo:hi] = _ancestors(
                ext, before, radius, int(p[lo]), int(p[hi - 1]) + 1, u[lo:hi], n
            )
        return out

    return map_chunks(n, keys, kernel)
