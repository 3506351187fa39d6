"""The particle filter's loop of :func:`pfresample.run_filter` (``filters.engine``'s
module docstring: its four stages, its arithmetic conventions, its
log-likelihood estimate), one loop for both array backends:
:func:`run_loop` over the array module of an :class:`ArrayBackend` --
NumPy (:data:`NUMPY`, the CPU filter) or CuPy (``filters.device``, a model
written against the array module it is handed) -- with stage 4's
resampling chosen once a run (:class:`StepPlan`: the CPU's resamplers,
``engine.cpu_plan``, or the CUDA kernels, ``device.device_plan``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..api import resample, resample_adaptive
from ..logweights import check_log_weights
from ..resampling.butterfly import effective_sample_size
from ..timing import cpu_name
from ..validation import check_int
from .common import NO_B, STAGES, CloudDiagnostics, FilterResult, derive_seeds


@dataclass(frozen=True)
class Arithmetic:
    """How stages 2-3 round (module docstring): the dtype of w~, of the
    normalised W, whether the carried log-weights are normalised, the ESS's
    formula ("sum", "dot", "sequential") and whether the estimate is W @ x."""

    weights: type
    normalised: type
    carry_normalised: bool
    ess: str
    dot: bool


ARITHMETIC = {
    "float64": Arithmetic(np.float64, np.float64, True, "sum", False),
    "float64-raw": Arithmetic(np.float64, np.float64, False, "sum", False),
    "float32": Arithmetic(np.float32, np.float32, False, "sequential", True),
    "float32-w64": Arithmetic(np.float32, np.float64, False, "dot", True),
}


def _log_sum(lw: np.ndarray) -> float:
    """log SUM exp(lw), shifted by the maximum (-inf for no weight)."""
    top = float(np.max(lw))
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.exp(lw - top).sum()))


def _estimate_ratio(w, w_tilde, x, n):
    c = w_tilde.astype(np.float64)
    return (c @ x) / c.sum()


def _estimate_dot(w, w_tilde, x, n):
    return w @ x


def _estimate_sums(w, w_tilde, x, n):
    # Sums, not BLAS dot products: a threaded BLAS takes milliseconds a step on a
    # loaded host at N = 2^14 (evidence/2026-11-26-xeon2-372f2ff/MANIFEST.md).
    return (w.reshape((n,) + (1,) * (x.ndim - 1)) * x).sum(axis=0)


def _ess_sequential(w, w_tilde):
    return effective_sample_size(w_tilde, 1)  # eq. 1.11


def _ess_dot(w, w_tilde):
    return 1.0 / float(w @ w)


def _ess_sum(w, w_tilde):
    return 1.0 / float((w * w).sum())


# The conventions of stage 3 (module docstring), one entry each: the estimate
# by ``estimator`` and the arithmetic's ``dot``, the ESS by its ``ess``.
ESTIMATES = {"ratio": _estimate_ratio, "dot": _estimate_dot, "sums": _estimate_sums}
ESS_FORMULAS = {"sequential": _ess_sequential, "dot": _ess_dot, "sum": _ess_sum}


@dataclass
class StepPlan:
    """What one run of :func:`run_loop` does at stage 4, chosen once before
    its loop from the method record and the options (:func:`cpu_plan`, or
    ``filters.device``'s plan of the CUDA resamplers): ``move(k, x, w,
    w_in, lw, previous, y_k, seed)`` -> (particles, ancestors or None, B or
    None) resamples all N; ``depth`` the stages it counts; the staged gate's
    ``radix``, ``max_stages`` and ``tau``; ``kw`` the method's arguments left
    for a staged step."""

    move: object
    depth: int
    kw: dict
    radix: tuple | None = None
    max_stages: int | None = None
    tau: float | None = None


# run_loop's options and their defaults: run_filter's, less the GPU filters' own
# (filters.gpu); tests/library/test_engine.py checks they are run_filter's defaults
LOOP_OPTIONS = {
    "ess_threshold": None, "arithmetic": "float64", "estimator": "normalised",
    "stage4_weights": None, "gate": "filter", "resample_at": None, "permutation": None,
    "seed_offset": 0, "resampled_estimates": None, "diagnostics": False,
    "snapshot_step": None, "keep_particles": False,
}  # fmt: skip


@dataclass(frozen=True)
class ArrayBackend:
    """What :func:`run_loop` runs on: the array module ``xp`` of the
    particles and weights (NumPy, or CuPy: ``filters.device``), the
    backend's name and ``device()`` for the :class:`FilterResult`,
    ``to_host`` (an array as NumPy's), ``scalar`` (the sum of the weights as
    the host number the step divides by) and ``generator`` (the model's
    generator, from the run's NumPy one of ``derive_seeds``)."""

    xp: object
    name: str
    device: object
    to_host: object
    scalar: object
    generator: object


def _same(value):
    return value


# The CPU: NumPy's arrays stay where they are, the sum of w~ stays a float64
# scalar (a float32 w~ divided by it is float64, as NumPy promotes), and the
# model draws from the run's own generator.
NUMPY = ArrayBackend(np, "cpu", cpu_name, np.asarray, _same, _same)


def run_loop(
    model, y, n, m, seed, plan: StepPlan, on: ArrayBackend, *, ess_threshold, arithmetic,
    estimator, stage4_weights, gate, resample_at, permutation, seed_offset,
    resampled_estimates, diagnostics, snapshot_step, keep_particles,
) -> FilterResult:  # fmt: skip
    """The filter's loop (module docstring) over the array module of ``on``
    (:class:`ArrayBackend`: NumPy here, CuPy for ``filters.device``), stage
    4's resampling by ``plan`` (:class:`StepPlan`); the options checked."""
    xp = on.xp
    ar = ARITHMETIC[arithmetic]
    steps = y.shape[0]
    seed_offset = check_int(seed_offset, "seed_offset", minimum=0)
    rng, draw_seeds = derive_seeds(seed, steps + seed_offset)
    rng = on.generator(rng)
    draw_seeds = draw_seeds[seed_offset:]
    staged = gate == "stages"
    estimate_of = ESTIMATES["ratio" if estimator == "ratio" else "dot" if ar.dot else "sums"]
    ess_of = ESS_FORMULAS[ar.ess]
    x = xp.asarray(model.init_particles(n, rng))
    if x.shape[0] != n:
        raise ValueError(f"init_particles({n}, rng) returned {x.shape[0]} particles")
    # the carried log-weights and log SUM of their exp
    log_w, carried_sum = (xp.full(n, -math.log(n)), 0.0) if ar.carry_normalised else (0.0, None)
    if carried_sum is None:
        carried_sum = math.log(n)
    estimate = x.mean(axis=0)
    estimates = xp.empty((steps,) + x.shape[1:])
    after = xp.empty_like(estimates) if resampled_estimates or diagnostics else None
    cloud = CloudDiagnostics(n, steps, x.shape[1:]) if diagnostics else None
    ess, increments = np.empty(steps), np.empty(steps)
    resampled = np.zeros(steps, dtype=bool)
    stages = np.zeros(steps, dtype=np.int64)
    used_B = np.full(steps, NO_B, dtype=np.int64)
    stage_seconds = np.empty((steps, len(STAGES)))
    snapshot = None
    unnormalised = {None: m.comparison_based, "normalised": False, "unnormalised": True}[
        stage4_weights
    ]  # fmt: skip
    wall_start = time.perf_counter()
    for k in range(steps):
        t0 = time.perf_counter()
        previous = estimate
        x = model.transition(x, k, rng)
        lw = log_w + xp.asarray(model.log_likelihood(y[k], x), dtype=np.float64)
        try:
            top = check_log_weights(lw, xp)
        except ValueError as error:
            raise ValueError(f"step {k + 1} of the filter: {error}") from error
        t1 = time.perf_counter()
        w_tilde = xp.exp(lw - top)
        if ar.weights is np.float32:
            w_tilde = w_tilde.astype(np.float32)
        total = on.scalar(w_tilde.sum(dtype=np.float64))
        log_sum = top + math.log(total)
        increments[k] = log_sum - carried_sum
        t2 = time.perf_counter()
        w = w_tilde / np.float32(total) if ar.normalised is np.float32 else w_tilde / total
        estimate = estimate_of(w, w_tilde, x, n)
        estimates[k] = estimate
        ess[k] = ess_of(w, w_tilde)
        t3 = time.perf_counter()
        allowed = resample_at is None or resample_at[k]
        w_in = w_tilde if unnormalised else w
        carried = None  # the linear weights a staged resampling leaves
        ancestors = None
        if allowed and staged:
            out = _staged_step(m, w_in, int(draw_seeds[k]), plan, ess[k])
            stages[k] = out.stages
            if permutation is not None:  # SMC-EM's butterfly: the stage, then the transpose
                ancestors = out.ancestors[permutation]
                with np.errstate(divide="ignore"):  # a zero segment mean is a zero weight
                    log_w = np.log(out.weights.astype(np.float64))[permutation]
                carried = out.weights.astype(np.float64)[permutation]
                x = x[ancestors]
            elif out.stages:
                ancestors = out.ancestors
                x = x[ancestors]
                with np.errstate(divide="ignore"):
                    log_w = np.log(out.weights.astype(np.float64))
                carried = out.weights.astype(np.float64)
            else:
                log_w = lw
                carried = out.weights.astype(np.float64)
            resampled[k] = out.stages > 0
            carried_sum = _log_sum(log_w) if resampled[k] or permutation is not None else log_sum
        elif allowed and (ess_threshold is None or ess[k] < ess_threshold * n):
            x, ancestors, b = plan.move(k, x, w, w_in, lw, previous, y[k], int(draw_seeds[k]))
            if b is not None:
                used_B[k] = b
            resampled[k] = True
            stages[k] = plan.depth
            log_w = xp.full(n, -math.log(n)) if ar.carry_normalised else 0.0
            carried_sum = 0.0 if ar.carry_normalised else math.log(n)
        else:
            log_w = lw - log_sum if ar.carry_normalised else lw
            carried_sum = 0.0 if ar.carry_normalised else log_sum
        if after is not None:
            if resampled_estimates == "weighted":
                c = carried if carried is not None else (
                    xp.ones(n) if resampled[k] else w_tilde.astype(np.float64))  # fmt: skip
                after[k] = (c @ x) / c.sum()
            elif resampled[k]:
                after[k] = x.mean(axis=0)
            else:
                after[k] = estimate
        if cloud is not None and ancestors is not None:
            cloud.record(k, ancestors, x)
        if k + 1 == snapshot_step:
            snapshot = on.to_host(x.copy())
        stage_seconds[k] = (t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t3)
    estimates = on.to_host(estimates)
    wall = time.perf_counter() - wall_start
    extra = {}
    if diagnostics:
        extra = {"distinct": cloud.distinct, "lineages": cloud.lineages,
                 "resampled_cov": cloud.cov}  # fmt: skip
    if keep_particles:
        extra["particles"] = on.to_host(x)
        log_w = np.asarray(on.to_host(log_w), dtype=np.float64)
        extra["log_weights"] = np.broadcast_to(log_w, (n,)).copy()
    return FilterResult(
        m.name, n, seed, estimates, ess, resampled, float(increments.sum()), increments,
        stage_seconds, wall, on.name, on.device(), total_seconds=float(stage_seconds.sum()),
        B=used_B, stages=stages, resampled_estimates=None if after is None else on.to_host(after),
        snapshot=snapshot, **extra,
    )  # fmt: skip


def _staged_step(m, w, seed: int, plan: StepPlan, ess: float):
    """One step's staged resampling (Güldaş Fig 1.3): ``resample_adaptive``
    for a method with an adaptive form; for a standard method, all N
    particles resampled (even weights after) when ESS < tau N, else the
    weights carried. Both an ``AdaptiveResult``."""
    from ..resampling.butterfly import AdaptiveResult

    if m.adaptive is not None:
        return resample_adaptive(w, m, seed=seed, tau=plan.tau, radix=plan.radix,
                                 max_stages=plan.max_stages, backend="cpu", **plan.kw)  # fmt: skip
    if not ess < plan.tau * w.size:
        return AdaptiveResult(np.arange(w.size, dtype=np.int32), w, 0)
    ancestors = resample(w, m, seed=seed, backend="cpu", **plan.kw)
    return AdaptiveResult(ancestors, np.ones(w.size, dtype=np.float32), 1)
