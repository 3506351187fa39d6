"""The best CPU code of the cellular particle filter (``native/cpf_best.c``): the
library's CPF (``filters/cellular.py``; ``resampling/cellular.py``'s contract) in C with
OpenMP on every core, for the growth model (the paper's start or the thesis's) and the
bearings-only model, built with ``pipeline.cbuild`` (BEST_FLAGS) and loaded with ctypes.

* :func:`run` -- one whole run over T steps: the mean of the resampled particles of each
  step (the paper's estimate), with the counter-based random numbers of ``csrc/pf_cpu.h``
  or, for the tests, the NumPy filter's own draws replayed (:func:`numpy_draws`).
* :func:`choose` -- the cellular choice alone on given log-weights and uniforms: the
  ancestors ``resampling.cellular.cellular_log`` gives.
* :func:`scan_peak`, :func:`stream_copy` -- the bounds the run is held to: the scan's
  own rate on L1-resident data (no barriers, all threads), and a STREAM-style copy.

Where no C compiler is found the functions raise a RuntimeError that says so; the NumPy
filter (``run_filter`` with ``CPF_OPTIONS``) still runs."""

from __future__ import annotations

import ctypes
import os
import time
from functools import cache
from pathlib import Path

import numpy as np

from pfresample.filters.common import derive_seeds
from pfresample.resampling.cellular import draws_of
from pfresample.rng import seed_keys, uniform_float

from ..pipeline import cbuild

SOURCE = Path(__file__).resolve().parent / "native" / "cpf_best.c"
MODELS = {"growth": 0, "bot": 1}
DIMS = {"growth": 1, "bot": 4}
# The deliberate flaws of cpf_best.c, the tests' negative controls (0: none)
FLAWS = {"none": 0, "drop_farthest": 1, "tempered": 2, "self": 3}
STATUS = {1: "could not allocate its arrays", 2: "bad arguments"}


@cache
def library() -> ctypes.CDLL:
    """native/cpf_best.c built with BEST_FLAGS and loaded once a process."""
    lib = ctypes.CDLL(str(cbuild.build(SOURCE, prefix="cpf2013", flags=cbuild.BEST_FLAGS)))
    p, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    lib.cpf_run.restype = i32
    lib.cpf_run.argtypes = (i32, i32, i64, i32, i32, p, ctypes.c_uint64, i32, p, p, p, p, i32)
    lib.cpf_choose.restype = i32
    lib.cpf_choose.argtypes = (p, p, i64, i32, i32, p, i32)
    lib.cpf_scan_peak.restype = ctypes.c_double
    lib.cpf_scan_peak.argtypes = (i64, i32, i64, i32)
    lib.cpf_stream_copy.restype = None
    lib.cpf_stream_copy.argtypes = (p, p, i64, i32, i32)
    return lib


def compiler() -> str:
    """The C compiler the library is built with (RuntimeError where there is none)."""
    return cbuild.compiler()


def _threads(threads: int | None) -> int:
    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    return threads


def _check(n: int, radius: int) -> None:
    if n < 1 or not 0 <= radius < n:
        raise ValueError(f"need N >= 1 and 0 <= r <= N - 1, got N = {n}, r = {radius}")


def _status(code: int, what: str) -> None:
    if code:
        raise (MemoryError if code == 1 else ValueError)(f"native {what}: {STATUS[code]}")


def run(model: str, y: np.ndarray, n: int, radius: int, *, seed: int = 0,
        threads: int | None = None, paper_start: bool = True, draws=None,
        flaw: str = "none", stages: bool = False):  # fmt: skip
    """One run of the CPF over ``len(y)`` steps (model "growth" or "bot"; the growth
    model from the paper's start unless ``paper_start`` is False) on ``threads`` threads
    (default: every CPU). Returns the estimates, (T,) or (T, 4): the mean of the resampled
    particles of each step; with ``stages``, (estimates, (seconds of prediction and
    likelihood with the barrier's wait, seconds of the choice and gather), thread 0's).
    ``draws``: (noise, uniforms) to replay (:func:`numpy_draws`) instead of the
    counter-based numbers of ``seed``. ``flaw`` (tests only): FLAWS."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}, got {model!r}")
    _check(n, radius)
    threads = _threads(threads)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.ndim != 1 or y.size < 1:
        raise ValueError(f"y must be a non-empty 1-d array, got shape {y.shape}")
    steps, dim = y.size, DIMS[model]
    noise = uniforms = None
    if draws is not None:
        noise, uniforms = (np.ascontiguousarray(a, dtype=np.float64) for a in draws)
        per_step = 1 if model == "growth" else 2
        if noise.size != n * dim + steps * n * per_step or uniforms.size != steps * n:
            raise ValueError("draws: noise and uniforms of the wrong sizes for N and T")
    est = np.empty((steps, dim))
    stage = np.zeros(2)
    code = library().cpf_run(
        MODELS[model], int(bool(paper_start)), n, radius, steps, y.ctypes.data,
        int(seed) & 0xFFFFFFFFFFFFFFFF, threads,
        None if noise is None else noise.ctypes.data,
        None if uniforms is None else uniforms.ctypes.data,
        est.ctypes.data, stage.ctypes.data, FLAWS[flaw],
    )  # fmt: skip
    _status(code, "cpf_run")
    out = est[:, 0] if model == "growth" else est
    return (out, tuple(stage)) if stages else out


def numpy_draws(model: str, n: int, steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The normals and uniforms ``run_filter(model, y, n, "cellular", seed=seed,
    backend="cpu", **CPF_OPTIONS)`` draws (``engine._run_cpu``: the model's generator from
    ``derive_seeds``, its initial particles' normals then each step's; step k's uniforms
    from Philox under that step's resampling seed, ``cellular_log``), for :func:`run`'s
    replay."""
    rng, draw_seeds = derive_seeds(seed, steps)
    dim, per_step = DIMS[model], 1 if model == "growth" else 2
    shape = (n,) if model == "growth" else (n, dim)
    noise = [rng.standard_normal(shape).ravel()]
    step_shape = (n,) if per_step == 1 else (n, per_step)
    noise += [rng.standard_normal(step_shape).ravel() for _ in range(steps)]
    uniforms = []
    for k in range(steps):
        k0, k1 = seed_keys([int(draw_seeds[k])])
        uniforms.append(uniform_float(draws_of((k0[0], k1[0]), n)).astype(np.float64))
    return np.concatenate(noise), np.concatenate(uniforms)


def choose(log_w: np.ndarray, u: np.ndarray, radius: int, *, threads: int | None = None,
           flaw: str = "none") -> np.ndarray:  # fmt: skip
    """The cellular choice (``resampling.cellular.cellular_log``'s, float64) of the ring
    of log-weights ``log_w`` with the uniforms ``u``: ancestors (N,), int64."""
    lw = np.ascontiguousarray(log_w, dtype=np.float64)
    u = np.ascontiguousarray(u, dtype=np.float64)
    if lw.ndim != 1 or u.shape != lw.shape:
        raise ValueError(f"log_w and u must be 1-d of one size, got {lw.shape}, {u.shape}")
    if np.isnan(lw).any() or np.isposinf(lw).any() or not np.isfinite(lw).any():
        raise ValueError("log-weights must be finite or -inf, at least one finite")
    _check(lw.size, radius)
    out = np.empty(lw.size, dtype=np.int64)
    code = library().cpf_choose(lw.ctypes.data, u.ctypes.data, lw.size, radius,
                                _threads(threads), out.ctypes.data, FLAWS[flaw])  # fmt: skip
    _status(code, "cpf_choose")
    return out


def scan_peak(m: int, radius: int, rounds: int, threads: int) -> tuple[float, int]:
    """The scan's ceiling: ``rounds`` scans of an L1-resident block of ``m`` particles at
    radius r on each of ``threads`` threads (no barriers). Returns (seconds, neighbour
    visits: m (r + 1) a particle-round, each two adds and a compare)."""
    lib = library()
    start = time.perf_counter()
    lib.cpf_scan_peak(int(m), int(radius), int(rounds), int(threads))
    return time.perf_counter() - start, int(m) * (int(radius) + 1) * int(rounds) * int(threads)


def stream_copy(dst: np.ndarray, src: np.ndarray, rounds: int, threads: int) -> None:
    """dst = src (float64, contiguous, one size) ``rounds`` times on ``threads`` threads
    (``pf_stream_copy``)."""
    if dst.dtype != np.float64 or src.dtype != np.float64 or dst.size != src.size:
        raise ValueError("stream_copy needs two float64 arrays of one size")
    if not (dst.flags.c_contiguous and src.flags.c_contiguous):
        raise ValueError("stream_copy needs contiguous arrays")
    library().cpf_stream_copy(dst.ctypes.data, src.ctypes.data, dst.size, int(rounds),
                              int(threads))  # fmt: skip
