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
(``minplus_peak``, ``stream_copy``), all built with BEST_FLAGS.

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
def peak_library() -> ctypes.CDLL:
    """The min-plus peak microkernel (native/minplus_peak.c), built with BEST_FLAGS."""
    lib = ctypes.CDLL(str(build(NATIVE / "minplus_peak.c", flags=BEST_FLAGS)))
    for name in ("minplus_peak_f32", "minplus_peak_i32"):
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int
        fn.argtypes = (ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    return lib


def minplus_peak(rounds: int, threads: int, dtype: str = "float32") -> tuple[float, int]:
    """Run the peak microkernel: ``rounds`` rounds on each of ``threads`` threads.
    Returns (seconds, min-plus operations): a round is rows x cols min-plus
    operations and cols additions (counted as half a min-plus each)."""
    import time

    if dtype not in FUNCTIONS:
        raise ValueError(f"dtype must be one of {tuple(FUNCTIONS)}, got {dtype}")
    lib = peak_library()
    rows, cols = lib.minplus_peak_rows(), lib.minplus_peak_cols()
    seed = np.arange(rows + 3 * cols, dtype=dtype)
    seed[rows + 2 * cols :] = 1  # d: y advances by one a round (exact in both dtypes)
    out = np.full(1, dp.infinity(dtype), dtype=dtype)
    fn = lib.minplus_peak_f32 if dtype == "float32" else lib.minplus_peak_i32
    start = time.perf_counter()
    fn(int(rounds), int(threads), seed.ctypes.data, out.ctypes.data)
    seconds = time.perf_counter() - start
    return seconds, int(rounds) * int(threads) * (rows * cols + cols // 2)


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
