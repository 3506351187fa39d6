"""The best CPU code we can write for Das et al.'s Table 5, on every core
(``native/d3_best.c``, built by ``pipeline.cbuild`` and loaded with ctypes): whole runs
of the SIR filter with systematic resampling and of the D3 filter on the UUV model, one
OpenMP team a run, and the pieces the tests compare with NumPy exactly (one systematic
resampling, one D3 resampling on given weights and uniforms), with the bounds the runs
are held to (a STREAM-style copy of the same bytes, the cost of a barrier).

Its D3 finds the stride by a prefix sum and the range maxima by two monotone deques:
O(N) a step, for the same particles as Table 1's O(N + sum |j_i - i|) loop and the
paper's O(N^2) GPU search (docs/d3_2014.md, "The best CPU code"). Where no C compiler is
found the functions raise the RuntimeError of ``cbuild.compiler``; the NumPy filters
still run."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from pfresample.filters.common import derive_seeds
from pfresample.resampling.d3 import NOISES

from ..pipeline import cbuild

NATIVE = Path(__file__).resolve().parent / "native"
SOURCE = NATIVE / "d3_best.c"
# BEST_FLAGS, and -fno-trapping-math: the vectorised exp's clamp is a select only when
# the compiler may ignore floating-point traps (nothing here reads them).
FLAGS = (*cbuild.BEST_FLAGS, "-fno-trapping-math")
KINDS = ("systematic", "d3")
CDFS = ("prefix", "paper")
FLAWS = ("none", "shifted_weights", "open_range")
_P = ctypes.c_void_p
_I64, _INT, _DBL, _U64 = ctypes.c_int64, ctypes.c_int, ctypes.c_double, ctypes.c_uint64


@cache
def library() -> ctypes.CDLL:
    """native/d3_best.c, built once (cbuild's cache) and loaded once a process."""
    lib = ctypes.CDLL(str(cbuild.build(SOURCE, prefix="d3_2014", flags=FLAGS)))
    lib.d3best_systematic.restype = _INT
    lib.d3best_systematic.argtypes = (_P, _I64, _DBL, _P, _INT, _INT)
    lib.d3best_d3.restype = _INT
    lib.d3best_d3.argtypes = (_P, _P, _P, _I64, _INT, _DBL, _P, _P, _P, _P, _INT, _INT, _INT,
                              _P, _P, _P, _P)  # fmt: skip
    lib.d3best_run.restype = _INT
    lib.d3best_run.argtypes = (_INT, _I64, _I64, _I64, _P, _P, _P, _DBL, _DBL, _DBL, _P, _P,
                               _INT, _INT, _I64, _U64, _INT, _INT, _P)  # fmt: skip
    lib.d3best_copy_seconds.restype = _DBL
    lib.d3best_copy_seconds.argtypes = (_I64, _INT, _INT)
    lib.d3best_barrier_seconds.restype = _DBL
    lib.d3best_barrier_seconds.argtypes = (_INT, _INT)
    lib.d3best_exp.restype = None
    lib.d3best_exp.argtypes = (_P, _P, _I64)
    lib.d3best_threads.restype = _INT
    return lib


def max_threads() -> int:
    """OpenMP's thread count for a team of "all cores" (threads=None)."""
    return int(library().d3best_threads())


def _threads(threads) -> int:
    if threads is None:
        return 0
    if int(threads) < 1:
        raise ValueError(f"threads must be >= 1 or None (all), got {threads!r}")
    return int(threads)


def _flaw(flaw: str) -> int:
    if flaw not in FLAWS:
        raise ValueError(f"flaw must be one of {FLAWS}, got {flaw!r}")
    return FLAWS.index(flaw)


def _weights(w, name: str = "w") -> np.ndarray:
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {w.shape}")
    bad = np.flatnonzero(~(np.isfinite(w) & (w >= 0)))
    if bad.size:
        raise ValueError(f"{name} must be finite and >= 0; index {bad[0]} is {w[bad[0]]!r}")
    if not (w > 0).any():
        raise ValueError(f"{name} has no positive weight")
    return w


def _unit(u, name: str = "u") -> float:
    u = float(u)
    if not 0.0 <= u < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {u!r}")
    return u


def systematic(w, u: float, *, threads=None, flaw: str = "none") -> np.ndarray:
    """Systematic resampling of ``w`` with the uniform ``u``: ancestors (int32), slot i
    the first j with C_j > (i + u) C_N / N, at most the last positive weight (C the
    block-wise prefix sum of native/d3_best.c's header: numpy.cumsum on one thread)."""
    w = _weights(w)
    out = np.empty(w.size, dtype=np.int32)
    status = library().d3best_systematic(w.ctypes.data, w.size, _unit(u), out.ctypes.data,
                                         _threads(threads), _flaw(flaw))  # fmt: skip
    if status != 0:
        raise RuntimeError(f"d3best_systematic failed with status {status}")
    return out


def d3_step(x, w, pw, *, ua, ub, u=None, thresholds=None, j=None, noise: str = "eq5",
            threads=None, flaw: str = "none"):  # fmt: skip
    """One D3 resampling (resampling/d3.py's contract) of the particles ``x`` (N, 2)
    with likelihood weights ``w`` and prior (log-)weights ``pw``, the uniforms ``ua``,
    ``ub`` (N, 2) of moves (a) and (b). The strides: ``j`` where given (non-decreasing),
    else systematic with ``u`` (the ``"prefix"`` stride) or, with ``thresholds``, the
    paper's search (the first j with C_j / C_N >= u_i). Returns (x', j, l, p)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 2:
        raise ValueError(f"x must be (N, 2), got shape {x.shape}")
    n = x.shape[0]
    w = _weights(w)
    pw = np.ascontiguousarray(pw, dtype=np.float64)
    ua = np.ascontiguousarray(ua, dtype=np.float64)
    ub = np.ascontiguousarray(ub, dtype=np.float64)
    for name, a, shape in (("w", w, (n,)), ("pw", pw, (n,)), ("ua", ua, (n, 2)),
                           ("ub", ub, (n, 2))):  # fmt: skip
        if a.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.isfinite(pw).all():
        raise ValueError(f"pw must be finite; index {np.flatnonzero(~np.isfinite(pw))[0]} is not")
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    if sum(v is not None for v in (u, thresholds, j)) != 1:
        raise ValueError("give exactly one of u (systematic), thresholds (the paper's) or j")
    cdf, uu, thr, jin = 0, 0.0, None, None
    if u is not None:
        uu = _unit(u)
    elif thresholds is not None:
        cdf, thr = 1, np.ascontiguousarray(thresholds, dtype=np.float64)
        if thr.shape != (n,):
            raise ValueError(f"thresholds must have shape ({n},), got {thr.shape}")
    else:
        jin = np.ascontiguousarray(j, dtype=np.int32)
        if jin.shape != (n,) or (jin < 0).any() or (jin >= n).any() or (np.diff(jin) < 0).any():
            raise ValueError("j must be N non-decreasing indices in 0 ... N - 1")
    out = np.empty_like(x)
    jj, ll, pp = (np.empty(n, dtype=np.int32) for _ in range(3))
    status = library().d3best_d3(
        x.ctypes.data, w.ctypes.data, pw.ctypes.data, n, cdf, uu,
        None if thr is None else thr.ctypes.data, None if jin is None else jin.ctypes.data,
        ua.ctypes.data, ub.ctypes.data, NOISES.index(noise), _threads(threads), _flaw(flaw),
        out.ctypes.data, jj.ctypes.data, ll.ctypes.data, pp.ctypes.data,
    )  # fmt: skip
    if status != 0:
        raise RuntimeError(f"d3best_d3 failed with status {status}")
    return out, jj, ll, pp


@dataclass(frozen=True)
class NativeRun:
    """A run of native/d3_best.c: the estimates x^_1 ... x^_T (T, 2), the final
    particles (N, 2), the run's seconds (its team made) and the seconds of the steps
    after ``skip`` (the timed window)."""

    estimates: np.ndarray
    particles: np.ndarray
    seconds: float
    window_seconds: float
    steps: int
    skip: int


def model_inputs(model, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(F, b) of steps 0 ... steps - 1 (UuvModel.matrices): (steps, 4) and (steps, 2)."""
    mats = [model.matrices(k) for k in range(steps)]
    f = np.ascontiguousarray([m[0].ravel() for m in mats], dtype=np.float64)
    b = np.ascontiguousarray([m[1] for m in mats], dtype=np.float64)
    return f, b


def initial_particles(model, n: int, seed: int, steps: int) -> np.ndarray:
    """The initial particles run_filter draws for ``seed`` (its noise generator's first
    draws): the compiled and the NumPy runs of one seed start from one cloud."""
    rng, _ = derive_seeds(int(seed), int(steps))
    return np.ascontiguousarray(model.init_particles(int(n), rng), dtype=np.float64)


def run(model, y, n: int, kind: str, *, seed: int, cdf: str = "prefix", noise: str = "eq5",
        block: int = 160, threads=None, skip: int = 0, flaw: str = "none",
        x0=None) -> NativeRun:  # fmt: skip
    """A run of the SIR (``kind="systematic"``) or the D3 filter (``"d3"``, ``cdf``
    "prefix" or "paper" with ``block`` threads a block, ``noise`` of d3.NOISES) of the
    UUV ``model`` (its ``particle_sd`` the filter's process noise) over the readings
    ``y`` (T, 2), N particles from ``x0`` (default: :func:`initial_particles`),
    resampling every step; the window's clock starts after ``skip`` steps."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if cdf not in CDFS:
        raise ValueError(f"cdf must be one of {CDFS} (the compiled code's), got {cdf!r}")
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] != 2 or y.shape[0] < 1 or not np.isfinite(y).all():
        raise ValueError(f"y must be finite readings (T, 2), got shape {y.shape}")
    steps = y.shape[0]
    if not 0 <= int(skip) < steps:
        raise ValueError(f"skip must be in 0 ... {steps - 1}, got {skip}")
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    x = initial_particles(model, n, seed, steps) if x0 is None else np.array(x0, dtype=np.float64)
    if x.shape != (n, 2):
        raise ValueError(f"x0 must be ({n}, 2), got {x.shape}")
    f, b = model_inputs(model, steps)
    est = np.empty((steps, 2))
    seconds = np.zeros(2)
    status = library().d3best_run(
        KINDS.index(kind), n, steps, int(skip), f.ctypes.data, b.ctypes.data, y.ctypes.data,
        float(model.obs_mean), float(model.obs_var), float(model.particle_sd), x.ctypes.data,
        est.ctypes.data, CDFS.index(cdf), NOISES.index(noise), int(block),
        int(seed) & (2**64 - 1), _threads(threads), _flaw(flaw), seconds.ctypes.data,
    )  # fmt: skip
    if status == -3:
        raise ValueError("a step's weights are all zero (every likelihood underflowed)")
    if status != 0:
        raise RuntimeError(f"d3best_run failed with status {status}")
    return NativeRun(est, x, float(seconds[0]), float(seconds[1]), steps, int(skip))


def bytes_per_step(kind: str, n: int) -> int:
    """The bytes a step's passes read and write (native/d3_best.c), each array counted
    once a pass that touches it: what its bandwidth is counted in. A particle, SIR:
    pass 1 reads x and writes the prediction (32), rereads it and writes l (24); pass 2
    reads l, writes w~ (16), reads w~ and the prediction for the estimate (24), reads
    w~ and writes the running sum (16); pass 3 C in place (16); pass 4 reads C, writes
    and rereads the stride (16), gathers a prediction and writes x (32): 176. D3: the
    same passes 1-3 (128) and eq. 4's prior log-weights (prediction read, pw written:
    24); pass 4 reads C, writes the stride (12), reads it with w and pw and writes l_i
    and p_i (28), reads p_i, x(p) and x(i) and writes x (52); pass 5 reads the strides
    and l_i (12) and, for a claiming slot (at most all), x(l) and x(j) and writes x
    (48): 304."""
    per = {"systematic": 176, "d3": 304}[kind]
    return per * int(n)


def copy_seconds(doubles: int, rounds: int, threads=None) -> float:
    """Seconds of ``rounds`` STREAM-style copies of ``doubles`` doubles (16 B each a
    round: read and written) on ``threads`` (None: all), one parallel region a round."""
    s = library().d3best_copy_seconds(int(doubles), int(rounds), _threads(threads))
    if s < 0:
        raise RuntimeError(f"d3best_copy_seconds failed ({s})")
    return float(s)


def barrier_seconds(rounds: int, threads=None) -> float:
    """Seconds of one OpenMP barrier among ``threads`` (None: all), the mean of ``rounds``."""
    s = library().d3best_barrier_seconds(int(rounds), _threads(threads))
    if s < 0:
        raise RuntimeError(f"d3best_barrier_seconds failed ({s})")
    return float(s)


# barriers a step of each filter waits at (native/d3_best.c's header)
BARRIERS = {"systematic": 3, "d3": 5}


def exp(x) -> np.ndarray:
    """The compiled filter's exp (its vectorised exp_neg) over ``x``, for the tests."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    library().d3best_exp(x.ctypes.data, out.ctypes.data, x.size)
    return out
