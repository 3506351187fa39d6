"""The prefix sum of the cumulative family, in the order of ``cumulative.cu``.

The CPU computes, bit for bit, the sums the device computes, so that both
backends give the same ancestors for any weights (DESIGN.md, "Weights").
The order, for tiles of SCAN_TILE = SCAN_THREADS x SCAN_ITEMS weights (thread
t of a tile holds the SCAN_ITEMS consecutive weights from t * SCAN_ITEMS):

1. Scaling, where the weights need it (:func:`pfresample.sums.needs_scaling`:
   their sum could overflow T, or their maximum is so small that the sum
   loses its bits). Each tile's weights are multiplied by a power of two that
   brings the tile's maximum into [0.5, 1) (:func:`pfresample.sums.frexp_scale`)
   and rounded to the precision T of the sum. Exact for normal numbers, so
   the sums are those of the weights themselves, times a power of two; but
   no finite input overflows them (a tile sums to at most SCAN_TILE) and
   subnormal weights become normal numbers. Other weights are only rounded to
   T (every tile's exponent is 0).
2. The tile's local sums: sequential inside a thread; between threads, a
   block-wide exclusive scan of the thread totals (Kogge-Stone inside each
   warp of 32, then over the warp totals).
3. Zero weights: the local sum at a zero weight is that of the last positive
   weight before it in the tile (a running maximum over the positive ones),
   so a zero weight never gets an interval of its own, even where two
   partial sums meet with rounding.
4. Between tiles: each tile's total is brought to the global scale (the
   largest tile's: a factor f = 2^(e_tile - e_max), exact unless it
   underflows), and the tile totals are scanned in chunks of SCAN_TILE in the
   same way. ``prefix[b]`` is the sum before tile b, ``carry[b]`` the largest
   sum any tile before b reaches (tiles without a positive value reach
   nothing).
5. ``C_i = max(carry[b], prefix[b] + f * local_i)`` where some weight up to i
   in the tile is positive, else ``carry[b]``: non-decreasing, and flat over
   zero weights.
"""

from __future__ import annotations

import numpy as np

from ..contracts import SCAN_ITEMS, SCAN_THREADS, SCAN_TILE
from ..sums import needs_scaling, scale_exponents

# A tile without a positive weight has this exponent: below every real one.
NO_EXPONENT = -(1 << 20)


def _kogge_stone(x: np.ndarray) -> np.ndarray:
    """Inclusive scan along the last axis (a warp's shuffles, lanes d apart)."""
    d = 1
    while d < x.shape[-1]:
        x = x.copy()
        x[..., d:] = x[..., :-d] + x[..., d:]
        d *= 2
    return x


def block_exclusive_scan(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cumulative.cu's block_exclusive_scan with Add over the last axis
    (SCAN_THREADS values): the exclusive sums and the block total."""
    lanes = v.reshape(*v.shape[:-1], -1, 32)
    inclusive = _kogge_stone(lanes)
    warp_totals = _kogge_stone(inclusive[..., 31])
    zero = np.zeros_like(lanes[..., :1])
    left = np.concatenate([zero, inclusive[..., :31]], axis=-1)  # lane - 1's inclusive value
    before = np.concatenate([np.zeros_like(warp_totals[..., :1]), warp_totals[..., :-1]], axis=-1)
    return (before[..., None] + left).reshape(v.shape), warp_totals[..., -1]


def _exclusive_max(v: np.ndarray) -> np.ndarray:
    """Exclusive running maximum along the last axis, from 0."""
    shifted = np.concatenate([np.zeros_like(v[..., :1]), v[..., :-1]], axis=-1)
    return np.maximum.accumulate(shifted, axis=-1)


def tile_values(w: np.ndarray, dtype: np.dtype, scaled: bool) -> tuple[np.ndarray, np.ndarray]:
    """Step 1: the weights, tile-scaled and rounded to ``dtype``, as
    (tiles, SCAN_THREADS, SCAN_ITEMS), zeros past the end; and each tile's
    exponent (NO_EXPONENT for a tile without a positive weight)."""
    tiles = -(-w.size // SCAN_TILE)
    raw = np.zeros(tiles * SCAN_TILE, dtype=w.dtype)
    raw[: w.size] = w
    raw = raw.reshape(tiles, SCAN_TILE)
    top = raw.max(axis=1)
    exponent = scale_exponents(top) if scaled else np.zeros(tiles, dtype=np.int32)
    x = (raw.astype(np.float64) * np.ldexp(1.0, -exponent)[:, None]).astype(dtype)
    if scaled:
        exponent[top == 0] = NO_EXPONENT
    return x.reshape(tiles, SCAN_THREADS, SCAN_ITEMS), exponent


def tile_scan(x: np.ndarray) -> np.ndarray:
    """Steps 2 and 3: each tile's local sums, flat over zero weights."""
    positive = x > 0
    local = np.cumsum(x, axis=2, dtype=x.dtype)
    offset, _ = block_exclusive_scan(local[:, :, -1])
    local = offset[..., None] + local
    local = np.maximum.accumulate(np.where(positive, local, 0), axis=2)
    before = _exclusive_max(local[:, :, -1])
    return np.maximum(local, before[..., None])


def scan_tile_sums(tile_sum: np.ndarray, positive: np.ndarray):
    """Step 4: ``prefix`` and ``carry`` per tile (C_N, the largest end, is
    the last C: :func:`prefix_sum` reads it there), from the tile
    totals already in the global scale (``positive``: the tile has a positive
    weight, so it reaches its end)."""
    dtype = tile_sum.dtype
    tiles = tile_sum.size
    chunks = -(-tiles // SCAN_TILE)
    s = np.zeros(chunks * SCAN_TILE, dtype=dtype)
    s[:tiles] = tile_sum
    reaches = np.zeros(chunks * SCAN_TILE, dtype=bool)
    reaches[:tiles] = positive
    prefix = np.empty_like(s)
    carry = np.empty_like(s)
    base, reach = dtype.type(0), dtype.type(0)
    for c in range(chunks):
        part = slice(c * SCAN_TILE, (c + 1) * SCAN_TILE)
        values = s[part].reshape(SCAN_THREADS, SCAN_ITEMS)
        thread_sums = np.cumsum(values, axis=1, dtype=dtype)[:, -1]
        offset, chunk_sum = block_exclusive_scan(thread_sums)
        start = base + offset
        running = np.cumsum(np.concatenate([start[:, None], values], axis=1), axis=1, dtype=dtype)
        ends = np.where(reaches[part].reshape(SCAN_THREADS, SCAN_ITEMS), running[:, 1:], 0)
        top = np.maximum(ends.max(axis=1), reach)
        first = np.maximum(_exclusive_max(top), reach)
        prefix[part] = running[:, :-1].ravel()
        carry[part] = np.maximum.accumulate(
            np.concatenate([first[:, None], ends[:, :-1]], axis=1), axis=1
        ).ravel()
        base = base + chunk_sum
        reach = max(reach, top.max())
    return prefix[:tiles], carry[:tiles]


def prefix_sum(w: np.ndarray, dtype, scaled: bool | None = None) -> tuple[np.ndarray, int]:
    """C (length N, in ``dtype``, non-decreasing, flat over zero weights) in
    the device's order, and the index of the last positive weight (as the
    tile-scaled values see it). ``scaled``: whether step 1 scales the tiles,
    by default :func:`pfresample.sums.needs_scaling` of the maximum."""
    dtype = np.dtype(dtype)
    if scaled is None:
        scaled = needs_scaling(float(w.max()), dtype)
    x, exponent = tile_values(w, dtype, scaled)
    positive = x > 0
    local = tile_scan(x)
    top = exponent.max()
    factor = np.ldexp(1.0, exponent - top).astype(dtype)  # 0 for NO_EXPONENT
    prefix, carry = scan_tile_sums(local[:, -1, -1] * factor, positive.any(axis=(1, 2)))
    placed = np.maximum(prefix[:, None, None] + local * factor[:, None, None], carry[:, None, None])
    c = np.where(local > 0, placed, carry[:, None, None]).ravel()[: w.size]
    last = int(np.flatnonzero(positive.ravel()[: w.size])[-1])
    return c, last
