"""The single-step experiments of Güldaş (2015) §4.1: draw T particle-weight
sets, resample each once, and record the errors of eqs. 4.1 and 4.3,

    E  = (1/N) sum_i phi(x^{a^i}) - pi_hat_0(phi)                         (4.1)
    LE = (1/N) sum_i phi(x^{a^i}) - sum_i g(x^i) phi(x^i) / sum_i g(x^i)   (4.3)

whose mean squares over the T sets are the MSE (4.5) and LMSE (4.6)
estimates. Every resampler of a cell (an :class:`Arm`) sees the same
particle sets, so that their differences are not particle-set noise.

Randomness: a cell is named by a stream (its experiment's tag and N). Its
particle sets come from one generator seeded by (seed, stream): NumPy's
PCG64 on the CPU, CuPy's XORWOW on the GPU (the particles are drawn where
they are resampled, so the sets differ between backends while every
statistic keeps its law); its resampling seeds, one per set, from NumPy's
SeedSequence of (seed, stream), the same on both backends. A cell is
therefore reproducible on a given backend.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass

import numpy as np

from pfresample import api
from pfresample.backend import cuda_device, resolve_backend
from pfresample.cuda.logweights import to_weights_device
from pfresample.logweights import to_weights
from pfresample.radix import sequences_of_depth, shallowest_depth
from pfresample.timing import cpu_name

from .targets import Target

# The methods of Figs 4.5-4.8: each standard method and its butterfly form.
FAMILIES = {"multinomial": "butterfly-multinomial", "systematic": "butterfly-systematic"}
PRECISIONS = ("float32", "float64")
# The standard methods on Appendix A's float32 log-domain scan (resampling/log_scan.py),
# at the level of the raw log g (log_offset = the set's largest log g): Figs 4.5-4.8, panel a.
LOG32 = "log32"
# Particles drawn and weighed at once: up to this many (a few float64 arrays of it).
SETS_ELEMENTS = 1 << 20
# Figs 4.1-4.4 resample in float64: they test the theory, not the arithmetic.
THEORY_PRECISION = "float64"


@dataclass(frozen=True)
class Arm:
    """One resampler of a cell: a registry method, the precision of its
    (log-)weights and, for the butterflies, its radix sequence."""

    method: str
    precision: str = THEORY_PRECISION
    radix: tuple[int, ...] | None = None

    def params(self, top: float | None = None) -> dict:
        """The method's parameters; ``top``: the log-weights' largest value,
        the level of the log-domain scan (precision "log32")."""
        if self.precision == LOG32:
            return {"precision": LOG32, "log_offset": 0.0 if top is None else float(top)}
        return {} if self.radix is None else {"radix": self.radix}

    @property
    def dtype(self) -> str:
        """The dtype of the log-weights the arm is handed (log32 scans float32)."""
        return "float32" if self.precision == LOG32 else self.precision


def radix_label(radix) -> str:
    """A radix sequence as tables write it, e.g. ``"64x64"`` (``""`` for none)."""
    return "x".join(str(r) for r in radix) if radix is not None else ""


def parse_radix(label: str) -> tuple[int, ...] | None:
    return tuple(int(r) for r in label.split("x")) if label else None


def stream_of(tag: str, n: int) -> tuple[int, int]:
    """The random stream of the cell ``tag`` at N (a fixed hash of the tag)."""
    return zlib.crc32(tag.encode()), int(n)


def particle_generator(seed: int, stream, on_device: bool):
    """The generator of a cell's particle sets (module docstring)."""
    sequence = np.random.SeedSequence(seed, spawn_key=(*stream, 0))
    if on_device:
        import cupy

        return cupy.random.RandomState(int(sequence.generate_state(1, np.uint64)[0] >> 1))
    return np.random.default_rng(sequence)


def draw_seeds(seed: int, stream, count: int) -> list[int]:
    """The resampling seeds of a cell's ``count`` particle sets, < 2^64."""
    words = np.random.SeedSequence(seed, spawn_key=(*stream, 1)).generate_state(count, np.uint64)
    return [int(s) for s in words]


def device_name(where: str) -> str:
    return cuda_device() if where == "cuda" else cpu_name()


def _xp(where: str):
    if where == "cuda":
        import cupy

        return cupy
    return np


def replicate_errors(
    target: Target, n: int, arms, *, replicates: int, seed: int, stream, backend: str, log=None
) -> tuple[np.ndarray, np.ndarray]:
    """``(E, LE)``, each (len(arms), replicates) float64: the errors of eqs.
    4.1 and 4.3 of every arm on each of ``replicates`` particle sets of N.
    The particle sets are drawn and weighed SETS_ELEMENTS particles at a time
    (one generator call for many sets: a small N costs little more than its
    resampling call)."""
    where = resolve_backend(backend)
    xp = _xp(where)
    rng = particle_generator(seed, stream, where == "cuda")
    seeds = draw_seeds(seed, stream, replicates)
    estimates = xp.empty((len(arms), replicates))  # (1/N) sum_i phi(x^{a^i})
    importance = xp.empty(replicates)  # the IS estimate of eq. 4.3, float64
    precisions = sorted({arm.dtype for arm in arms})
    rows = max(1, SETS_ELEMENTS // n)
    started, reported = time.perf_counter(), 0
    for first in range(0, replicates, rows):
        count = min(rows, replicates - first)
        x = target.draw(rng, (count, n))
        lw = target.log_g(x, xp)
        w = xp.exp(lw - lw.max(axis=1, keepdims=True))
        importance[first : first + count] = (w * x).sum(axis=1) / w.sum(axis=1)
        for i in range(count):
            j = first + i
            log_weights = {p: lw[i].astype(p, copy=False) for p in precisions}
            top = float(lw[i].max())
            for k, arm in enumerate(arms):
                a = api.resample(
                    log_weights[arm.dtype], arm.method, seed=seeds[j], backend=where,
                    log=True, **arm.params(top),
                )  # fmt: skip
                estimates[k, j] = x[i][a].mean()
        elapsed = time.perf_counter() - started
        if log is not None and (elapsed - reported > 30 or first + count == replicates):
            reported = elapsed
            log.info(
                "N = %d: %d of %d particle sets, %.0f s", n, first + count, replicates, elapsed
            )
    errors = estimates - target.weighted_moments()[0]
    local = estimates - importance[None, :]
    if where == "cuda":
        return errors.get(), local.get()
    return errors, local


def timing_weights(target: Target, n: int, precision: str, *, seed: int, stream, backend: str):
    """The weights every arm of a cell is timed on: those of a particle set
    drawn apart from the replicates (stream with a last word of 2), in
    ``precision``, on the cell's device."""
    where = resolve_backend(backend)
    xp = _xp(where)
    rng = particle_generator(seed, (*stream, 2), where == "cuda")
    lw = target.log_g(target.draw(rng, n), xp).astype(precision)
    return to_weights_device(lw) if where == "cuda" else to_weights(lw)


def time_arm(weights, arm: Arm, *, seed: int, backend: str, repeats: int, top=None) -> float:
    """Median milliseconds of one resampling by ``arm`` of ``weights``
    (``api.time_resample``: CUDA events around the kernels on the GPU,
    the whole call on the CPU); ``top``: see :meth:`Arm.params`."""
    where = resolve_backend(backend)
    timing = api.time_resample(
        weights, arm.method, seed=seed, repeats=repeats, warmup=1, backend=where,
        **arm.params(top),
    )  # fmt: skip
    return timing.median_ms


def fastest_radix(weights, method: str, *, seed: int, backend: str, repeats: int):
    """§4.1.4's choice: time ``method`` with every radix sequence of depth
    m_N = ceil(log_1024 N) and keep the fastest. Returns ``(best, timed)``,
    ``timed`` a list of (radix, median ms) in enumeration order."""
    n = weights.size
    candidates = sequences_of_depth(n, shallowest_depth(n))
    timed = []
    for radix in candidates:
        ms = time_arm(weights, Arm(method, str(weights.dtype), radix),
                      seed=seed, backend=backend, repeats=repeats)  # fmt: skip
        timed.append((radix, ms))
    best = min(timed, key=lambda item: item[1])[0]
    return best, timed


# --- the cells of the pipeline ----------------------------------------------


def _metadata(what: str, target: Target, n: int, replicates: int, seed: int, where: str) -> dict:
    return {
        "what": what,
        "study": "guldas2015",
        "target": target.name,
        "target_parameters": list(target.parameters),
        "n": int(n),
        "replicates": int(replicates),
        "seed": int(seed),
        "backend": where,
        "device": device_name(where),
    }


def radix2_cell(target: Target, n: int, *, replicates: int, seed: int, backend: str, log=None):
    """Figs 4.1-4.2 at one N = 2^m: radix-2 butterfly multinomial, (2, ..., 2)."""
    where = resolve_backend(backend)
    m = int(n).bit_length() - 1
    if n != 2**m or m < 1:
        raise ValueError(f"the radix-2 experiment needs N a power of two >= 2, got {n}")
    arm = Arm("butterfly-multinomial", THEORY_PRECISION, (2,) * m)
    errors, local = replicate_errors(
        target,
        n,
        [arm],
        replicates=replicates,
        seed=seed,
        stream=stream_of("radix2", n),
        backend=where,
        log=log,
    )
    arrays = {"errors": errors[0], "local_errors": local[0]}
    return arrays, _metadata("radix-2 errors", target, n, replicates, seed, where)


def sweep_cell(
    target: Target, n: int, radices, *, replicates: int, seed: int, backend: str, log=None
):
    """Figs 4.3-4.4: butterfly multinomial with each radix sequence of
    ``radices`` on the same particle sets of N."""
    where = resolve_backend(backend)
    arms = [Arm("butterfly-multinomial", THEORY_PRECISION, tuple(r)) for r in radices]
    errors, local = replicate_errors(
        target,
        n,
        arms,
        replicates=replicates,
        seed=seed,
        stream=stream_of("sweep", n),
        backend=where,
        log=log,
    )
    metadata = _metadata("radix sweep errors", target, n, replicates, seed, where)
    metadata["radices"] = [radix_label(r) for r in radices]
    return {"errors": errors, "local_errors": local}, metadata


def speed_cell(
    target: Target, n: int, *, replicates: int, seed: int, backend: str, repeats: int,
    log32: bool = False, log=None,
):  # fmt: skip
    """Figs 4.5-4.8 at one N: standard multinomial and systematic against
    their butterfly forms, in float32 and float64, and with ``log32`` the
    standard methods on the float32 log-domain scan (LOG32). Each butterfly
    runs with its fastest radix sequence (:func:`fastest_radix`, per method
    and precision); every arm is timed on one weight set, then resamples the
    ``replicates`` particle sets."""
    where = resolve_backend(backend)
    stream = stream_of(f"speed-{target.name}", n)
    arms, times, candidates = [], [], []
    for precision in PRECISIONS:
        w = timing_weights(target, n, precision, seed=seed, stream=stream, backend=where)
        for standard, butterfly in FAMILIES.items():
            best, timed = fastest_radix(w, butterfly, seed=seed, backend=where, repeats=repeats)
            candidates += [(butterfly, precision, radix_label(r), ms) for r, ms in timed]
            for arm in (Arm(standard, precision), Arm(butterfly, precision, best)):
                arms.append(arm)
                times.append(time_arm(w, arm, seed=seed, backend=where, repeats=repeats))
            if log is not None:
                log.info("N = %d %s: %s %.3f ms, %s %s %.3f ms (fastest of %d radix sequences)",
                         n, precision, standard, times[-2], butterfly, radix_label(best),
                         times[-1], len(timed))  # fmt: skip
            if log32 and precision == "float32":  # timed at level 0: the level costs nothing
                arm = Arm(standard, LOG32)
                arms.append(arm)
                times.append(time_arm(w, arm, seed=seed, backend=where, repeats=repeats))
    errors, local = replicate_errors(target, n, arms, replicates=replicates, seed=seed,
                                     stream=stream, backend=where, log=log)  # fmt: skip
    arrays = {
        "errors": errors,
        "local_errors": local,
        "time_ms": np.array(times),
        "candidate_time_ms": np.array([c[3] for c in candidates]),
    }
    metadata = _metadata("speed and error", target, n, replicates, seed, where)
    metadata["arms"] = [
        {"method": a.method, "precision": a.precision, "radix": radix_label(a.radix)} for a in arms
    ]
    metadata["candidates"] = [
        {"method": c[0], "precision": c[1], "radix": c[2]} for c in candidates
    ]
    metadata["timing"] = {"repeats": int(repeats), "warmup": 1, "statistic": "median"}
    return arrays, metadata


def summarise(squared) -> dict:
    """Mean of squared errors with its standard error and the 0.1 / 0.9
    quantiles (the dashed lines of Figs 4.3-4.4)."""
    squared = np.asarray(squared, dtype=np.float64)
    return {
        "mean": float(squared.mean()),
        "se": float(squared.std(ddof=1) / np.sqrt(squared.size)) if squared.size > 1 else np.nan,
        "q10": float(np.quantile(squared, 0.1)),
        "q90": float(np.quantile(squared, 0.9)),
    }
