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
from dataclasses import dataclass

import numpy as np

from ..api import resample, resample_adaptive
from ..radix import check_radix, default_radix
from ..resampling.butterfly import effective_sample_size
from ..resampling.registry import get_method
from ..validation import check_int
from .common import derive_seeds
from .sir import weights_from_log


@dataclass(frozen=True)
class FilterRun:
    """One run over T steps: ``estimates[t - 1]`` = pi^_t(phi) for phi(x) = x,
    ``ess[t - 1]`` the effective sample size (eq. 1.11) of the weights before
    resampling, ``level[t - 1]`` the interaction level (log2 of the largest
    block that interacted; 0 when nothing was resampled), ``stages[t - 1]``
    the butterfly stages run (K_t; the bootstrap filter: every stage of its
    method, 1 for a non-butterfly method), and ``seconds`` the wall time of
    the loop."""

    method: str
    n: int
    seed: int
    estimates: np.ndarray
    ess: np.ndarray
    level: np.ndarray
    stages: np.ndarray
    seconds: float


def _weights(model, y_t, x, log_w, step: int):
    """The step's log-weights (``log_w`` plus log g_t) and their float32
    linear form, a bad likelihood naming the step."""
    try:
        log_w = log_w + model.log_likelihood(y_t, x)
        return log_w, weights_from_log(log_w)
    except ValueError as error:
        raise ValueError(f"step {step + 1} of the filter: {error}") from error


def run_bootstrap(model, y, n: int, method: str, seed: int, **params) -> FilterRun:
    """The bootstrap filter (Fig 1.2): propagate, weigh by g_t, resample every
    step with the registry method ``method`` (``params`` passed on, e.g.
    ``radix``), and report the mean of the resampled particles."""
    m = get_method(method)
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
    model, y, n: int, method: str, seed: int, *, tau: float, radix=None, **params
) -> FilterRun:
    """The adaptive-resampling filter (Fig 1.3) with an adaptive resampler
    (``pfresample.resample_adaptive``: the butterfly methods; ``radix=(N,)``
    is adaptive multinomial): at each step the resampler runs its stages
    while the ESS is below ``tau * N`` (§4.2.3: tau = 0.6), so no stage runs
    when the weights are even enough and the weights are carried on."""
    m = get_method(method)
    n = check_int(n, "n", minimum=1)
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
        out = resample_adaptive(
            w, m.name, seed=int(draw_seeds[k]), tau=tau, radix=radix, backend="cpu", **params
        )
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


def amse(estimates, truth) -> float:
    """The time-averaged squared error of one run, (1/T) sum_t (pi^_t(phi) -
    pi_t(phi))^2; its mean over runs is AMSE^{N,T,M} (§4.2.1)."""
    e = np.asarray(estimates, dtype=np.float64) - np.asarray(truth, dtype=np.float64)
    return float(np.mean(e * e))
