"""The CUDA backend: the kernels of ``gpu_kernels/`` run through CuPy.

Each ``.cu`` file is one family of kernels (``metropolis.cu``, ``uphill.cu``,
``rejection.cu``, ``cumulative.cu``, ``reduce.cu``; ``offspring.cu`` holds
the experiments' offspring statistics); all draw their random
numbers from ``philox.cuh`` under the contract of ``pfresample.rng``, so the
comparison-based kernels return the CPU reference's ancestors bit for bit.

Sources are compiled by NVRTC (``cupy.RawModule``) once per process, the
first time a family is used; CuPy keeps the binaries in its on-disk kernel
cache (``~/.cupy/kernel_cache``), keyed by the source text. Local
``#include "x.cuh"`` lines are pasted into the source here, so that a change
to a header changes that key too.

Launch parameters are computed in one place, :func:`block_size` (thesis
eq. 2.28, overridable with ``PFRESAMPLE_BLOCK_SIZE``). A call enqueues, on
the current CuPy stream: the weight statistics (sum, max, first bad entry;
Metropolis's B in the same launch when B is not given), Uphill's B kernel
when B is not given, and the method's kernel; B never travels
to the host. The public API reads the statistics back once to raise on bad
weights; the timing helper (:func:`time_resample`) does not.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import re
import statistics
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from ..constants import EPSILON_RESAMPLING, WARP_SIZE
from ..validation import ALL_ZERO, bad_weight_error, weight_array

KERNEL_DIR = Path(
    os.environ.get("PFRESAMPLE_KERNEL_DIR", Path(__file__).resolve().parents[3] / "gpu_kernels")
)

# --fmad=false: no fused multiply-adds, so that every floating-point
# expression rounds as NumPy's does (B and the cumulative sums depend on it).
COMPILE_OPTIONS = ("-std=c++17", "--fmad=false")

# Layout of the statistics record (gpu_kernels/stats.cuh).
STAT_SUM, STAT_MAX, STAT_BAD, STAT_SSD, STAT_COUNT = 0, 1, 2, 3, 4

# Threads of the reduction blocks (reduce.cu's REDUCE_THREADS), and at most
# this many partial results per reduction: 1024 blocks of 256 threads fill an
# H200 (132 SMs x 2048 threads) with one wave.
REDUCE_THREADS = 256
MAX_PARTS = 1024
ITEMS_PER_THREAD = 8

# The tiled prefix sum of the cumulative family (cumulative.cu, which
# repeats these): tiles of SCAN_THREADS threads x SCAN_ITEMS weights; and
# the one block of TILE_SUMS_THREADS threads of residual_plan.
SCAN_THREADS = 256
SCAN_ITEMS = 16
SCAN_TILE = SCAN_THREADS * SCAN_ITEMS
TILE_SUMS_THREADS = 1024

# The offspring statistics of the experiments (offspring.cu): threads per
# block, and at most this many partial sums per row of squared errors (a
# function of N alone, so the float64 sum is the same however many rows a
# chunk holds).
OFFSPRING_THREADS = 256
MAX_OFFSPRING_PARTS = 64
MAX_GRID_Y = 65535

MODES = {"global": 0, "once": 1, "every": 2}
_CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_PAIRS = [f"{w},{t}" for w in _CTYPES.values() for t in _CTYPES.values()]  # weights, precision

# Instantiations of each family's templates, for NVRTC's name expressions.
_TEMPLATES = {
    "metropolis.cu": [
        f"metropolis<{t},{mode},{shared}>"
        for t in _CTYPES.values()
        for mode in MODES.values()
        for shared in ("false", "true")
    ],
    "uphill.cu": [
        f"uphill<{t},{mode},{layout}>"
        for t in _CTYPES.values()
        for mode in MODES.values()
        for layout in ("false,false", "true,false", "false,true")  # SHARED, GROUPED
    ],
    "rejection.cu": [
        f"rejection_{k}<{t}>" for t in _CTYPES.values() for k in ("grouped", "queued")
    ],
    "cumulative.cu": [
        f"{k}<{pair}>"
        for k in (
            "scan_tiles",
            "scaled_prefix_sum",
            "systematic",
            "residual_tile_counts",
            "residual_fractions",
            "residual_copies",
        )
        for pair in _PAIRS
    ]
    + [f"inverse_cdf_draws<{t},{s}>" for t in _CTYPES.values() for s in ("false", "true")],
    "filter.cu": [f"normalise_estimate<{rows}>" for rows in (1, 4)],
    "reduce.cu": [f"{k}<{t}>" for k in ("weight_stats", "uphill_b") for t in _CTYPES.values()],
}

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)


def source(name: str, _seen: set | None = None) -> str:
    """The text of ``gpu_kernels/<name>`` with its local includes pasted in
    (each header once, as ``#pragma once`` would)."""
    seen = set() if _seen is None else _seen
    path = KERNEL_DIR / name
    if not path.is_file():
        raise FileNotFoundError(
            f"CUDA source {path} not found; set PFRESAMPLE_KERNEL_DIR to the gpu_kernels folder"
        )

    def paste(match: re.Match) -> str:
        header = match.group(1)
        if header in seen:
            return ""
        seen.add(header)
        return source(header, seen)

    return _INCLUDE.sub(paste, path.read_text())


@cache
def module(name: str):
    """The compiled module of ``gpu_kernels/<name>`` (compiled once per process)."""
    import cupy

    return cupy.RawModule(
        code=source(name), options=COMPILE_OPTIONS, name_expressions=_TEMPLATES.get(name, [])
    )


@cache
def kernel(name: str, function: str):
    """A kernel of a family; templates by their name expression. Cached:
    looking a function up costs host time on every launch otherwise."""
    return module(name).get_function(function)


def block_size(n: int) -> int:
    """Threads per block for N particles: thesis eq. 2.28 (512 from 2^13 up,
    halving down to 32 for 2^5 ... 2^9, and 16 below), or the value of
    ``PFRESAMPLE_BLOCK_SIZE`` when set."""
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
    first call: a process uses one device (``pfresample.devices``), and a
    wrong count would change only the speed, never the ancestors."""
    import cupy

    fits = ctypes.c_int()
    ptr = kernel(family, function).kernel.ptr  # the CUfunction of a RawKernel
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


def queue_chunk(lanes: int, block: int, capacity: int) -> int:
    """Lanes each warp of rejection_queued works through: an equal share of
    the lanes for every warp the device holds at once (``capacity``: the
    kernel's resident threads, :func:`resident_threads`; a block holds
    ceil(block / 32) warps), and at least a warp's worth. So the warps make
    one wave that ends at about the same time: a warp waits for its slowest
    lane only at the end of its chunk, and no second wave starts late."""
    warps = capacity // block * -(-block // WARP_SIZE)
    return max(WARP_SIZE, -(-lanes // max(1, warps)))


def scan_tiles(n: int) -> int:
    """Tiles of the cumulative family's prefix sum over N weights: blocks of
    SCAN_THREADS threads, each tile SCAN_TILE weights (SCAN_ITEMS a thread)."""
    return -(-n // SCAN_TILE)


def reduction_parts(n: int) -> int:
    """Blocks of a reduction over N weights: a fixed function of N, so that
    the summation order (and the float64 result) is the same on every run."""
    return max(1, min(MAX_PARTS, -(-n // (REDUCE_THREADS * ITEMS_PER_THREAD))))


class Workspace:
    """Device buffers of O(1) size (partials of the reductions, statistics,
    B), kept per (device, N) so that repeated calls allocate nothing; and
    the cumulative family's, per precision (:meth:`scan`)."""

    def __init__(self, n: int):
        import cupy

        self.n = n
        self._scans: dict = {}
        self.parts = reduction_parts(n)
        self.part_sum = cupy.empty(self.parts, dtype=np.float64)
        self.part_max = cupy.empty(self.parts, dtype=np.float64)
        self.part_bad = cupy.empty(self.parts, dtype=np.int64)
        self.stats = cupy.zeros(STAT_COUNT, dtype=np.float64)
        self.b = cupy.zeros(1, dtype=np.int32)
        self.tickets = cupy.zeros(2, dtype=np.uint32)  # the statistics', the SSD's last block

    def scan(self, dtype) -> ScanBuffers:
        """The prefix-sum buffers in precision ``dtype`` (made on first use)."""
        dtype = np.dtype(dtype)
        if dtype not in self._scans:
            self._scans[dtype] = ScanBuffers(self.n, dtype)
        return self._scans[dtype]


class ScanBuffers:
    """Buffers of the cumulative family in one precision: a few values per
    tile of the prefix sum (O(N / SCAN_TILE)), and one array of N values
    (:meth:`values`: r of Stratified and Multinomial, Residual's fractions),
    made when first asked for; Systematic needs none."""

    def __init__(self, n: int, dtype: np.dtype):
        import cupy

        self.n, self.dtype = n, dtype
        self.tiles = tiles = scan_tiles(n)
        self.tile_sum = cupy.empty(tiles, dtype=dtype)  # pass 1: each tile's total
        self.tile_end = cupy.empty(tiles, dtype=np.int64)  # one past its last positive weight
        self.prefix = cupy.empty(tiles, dtype=dtype)  # pass 2: the sum before each tile
        self.carry = cupy.empty(tiles, dtype=dtype)  # the largest C before each tile
        self.total = cupy.empty(1, dtype=dtype)  # C_N
        self.last = cupy.empty(1, dtype=np.int64)  # the last particle of positive weight
        self.tickets = cupy.zeros(1, dtype=np.uint32)  # blocks of pass 1 done (reset by the last)
        # Residual: per-tile counts, each tile's first slot, R, (mode, fallback)
        self.tile_counts = cupy.empty(4 * tiles, dtype=np.int64)
        self.tile_offset = cupy.empty(tiles, dtype=np.int64)
        self.rest = cupy.empty(1, dtype=np.int64)
        self.plan = cupy.empty(2, dtype=np.int32)
        self._values = None

    def values(self):
        import cupy

        if self._values is None:
            self._values = cupy.empty(self.n, dtype=self.dtype)
        return self._values


_WORKSPACES: OrderedDict = OrderedDict()
_TABLES: OrderedDict = OrderedDict()
_CACHE_SIZE = 16


def cached(store: OrderedDict, key, make, size: int = _CACHE_SIZE):
    """``store[key]``, made by ``make()`` on first use; at most ``size`` kept."""
    if key in store:
        store.move_to_end(key)
        return store[key]
    value = store[key] = make()
    while len(store) > size:
        store.popitem(last=False)
    return value


def workspace(n: int) -> Workspace:
    import cupy

    return cached(_WORKSPACES, (cupy.cuda.Device().id, n), lambda: Workspace(n))


def device_ssd_table(n: int, table):
    """The Uphill SSD table of N on the device, uploaded once per content."""
    import cupy

    from ..tuning import _cached_table

    host = np.ascontiguousarray(_cached_table(n) if table is None else table, dtype=np.float64)
    if host.ndim != 1:
        raise ValueError("ssd_table must be a 1-D array of SSD values for B = 0, 1, ...")
    digest = hashlib.sha1(host.tobytes()).hexdigest()
    return cached(_TABLES, (cupy.cuda.Device().id, digest), lambda: cupy.asarray(host))


@dataclass
class Call:
    """One resampling call on the device: weights, keys, workspace, output."""

    w: object  # cupy.ndarray, float32 or float64, 1-D
    n_keys: int  # 0: one seed, passed as (k0, k1)
    keys: object  # cupy uint32 array (k0, k1) per replica; the stats when n_keys == 0
    k0: np.uint32
    k1: np.uint32
    ws: Workspace
    out: object  # cupy int32 (K, N)

    @property
    def n(self) -> int:
        return int(self.w.shape[0])

    @property
    def lanes(self) -> int:
        return int(self.out.size)

    @property
    def ctype(self) -> str:
        return _CTYPES[self.w.dtype]

    def lane_args(self) -> tuple:
        """The arguments every per-lane kernel starts with."""
        return (
            self.w,
            np.uint32(self.n),
            np.int64(self.lanes),
            self.keys,
            np.int32(self.n_keys),
            self.k0,
            self.k1,
        )


def make_call(weights, seeds) -> Call:
    """Checks shape and type, copies host weights to the device, allocates
    the output and lays out the keys of ``seeds``."""
    import cupy

    from ..rng import seed_keys

    w = weight_array(weights, cupy)
    if not w.flags.c_contiguous:
        w = cupy.ascontiguousarray(w)
    k0, k1 = seed_keys(seeds)
    ws = workspace(int(w.shape[0]))
    out = cupy.empty((k0.size, int(w.shape[0])), dtype=np.int32)
    if k0.size == 1:
        return Call(w, 0, ws.stats, np.uint32(k0[0]), np.uint32(k1[0]), ws, out)
    keys = cupy.asarray(np.stack([k0, k1], axis=1).astype(np.uint32).ravel())
    return Call(w, int(k0.size), keys, np.uint32(0), np.uint32(0), ws, out)


# ---------------------------------------------------------------- reductions


def enqueue_stats(call: Call, metropolis_epsilon: float | None = None) -> None:
    """Sum, maximum and first bad index of the weights into ``ws.stats``;
    with ``metropolis_epsilon``, Metropolis's B into ``ws.b`` in the same
    launch (its last block)."""
    ws = call.ws
    args = (call.w, np.int64(call.n), ws.part_sum, ws.part_max, ws.part_bad, ws.tickets[0:1])
    if metropolis_epsilon is None:
        b_args = (np.float64(0.0), np.uint64(0))  # 0: a null pointer, no B
    else:
        b_args = (np.float64(math.log(metropolis_epsilon)), ws.b)
    kernel("reduce.cu", f"weight_stats<{call.ctype}>")(
        (ws.parts,), (REDUCE_THREADS,), (*args, ws.stats, *b_args)
    )


def check_stats(call: Call) -> None:
    """Raise on bad weights, as ``validation.check_weights`` does on the host
    (one small device-to-host copy, which synchronises)."""
    stats = call.ws.stats.get()
    bad = int(stats[STAT_BAD])
    if bad < call.n:
        raise bad_weight_error(bad, float(call.w[bad].get()))
    if not stats[STAT_MAX] > 0:
        raise ValueError(ALL_ZERO)


def enqueue_B(call: Call, m, params: dict) -> None:
    """``m``'s B into ``ws.b``, from the statistics already in ``ws.stats``:
    Metropolis's formula (one thread), or Uphill's SSD and FIND-B."""
    ws = call.ws
    if m.uses_B == "metropolis":
        log_eps = math.log(params.get("epsilon", EPSILON_RESAMPLING))
        kernel("reduce.cu", "metropolis_b")(
            (1,), (1,), (np.int64(call.n), np.float64(log_eps), ws.stats, ws.b)
        )
    elif m.uses_B == "uphill":
        table = device_ssd_table(call.n, params.get("ssd_table"))
        args = (call.w, np.int64(call.n), ws.part_sum, ws.tickets[1:2], table)
        kernel("reduce.cu", f"uphill_b<{call.ctype}>")(
            (ws.parts,), (REDUCE_THREADS,), (*args, np.int32(table.size), ws.stats, ws.b)
        )
    else:
        raise ValueError(f"method {m.name!r} has no B rule")


def device_chooses_B(m, kw: dict) -> bool:
    """Whether ``m`` has a B rule and no B was given: the device chooses it."""
    return m.uses_B is not None and kw.get("B") is None


def enqueue_inputs(m, call: Call, kw: dict, params: dict) -> None:
    """What ``m``'s kernel reads, enqueued before it: the weight statistics,
    and B when the device chooses it -- Metropolis's in the statistics' own
    launch (its last block), Uphill's in a second one that reads their sum."""
    device_B = device_chooses_B(m, kw)
    metropolis = device_B and m.uses_B == "metropolis"
    enqueue_stats(call, params.get("epsilon", EPSILON_RESAMPLING) if metropolis else None)
    if device_B and not metropolis:
        enqueue_B(call, m, params)


# ----------------------------------------------------------------- resamplers


def _iterative(call: Call, family: str, mode: str, B, dc: int, sc: int, chain=()) -> None:
    """Launch the Metropolis or Uphill kernel of ``mode`` (see lanes.cuh);
    ``chain``: Metropolis's (start, m_start), see :func:`continue_chains`."""
    block = block_size(call.n)
    # Metropolis is a chain, one thread a lane; Uphill's B candidates split.
    group = 1
    if family == "uphill":
        grouped = f"uphill<{call.ctype},{MODES[mode]},false,true>"
        group = lane_group(call.lanes, block, resident_threads("uphill.cu", grouped, block))
    shared = call.n % WARP_SIZE == 0 and block % WARP_SIZE == 0 and group == 1
    name = f"{family}<{call.ctype},{MODES[mode]},{_flag(shared)}"
    b = np.int32(-1 if B is None else B)
    args = (*call.lane_args(), b, call.ws.b, np.uint32(dc), np.uint32(sc), *chain)
    if family == "uphill":
        name += f",{_flag(group > 1)}"
        args += (np.uint32(group),)
    name += ">"
    grid = blocks(call.lanes * group, block)
    kernel(f"{family}.cu", name)((grid,), (block,), (*args, call.out))


def _flag(value: bool) -> str:
    """A bool template argument, as C++ spells it."""
    return "true" if value else "false"


def _chain(start, m_start: int) -> tuple:
    """Metropolis's continuation arguments: from the ancestors ``start``
    after ``m_start`` iterations, or (None) from each particle itself."""
    return (start, np.int32(m_start)) if start is not None else (np.uint64(0), np.int32(0))


def metropolis(call, *, B, dc, sc, start=None, m_start=0):
    """Metropolis (Algorithm 3.3)."""
    _iterative(call, "metropolis", "global", B, dc, sc, _chain(start, m_start))


def metropolis_c1(call, *, B, dc, sc, start=None, m_start=0):
    """Metropolis-C1 (Algorithm 5.1)."""
    _iterative(call, "metropolis", "once", B, dc, sc, _chain(start, m_start))


def metropolis_c2(call, *, B, dc, sc, start=None, m_start=0):
    """Metropolis-C2 (Algorithm 5.2)."""
    _iterative(call, "metropolis", "every", B, dc, sc, _chain(start, m_start))


CONTINUABLE = (metropolis, metropolis_c1, metropolis_c2)


def uphill(call, *, B, dc, sc):
    """Uphill (Algorithm 6.1)."""
    _iterative(call, "uphill", "global", B, dc, sc)


def uphill_ca(call, *, B, dc, sc):
    """Uphill-CA (Algorithm 6.2)."""
    _iterative(call, "uphill", "every", B, dc, sc)


def uphill_c1(call, *, B, dc, sc):
    """Uphill-C1 (Algorithm 6.3)."""
    _iterative(call, "uphill", "once", B, dc, sc)


def rejection(call):
    """Rejection (Algorithm 3.4); w_max from the statistics kernel. With few
    lanes a group of threads shares each lane; with many, each warp works
    through a chunk of lanes, a thread starting the next as soon as its lane
    has accepted (rejection.cu, :func:`queue_chunk`)."""
    block = block_size(call.n)
    grouped = f"rejection_grouped<{call.ctype}>"
    group = lane_group(call.lanes, block, resident_threads("rejection.cu", grouped, block))
    if group > 1:
        args = (*call.lane_args(), call.ws.stats, np.uint32(group), call.out)
        kernel("rejection.cu", grouped)((blocks(call.lanes * group, block),), (block,), args)
        return
    queued = f"rejection_queued<{call.ctype}>"
    chunk = queue_chunk(call.lanes, block, resident_threads("rejection.cu", queued, block))
    args = (*call.lane_args(), call.ws.stats, np.uint32(chunk), call.out)
    warps = -(-call.lanes // chunk)
    grid = blocks(warps, -(-block // WARP_SIZE))  # a block holds ceil(block / 32) warps
    kernel("rejection.cu", queued)((grid,), (block,), args)


def _precision(call: Call, precision) -> np.dtype:
    """The precision of the prefix sum: the weights' own unless asked."""
    return np.dtype(precision) if precision is not None else call.w.dtype


def _key_args(call: Call) -> tuple:
    return (call.keys, np.int32(call.n_keys), call.k0, call.k1)


def _prefix_sum(values, sb: ScanBuffers) -> None:
    """Pass 1 of the prefix sum of ``values`` (the weights, or Residual's
    fractions) in ``sb``'s precision: tile sums, then (the last block) the
    sum before each tile and C_N; see cumulative.cu."""
    pair = f"{_CTYPES[values.dtype]},{_CTYPES[sb.dtype]}"
    args = (values, np.int64(sb.n), sb.tile_sum, sb.tile_end, sb.prefix, sb.carry, sb.total)
    kernel("cumulative.cu", f"scan_tiles<{pair}>")(
        (sb.tiles,), (SCAN_THREADS,), (*args, sb.last, sb.tickets)
    )


def _scaled_prefix_sum(values, sb: ScanBuffers, count) -> None:
    """Pass 2: r = (count * C) / C_N into ``sb.values()`` (may be ``values``
    itself). ``count`` None: Residual's R, on the device."""
    pair = f"{_CTYPES[values.dtype]},{_CTYPES[sb.dtype]}"
    count_args = (np.int64(-1 if count is None else count), sb.rest)
    args = (values, np.int64(sb.n), sb.prefix, sb.carry, sb.total, *count_args, sb.values())
    kernel("cumulative.cu", f"scaled_prefix_sum<{pair}>")((sb.tiles,), (SCAN_THREADS,), args)


def _inverse_cdf_draws(call: Call, sb: ScanBuffers, count, stratify: bool) -> None:
    """One lane per (replica, output slot): slot s searches r for ``s + u``
    (stratified) or ``count * u``; ``count`` None: Residual's R."""
    block = block_size(call.n)
    name = f"inverse_cdf_draws<{_CTYPES[sb.dtype]},{_flag(stratify)}>"
    count_args = (np.int64(-1 if count is None else count), sb.rest)
    args = (
        sb.values(),
        np.uint32(call.n),
        np.int64(call.lanes),
        *_key_args(call),
        *count_args,
        sb.last,
        call.out,
    )
    kernel("cumulative.cu", name)((blocks(call.lanes, block),), (block,), args)


def systematic(call, *, precision=None):
    """Systematic (Algorithms 3.1 and 3.2): the prefix sum, then per replica
    and tile the cumulative offspring and the ancestors they give."""
    sb = call.ws.scan(_precision(call, precision))
    _prefix_sum(call.w, sb)
    name = f"systematic<{call.ctype},{_CTYPES[sb.dtype]}>"
    args = (
        call.w,
        np.int64(call.n),
        np.int64(sb.tiles),
        sb.prefix,
        sb.carry,
        sb.total,
        *_key_args(call),
        call.out,
    )
    kernel("cumulative.cu", name)((sb.tiles * call.out.shape[0],), (SCAN_THREADS,), args)


def _inverse_cdf(call: Call, precision, stratify: bool) -> None:
    sb = call.ws.scan(_precision(call, precision))
    _prefix_sum(call.w, sb)
    _scaled_prefix_sum(call.w, sb, call.n)
    _inverse_cdf_draws(call, sb, call.n, stratify)


def stratified(call, *, precision=None):
    """Stratified: slot s draws in stratum [s, s+1) of r."""
    _inverse_cdf(call, precision, stratify=True)


def multinomial(call, *, precision=None):
    """Multinomial: every slot draws anywhere in [0, N) of r."""
    _inverse_cdf(call, precision, stratify=False)


def residual(call, *, precision=None):
    """Residual: floor(N w_i / sum w) copies, then R multinomial draws on
    the fractions (cumulative.residual, both of its fallbacks included).
    The sum of the weights is the statistics pass's (it reads STAT_SUM)."""
    sb = call.ws.scan(_precision(call, precision))
    pair = f"{call.ctype},{_CTYPES[sb.dtype]}"
    n, tiles, stats = np.int64(call.n), np.int64(sb.tiles), call.ws.stats
    kernel("cumulative.cu", f"residual_tile_counts<{pair}>")(
        (sb.tiles,), (SCAN_THREADS,), (call.w, n, tiles, stats, sb.tile_counts)
    )
    kernel("cumulative.cu", "residual_plan")(
        (1,), (TILE_SUMS_THREADS,), (sb.tile_counts, tiles, n, sb.tile_offset, sb.rest, sb.plan)
    )
    block = block_size(call.n)
    kernel("cumulative.cu", f"residual_fractions<{pair}>")(
        (blocks(call.n, block),), (block,), (call.w, n, stats, sb.plan, sb.values())
    )
    _prefix_sum(sb.values(), sb)
    _scaled_prefix_sum(sb.values(), sb, None)  # in place: fractions -> r
    kernel("cumulative.cu", f"residual_copies<{pair}>")(
        (sb.tiles * call.out.shape[0],),
        (SCAN_THREADS,),
        (call.w, n, tiles, stats, sb.plan, sb.tile_offset, call.out),
    )
    _inverse_cdf_draws(call, sb, None, stratify=False)


# Launchers whose kernels read the weight statistics (w_max; Residual's sum of
# the weights); the statistics kernel is then part of their time (thesis
# §6.5 counts it).
READS_STATS = {rejection, residual}


def needs_stats(m, kw: dict) -> bool:
    """Whether ``m``'s kernels read the weight statistics: Rejection and
    Residual do, and so does every method whose B the device chooses."""
    return m.gpu in READS_STATS or device_chooses_B(m, kw)


# ------------------------------------------------------- offspring statistics


def offspring_parts(n: int) -> int:
    """Blocks per row of the squared-error sum (offspring.cu)."""
    return max(1, min(MAX_OFFSPRING_PARTS, -(-n // (OFFSPRING_THREADS * ITEMS_PER_THREAD))))


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


# ------------------------------------------------------------------ entry points


def resample_many(m, weights, seeds, kw: dict, params: dict):
    """K resamplings on the device: (K, N) int32 CuPy array. ``kw`` are the
    method's checked kernel arguments (``B`` may be None: chosen on the
    device)."""
    call = make_call(weights, seeds)
    enqueue_inputs(m, call, kw, params)
    check_stats(call)
    m.gpu(call, **kw)
    return call.out


def continue_chains(m, weights, seeds, kws: list[dict]) -> list:
    """``resample_many`` for each of several B (``kws``: the checked kernel
    arguments, one per B) in one pass: the chains run to the smallest B,
    then continue from there to the next, and so on (metropolis.cu: the
    chain after B' < B iterations is the first part of the chain after B).
    The cost is that of the largest B alone. Results in the order of ``kws``."""
    import cupy

    call = make_call(weights, seeds)
    enqueue_stats(call)
    check_stats(call)
    out: list = [None] * len(kws)
    start, done = None, 0
    for r in sorted(range(len(kws)), key=lambda r: kws[r]["B"]):
        step = replace(call, out=cupy.empty_like(call.out))
        m.gpu(step, **kws[r], start=start, m_start=done)
        out[r] = start = step.out
        done = kws[r]["B"]
    return out


def choose_B(m, weights, params: dict) -> int:
    """The B the device chooses for ``m`` on these weights (as ``api.choose_B``)."""
    call = make_call(weights, [0])
    enqueue_inputs(m, call, {"B": None}, params)
    check_stats(call)
    return int(call.ws.b.get()[0])


def time_resample(weights, m, seed, repeats, warmup, **resample_kwargs):
    """Median time of one call with CUDA events around the kernels thesis
    §6.5 counts: statistics (sum, w_max), B, the method's kernel (and the
    prefix sum, for the cumulative family). The first call, with NVRTC
    compile or cache load, is timed apart with ``time.perf_counter``."""
    import cupy

    from ..api import check_params, kernel_arguments
    from ..backend import cuda_device
    from ..timing import Timing, cuda_event_times

    call = make_call(weights, [seed])
    B = resample_kwargs.pop("B", None)
    segment_bytes = resample_kwargs.pop("segment_bytes", None)
    params = check_params(m, resample_kwargs)
    kw = kernel_arguments(m, call.n, call.w.itemsize, B, segment_bytes, params)

    reads_stats = needs_stats(m, kw)

    def enqueue():  # without the validation pass when the method does not need it
        if reads_stats:
            enqueue_inputs(m, call, kw, params)
        m.gpu(call, **kw)

    start = time.perf_counter()
    enqueue_inputs(m, call, kw, params)
    check_stats(call)
    m.gpu(call, **kw)
    cupy.cuda.Device().synchronize()
    first = (time.perf_counter() - start) * 1e3
    times = cuda_event_times(enqueue, repeats, warmup=max(warmup - 1, 0))
    return Timing(statistics.median(times), tuple(times), "cuda", cuda_device(), first)
