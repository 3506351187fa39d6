"""Fig 6.23's best CPU filter: ``native/sir_growth.c`` (thesis Algorithm 2.4 on the growth
model, eqs. 2.34-2.35, with Uphill or Systematic resampling, OpenMP on every core), built
once with ``pipeline.cbuild`` (BEST_FLAGS) and loaded with ctypes; and the bounds the
bench holds it to (a STREAM-style copy; Uphill's random loads without its comparisons).

The C filter draws its own random numbers (``pf_cpu.h``'s counter-based generator), so
its runs are not the NumPy filter's bit for bit; the tests compare its RMSE with the NumPy
filter's over many runs, and its resamplers exactly with the library's on the same draws
(``uphill_from_draws``, ``systematic_from_ratios``, and the filter's own stage-4 code
through ``uphill_resample`` / ``systematic_resample``).

Vector math: the stage 1-2 loops call exp, log and cos; glibc's libmvec has their vector
forms, so the build links it (and the loader loads it first, where a linker drops an
unused-looking library). Without libmvec the file is built with ``-DPF_SCALAR_MATH``
(``MATH`` says which build loaded). Where no C compiler is found the functions raise a
RuntimeError that says so; the NumPy filter still runs."""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from pfresample.tuning import cached_ssd_table

from ..pipeline import cbuild

NATIVE = Path(__file__).resolve().parent / "native"
SOURCE = NATIVE / "sir_growth.c"
METHODS = {"uphill": 0, "systematic": 1}
# The deliberate flaws of sir_growth.c, the tests' negative controls (0: none)
FLAWS = {"none": 0, "drop_weight_update": 1, "uphill_ties_later": 2}
ERRORS = {1: "n must be in 1 ... 2^31 - 1", 2: "y must hold at least one measurement",
          3: "unknown method", 4: "Uphill needs a non-empty SSD table",
          5: "threads must be in 1 ... 512", 6: "could not allocate the per-thread partials",
          7: "unknown flaw", 8: "B must be >= 0"}  # fmt: skip
_P = ctypes.c_void_p
_I64, _U64, _INT, _DBL = ctypes.c_int64, ctypes.c_uint64, ctypes.c_int, ctypes.c_double
SIGNATURES = {
    "growth_sir_run": (_INT, (_P, _I64, _I64, _U64, _INT, _P, _I64, _INT, _INT, *(_P,) * 7)),
    "uphill_from_draws": (_INT, (_P, _I64, _INT, _P, _INT, _P)),
    "uphill_draws": (_INT, (_U64, _I64, _INT, _P)),
    "uphill_resample": (_INT, (_P, _I64, _INT, _U64, _INT, _INT, _P)),
    "systematic_resample": (_INT, (_P, _I64, _DBL, _INT, _P)),
    "systematic_from_ratios": (_INT, (_P, _I64, _DBL, _I64, _P)),
    "stream_copy": (None, (_P, _P, _I64, _INT, _INT)),
    "gather_bound": (_DBL, (_P, _I64, _INT, _INT, _U64, _INT)),
}
MATH = None  # "libmvec" or "scalar": which build library() loaded


def _load(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


@cache
def library() -> ctypes.CDLL:
    """native/sir_growth.c, built and loaded once a process: with libmvec's vector exp,
    log and cos where the host has them, else with the scalar ones."""
    global MATH
    # OpenMP reads OMP_WAIT_POLICY once, when the first compiled library loads it. A
    # filter step ends in a barrier a stage; threads that sleep there cost some
    # microseconds each step, so a caller on an idle machine sets ACTIVE first.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    mvec = ctypes.util.find_library("mvec")
    if mvec:
        try:
            ctypes.CDLL(mvec, mode=ctypes.RTLD_GLOBAL)
            path = cbuild.build(SOURCE, prefix="dulger2017", flags=(*cbuild.BEST_FLAGS, "-lmvec"))
            lib = _load(path)
            MATH = "libmvec"
            return lib
        except (OSError, RuntimeError):
            pass  # no usable libmvec: the scalar build below
    path = cbuild.build(SOURCE, prefix="dulger2017",
                        flags=(*cbuild.BEST_FLAGS, "-DPF_SCALAR_MATH"))  # fmt: skip
    lib = _load(path)
    MATH = "scalar"
    return lib


def compiler() -> str:
    """The C compiler the build uses (a RuntimeError naming what to install without one)."""
    return cbuild.compiler()


def _check(status: int) -> None:
    if status == 6:
        raise MemoryError(f"sir_growth.c: {ERRORS[6]}")
    if status:
        raise ValueError(f"sir_growth.c: {ERRORS.get(status, f'error {status}')}")


def _threads(threads: int | None) -> int:
    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    return threads


def _weights(w) -> np.ndarray:
    w = np.ascontiguousarray(w, dtype=np.float32)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights must be a non-empty 1-D array, got shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("weights must be finite and >= 0")
    return w


@dataclass(frozen=True)
class Run:
    """One run of the C filter: the T estimates x^_1 ... x^_T, each step's B (-1 for
    Systematic) and ESS, the seconds of the four stages (T x 4; stage 3 is fused into
    stage 2 and reads 0), their total, and the wall seconds of the call."""

    method: str
    n: int
    threads: int
    estimates: np.ndarray
    B: np.ndarray
    ess: np.ndarray
    stage_seconds: np.ndarray
    total_seconds: float
    wall_seconds: float


HUGE_PAGE = 2 << 20  # x86-64's transparent huge page


def huge_empty(n: int, dtype=np.float32) -> np.ndarray:
    """An uninitialised array of ``n`` items on 2 MiB-aligned anonymous memory that the
    kernel is asked to back with transparent huge pages (madvise; a no-op where the host
    has them off). Uphill reads B random weights a particle: beyond the TLB's reach of
    4 KiB pages (some MiB) nearly every one of them would also walk the page table."""
    size = int(n) * np.dtype(dtype).itemsize
    mm = mmap.mmap(-1, size + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mm, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            mm.madvise(mmap.MADV_HUGEPAGE)
        except OSError:
            pass  # a kernel without THP: 4 KiB pages
    raw = np.frombuffer(mm, dtype=np.uint8)  # keeps mm alive as its base
    skip = -raw.ctypes.data % HUGE_PAGE
    return raw[skip : skip + size].view(dtype)


class GrowthFilter:
    """The C filter with N particles on ``threads`` threads (default: every CPU), its
    work arrays (three arrays of N float32, on huge pages where the host gives them)
    allocated once, so that a run allocates nothing; their pages are first touched by
    the first run's threads, each its own range."""

    def __init__(self, n: int, threads: int | None = None):
        if not 1 <= int(n) < 2**31:
            raise ValueError(f"n must be in 1 ... 2^31 - 1, got {n}")
        self.n, self.threads = int(n), _threads(threads)
        self.lib = library()
        self.xa, self.xb, self.w = (huge_empty(self.n) for _ in range(3))

    def run(self, y, seed: int, method: str = "uphill", *, ssd_table=None,
            flaw: str = "none") -> Run:  # fmt: skip
        """Algorithm 2.4 over the measurements ``y`` (``y[k]`` = z_{k+1}) with ``method``
        ("uphill": B by the SSD ``ssd_table`` of this N, default the library's cached
        one; "systematic"); ``seed`` any 64-bit integer. ``flaw`` (tests only) builds a
        wrong filter on purpose (FLAWS)."""
        if method not in METHODS:
            raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
        if flaw not in FLAWS:
            raise ValueError(f"flaw must be one of {tuple(FLAWS)}, got {flaw!r}")
        y = np.ascontiguousarray(y, dtype=np.float64)
        if y.ndim != 1 or y.size == 0:
            raise ValueError(f"y must be a non-empty 1-D array, got shape {y.shape}")
        if not np.isfinite(y).all():
            raise ValueError("y must be finite")
        table = None
        if method == "uphill":
            table = cached_ssd_table(self.n) if ssd_table is None else ssd_table
            table = np.ascontiguousarray(table, dtype=np.float64)
            if table.ndim != 1 or table.size == 0:
                raise ValueError("ssd_table must be a non-empty 1-D array (tuning.ssd_table)")
        T = y.size
        estimates, ess = np.empty(T), np.empty(T)
        B = np.empty(T, np.int32)
        stages = np.empty((T, 4))
        start = time.perf_counter()
        status = self.lib.growth_sir_run(
            y.ctypes.data, T, self.n, int(seed) % 2**64, METHODS[method],
            None if table is None else table.ctypes.data, 0 if table is None else table.size,
            self.threads, FLAWS[flaw], self.xa.ctypes.data, self.xb.ctypes.data,
            self.w.ctypes.data, estimates.ctypes.data, B.ctypes.data, ess.ctypes.data,
            stages.ctypes.data,
        )  # fmt: skip
        wall = time.perf_counter() - start
        _check(status)
        return Run(method, self.n, self.threads, estimates, B, ess, stages,
                   float(stages.sum()), wall)  # fmt: skip


def uphill_from_draws(w, B: int, draws, flaw: str = "none") -> np.ndarray:
    """Algorithm 6.1 on given 32-bit draws (``draws[i, m]``: particle i's draw for
    candidate m, mapped to ``(draw * N) >> 32``): int32 ancestors."""
    w = _weights(w)
    draws = np.ascontiguousarray(draws, dtype=np.uint32)
    if draws.shape != (w.size, int(B)):
        raise ValueError(f"draws must have shape (N, B) = {(w.size, int(B))}, got {draws.shape}")
    anc = np.empty(w.size, np.int32)
    _check(library().uphill_from_draws(w.ctypes.data, w.size, int(B), draws.ctypes.data,
                                       FLAWS[flaw], anc.ctypes.data))  # fmt: skip
    return anc


def uphill_draws(step_seed: int, n: int, B: int) -> np.ndarray:
    """The (N, B) draws the filter's Uphill makes with the step seed ``step_seed``."""
    draws = np.empty((int(n), int(B)), np.uint32)
    _check(library().uphill_draws(int(step_seed) % 2**64, int(n), int(B), draws.ctypes.data))
    return draws


def uphill_resample(w, B: int, step_seed: int, threads: int | None = None,
                    flaw: str = "none") -> np.ndarray:  # fmt: skip
    """The filter's stage-4 Uphill (tiles, OpenMP) on ``w`` with the step seed
    ``step_seed``: int32 ancestors."""
    w = _weights(w)
    anc = np.empty(w.size, np.int32)
    _check(library().uphill_resample(w.ctypes.data, w.size, int(B), int(step_seed) % 2**64,
                                     _threads(threads), FLAWS[flaw], anc.ctypes.data))  # fmt: skip
    return anc


def systematic_resample(w, u: float, threads: int | None = None) -> np.ndarray:
    """The filter's stage-4 Systematic on ``w`` with the uniform ``u`` in [0, 1): int32
    ancestors (Algorithms 3.1-3.2 on C summed in double)."""
    w = _weights(w)
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u must be in [0, 1), got {u}")
    if not (w > 0).any():
        raise ValueError("weights must have a positive entry")
    anc = np.empty(w.size, np.int32)
    _check(library().systematic_resample(w.ctypes.data, w.size, float(u), _threads(threads),
                                         anc.ctypes.data))  # fmt: skip
    return anc


def systematic_from_ratios(r, u: float, last: int) -> np.ndarray:
    """Algorithms 3.1-3.2 on given ratios r = N C / C_N and the last positive index:
    int32 ancestors."""
    r = np.ascontiguousarray(r, dtype=np.float64)
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"r must be a non-empty 1-D array, got shape {r.shape}")
    anc = np.empty(r.size, np.int32)
    _check(library().systematic_from_ratios(r.ctypes.data, r.size, float(u), int(last),
                                            anc.ctypes.data))  # fmt: skip
    return anc


def stream_copy(dst: np.ndarray, src: np.ndarray, rounds: int, threads: int) -> None:
    """``pf_stream_copy``: dst = src (float64, the same size) ``rounds`` times."""
    if dst.dtype != np.float64 or src.dtype != np.float64 or dst.shape != src.shape:
        raise ValueError("dst and src must be float64 arrays of the same shape")
    if not (dst.flags.c_contiguous and src.flags.c_contiguous):
        raise ValueError("dst and src must be C-contiguous")
    library().stream_copy(dst.ctypes.data, src.ctypes.data, dst.size, int(rounds),
                          _threads(threads))  # fmt: skip


def gather_bound(w, per_particle: int, rounds: int, seed: int,
                 threads: int | None = None) -> float:  # fmt: skip
    """``rounds`` times ``per_particle`` random loads of ``w`` a particle with the filter's
    draws, tiles and threads, nothing compared: the most candidates a second Uphill's
    stage 4 can look at. Returns the loads' sum (the caller times the call)."""
    w = _weights(w)
    if per_particle < 0 or rounds < 0:
        raise ValueError("per_particle and rounds must be >= 0")
    return float(library().gather_bound(w.ctypes.data, w.size, int(per_particle), int(rounds),
                                        int(seed) % 2**64, _threads(threads)))  # fmt: skip
