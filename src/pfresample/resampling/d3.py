"""D3 (dual distribution dependent) resampling: Das, Mazumdar & Banerjee 2014,
§3.1, eqs. 5-6 and Table 1.

D3 does not copy particles: it **moves** them. A systematic stride gives each
slot i a particle j_i (Table 1's ``while (u > CSW[j]) j++``); among the
particles between i and j_i, l_i has the largest likelihood weight w and p_i
the largest prior weight pw (eqs. 1-4, computed by the filter). Then

    x'(i)   = x(p_i) + r_i,  r_i ~ U(0, |x(i)   - x(p_i)|)      (eq. 5)
    x'(j_i) = x(l_i) + r_j,  r_j ~ U(0, |x(j_i) - x(l_i)|)      (eq. 6)

and every weight becomes 1/N. The result is a new set of particle *values*,
not ancestors: :func:`pfresample.resample_d3` returns the new particles.

The contract, so that ``gpu_kernels/d3.cu`` returns the same particles to
the bit. Indices are 0-based.

* **Stride (j_i).** ``cdf="prefix"`` (default): j_i is the ancestor of slot i
  under the project's Systematic resampling with the same seed and
  ``precision`` (:func:`.cumulative.systematic`: the first k with
  ``floor(N C_k / C_N + u) > i``; u is counter 0 of stream 0 in the global
  domain). ``cdf="local"`` is the paper's GPU search (§4.1, steps b-c):
  slot i adds the weights from particle 0 up until its own threshold is
  passed, O(N^2) work in all. Its sums are float64, sequential (c_k =
  c_{k-1} + a_k over a = w * ``sums.stats_scale``), divided by the device's
  sum of a (``sums.weight_sums``); j_i is the first k with
  ``floor(N c_k / S + u) > i``, or the last particle of positive weight if
  none is. The two CDFs round differently, so they can differ where a
  threshold falls within an ulp of a cumulative sum (tests measure how
  rarely); each is exact against its own GPU kernel.
  ``cdf="paper"`` is the paper's GPU search **as printed** (Figs 8-9): the
  local search of ``cdf="local"``, against the thresholds of
  :func:`paper_thresholds` instead of the systematic ones, with ``threads``
  threads per block (the thresholds depend on the block of the slot). Slot
  i's j_i is the first k with c_k / S >= u_i (Table 1's ``while (u >
  CSW[j]) j++``, CSW = c / S, both float64), or the last particle of
  positive weight if none is. The printed thresholds are u_i ~ i / (2N): a
  halved stride, so every j_i lies in the first half of the weights' mass
  and the stride is **biased** (docs/d3_2014.md measures it): the option
  reproduces the paper's algorithm, not a resampler to use.
* **Ranges.** R_i = [min(i, j_i), max(i, j_i)]: the particles between i and
  j_i, whichever comes first (Table 1 loops m = i .. j; a j below i, which
  systematic strides give wherever the early weights are heavy, leaves its
  loop empty). l_i and p_i are the first index of the maximum of w and of
  pw over R_i (the paper's strict ``>`` scan, started at the range's own
  first particle: Table 1 starts its maxima at w[1] and pw[1], the first
  particle of the whole array, which is an error). Only comparisons: any
  increasing transform of pw (log prior weights) gives the same p_i.
* **Noise.** One uniform U in [0, 1) per move and state component d:
  particle stream i, counter 2d for move (a) of slot i, counter 2d + 1 for
  move (b) claimed by slot i (``rng.uniform_float``). With D = x(p) - x(i)
  (Table 1's DP; DL = x(l) - x(j) for move b), in the state's precision and
  in this order:

  - ``"eq5"`` (default): x(p) + U |D| (eqs. 5-6; always a step up, E = x(p) + |D|/2 as eq. 7 says);
  - ``"table1"``: x(p) + U D (Table 1: U(0, DP), a step away from x(i));
  - ``"fig9"``: (x(p) + D/2) + (D/2) U (Fig 9's GPU code, reading its diffi as DP);
  - ``"fig9neg"``: (x(p) - D/2) - (D/2) U with the same rounding as fig9 on
    E = -D (Fig 9's code reading its diffi the other way, x(i) - x(p):
    uniform on the half of the segment from its midpoint to x(i));
  - ``"between"``: x(p) - U D (not printed: uniform on the segment from x(p) to x(i)).
* **Claims.** Several slots i can share one j (Table 3, case I). Move (b)
  of particle k is that of the *last* slot i with j_i = k (the largest i:
  the one whose write comes last in Table 1's loop); j_i is non-decreasing
  in i, so that slot is the one with j_{i+1} != j_i. Every move reads the
  input particles only (Fig 9's ``resampled`` array) and moves (b)
  overwrite moves (a) (Fig 9's barrier between the two).

With equal likelihood and prior weights, j_i = i, R_i = {i} and D = 0: D3
returns its input exactly (tests/library/test_d3.py) -- for ``cdf="paper"`` too only
where its halved thresholds happen to give j_i = i, which they do not.

**Per component** (``pfresample.resample_d3(..., components="each")``, Fig
9's "resample for xdot"): each state component d is a D3 problem of its
own, (N,) particles x[:, d] with likelihood weights w[:, d] and prior
weights pw[:, d], under the key of :func:`component_seed` (seed, d).
"""

from __future__ import annotations

import numpy as np

from ..constants import D3_THREADS
from ..contracts import D3_CDFS, D3_COMPONENTS, D3_NOISES, check_d3_threads
from ..rng import DOMAIN_GLOBAL, DOMAIN_PARTICLE, philox_block, uniform_float
from ..sums import weight_sums
from .cellular import scaled_weights
from .cumulative import systematic

NOISES, CDFS, COMPONENTS = D3_NOISES, D3_CDFS, D3_COMPONENTS  # ..contracts


def component_seed(seed, d: int) -> int:
    """The seed of component d of a per-component D3 (``components="each"``):
    SeedSequence(seed, spawn_key=(d,))'s first 64-bit word, so the components'
    strides and noise are independent of each other."""
    state = np.random.SeedSequence(int(seed), spawn_key=(int(d),))
    return int(state.generate_state(1, np.uint64)[0])


check_threads = check_d3_threads  # ..contracts


def paper_thresholds(n: int, threads: int, key) -> np.ndarray:
    """The thresholds u_i of the paper's GPU search (Figs 8-9) for N slots in
    blocks of ``threads``, float64, in this order of operations (the kernel
    ``d3_paper_strides`` repeats it). Block b = i // threads starts at slot
    f_b = b * threads; its thread 0 draws U_b (word 0 of counter 0 of stream
    b in the global domain, ``uniform_float``) and sets (Fig 8, its
    unbalanced parenthesis dropped; temp = 1/N)

        r_b  = temp/2 + (temp/2) U_b                  (in [1/(2N), 1/N))
        u1_b = (r_b / N) / 2 + (f_b / N) / 2

    and every other thread i of the block takes (Figs 8 and 9)

        u_i  = (u1_b / N) / 2 + (i / N) / 2.

    So u_i ~ i / (2N): the thresholds cover [0, 1/2], not [0, 1). The text
    of §4.1 gives another u1 (U(0, 1/N) + b threads / N), which the code
    does not compute; Fig 8's tid/N read as integer division would make
    every threshold 0 but the first: we take Fig 9's float division."""
    n = int(n)
    threads = check_threads(threads)
    count = float(n)
    slots = np.arange(n, dtype=np.int64)
    block = slots // threads
    first = (block * threads).astype(np.float64)
    streams = np.arange(int(block[-1]) + 1 if n else 0, dtype=np.uint64)
    u_block = uniform_float(philox_block(key, streams, 0, DOMAIN_GLOBAL)[0]).astype(np.float64)
    temp = 1.0 / count
    r = temp / 2.0 + (temp / 2.0) * u_block
    u1 = (r[block] / count) / 2.0 + (first / count) / 2.0
    own = (u1 / count) / 2.0 + (slots.astype(np.float64) / count) / 2.0
    return np.where(slots == block * threads, u1, own)


def paper_strides(w: np.ndarray, key, threads: int) -> np.ndarray:
    """j_i of every slot by the paper's GPU search (``cdf="paper"``): the
    first k with c_k / S >= u_i (:func:`paper_thresholds`), c the
    sequential float64 sums of the scaled weights (as ``cdf="local"``)."""
    a = scaled_weights(w)
    csw = np.cumsum(a) / weight_sums(w)[0]  # Table 1's CSW, normalised
    u = paper_thresholds(w.size, threads, key)
    j = np.searchsorted(csw, u, side="left")  # first k with CSW[k] >= u_i
    last = int(np.flatnonzero(a > 0)[-1])
    return np.minimum(j, last)


def local_cdf_strides(w: np.ndarray, key) -> np.ndarray:
    """j_i of every slot by the paper's local CDF (``cdf="local"`` above),
    computed here in one sequential cumulative sum (each GPU thread repeats
    the prefix of that sum it needs)."""
    n = w.size
    a = scaled_weights(w)
    c = np.cumsum(a)  # sequential, in index order, as each thread adds them
    total = weight_sums(w)[0]
    u = float(np.ravel(uniform_float(philox_block(key, 0, 0, DOMAIN_GLOBAL)[0]))[0])
    offspring = np.floor(c * float(n) / total + u)  # O_k, before min(N, .)
    j = np.searchsorted(offspring, np.arange(n), side="right")  # first k with O_k > i
    last = int(np.flatnonzero(a > 0)[-1])
    return np.minimum(j, last)


def strides(w: np.ndarray, key, cdf: str, precision=None, threads=None) -> np.ndarray:
    """j_i of every slot (int64, non-decreasing): the contract's stride."""
    if cdf == "local":
        return local_cdf_strides(w, key)
    if cdf == "paper":
        return paper_strides(w, key, D3_THREADS if threads is None else threads)
    k0, k1 = key
    keys = (np.asarray([k0], dtype=np.uint64), np.asarray([k1], dtype=np.uint64))
    return systematic(w, keys, precision=precision)[0].astype(np.int64)


def range_argmax(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The first index of the maximum of ``values`` over each [lo, hi]
    (inclusive), by a sparse table of first-maximum indices, built only up
    to the longest range: O(N log L) for what the paper's loop does in
    O(sum of range lengths)."""
    n = values.size
    length = hi - lo + 1
    level = np.floor(np.log2(length)).astype(np.int64)
    # log2 of an exact power of two is exact; guard the float anyway
    level -= (1 << level) > length
    level += (1 << (level + 1)) <= length
    table = [np.arange(n)]
    for k in range(1, int(level.max()) + 1):
        prev, width = table[-1], 1 << (k - 1)
        a, b = prev[: n - 2 * width + 1], prev[width : n - width + 1]
        table.append(np.where(values[b] > values[a], b, a))  # ties keep a, the first
    out = np.empty(lo.size, dtype=np.int64)
    for k, row in enumerate(table):
        sel = np.flatnonzero(level == k)
        if sel.size == 0:
            continue
        a = row[lo[sel]]
        b = row[hi[sel] - (1 << k) + 1]
        out[sel] = np.where(values[b] > values[a], b, a)
    return out


def move(x_to: np.ndarray, x_from: np.ndarray, u: np.ndarray, noise: str) -> np.ndarray:
    """The moved value near ``x_to`` (x(p) or x(l)) given the particle it
    replaces (``x_from``: x(i) or x(j)), in their precision, in the
    contract's order."""
    dtype = x_to.dtype
    u = u.astype(dtype)
    d = x_to - x_from  # Table 1's DP = x[p] - x[i], DL = x[l] - x[j]
    if noise == "eq5":
        return x_to + u * np.abs(d)
    if noise == "table1":
        return x_to + u * d
    if noise == "fig9":
        half = d * dtype.type(0.5)
        return (x_to + half) + half * u
    if noise == "between":
        return x_to - u * d
    if noise == "fig9neg":
        half = (x_from - x_to) * dtype.type(0.5)  # diffi = x(i) - x(p)
        return (x_to + half) + half * u
    raise ValueError(f"noise must be one of {', '.join(NOISES)}, got {noise!r}")


def plan(w: np.ndarray, pw: np.ndarray, key, cdf: str = "prefix", precision=None, threads=None):
    """(j, l, p, last): each slot's stride particle j_i, the first maximum of
    the likelihood (l_i) and of the prior weights (p_i) over R_i, and
    whether slot i is the last to claim its j_i (the one whose move (b) is
    kept). ``threads``: threads per block of ``cdf="paper"`` (None:
    ``cuda.geometry.D3_THREADS``)."""
    n = w.size
    j = strides(w, key, cdf, precision, threads)
    i = np.arange(n)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    l_ = range_argmax(w, lo, hi)
    p = range_argmax(pw, lo, hi)
    last = np.ones(n, dtype=bool)
    last[:-1] = j[1:] != j[:-1]
    return j, l_, p, last


def d3(
    x: np.ndarray,
    w: np.ndarray,
    pw: np.ndarray,
    key,
    *,
    noise: str = "eq5",
    cdf: str = "prefix",
    precision=None,
    threads=None,
    impl: str = "table",
) -> np.ndarray:
    """One D3 resampling of the particles ``x`` (N, or N x D) with likelihood
    weights ``w`` and prior weights ``pw`` (checked by the caller) under
    the Philox key ``key`` = (k0, k1): the new particles (same shape and
    dtype as ``x``), under the contract above. ``impl``: "table" (the range
    maxima by a sparse table, O(N log N)) or "loop" (Table 1's sequential
    loop, :mod:`pfresample.resampling.d3_loop`; the same particles)."""
    if impl == "loop":
        from .d3_loop import d3_loop  # here: numba, where installed, loads only for the loop

        j = None if cdf == "prefix" else strides(w, key, cdf, precision, threads)
        return d3_loop(x, w, pw, key, noise_code=NOISES.index(noise), j=j, precision=precision)
    if impl != "table":
        raise ValueError(f"impl must be 'table' or 'loop', got {impl!r}")
    n = w.size
    j, l_, p, last = plan(w, pw, key, cdf, precision, threads)
    x2 = x.reshape(n, -1)
    out = np.empty_like(x2)
    claimers = np.flatnonzero(last)
    k = j[claimers]
    streams = np.arange(n, dtype=np.uint64)
    for d in range(x2.shape[1]):
        block = philox_block(key, streams, (2 * d) >> 2, DOMAIN_PARTICLE)
        ua = uniform_float(block[(2 * d) & 3])
        ub = uniform_float(block[(2 * d + 1) & 3])
        col = x2[:, d]
        out[:, d] = move(col[p], col, ua, noise)  # (a) for every slot i
        out[k, d] = move(col[l_[claimers]], col[k], ub[claimers], noise)  # (b) overwrites
    return out.reshape(x.shape)
