"""The particle filters of Das et al. (2014): the SIR filter with systematic
(or any registry) resampling, and the D3 filter, on the CPU (NumPy).

One step k, as §2 lists it (steps 1-4) and §3 adds the prior:

1. propagate: x_k^i ~ f(x_{k-1}^i) (eqs. 11-12 for the UUV model);
2. weights: w_k^i = w_{k-1}^i p(z_k | x_k^i), in log space, shifted by the
   maximum before exp (``sir.weights_from_log``);
3. normalise, and the estimate x^_k = sum w_k^i x_k^i (eq. 13);
4. resample when N_eff = 1 / sum w^2 < tau N (§2, "conditional
   resampling"; ``ess_threshold=None``, the default, resamples every step);
   then every weight is 1/N.

The D3 filter's step 4 needs the prior weights of eqs. 1-4: the prior mean
mu_k = f(x^_{k-1}) (the previous estimate pushed through the noise-free
model; x^_0 is the mean of the initial particles), the prior variance
sigma_k^2 of the predicted particles about mu_k (eq. 2, per component, with
1 / (N - 1)), and pw_k^i = N(x_k^i; mu_k, diag sigma_k^2) (eq. 4; D3
compares them only, so the filter hands their logarithm, up to a
constant, to :func:`pfresample.resample_d3`). Then D3 moves the particles
(:mod:`pfresample.resampling.d3`).

Any other registry method resamples by ancestors, x_k = x_k[ancestors]: the
project's own resamplers on the same filter, which the paper could not show.

Options of the D3 step: ``components="each"`` (Fig 9's "resample for xdot":
each velocity component a D3 of its own, with the likelihood weights of its
own reading and the prior weights of eq. 4 in that component alone;
``pfresample.resample_d3``), ``cdf="paper"`` with ``threads`` (the paper's
GPU search, whose thresholds depend on the block size also on the CPU),
``impl="loop"`` (Table 1's sequential loop on the CPU, the same particles as
the sparse table). The model's ``particle_sd`` is the filter's process noise
(``UuvModel.filter_process_sd``: the paper's regime is none).
"""

from __future__ import annotations

import time

import numpy as np

from ..api import resample, resample_d3
from ..backend import resolve_backend
from ..constants import EPSILON_FILTER
from ..models.uuv import UuvModel
from ..resampling.d3 import COMPONENTS
from ..resampling.registry import get_method
from .common import D3_STAGES, D3Run, derive_seeds
from .sir import weights_from_log

__all__ = ["D3_STAGES", "D3Run", "prior_log_weights", "run_d3", "velocity_errors"]


def prior_log_weights(x: np.ndarray, mu: np.ndarray, components: str = "joint") -> np.ndarray:
    """log pw^i of eqs. 2-4 up to a constant: -1/2 sum_d (x_d - mu_d)^2 / sigma_d^2,
    sigma_d^2 = sum_i (x_d^i - mu_d)^2 / (N - 1) (eq. 2). A component whose
    particles all sit on mu (sigma = 0) adds nothing. ``components="each"``:
    the (N, D) terms of the sum, one column a component (eq. 4 in one
    component)."""
    d = x - mu
    n = x.shape[0]
    var = (d * d).sum(axis=0) / max(n - 1, 1)
    inv = np.divide(1.0, var, out=np.zeros_like(var), where=var > 0)
    if components == "each":
        return -0.5 * (d * d) * inv
    return -0.5 * (d * d) @ inv


def check_filter_method(method: str, noise: str, cdf: str, components: str = "joint",
                        impl: str = "table"):  # fmt: skip
    """The registry entry of ``method``; D3's options only with D3."""
    m = get_method(method)
    if m.output != "particles" and (noise, cdf, components, impl) != (
        "eq5", "prefix", "joint", "table"
    ):  # fmt: skip
        raise TypeError(f"noise, cdf, components and impl are options of D3, not of {m.name!r}")
    if components not in COMPONENTS:
        raise ValueError(f"components must be one of {', '.join(COMPONENTS)}, got {components!r}")
    return m


def run_d3(
    model,
    y,
    n: int,
    seed: int,
    *,
    method: str = "d3",
    noise: str = "eq5",
    cdf: str = "prefix",
    ess_threshold: float | None = None,
    snapshot_step: int | None = None,
    backend: str = "cpu",
    threads: int | None = None,
    threads_scope: str = "d3",
    components: str = "joint",
    impl: str = "table",
) -> D3Run:
    """Run the filter with ``n`` particles over the measurements ``y``
    (``y[k - 1]`` = z_k): D3 resampling (``method="d3"``, with its ``noise``
    and ``cdf`` options) or any registry method that returns ancestors.
    ``ess_threshold`` tau: resample when N_eff < tau N (None: every step).
    ``model`` needs ``mean_transition`` (the prior mean of eq. 1) besides
    the interface of ``pfresample.models``. ``backend``: "cpu", or "cuda"
    for the GPU filter (``filters.d3_gpu``), whose D3 kernels run
    ``threads`` threads per block (the paper's Table 6 varies it; None: the
    default of ``cuda.geometry``; the particles do not depend on it, but
    with ``cdf="paper"``, which also takes it on the CPU), and, with
    ``threads_scope="step"``, every kernel of the step (the paper's GPU
    filter; GPU only). ``components``, ``impl``: the module docstring."""
    m = check_filter_method(method, noise, cdf, components, impl)
    if ess_threshold is not None and not ess_threshold >= 0:
        raise ValueError(f"ess_threshold must be >= 0 or None, got {ess_threshold!r}")
    if components == "each" and ess_threshold is not None:
        raise ValueError("components='each' resamples every step (ess_threshold=None)")
    y = np.asarray(y, dtype=np.float64)
    steps = y.shape[0]
    if snapshot_step is not None and not 1 <= snapshot_step <= steps:
        raise ValueError(f"snapshot_step must be in 1 ... {steps}, got {snapshot_step}")
    # "auto" takes the GPU where one is seen and the GPU filter has these options
    # (the UUV model, every step, a method with a kernel: filters.d3_gpu), else the CPU.
    on_gpu = (
        components == "joint" and impl == "table" and ess_threshold is None
        and (m.gpu is not None or m.output == "particles") and isinstance(model, UuvModel)
    )  # fmt: skip
    if backend == "cuda" and (components != "joint" or impl != "table"):
        raise NotImplementedError(
            "the GPU filter runs the joint D3 (components='joint', impl='table'); use backend='cpu'"
        )
    # "cuda": a visible device or a RuntimeError; then run_d3_gpu names what it lacks
    if resolve_backend(backend, on_gpu or backend == "cuda") == "cuda":
        from .d3_gpu import run_d3_gpu

        return run_d3_gpu(
            model, y, n, seed, m=m, noise=noise, cdf=cdf, ess_threshold=ess_threshold,
            snapshot_step=snapshot_step, threads=threads, threads_scope=threads_scope,
        )  # fmt: skip
    # the Metropolis family's B as in the SIR filter (epsilon = 1/10, Dülger §5.4)
    params = {"epsilon": EPSILON_FILTER} if m.B_rule == "metropolis" else {}
    rng, draw_seeds = derive_seeds(seed, steps)
    x = model.init_particles(n, rng)
    estimate = x.mean(axis=0)
    log_w = np.zeros(n)
    estimates = np.empty((steps,) + x.shape[1:])
    seconds = np.zeros(len(D3_STAGES))
    resampled, snapshot = 0, None
    wall_start = time.perf_counter()
    for k in range(steps):
        t0 = time.perf_counter()
        previous = estimate
        x = model.transition(x, k, rng)
        log_w = log_w + model.log_likelihood(y[k], x)
        try:
            w_tilde = weights_from_log(log_w)
        except ValueError as error:
            raise ValueError(f"step {k + 1} of the filter: {error}") from error
        t1 = time.perf_counter()
        w = w_tilde / w_tilde.sum(dtype=np.float64)
        estimate = estimates[k] = w @ x
        t2 = time.perf_counter()
        if ess_threshold is None or 1.0 / float(w @ w) < ess_threshold * n:
            if m.output == "particles":
                mu = model.mean_transition(previous, k)
                pw = prior_log_weights(x, mu, components)
                w_d3 = w
                if components == "each":  # each component's own reading (Fig 9)
                    w_d3 = weights_of_columns(model.log_likelihood_components(y[k], x))
                x = resample_d3(
                    x, w_d3, pw, seed=int(draw_seeds[k]), noise=noise, cdf=cdf,
                    threads=threads, components=components, impl=impl, backend="cpu",
                )  # fmt: skip
            else:
                x = x[resample(w, m.name, seed=int(draw_seeds[k]), backend="cpu", **params)]
            log_w = np.zeros(n)
            resampled += 1
        if k + 1 == snapshot_step:
            snapshot = x.copy()
        seconds += (t1 - t0, t2 - t1, time.perf_counter() - t2)
    wall = time.perf_counter() - wall_start
    return D3Run(m.name, n, int(seed), estimates, resampled, snapshot, seconds, wall)


def weights_of_columns(log_w: np.ndarray) -> np.ndarray:
    """Each column of (N, D) log-weights as weights (exp of log w - max),
    the columns of a per-component D3 (the filter resamples every step, so
    a step's log-weights are its reading's log-likelihood)."""
    return np.exp(log_w - log_w.max(axis=0))


def velocity_errors(estimates, truth) -> tuple[np.ndarray, np.ndarray]:
    """(RMSE, bias) per state component over the run: sqrt(mean (x^ - x)^2)
    and mean (x^ - x), as the paper reports them for Xdot and Ydot (Figs
    3-4, Table 7). ``truth``: x_1 ... x_T."""
    err = np.asarray(estimates, dtype=np.float64) - np.asarray(truth, dtype=np.float64)
    return np.sqrt((err * err).mean(axis=0)), err.mean(axis=0)
