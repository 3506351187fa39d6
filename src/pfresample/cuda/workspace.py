"""Device buffers and the arguments of one resampling call on the device."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..rng import seed_keys
from ..tuning import cached_ssd_table
from .geometry import reduction_parts, scan_tiles
from .kernels import CTYPES

# Layout of the statistics record (gpu_kernels/stats.cuh).
STAT_SUM, STAT_MAX, STAT_BAD, STAT_SSD, STAT_SCALE, STAT_COUNT = 0, 1, 2, 3, 4, 5


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
        self.scale = 1.0  # what the statistics multiply the weights by (sums.stats_scale)
        self.max = None  # the largest weight, once read on the host (None: not known)
        self.b = cupy.zeros(1, dtype=np.int32)
        self.tickets = cupy.zeros(2, dtype=np.uint32)  # the statistics', the SSD's last block
        self._spares: dict = {}

    def spare(self, shape: tuple, owner: str = ""):
        """A kept int32 array of ``shape`` (the butterfly's ancestors between
        stages): kept rather than made per call, so that a captured CUDA
        graph never holds memory that the pool has handed back. ``owner``
        keeps one user's arrays apart from another's of the same shape."""
        import cupy

        key = (owner, shape)
        if key not in self._spares:
            self._spares[key] = cupy.empty(shape, dtype=np.int32)
        return self._spares[key]

    def rejection_queue(self, lanes: int):
        """Rejection's queue of lanes for the tail pass (rejection.cu): a
        count, then up to ``lanes`` lane ids (a :meth:`spare`)."""
        return self.spare((lanes + 1,), owner="rejection queue")

    def log_scan(self) -> LogScanBuffers:
        """The buffers of the float32 log-domain scan (precision "log32")."""
        if "log32" not in self._scans:
            self._scans["log32"] = LogScanBuffers(self.n)
        return self._scans["log32"]

    def scan(self, dtype) -> ScanBuffers:
        """The prefix-sum buffers in precision ``dtype`` (made on first use)."""
        dtype = np.dtype(dtype)
        if dtype not in self._scans:
            self._scans[dtype] = ScanBuffers(self.n, dtype)
        return self._scans[dtype]


class ScanBuffers:
    """Buffers of the cumulative and butterfly families in one precision: a
    few values per tile of the prefix sum (O(N / SCAN_TILE)), and arrays of N
    and N / 2 values made when first asked for (:meth:`values`: r of
    Stratified and Multinomial, Residual's fractions, the butterfly's first
    stage sums; :meth:`second_values`: its later ones). Systematic needs
    none."""

    def __init__(self, n: int, dtype: np.dtype):
        import cupy

        self.n, self.dtype = n, dtype
        self.tiles = tiles = scan_tiles(n)
        self.tile_sum = cupy.empty(tiles, dtype=dtype)  # pass 1: each tile's total
        self.tile_exp = cupy.empty(tiles, dtype=np.int32)  # its scale exponent
        self.exp_max = cupy.empty(1, dtype=np.int32)  # the largest: the global scale
        self.tile_end = cupy.empty(tiles, dtype=np.int64)  # one past its last positive weight
        self.prefix = cupy.empty(tiles, dtype=dtype)  # pass 2: the sum before each tile
        self.carry = cupy.empty(tiles, dtype=dtype)  # the largest C before each tile
        self.total = cupy.empty(1, dtype=dtype)  # C_N
        self.last = cupy.empty(1, dtype=np.int64)  # the last particle of positive weight
        self.tickets = cupy.zeros(1, dtype=np.uint32)  # blocks of pass 1 done (reset by the last)
        # Residual: per-tile counts, each tile's first slot, R, (mode, fallback), scale
        self.tile_counts = cupy.empty(4 * tiles, dtype=np.int64)
        self.tile_offset = cupy.empty(tiles, dtype=np.int64)
        self.rest = cupy.empty(1, dtype=np.int64)
        self.plan = cupy.empty(2, dtype=np.int32)
        self.residual_scale = cupy.empty(2, dtype=np.float64)  # weights' factor, their sum
        self._values = None
        self._second = None

    def values(self):
        import cupy

        if self._values is None:
            self._values = cupy.empty(self.n, dtype=self.dtype)
        return self._values

    def second_values(self):
        """A second array of N / 2 values (the butterfly's stage sums after
        the first, N / r_1 of them), made when first asked for."""
        import cupy

        if self._second is None:
            self._second = cupy.empty(max(self.n // 2, 1), dtype=self.dtype)
        return self._second


class LogScanBuffers:
    """Buffers of the float32 log-domain scan (``cumulative.cu``, "log32"):
    the tiles' local log-sums, the tile totals (scanned in place), one past
    each tile's last positive weight, L_N, the last positive weight, each
    tile's largest r and r itself."""

    def __init__(self, n: int):
        import cupy

        from ..contracts import LOG_TILE

        self.n = n
        self.tiles = tiles = -(-n // LOG_TILE)
        self.local = cupy.empty(tiles * LOG_TILE, dtype=np.float32)
        self.totals = cupy.empty(tiles, dtype=np.float32)
        self.tile_end = cupy.empty(tiles, dtype=np.int64)
        self.top = cupy.empty(1, dtype=np.float32)
        self.last = cupy.empty(1, dtype=np.int64)
        self.tile_max = cupy.empty(tiles, dtype=np.float32)
        self.r = cupy.empty(n, dtype=np.float32)
        self.rest = cupy.zeros(1, dtype=np.int64)  # unused: the draws' count is N


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

    host = np.ascontiguousarray(cached_ssd_table(n) if table is None else table, dtype=np.float64)
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
    # A device float64 s that w is divided by as the scan loads it (None: w as
    # it is): a filter hands w~ and its sum where a pass would write w = w~ / s.
    # Only the linear-scan Systematic, Stratified and Multinomial read it.
    divisor: object = None

    @property
    def n(self) -> int:
        return int(self.w.shape[0])

    @property
    def lanes(self) -> int:
        return int(self.out.size)

    @property
    def ctype(self) -> str:
        return CTYPES[self.w.dtype]

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


def make_call(w, seeds) -> Call:
    """One call on the weights ``w`` (a 1-D float32/float64 CuPy array that
    ``validation.prepare`` made): its workspace, its output and the keys of
    ``seeds``."""
    import cupy

    if not w.flags.c_contiguous:
        w = cupy.ascontiguousarray(w)
    k0, k1 = seed_keys(seeds)
    ws = workspace(int(w.shape[0]))
    ws.scale, ws.max = 1.0, None
    out = cupy.empty((k0.size, int(w.shape[0])), dtype=np.int32)
    if k0.size == 1:
        return Call(w, 0, ws.stats, np.uint32(k0[0]), np.uint32(k1[0]), ws, out)
    keys = cupy.asarray(np.stack([k0, k1], axis=1).astype(np.uint32).ravel())
    return Call(w, int(k0.size), keys, np.uint32(0), np.uint32(0), ws, out)
