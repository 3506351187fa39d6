"""The compiled CPU baselines: chapter 3's (``native/dp.c``: eq. 2 by
diagonals on one thread or many, OpenMP), chapter 6's (``native/tv.c``:
GlobalSync's solver on one thread) and chapter 7's (``native/dtw.c``: the exact
banded DTW of every window on one thread), built once with the host's C compiler into
a cache folder and loaded with ctypes. The thesis's 228x (chapter 3) is against
one CPU thread; the study reports the speed-up over one thread and over all of
them. Chapter 6's 266x is over a CPU version compiled with gcc -O3 (§6.5).

The best CPU code we can write, on every core (docs/moazeni2013.md, "The best CPU
code"): chapter 3's ``native/dp_blocked.c`` (``solve_blocked``: the GPU's strip order,
register-tiled min-plus products, OpenMP; the same matrix as dp.c bit for bit) and
chapter 6's ``native/tv_best.c`` (``tv_best_solve``: two fused passes, OpenMP; tv.c's
arithmetic, the same bits on any thread count), with the bounds they are held to
(``minplus_peak``, ``stream_copy``), all built with BEST_FLAGS; and chapter 7's
``native/dtw_best.c`` (``dtw_best_search``: the UCR suite's pruned search made exact for
the top-p task; ``dtw_best_all``: every window's distance, SIMD), whose selections equal
the exact brute force's bit for bit.

Where no C compiler is found the functions raise a RuntimeError that says so:
the NumPy reference (``dp.solve_diagonals``) still runs."""

from __future__ import annotations

import ctypes
import os
from functools import cache
from pathlib import Path

import numpy as np

from ..pipeline import cbuild
from . import dp

NATIVE = Path(__file__).resolve().parent / "native"
SOURCE = NATIVE / "dp.c"
FLAGS, CXX_FLAGS, BEST_FLAGS = cbuild.FLAGS, cbuild.CXX_FLAGS, cbuild.BEST_FLAGS
compiler = cbuild.compiler
FUNCTIONS = {"float32": "solve_f32", "int32": "solve_i32"}


def build(source: Path, cxx: bool = False, flags: tuple[str, ...] | None = None) -> Path:
    """The shared library of one of the chapters' sources (``pipeline.cbuild.build``)."""
    return cbuild.build(source, prefix="moazeni2013", cxx=cxx, flags=flags)


@cache
def library() -> ctypes.CDLL:
    """The DP baseline (native/dp.c), built and loaded once a process."""
    path = build(SOURCE)
    # Threads that wait at a barrier sleep instead of spinning: a cell may share its
    # cores with other jobs, where spinning threads slow every diagonal's barrier.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    lib = ctypes.CDLL(str(path))
    for name in FUNCTIONS.values():
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int
        fn.argtypes = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int)
    return lib


def _checked(m: np.ndarray, threads: int) -> str:
    """The dtype name of a matrix the compiled solvers take (C-contiguous, square,
    float32 or int32), with ``threads`` >= 1; a ValueError naming what is wrong."""
    dtype = np.dtype(m.dtype).name
    if dtype not in FUNCTIONS:
        raise ValueError(f"dtype must be one of {tuple(FUNCTIONS)}, got {dtype}")
    if m.ndim != 2 or m.shape[0] != m.shape[1] or not m.flags.c_contiguous:
        raise ValueError(f"m must be a C-contiguous square matrix, got shape {m.shape}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    return dtype


def solve(m: np.ndarray, threads: int = 1) -> np.ndarray:
    """Eq. 2 in place on a C-contiguous float32 or int32 square matrix with
    ``threads`` OpenMP threads; returns m."""
    dtype = _checked(m, threads)
    status = getattr(library(), FUNCTIONS[dtype])(m.ctypes.data, m.shape[0], int(threads))
    if status != 0:
        raise MemoryError("native solve: could not allocate the transposed copy")
    return m


@cache
def blocked_library() -> ctypes.CDLL:
    """The best CPU code of chapter 3 (native/dp_blocked.c), built and loaded once a process."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    lib = ctypes.CDLL(str(build(NATIVE / "dp_blocked.c", flags=BEST_FLAGS)))
    for name in FUNCTIONS.values():
        fn = getattr(lib, name.replace("solve_", "solve_blocked_flawed_"))
        fn.restype = ctypes.c_int
        fn.argtypes = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_int)
    return lib


# The deliberate flaws of dp_blocked.c, the tests' negative controls (0: none)
BLOCKED_FLAWS = {"none": 0, "drop_last_product": 1, "drop_eq5_down": 2, "drop_eq5_left": 3}


def solve_blocked(m: np.ndarray, threads: int | None = None, *, flaw: str = "none"
                  ) -> np.ndarray:  # fmt: skip
    """Eq. 2 in place as ``solve`` (the same matrix bit for bit, the zeros' signs
    included), by the best CPU code: 64 x 64 blocks in the GPU's strip order,
    register-tiled min-plus products, OpenMP over a strip's blocks; ``threads``
    default to every CPU. ``flaw`` (tests only) builds a wrong answer on purpose
    (BLOCKED_FLAWS). Returns m."""
    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    dtype = _checked(m, threads)
    fn = getattr(blocked_library(), FUNCTIONS[dtype].replace("solve_", "solve_blocked_flawed_"))
    if fn(m.ctypes.data, m.shape[0], threads, BLOCKED_FLAWS[flaw]) != 0:
        raise MemoryError("native solve_blocked: could not allocate the blocked copy")
    return m


@cache
def weighted_library() -> ctypes.CDLL:
    """Chapter 3's real instances (native/dp_weighted.c: the recurrence with w(i, k, j),
    blocked, OpenMP), built with BEST_FLAGS and loaded once a process."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    lib = ctypes.CDLL(str(build(NATIVE / "dp_weighted.c", flags=BEST_FLAGS)))
    for family in ("chain", "perimeter"):
        fn = getattr(lib, f"solve_weighted_{family}")
        fn.restype = ctypes.c_int
        fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int,
                       ctypes.c_int, ctypes.c_int)  # fmt: skip
    return lib


# The deliberate flaws of dp_weighted.c, the tests' negative controls (0: none)
WEIGHTED_FLAWS = {"none": 0, "drop_last_product": 1, "drop_eq5_down": 2, "drop_eq5_left": 3,
                  "drop_weight": 4}  # fmt: skip


def solve_weighted(inst, threads: int | None = None, *, flaw: str = "none") -> np.ndarray:
    """``dp_weighted.Instance`` ``inst`` solved by the best CPU code on ``threads``
    threads (default every CPU): the n x n matrix, equal bit for bit to
    ``dp_weighted.solve_diagonals``'s. ``flaw`` (tests only) builds a wrong answer on
    purpose (WEIGHTED_FLAWS)."""
    from . import dp_weighted

    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    m = dp_weighted.matrix(inst)
    data = np.ascontiguousarray(inst.data, dtype=inst.dtype)
    fn = getattr(weighted_library(), f"solve_weighted_{inst.family}")
    status = fn(m.ctypes.data, data.ctypes.data, inst.n, threads, WEIGHTED_FLAWS[flaw],
                int(data.ndim == 2))  # fmt: skip
    if status != 0:
        raise MemoryError("native solve_weighted: could not allocate the blocked copy")
    return m


# float64 is chapter 7's (dtw_best.c's cells); float32 and int32 chapter 3's
PEAK_FUNCTIONS = {"float32": "minplus_peak_f32", "int32": "minplus_peak_i32",
                  "float64": "minplus_peak_f64"}  # fmt: skip


@cache
def peak_library() -> ctypes.CDLL:
    """The min-plus peak microkernel (native/minplus_peak.c), built with BEST_FLAGS."""
    lib = ctypes.CDLL(str(build(NATIVE / "minplus_peak.c", flags=BEST_FLAGS)))
    for name in PEAK_FUNCTIONS.values():
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int
        fn.argtypes = (ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    lib.minplus_chain_f64.restype = ctypes.c_double
    lib.minplus_chain_f64.argtypes = (ctypes.c_int64, ctypes.c_void_p)
    return lib


def minplus_peak(rounds: int, threads: int, dtype: str = "float32") -> tuple[float, int]:
    """Run the peak microkernel: ``rounds`` rounds on each of ``threads`` threads.
    Returns (seconds, min-plus operations): a round is rows x cols min-plus
    operations and cols additions (counted as half a min-plus each); float64's tile has
    half float32's columns (the same vectors)."""
    import time

    if dtype not in PEAK_FUNCTIONS:
        raise ValueError(f"dtype must be one of {tuple(PEAK_FUNCTIONS)}, got {dtype}")
    lib = peak_library()
    rows = lib.minplus_peak_rows()
    cols = lib.minplus_peak_cols_f64() if dtype == "float64" else lib.minplus_peak_cols()
    seed = np.arange(rows + 3 * cols, dtype=dtype)
    seed[rows + 2 * cols :] = 1  # d: y advances by one a round (exact in every dtype)
    out = np.full(1, np.inf if dtype == "float64" else dp.infinity(dtype), dtype=dtype)
    fn = getattr(lib, PEAK_FUNCTIONS[dtype])
    start = time.perf_counter()
    fn(int(rounds), int(threads), seed.ctypes.data, out.ctypes.data)
    seconds = time.perf_counter() - start
    return seconds, int(rounds) * int(threads) * (rows * cols + cols // 2)


def minplus_chain(rounds: int) -> float:
    """Seconds of ``rounds`` links of one dependent chain of chapter 7's DTW cell
    (native/minplus_peak.c's minplus_chain_f64: min, min, add, float64, on this thread):
    a link's seconds are the latency of a cell's path to the next cell."""
    import time

    seed = np.array([1e300, 1e300, 1.0])
    start = time.perf_counter()
    acc = peak_library().minplus_chain_f64(int(rounds), seed.ctypes.data)
    seconds = time.perf_counter() - start
    if acc != float(rounds):
        raise AssertionError(f"minplus_chain: {acc} after {rounds} links, not {rounds}")
    return seconds


@cache
def tv_library() -> ctypes.CDLL:
    """Chapter 6's solver (native/tv.c), built and loaded once a process."""
    lib = ctypes.CDLL(str(build(NATIVE / "tv.c")))
    lib.tv_solve_f32.restype = ctypes.c_int
    lib.tv_solve_f32.argtypes = (ctypes.c_void_p, ctypes.c_void_p, *(ctypes.c_int64,) * 3,
                                 *(ctypes.c_float,) * 3, ctypes.c_int)  # fmt: skip
    return lib


def _channel_major(L: np.ndarray, d_hat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """L and d_hat (n0, n1, n2, 6) as the C solvers read them: float32, channel-major
    (6, n0, n1, n2), contiguous copies (L's is solved in place)."""
    if L.shape != d_hat.shape or L.ndim != 4 or L.shape[-1] != 6:
        raise ValueError(f"L and d_hat must both be (n0, n1, n2, 6), got {L.shape}, {d_hat.shape}")
    return tuple(np.ascontiguousarray(np.moveaxis(np.asarray(a, np.float32), -1, 0))
                 for a in (L, d_hat))  # fmt: skip


def tv_solve(L: np.ndarray, d_hat: np.ndarray, *, lam: float, eps: float, step: float,
             iterations: int) -> np.ndarray:  # fmt: skip
    """GlobalSync's steepest descent on one CPU thread, float32: L, d_hat
    (n0, n1, n2, 6); returns the new L (n0, n1, n2, 6)."""
    cm, dh = _channel_major(L, d_hat)
    status = tv_library().tv_solve_f32(cm.ctypes.data, dh.ctypes.data, *L.shape[:3], lam, eps,
                                       step, int(iterations))  # fmt: skip
    if status != 0:
        raise MemoryError("native tv_solve: could not allocate its work arrays")
    return np.moveaxis(cm, 0, -1)


@cache
def tv_best_library() -> ctypes.CDLL:
    """Chapter 6's best CPU code (native/tv_best.c) and the STREAM-style copy, built with
    BEST_FLAGS and loaded once a process."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    lib = ctypes.CDLL(str(build(NATIVE / "tv_best.c", flags=BEST_FLAGS)))
    lib.tv_best_solve_f32.restype = ctypes.c_int
    pointers, sides, floats = (ctypes.c_void_p,) * 2, (ctypes.c_int64,) * 3, (ctypes.c_float,) * 3
    lib.tv_best_solve_f32.argtypes = (*pointers, *sides, *floats, ctypes.c_int, ctypes.c_int)
    lib.stream_copy_f32.restype = ctypes.c_int
    lib.stream_copy_f32.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int,
                                    ctypes.c_int)  # fmt: skip
    return lib


def tv_best_solve(L: np.ndarray, d_hat: np.ndarray, *, lam: float, eps: float, step: float,
                  iterations: int, threads: int | None = None) -> np.ndarray:  # fmt: skip
    """GlobalSync's steepest descent by the best CPU code (native/tv_best.c) on
    ``threads`` threads (default: every CPU), float32, as ``tv_solve``: L, d_hat
    (n0, n1, n2, 6); returns the new L. Every voxel's arithmetic is tv.c's; the TV
    sums are added in a fixed order, so the result is the same for any thread count."""
    cm, dh = _channel_major(L, d_hat)
    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    args = (cm.ctypes.data, dh.ctypes.data, *L.shape[:3], lam, eps, step, int(iterations))
    status = tv_best_library().tv_best_solve_f32(*args, threads)
    if status != 0:
        raise MemoryError("native tv_best_solve: could not allocate its work arrays")
    return np.moveaxis(cm, 0, -1)


def stream_copy(dst: np.ndarray, src: np.ndarray, rounds: int, threads: int) -> None:
    """dst = src (float32, contiguous, one size) ``rounds`` times on ``threads`` threads."""
    if dst.dtype != np.float32 or src.dtype != np.float32 or dst.size != src.size:
        raise ValueError("stream_copy needs two float32 arrays of one size")
    if not (dst.flags.c_contiguous and src.flags.c_contiguous):
        raise ValueError("stream_copy needs contiguous arrays")
    tv_best_library().stream_copy_f32(dst.ctypes.data, src.ctypes.data, dst.size, int(rounds),
                                      int(threads))  # fmt: skip


@cache
def dtw_library() -> ctypes.CDLL:
    """Chapter 7's DTW (native/dtw.c), built and loaded once a process."""
    lib = ctypes.CDLL(str(build(NATIVE / "dtw.c")))
    lib.dtw_windows_f64.restype = ctypes.c_int
    lib.dtw_windows_f64.argtypes = (*(ctypes.c_void_p,) * 4, ctypes.c_int, ctypes.c_int64,
                                    ctypes.c_int, ctypes.c_void_p)  # fmt: skip
    lib.dtw_top_pruned.restype = ctypes.c_int
    lib.dtw_top_pruned.argtypes = (*(ctypes.c_void_p,) * 4, ctypes.c_int, ctypes.c_int64,
                                   ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                                   *(ctypes.c_void_p,) * 3)  # fmt: skip
    return lib


def dtw_windows(q: np.ndarray, x: np.ndarray, mu: np.ndarray, sd: np.ndarray,
                band: int) -> np.ndarray:  # fmt: skip
    """DTW of the z-normalised query ``q`` against every window of ``x`` (means
    ``mu``, deviations ``sd`` from mddtw.window_stats) on one thread: (W,) float64."""
    q, x = np.ascontiguousarray(q, np.float64), np.ascontiguousarray(x, np.float64)
    mu, sd = np.ascontiguousarray(mu, np.float64), np.ascontiguousarray(sd, np.float64)
    W = x.size - q.size + 1
    if W < 1 or mu.shape != (W,) or sd.shape != (W,) or band < 0:
        raise ValueError(f"need len(x) >= len(q), (W,) statistics and band >= 0; got "
                         f"{q.size}, {x.size}, {mu.shape}, {sd.shape}, {band}")  # fmt: skip
    out = np.empty(W)
    if dtw_library().dtw_windows_f64(
        q.ctypes.data,
        x.ctypes.data,
        mu.ctypes.data,
        sd.ctypes.data,
        q.size,
        x.size,
        band,
        out.ctypes.data,
    ):
        raise MemoryError("native dtw_windows: could not allocate its row")
    return out


def dtw_top_pruned(q, x, mu, sd, band: int, p: int, exclusion: int):
    """The p best windows at least ``exclusion`` apart (mddtw.best_windows of the
    full distances), found with lower bounds and early abandoning on one thread:
    ([(t, d)], windows gone through)."""
    q, x = np.ascontiguousarray(q, np.float64), np.ascontiguousarray(x, np.float64)
    mu, sd = np.ascontiguousarray(mu, np.float64), np.ascontiguousarray(sd, np.float64)
    W = x.size - q.size + 1
    if W < 1 or mu.shape != (W,) or sd.shape != (W,) or band < 0 or p < 1 or exclusion < 1:
        raise ValueError("need len(x) >= len(q), (W,) statistics, band >= 0, p >= 1, "
                         "exclusion >= 1")  # fmt: skip
    t, d, computed = np.empty(p, np.int64), np.empty(p), ctypes.c_int64(0)
    status = dtw_library().dtw_top_pruned(q.ctypes.data, x.ctypes.data, mu.ctypes.data,
                                          sd.ctypes.data, q.size, x.size, band, p, exclusion,
                                          t.ctypes.data, d.ctypes.data,
                                          ctypes.byref(computed))  # fmt: skip
    if status > 0:
        raise MemoryError("native dtw_top_pruned: could not allocate its arrays")
    return [(int(t[i]), float(d[i])) for i in range(-status)], int(computed.value)


# Chapter 7's best CPU code (native/dtw_best.c): the counters of dtw_best_search, a pair each
DTW_STATS = ("lb_kim", "lb_keogh_eq", "lb_keogh_ec", "dtw_abandoned", "dtw_completed",
             "dtw_cells", "lb_points")  # fmt: skip
DTW_FLAWS = {"none": 0, "euclidean_as_bound": 1}
# No fused multiply-adds: the distances keep dtw.c's bits (the C11 mode's default on gcc, said
# here so that no compiler's default decides it)
DTW_BEST_FLAGS = (*BEST_FLAGS, "-ffp-contract=off")


@cache
def dtw_best_library() -> ctypes.CDLL:
    """Chapter 7's best CPU code (native/dtw_best.c), built with BEST_FLAGS (no FMA)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    lib = ctypes.CDLL(str(build(NATIVE / "dtw_best.c", flags=DTW_BEST_FLAGS)))
    p, i32, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
    lib.dtw_best_search.restype = i32
    lib.dtw_best_search.argtypes = (p, p, p, p, p, p, i32, i32, i64, i32, i32, i64, i32, i32,
                                    i32, p, p, p, p)  # fmt: skip
    lib.dtw_best_all.restype = i32
    lib.dtw_best_all.argtypes = (p, p, p, p, p, p, i32, i32, i64, i32, i32, i64, i32, p, p, p, p)
    lib.dtw_select_rows.restype = i32
    lib.dtw_select_rows.argtypes = (p, i32, i64, i32, i64, i32, p, p, p)
    lib.dtw_select_candidates.restype = i32
    lib.dtw_select_candidates.argtypes = (p, p, i32, i64, i32, i64, p, p, p)
    return lib


class DtwSearchInput:
    """A chapter-7 search's arrays as dtw_best.c reads them, checked once: the
    z-normalised query rows (k_q, m), the recording (k, n), each window's mean and
    divisor (k, W) (``mddtw.window_stats`` or ``running_stats`` of each row: the GPU's),
    and the (query dimension, recording dimension) pairs."""

    def __init__(self, queries, db, mu, sd, pair_list):
        self.q = np.ascontiguousarray(queries, np.float64)
        self.x = np.ascontiguousarray(db, np.float64)
        self.mu = np.ascontiguousarray(mu, np.float64)
        self.sd = np.ascontiguousarray(sd, np.float64)
        if self.q.ndim != 2 or self.x.ndim != 2 or self.q.shape[1] > self.x.shape[1]:
            raise ValueError(f"need queries (k_q, m) and a recording (k, n >= m), got "
                             f"{self.q.shape}, {self.x.shape}")  # fmt: skip
        self.m, self.n = self.q.shape[1], self.x.shape[1]
        self.W = self.n - self.m + 1
        if (
            self.m < 1
            or self.mu.shape != (self.x.shape[0], self.W)
            or self.sd.shape != self.mu.shape
        ):
            raise ValueError(f"need m >= 1 and (k, W) = {(self.x.shape[0], self.W)} statistics, "
                             f"got m = {self.m}, {self.mu.shape}, {self.sd.shape}")  # fmt: skip
        if not (np.isfinite(self.q).all() and np.isfinite(self.x).all()
                and np.isfinite(self.mu).all()):  # fmt: skip
            raise ValueError("queries, recording and means must be finite")
        if not (self.sd > 0).all():  # +inf (a constant window) passes; NaN and <= 0 do not
            raise ValueError("the divisors must be > 0 (+inf for a constant window)")
        pairs = np.asarray(pair_list, dtype=np.int64).reshape(-1, 2)
        if pairs.shape[0] < 1 or (pairs < 0).any() or (pairs[:, 0] >= self.q.shape[0]).any() \
                or (pairs[:, 1] >= self.x.shape[0]).any():  # fmt: skip
            raise ValueError(f"pairs must name existing dimensions, got {pair_list!r}")
        self.pq = np.ascontiguousarray(pairs[:, 0], np.int32)
        self.px = np.ascontiguousarray(pairs[:, 1], np.int32)
        self.pairs = pairs.shape[0]

    def arrays(self):
        return (self.q.ctypes.data, self.x.ctypes.data, self.mu.ctypes.data, self.sd.ctypes.data,
                self.pq.ctypes.data, self.px.ctypes.data, self.pairs, self.m, self.n)  # fmt: skip


def _top_lists(t: np.ndarray, d: np.ndarray, count: np.ndarray) -> list[list[tuple[int, float]]]:
    return [[(int(t[k, s]), float(d[k, s])) for s in range(count[k])] for k in range(len(count))]


def _search_args(band: int, p: int, exclusion: int, threads: int | None) -> int:
    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    if band < 0 or p < 1 or exclusion < 1 or threads < 1:
        raise ValueError(f"need band >= 0, p >= 1, exclusion >= 1, threads >= 1; got {band}, "
                         f"{p}, {exclusion}, {threads}")  # fmt: skip
    return threads


def dtw_best_search(data: DtwSearchInput, band: int, p: int, exclusion: int,
                    threads: int | None = None, *, chunks: int = 0,
                    flaw: str = "none"):  # fmt: skip
    """Every pair's ``mddtw.best_windows`` (p windows at least ``exclusion`` apart) by
    the pruned exact search of native/dtw_best.c (lower bounds, early abandoning) on
    ``threads`` threads (default: every CPU). ``chunks``: a pair's chunks (0: enough
    for the threads). ``flaw`` (tests only): DTW_FLAWS. Returns (a [(t, d)] list a pair,
    counters (pairs, len(DTW_STATS)) int64)."""
    threads = _search_args(band, p, exclusion, threads)
    if chunks < 0:
        raise ValueError(f"chunks must be >= 0, got {chunks}")
    t, d = np.zeros((data.pairs, p), np.int64), np.zeros((data.pairs, p))
    count, stats = np.zeros(data.pairs, np.int32), np.zeros((data.pairs, len(DTW_STATS)), np.int64)
    status = dtw_best_library().dtw_best_search(*data.arrays(), band, p, exclusion, threads,
                                                chunks, DTW_FLAWS[flaw], t.ctypes.data,
                                                d.ctypes.data, count.ctypes.data,
                                                stats.ctypes.data)  # fmt: skip
    if status:
        raise MemoryError("native dtw_best_search: could not allocate its arrays")
    return _top_lists(t, d, count), stats


def dtw_best_all(data: DtwSearchInput, band: int, p: int, exclusion: int,
                 threads: int | None = None, *, distances: bool = False):  # fmt: skip
    """The same selection from every window's exact distance (native/dtw_best.c's SIMD
    brute force, the GPU kernel's twin). Returns the [(t, d)] lists, and with
    ``distances`` the (pairs, W) distances too."""
    threads = _search_args(band, p, exclusion, threads)
    t, d = np.zeros((data.pairs, p), np.int64), np.zeros((data.pairs, p))
    count = np.zeros(data.pairs, np.int32)
    D = np.empty((data.pairs, data.W)) if distances else None
    status = dtw_best_library().dtw_best_all(*data.arrays(), band, p, exclusion, threads,
                                             t.ctypes.data, d.ctypes.data, count.ctypes.data,
                                             None if D is None else D.ctypes.data)  # fmt: skip
    if status:
        raise MemoryError("native dtw_best_all: could not allocate its arrays")
    lists = _top_lists(t, d, count)
    return (lists, D) if distances else lists


def dtw_select_rows(D: np.ndarray, p: int, exclusion: int, threads: int | None = None):
    """``mddtw.best_windows`` of each row of distances D (rows, W), in C on ``threads``."""
    D = np.ascontiguousarray(D, np.float64)
    threads = _search_args(0, p, exclusion, threads)
    if D.ndim != 2 or D.size == 0 or not np.isfinite(D).all():
        raise ValueError(f"need finite distances (rows, W), got shape {D.shape}")
    t, d = np.zeros((D.shape[0], p), np.int64), np.zeros((D.shape[0], p))
    count = np.zeros(D.shape[0], np.int32)
    if dtw_best_library().dtw_select_rows(D.ctypes.data, D.shape[0], D.shape[1], p, exclusion,
                                          threads, t.ctypes.data, d.ctypes.data,
                                          count.ctypes.data):  # fmt: skip
        raise MemoryError("native dtw_select_rows: could not allocate its work array")
    return _top_lists(t, d, count)


def dtw_select_candidates(idx: np.ndarray, dist: np.ndarray, p: int, exclusion: int):
    """The selection from each row's K smallest distances (positions idx, distances dist,
    both (rows, K), any order), as ``mddtw.best_windows`` of the full rows where K >=
    p (2 exclusion - 1) (or K = W): the GPU side's last step."""
    idx = np.ascontiguousarray(idx, np.int64)
    dist = np.ascontiguousarray(dist, np.float64)
    _search_args(0, p, exclusion, 1)
    if idx.ndim != 2 or idx.shape != dist.shape or idx.size == 0:
        raise ValueError(f"need idx and dist of one (rows, K) shape, got {idx.shape}, {dist.shape}")
    t, d = np.zeros((idx.shape[0], p), np.int64), np.zeros((idx.shape[0], p))
    count = np.zeros(idx.shape[0], np.int32)
    if dtw_best_library().dtw_select_candidates(idx.ctypes.data, dist.ctypes.data, idx.shape[0],
                                                idx.shape[1], p, exclusion, t.ctypes.data,
                                                d.ctypes.data, count.ctypes.data):  # fmt: skip
        raise MemoryError("native dtw_select_candidates: could not allocate its work array")
    return _top_lists(t, d, count)
