"""One particle filter for any resampler and any model: :func:`run_filter`.

The bootstrap filter (Gordon et al. 1993; Dülger Algorithm 2.4, Güldaş Figs
1.2-1.3) with the model's transition as the proposal. One step k = 1 ... T,
with normalised log-weights log W_{k-1} carried from the step before
(log W_0 = -log N):

1. x_k^i ~ p(x_k | x_{k-1}^i) (the model's ``transition``) and
   l^i = log W_{k-1}^i + log g(z_k | x_k^i) (its ``log_likelihood``);
2. the increment log Z_k = log SUM_i exp(l^i), computed as m + log SUM exp(l^i - m)
   with m = max l^i, so that no weight underflows;
3. W_k^i = exp(l^i - log Z_k), the estimate SUM_i W_k^i x_k^i and
   ESS_k = 1 / SUM_i (W_k^i)^2 (Güldaş eq. 1.11);
4. when ``ess_threshold`` is None, or ESS_k < tau N: resample with the
   registry method (x_k <- x_k[ancestors], log W_k = -log N), or move the
   particles with D3 (Das et al. 2014).

log p(z_1:T) is estimated by SUM_k log Z_k: the standard estimator, whose
exponent is unbiased for p(z_1:T) when the resampler is unbiased (each
particle's expected number of offspring N W^i: the cumulative methods,
Rejection, the butterflies; Del Moral 2004, Prop. 7.4.1); Metropolis and
Uphill with a finite B, cellular's local selection and D3's moves are not,
and the estimate then carries their bias (the design-space map measures it).
It is of the density the model's ``log_likelihood`` returns: a model that
drops constants (the built-in ones do, except ``LinearGaussianModel``) gets
log p(z_1:T) less T times them.

Stage 4's weights follow §6.9 of Dülger (2017): the comparison-based methods
(Metropolis, Rejection, Uphill) get w~ = exp(l - m) (largest weight 1), the
cumulative ones the normalised W. The model protocol is the one
``pfresample.models`` documents; docs/library.md ("Your own model") shows a
user's model.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..api import resample, resample_d3
from ..backend import resolve_backend
from ..constants import EPSILON_FILTER
from ..logweights import check_log_weights
from ..resampling.registry import get_method
from ..timing import cpu_name
from ..validation import check_int
from .common import STAGES, derive_seeds
from .d3 import prior_log_weights

PROTOCOL = ("init_particles", "transition", "log_likelihood")
D3_PARAMS = ("noise", "cdf", "precision", "threads", "impl")  # joint D3 (components="joint")


@dataclass(frozen=True)
class FilterResult:
    """One run of :func:`run_filter` over T steps.

    ``estimates[k - 1]``: SUM_i W_k^i x_k^i, the posterior mean before step
    k's resampling ((T,) for a scalar state, (T, d) for a vector one);
    ``ess`` and ``resampled``: each step's ESS before resampling and whether
    it resampled; ``log_likelihood``: the estimate of log p(z_1:T), the sum
    of ``log_likelihood_steps`` (log Z_k); ``stage_seconds`` (T, 4): the
    wall time of the four stages of the module docstring (``STAGES``);
    ``backend`` and ``device``: where it ran."""

    method: str
    n: int
    seed: int
    estimates: np.ndarray
    ess: np.ndarray
    resampled: np.ndarray
    log_likelihood: float
    log_likelihood_steps: np.ndarray
    stage_seconds: np.ndarray
    wall_seconds: float
    backend: str
    device: str


def check_model(model) -> None:
    """TypeError naming the methods of the protocol ``model`` lacks."""
    missing = [name for name in PROTOCOL if not callable(getattr(model, name, None))]
    if missing:
        raise TypeError(
            f"the model lacks {', '.join(missing)}: a model needs init_particles(n, rng), "
            "transition(x, k, rng) and log_likelihood(y, x) (docs/library.md, 'Your own model')"
        )


def engine_backend(backend: str) -> str:
    """Where :func:`run_filter` runs: the CPU ("auto" resolves to it through
    ``backend.resolve_backend``, which logs why); "cuda" raises, naming the
    GPU filters, until the engine has its GPU path."""
    if backend == "cuda":
        raise NotImplementedError(
            "run_filter runs on the CPU (backend='cpu' or 'auto'); the GPU filters are "
            "filters.run_sir, run_bootstrap, run_adaptive, run_cpf and run_d3 with backend='cuda'"
        )
    return resolve_backend(backend, has_gpu_code=False)


def _split_params(m, params: dict) -> tuple[dict, dict]:
    """(the resampler's keyword arguments, D3's), an unknown name a TypeError."""
    if m.output == "particles":
        unknown = sorted(set(params) - set(D3_PARAMS))
        if unknown:
            raise TypeError(f"d3 takes {D3_PARAMS}, not {unknown}")
        return {}, params
    allowed = (
        set(m.params)
        | ({"B"} if m.B_rule else set())
        | ({"segment_bytes"} if m.segmented else set())
    )
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise TypeError(f"method {m.name!r} takes {sorted(allowed)}, not {unknown}")
    kw = dict(params)
    if m.B_rule == "metropolis" and kw.get("B") is None:
        kw.setdefault("epsilon", EPSILON_FILTER)  # the filters' epsilon (Dülger §5.4)
    return kw, {}


def run_filter(
    model, y, n: int, resampler: str, *, seed: int, backend: str = "auto",
    ess_threshold: float | None = None, **params,
) -> FilterResult:  # fmt: skip
    """Run the bootstrap particle filter of the module docstring with ``n``
    particles over the measurements ``y`` (``y[k - 1]`` = z_k) and the
    registry method ``resampler`` (``pfresample.methods()``; "d3" moves the
    particles, and needs the model's ``mean_transition``).

    ``seed`` fixes every draw (the model's through a NumPy Generator, the
    resampler's through its Philox seeds). ``ess_threshold`` tau in [0, 1]:
    resample only when ESS < tau N (the adaptive filter); None: every step.
    ``params``: the resampler's (``radix``, ``radius``, ``B``,
    ``epsilon``, ``segment_bytes``, ``precision``, D3's ``noise`` and
    ``cdf``, ...). ``backend``: :func:`engine_backend`."""
    check_model(model)
    m = get_method(resampler)
    kw, d3_kw = _split_params(m, params)
    if m.output == "particles" and not callable(getattr(model, "mean_transition", None)):
        raise TypeError("resampler 'd3' needs the model's mean_transition(x, k): its prior weights")
    n = check_int(n, "n", minimum=1)
    if ess_threshold is not None and not 0 <= ess_threshold <= 1:
        raise ValueError(f"ess_threshold must be in [0, 1] or None, got {ess_threshold!r}")
    ran_on = engine_backend(backend)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 0 or y.shape[0] == 0:
        raise ValueError(f"y must hold at least one measurement, got shape {y.shape}")
    steps = y.shape[0]
    rng, draw_seeds = derive_seeds(seed, steps)
    x = np.asarray(model.init_particles(n, rng))
    if x.shape[0] != n:
        raise ValueError(f"init_particles({n}, rng) returned {x.shape[0]} particles")
    log_w = np.full(n, -math.log(n))
    estimate = x.mean(axis=0)
    estimates = np.empty((steps,) + x.shape[1:])
    ess, increments = np.empty(steps), np.empty(steps)
    resampled = np.zeros(steps, dtype=bool)
    stage_seconds = np.empty((steps, len(STAGES)))
    wall_start = time.perf_counter()
    for k in range(steps):
        t0 = time.perf_counter()
        previous = estimate
        x = model.transition(x, k, rng)
        lw = log_w + np.asarray(model.log_likelihood(y[k], x), dtype=np.float64)
        try:
            top = check_log_weights(lw)
        except ValueError as error:
            raise ValueError(f"step {k + 1} of the filter: {error}") from error
        t1 = time.perf_counter()
        w_tilde = np.exp(lw - top)
        total = w_tilde.sum()
        increments[k] = top + math.log(total)
        t2 = time.perf_counter()
        w = w_tilde / total
        # Sums, not BLAS dot products: a threaded BLAS takes milliseconds a step on a
        # loaded host at N = 2^14 (bench/results/design_map_cpu/README.md).
        estimate = estimates[k] = (w.reshape((n,) + (1,) * (x.ndim - 1)) * x).sum(axis=0)
        ess[k] = 1.0 / float((w * w).sum())
        t3 = time.perf_counter()
        if ess_threshold is None or ess[k] < ess_threshold * n:
            if m.output == "particles":
                mu = model.mean_transition(previous, k)
                cols = x.reshape(n, -1)  # eqs. 2-4 over the state's components
                prior = prior_log_weights(cols, np.reshape(mu, (-1, cols.shape[1])))
                x = resample_d3(x, w, prior, seed=int(draw_seeds[k]), backend="cpu", **d3_kw)
            else:
                w_in = w_tilde if m.comparison_based else w
                x = x[resample(w_in, m.name, seed=int(draw_seeds[k]), backend="cpu", **kw)]
            log_w = np.full(n, -math.log(n))
            resampled[k] = True
        else:
            log_w = lw - increments[k]
        stage_seconds[k] = (t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t3)
    wall = time.perf_counter() - wall_start
    return FilterResult(
        m.name, n, int(seed), estimates, ess, resampled, float(increments.sum()), increments,
        stage_seconds, wall, ran_on, cpu_name(),
    )  # fmt: skip
