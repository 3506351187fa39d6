"""Launch parameters, in one place: threads per block (thesis eq. 2.28), the
sizes of the reduction, scan and offspring kernels (which ``gpu_kernels/``
repeats, checked by tests/gpu/test_kernel_sources.py), and the occupancy queries
that size the grouped and queued kernels."""

from __future__ import annotations

import ctypes
import os
from functools import cache

from ..constants import D3_THREADS as _D3_THREADS
from ..constants import WARP_SIZE

# The shapes both backends share live in ..contracts; the launchers read them here too.
from ..contracts import (  # noqa: F401
    ITEMS_PER_THREAD,
    MAX_PARTS,
    REDUCE_THREADS,
    SCAN_ITEMS,
    SCAN_THREADS,
    SCAN_TILE,
    reduction_parts,
    scan_tiles,
)
from . import settings
from .kernels import kernel

# Threads a block of the one-thread-a-weight maps (logweights.cu).
MAP_THREADS = 256

# The one block of TILE_SUMS_THREADS threads of residual_plan.
TILE_SUMS_THREADS = 1024

# The fused SIR filter run (fused.cu, filters/sir_fused.py): blocks of
# FUSED_THREADS threads (its reductions' and scan's width), taken for N up to
# FUSED_MAX_N (the most tiles its warp scan of the tile sums takes). Up to
# FUSED_SPREAD_N its grid has one block an SM, above it every block the SMs
# hold at once (fused_blocks; docs/performance.md has the measurements).
FUSED_THREADS = 256

FUSED_MAX_N = 1 << 20

# run_filter takes the fused run up to FUSED_DEFAULT_MAX_N, the graph above:
# at 2^20 the untimed graph is the faster (docs/performance.md).
FUSED_DEFAULT_MAX_N = 1 << 19

FUSED_SPREAD_N = 1 << 16

# Particles a thread in the fused run's phase 4 while its slices do not
# outnumber the blocks (fused_slice_items).
FUSED_SLICE_ITEMS = 4

# Grids of the fused run that are one thread block cluster (sm_90 on; 16
# needs the driver's non-portable cluster sizes): the cluster's hardware
# barrier in place of the grid barrier's atomics.
FUSED_CLUSTERS = (8, 16)

# Up to FUSED_CLUSTER_N particles the fused run's default grid is one cluster
# of FUSED_CLUSTER blocks, where the device has clusters of that size
# (fused_cluster; docs/performance.md has the measurements).
FUSED_CLUSTER = 16

FUSED_CLUSTER_N = 1 << 14

# Blocks of the GPU filters' float64 sums over the weights (filter.cu): one
# weight a thread up to N = 2^19, then 8 (at 2^22) and more. Enough blocks in
# flight to keep the memory busy, and few partials for the last block to add up.
MAX_SUM_PARTS = 2048

# The offspring statistics of the experiments (offspring.cu): threads per
# block, and at most this many partial sums per row of squared errors (a
# function of N alone, so the float64 sum is the same however many rows a
# chunk holds).
OFFSPRING_THREADS = 256

MAX_OFFSPRING_PARTS = 64

MAX_GRID_Y = 65535

# butterfly.cu's blocks: stage_sums has BUTTERFLY_SUMS_WARPS warps, each
# summing one segment (4: a segment of 1024 float64 values a warp in shared
# memory stays within 48 KiB), stage_draws BUTTERFLY_BLOCK slots.
BUTTERFLY_SUMS_WARPS = 4

BUTTERFLY_BLOCK = 256

# butterfly.cu's first_stage runs stage 1 as one block of r_1 threads a
# segment, for BUTTERFLY_FUSED_MIN <= r_1 <= BUTTERFLY_SEGMENT_MAX: a full warp
# sums the segment, and the segment fits shared memory (SEGMENT_MAX there).
BUTTERFLY_FUSED_MIN = 32
BUTTERFLY_SEGMENT_MAX = 1024

# cellular.cu's blocks (its kernels read blockDim.x): CELLULAR_THREADS
# particles a block, the paper's 256 ("The number of threads in a block was
# set to 256"), a multiple of 32 (its block sums are by warp). The resampler
# keeps a block's tile of CELLULAR_THREADS + r float64 weights in shared
# memory up to CELLULAR_TILE_MAX of them (32 KiB), and reads global memory
# beyond; the filter's step keeps weights, log-weights and states there, for
# r up to CPF_MAX_RADIUS (46 KiB with the four rows of the bearings-only model).
CELLULAR_THREADS = 256
CELLULAR_TILE_MAX = 4096
CPF_MAX_RADIUS = 1024

# Independent runs of the SIR graph batched into one graph (filters.sir_batch):
# as many runs side by side as make up BATCH_PARTICLES particles, at most
# BATCH_MAX_RUNS (each run a branch of the graph, with buffers of its own).
# Below about 2^18 particles a run's kernels fill a fraction of the GPU and a
# step is mostly launch latency; from 2^20 on one run keeps it busy, and runs
# go one at a time.
BATCH_PARTICLES = 1 << 20
BATCH_MAX_RUNS = 64


def batch_width(n: int, runs: int) -> int:
    """How many runs of N = ``n`` particles one batch holds (1: no batching)."""
    return max(1, min(runs, BATCH_MAX_RUNS, BATCH_PARTICLES // max(n, 1)))


# d3.cu's threads per block when the launcher is given none: constants.D3_THREADS.
D3_THREADS = _D3_THREADS


def block_size(n: int) -> int:
    """Threads per block for N particles: thesis eq. 2.28 (512 from 2^13 up,
    halving down to 32 for 2^5 ... 2^9, and 16 below); the block that
    ``settings.launch_settings`` chose for the code around the call, else the
    value of ``PFRESAMPLE_BLOCK_SIZE`` when set."""
    chosen = settings.block()
    if chosen is not None:
        return chosen
    value = os.environ.get("PFRESAMPLE_BLOCK_SIZE")
    if value:
        if not value.isdigit() or not 1 <= int(value) <= 1024:
            raise ValueError(f"PFRESAMPLE_BLOCK_SIZE must be an integer in 1..1024, got {value!r}")
        return int(value)
    if n >= 2**13:
        return 512
    if n > 2**9:
        return max(64, 1 << (n - 1).bit_length() - 4)  # 2^10 -> 64, 2^11 -> 128, 2^12 -> 256
    return 32 if n > 2**4 else 16


def blocks(lanes: int, block: int) -> int:
    return -(-lanes // block)


@cache
def libcuda():
    """The CUDA driver, for the calls CuPy does not wrap (Linux: libcuda.so.1)."""
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuEventRecordWithFlags.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
    lib.cuOccupancyMaxActiveBlocksPerMultiprocessor.argtypes = [
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_void_p,
        ctypes.c_int,
        ctypes.c_size_t,
    ]
    return lib


@cache
def resident_threads(family: str, function: str, block: int) -> int:
    """Threads of a kernel the device holds at once, with blocks of
    ``block`` threads: SMs x the blocks an SM fits (its registers and shared
    memory allowing) x ``block``. Cached per process, for the device of the
    first call: a process uses one device (a pipeline pins one a job), and a
    wrong count would change only the speed, never the ancestors."""
    import cupy

    fits = ctypes.c_int()
    ptr = kernel(family, function).ptr  # the CUfunction
    rc = libcuda().cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(fits), ptr, block, 0)
    if rc != 0:
        raise RuntimeError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor failed (CUresult {rc})")
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    return sms * fits.value * block


def lane_group(lanes: int, block: int, capacity: int) -> int:
    """Threads that share one lane's work in the kernels that can split it
    (Rejection's tries, the Uphill family's B candidates; rejection.cu,
    uphill.cu): with few lanes, one thread a lane leaves the device mostly
    idle and each lane's serial chain of loads sets the time, so a lane gets
    the largest power of two of threads, at most a warp, with which the
    launch still fits on the device at once (``capacity``: the threads of the
    grouped kernel it holds, :func:`resident_threads`). It divides the block,
    so that a group never straddles a warp. Same ancestors for every group
    size."""
    g = 1
    while 2 * g <= WARP_SIZE and 2 * g * lanes <= capacity and block % (2 * g) == 0:
        g *= 2
    return g


# Rejection's tail pass (rejection.cu): where the lanes fit the device at most
# TAIL_WAVES times and at most TAIL_MAX_GROUP threads share a lane (the step
# waits for its slowest lane there), a lane stops after about TAIL_FACTOR x M / 2
# pairs of attempts, M the mean number of attempts, and a warp of the tail pass
# finishes it. Chosen by measurement on the growth filter (docs/performance.md,
# "Measurements behind the code's choices"; docs/dulger2017.md).
REJECTION_TAIL_FACTOR = 2.0
REJECTION_TAIL_WAVES = 2
REJECTION_TAIL_MAX_GROUP = 2


def tail_factor(lanes: int, capacity: int, group: int) -> float:
    """Rejection's cap factor for ``lanes`` lanes of ``group`` threads each on
    a device holding ``capacity`` threads of the first pass; 0 (no tail pass)
    for more lanes or larger groups. Same ancestors either way."""
    fits = lanes <= REJECTION_TAIL_WAVES * capacity and group <= REJECTION_TAIL_MAX_GROUP
    return REJECTION_TAIL_FACTOR if fits else 0.0


def queue_chunk(lanes: int, block: int, capacity: int) -> int:
    """Lanes each warp of rejection_queued works through: an equal share of
    the lanes for every warp the device holds at once (``capacity``: the
    kernel's resident threads, :func:`resident_threads`; a block holds
    ceil(block / 32) warps), and at least a warp's worth. So the warps make
    one wave that ends at about the same time: a warp waits for its slowest
    lane only at the end of its chunk, and no second wave starts late."""
    warps = capacity // block * -(-block // WARP_SIZE)
    return max(WARP_SIZE, -(-lanes // max(1, warps)))


def offspring_parts(n: int) -> int:
    """Blocks per row of the squared-error sum (offspring.cu)."""
    return max(1, min(MAX_OFFSPRING_PARTS, -(-n // (OFFSPRING_THREADS * ITEMS_PER_THREAD))))


def fused_blocks(n: int, resident: int, sms: int) -> int:
    """The fused run's grid for N particles: one block per virtual block of
    its widest phase (the estimate's reduction blocks and the scan's tiles,
    side by side), at most one block on each of the ``sms`` SMs up to
    FUSED_SPREAD_N and the ``resident`` blocks a cooperative launch may have
    above. A grid barrier's arrivals take longer with more blocks (measured:
    docs/performance.md, "Measurements behind the code's choices")."""
    most = sms if n <= FUSED_SPREAD_N else resident
    return max(1, min(most, sum_parts(n) + scan_tiles(n)))


def fused_cluster(n: int, capability: int) -> int:
    """The fused run's default cluster for N particles on a device of
    compute capability ``capability`` (90 for 9.0): FUSED_CLUSTER blocks up
    to FUSED_CLUSTER_N where clusters exist, else 0 (the cooperative grid of
    fused_blocks)."""
    return FUSED_CLUSTER if n <= FUSED_CLUSTER_N and capability >= 90 else 0


def fused_slice_items(n: int, blocks: int) -> int:
    """Particles a thread in the fused run's phase 4 (fused.cu's template
    argument): FUSED_SLICE_ITEMS while every slice of FUSED_THREADS times as
    many has a block of its own, the scan's SCAN_ITEMS (a slice a tile)
    above, where a block would take several small slices in turn."""
    small = -(-n // (FUSED_THREADS * FUSED_SLICE_ITEMS))
    return FUSED_SLICE_ITEMS if small <= blocks else SCAN_ITEMS


def sum_parts(n: int) -> int:
    """Blocks of filter.cu's sums over N weights (a function of N alone, so
    that the float64 sums are the same on every run)."""
    return max(1, min(MAX_SUM_PARTS, blocks(n, REDUCE_THREADS)))


# The captured loop's statistics kernels (filters/capture.py): CAPTURE_THREADS
# a block, each thread's partial sums in shared memory (8 bytes a column), so
# at most CAPTURE_MAX_COLUMNS columns in a block's 48 KiB; each thread takes
# CAPTURE_ITEMS particles or more, in at most CAPTURE_MAX_BLOCKS blocks.
CAPTURE_THREADS = 256
CAPTURE_MAX_COLUMNS = 48 * 1024 // (8 * CAPTURE_THREADS)
CAPTURE_ITEMS = 4
CAPTURE_MAX_BLOCKS = 1024


def capture_blocks(n: int) -> int:
    """Blocks of the captured loop's statistics over N particles (a function
    of N alone, so that its float64 sums are the same on every replay)."""
    return max(1, min(CAPTURE_MAX_BLOCKS, -(-n // (CAPTURE_THREADS * CAPTURE_ITEMS))))
