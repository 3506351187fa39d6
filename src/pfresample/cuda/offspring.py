"""Offspring statistics of many draws on the device (``offspring.cu``), for
:class:`pfresample.metrics.OffspringAccumulator`: nothing but the summaries
is read back to the host."""

from __future__ import annotations

import numpy as np

from .geometry import MAX_GRID_Y, OFFSPRING_THREADS, blocks, offspring_parts
from .kernels import kernel


def accumulate_offspring(ancestors, target, sums, sums_sq):
    """Add the offspring counts of an (R, N) int32 ancestor array to the
    per-particle int64 running sums ``sums`` (of c) and ``sums_sq`` (of c^2);
    return the R squared errors SE_r = sum_i (c[r, i] - target_i)^2 (eq. 2.29)
    as a CuPy float64 array. Nothing is read back to the host."""
    import cupy

    rows, n = ancestors.shape
    ancestors = cupy.ascontiguousarray(ancestors, dtype=np.int32)
    counts = cupy.zeros((rows, n), dtype=np.int32)
    total = rows * n
    kernel("offspring.cu", "offspring_counts")(
        (blocks(total, OFFSPRING_THREADS),),
        (OFFSPRING_THREADS,),
        (ancestors, np.int64(total), np.uint32(n), counts),
    )
    kernel("offspring.cu", "offspring_moments")(
        (blocks(n, OFFSPRING_THREADS),),
        (OFFSPRING_THREADS,),
        (counts, np.int32(rows), np.uint32(n), sums, sums_sq),
    )
    parts = offspring_parts(n)
    partial = cupy.empty((rows, parts), dtype=np.float64)
    target = cupy.ascontiguousarray(target, dtype=np.float64)
    for r in range(0, rows, MAX_GRID_Y):  # a grid has at most 65,535 rows of blocks
        part_rows = min(MAX_GRID_Y, rows - r)
        kernel("offspring.cu", "squared_error_partial")(
            (parts, part_rows),
            (OFFSPRING_THREADS,),
            (counts[r : r + part_rows], target, np.uint32(n), partial[r : r + part_rows]),
        )
    return partial.sum(axis=1)
