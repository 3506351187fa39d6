"""What the CPU and the CUDA backends share, below both of them: the shapes
of the fixed-order sums and scans (so that the CPU reference adds in the
GPU's order and returns its bits) and the option names both accept.

``gpu_kernels/`` repeats the shapes (tests/gpu/test_kernel_sources.py checks
them); ``cuda.geometry`` holds the launch parameters that are the GPU's alone.
"""

from __future__ import annotations

import numpy as np

# The reductions over the weights (reduce.cu's REDUCE_THREADS): blocks of
# REDUCE_THREADS threads, ITEMS_PER_THREAD weights a thread, and at most
# MAX_PARTS partial results: 1024 blocks of 256 threads fill an H200 (132 SMs x
# 2048 threads) with one wave.
REDUCE_THREADS = 256
ITEMS_PER_THREAD = 8
MAX_PARTS = 1024

# The tiled prefix sum of the cumulative family (cumulative.cu, which repeats
# these): tiles of SCAN_THREADS threads x SCAN_ITEMS weights.
SCAN_THREADS = 256
SCAN_ITEMS = 16
SCAN_TILE = SCAN_THREADS * SCAN_ITEMS

# The float32 log-domain scan of Güldaş Appendix A (resampling/log_scan.py):
# LOG_TILE values a tile, twice the 1024 threads of a block (Appendix A.1).
LOG_TILE = 2048
LOG_THREADS = LOG_TILE // 2
# log1p(t) = 2 atanh(z), z = t / (2 + t) in [0, 1/3] for t in [0, 1]: the odd series
# to z^35 / 35, whose remainder is below 3^-37 (2e-18).
ATANH_TERMS = 18
ATANH_COEFFICIENTS = np.array([1.0 / (2 * k + 1) for k in range(ATANH_TERMS)])

# The butterfly's draws within a segment (Güldaş §3.2).
BUTTERFLY_DRAWS = ("multinomial", "stratified", "systematic")

# D3's options (Das et al. 2014; resampling/d3.py explains each).
D3_NOISES = ("eq5", "table1", "fig9", "between", "fig9neg")
D3_CDFS = ("prefix", "local", "paper")
D3_COMPONENTS = ("joint", "each")


def scan_tiles(n: int) -> int:
    """Tiles of the cumulative family's prefix sum over N weights: blocks of
    SCAN_THREADS threads, each tile SCAN_TILE weights (SCAN_ITEMS a thread)."""
    return -(-n // SCAN_TILE)


def reduction_parts(n: int) -> int:
    """Blocks of a reduction over N weights: a fixed function of N, so that
    the summation order (and the float64 result) is the same on every run."""
    return max(1, min(MAX_PARTS, -(-n // (REDUCE_THREADS * ITEMS_PER_THREAD))))


def check_d3_threads(threads) -> int:
    """D3's threads per block: an integer 1 ... 1024 (the paper's GPU search needs it)."""
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be an integer 1 ... 1024, got {threads!r}")
    if not 1 <= int(threads) <= 1024:
        raise ValueError(f"threads must be in 1 ... 1024, got {threads}")
    return int(threads)
