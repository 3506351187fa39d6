"""The bootstrap and the adaptive-resampling particle filter of Güldaş
(2015): Fig 1.2 (SIR, resampling at every step) and Fig 1.3 (ARPF,
resampling when the effective sample size is low), with the output measures
of §4.2.1.

Both use the model's transition as the proposal, so a particle's incremental
weight is g_t(x). They differ from ``filters.sir`` (Dülger's Algorithm 2.4)
in what they report: §4.2.1 measures the filter by the measure *after*
resampling,

    bootstrap:  pi^_t = (1/N) sum_i delta_{xi_{m,t}^i},
    adaptive:   pi^_t = sum_i w_{K_t,t}^i delta_{xi_{K_t,t}^i} / sum_i w_{K_t,t}^i,

so the estimate carries the resampling noise the study compares. K_t is the
number of butterfly stages the adaptive filter ran at step t (0 when the ESS
was high enough), and the "interaction level" of Fig 4.11 is log2 of the
largest block that interacted: log2(r_1 ... r_{K_t}).

Weights are carried as float64 log-weights and handed to the resamplers as
float32 exp(lw - max lw) (``sir.weights_from_log``: the same contract and
checks as the SIR filter).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..api import resample, resample_adaptive
from ..backend import resolve_backend
from ..models.bimodal import BimodalModel
from ..radix import check_radix, default_radix
from ..resampling.butterfly import AdaptiveResult, effective_sample_size
from ..resampling.registry import get_method
from ..validation import check_int
from .common import FilterRun, derive_seeds
from .sir import weights_from_log


def _weights(model, y_t, x, log_w, step: int):
    """The step's log-weights (``log_w`` plus log g_t) and their float32
    linear form, a bad likelihood naming the step."""
    try:
        log_w = log_w + model.log_likelihood(y_t, x)
        return log_w, weights_from_log(log_w)
    except ValueError as error:
        raise ValueError(f"step {step + 1} of the filter: {error}") from error


def _on_gpu(backend: str, model, has_kernel: bool) -> bool:
    """Whether a Güldaş filter runs on the GPU: ``backend`` resolved, the
    GPU code being the bimodal model's (``filters.guldas_gpu``)."""
    return resolve_backend(backend, has_kernel and isinstance(model, BimodalModel)) == "cuda"


def run_bootstrap(
    model, y, n: int, method: str, seed: int, *, backend: str = "cpu", **params
) -> FilterRun:
    """The bootstrap filter (Fig 1.2): propagate, weigh by g_t, resample every
    step with the registry method ``method`` (``params`` passed on, e.g.
    ``radix``), and report the mean of the resampled particles. ``backend``
    "cuda" or "auto": the GPU filter of ``filters.guldas_gpu`` (``seconds``
    is then the run's device time)."""
    m = get_method(method)
    if _on_gpu(backend, model, m.gpu is not None):
        from .guldas_gpu import run_bootstrap_gpu

        return run_bootstrap_gpu(model, y, n, m.name, seed, **params)
    n = check_int(n, "n", minimum=1)
    y = np.asarray(y, dtype=np.float64)
    steps = y.shape[0]
    rng, draw_seeds = derive_seeds(seed, steps)
    x = model.init_particles(n, rng)
    estimates, ess = np.empty(steps), np.empty(steps)
    radix = params.get("radix")
    depth = 1  # a method without stages (the butterflies are those with an adaptive form)
    if m.adaptive is not None:
        depth = len(check_radix(radix, n) if radix is not None else default_radix(n))
    stages = np.full(steps, depth, dtype=np.int64)
    start = time.perf_counter()
    for k in range(steps):
        x = model.transition(x, k, rng)
        _, w = _weights(model, y[k], x, 0.0, k)
        ess[k] = effective_sample_size(w, 1)  # eq. 1.11
        x = x[resample(w, m.name, seed=int(draw_seeds[k]), backend="cpu", **params)]
        estimates[k] = x.mean()
    seconds = time.perf_counter() - start
    level = np.full(steps, math.log2(n))
    return FilterRun(m.name, n, int(seed), estimates, ess, level, stages, seconds)


def run_adaptive(
    model, y, n: int, method: str, seed: int, *, tau: float, radix=None, backend: str = "cpu",
    **params,
) -> FilterRun:  # fmt: skip
    """The adaptive-resampling filter (Fig 1.3) with an adaptive resampler
    (``pfresample.resample_adaptive``: the butterfly methods; ``radix=(N,)``
    is adaptive multinomial): at each step the resampler runs its stages
    while the ESS is below ``tau * N`` (§4.2.3: tau = 0.6), so no stage runs
    when the weights are even enough and the weights are carried on.
    ``backend`` as :func:`run_bootstrap`'s; on the GPU the device decides
    the stages."""
    m = get_method(method)
    if _on_gpu(backend, model, m.gated):
        from .guldas_gpu import run_adaptive_gpu

        return run_adaptive_gpu(model, y, n, m.name, seed, tau=tau, radix=radix, **params)
    n = check_int(n, "n", minimum=1)
    if m.adaptive is None:  # a standard method: one stage over all N, run when the ESS is low
        if radix is not None:
            raise TypeError(f"method {m.name!r} takes no radix")
        radix = (n,)
    else:
        radix = check_radix(radix, n) if radix is not None else default_radix(n)
    y = np.asarray(y, dtype=np.float64)
    steps = y.shape[0]
    rng, draw_seeds = derive_seeds(seed, steps)
    x = model.init_particles(n, rng)
    log_w = np.zeros(n)
    estimates, ess, level = np.empty(steps), np.empty(steps), np.empty(steps)
    stages = np.empty(steps, dtype=np.int64)
    start = time.perf_counter()
    for k in range(steps):
        x = model.transition(x, k, rng)
        log_w, w = _weights(model, y[k], x, log_w, k)
        ess[k] = effective_sample_size(w, 1)  # eq. 1.11
        out = _adaptive_step(m, w, int(draw_seeds[k]), tau, radix, ess[k], params)
        if out.stages:
            x = x[out.ancestors]
            with np.errstate(divide="ignore"):  # a zero segment mean is a zero weight
                log_w = np.log(out.weights.astype(np.float64))
        weights = out.weights.astype(np.float64)
        estimates[k] = float(weights @ x / weights.sum())
        stages[k] = out.stages
        level[k] = math.log2(math.prod(radix[: out.stages]))
    seconds = time.perf_counter() - start
    return FilterRun(m.name, n, int(seed), estimates, ess, level, stages, seconds)


def _adaptive_step(m, w, seed: int, tau: float, radix, ess: float, params: dict):
    """One step's resampling of Fig 1.3: ``resample_adaptive`` for a method
    with an adaptive form; for a standard method, all N particles resampled
    (even weights after) when ESS < tau N, else the weights carried. Both an
    ``AdaptiveResult``."""
    if m.adaptive is not None:
        return resample_adaptive(
            w, m.name, seed=seed, tau=tau, radix=radix, backend="cpu", **params
        )
    if not ess < tau * w.size:
        return AdaptiveResult(np.arange(w.size, dtype=np.int32), w, 0)
    ancestors = resample(w, m.name, seed=seed, backend="cpu", **params)
    return AdaptiveResult(ancestors, np.ones(w.size, dtype=np.float32), 1)


def amse(estimates, truth) -> float:
    """The time-averaged squared error of one run, (1/T) sum_t (pi^_t(phi) -
    pi_t(phi))^2; its mean over runs is AMSE^{N,T,M} (§4.2.1)."""
    e = np.asarray(estimates, dtype=np.float64) - np.asarray(truth, dtype=np.float64)
    return float(np.mean(e * e))
