"""The cellular particle filter (CPF) of Gelencsér-Horváth et al. 2013 (Fig 6).

One time step k (measurement z_k of x_k) of the filter on the ring:

1. prediction x_k^i ~ p(x_k | x_{k-1}^i) (Fig 6, IV: "Iteration on particles");
2. likelihoods L^i = p(z_k | x_k^i) (Fig 6, II: "Error calculation");
3. cellular resampling: particle i draws its ancestor from its neighbourhood
   {i, i-1, ..., i-r} mod N with probability L^j / W_i (Fig 6, III;
   ``resampling/cellular.py``);
4. the estimate, the mean of the resampled particles (Fig 6, III.8: "Estimation
   is calculated from these particle values").

No global sum or prefix sum is needed anywhere: a step is local to each
neighbourhood except for the estimate's mean. On the GPU (``cellular_gpu``)
a step is one kernel and a run one CUDA graph; here it is NumPy. Weights are
exp(log L - max log L) in float64, or float32, the paper's precision
(``precision``; the common factor cancels in every neighbourhood's ratios; the
GPU shifts by each tile's own maximum), and a neighbourhood whose weights all
underflow draws again with its own maximum (``resampling.cellular.cellular_log``).

The growth model's start (``models/growth.py``, ``particles_from_noise``) is the
model's: with the paper's, the first prediction is the draw of x_1 from N(0,
sigma_v^2), so the particles the first weighting meets are the paper's.
"""

from __future__ import annotations

import time

import numpy as np

from ..backend import resolve_backend
from ..logweights import check_log_weights
from ..resampling.cellular import cellular_log
from ..rng import seed_keys
from ..validation import check_radius
from . import common
from .common import NEIGHBOURHOODS, PRECISIONS, CpfRun, check_kernel

__all__ = ["NEIGHBOURHOODS", "PRECISIONS", "check_kernel", "run_cpf"]


def run_cpf(
    model, y, n: int, radius: int, seed: int, *, backend="cpu", fast_math=False,
    neighbourhood="search", precision="float64", weighted=False, diversity=False,
) -> CpfRun:  # fmt: skip
    """Run the CPF with ``n`` particles and neighbourhood radius ``radius``
    (0 <= r <= N - 1) over the measurements ``y`` (``y[k - 1]`` = z_k).
    ``backend``: "cpu", "cuda" or "auto" (the GPU when one is visible and
    the model has device code: the growth and bearings-only models).

    The kernel: ``precision`` ("float64", or the paper's "float32") of the
    resampling's weights and sums, and ``neighbourhood``, how a particle finds
    its neighbour: "search" (the default; on the GPU a binary search in its
    tile's prefix sums, O(log r), float64 only), "scan" (its running sums
    against u W, without early exit, O(r)) or "divide" (the paper's running sum
    of L^j / W_i against u, one division a neighbour, Fig 6 III.5). The CPU
    has no prefix search: "search" scans there (the same choice in exact
    arithmetic; ``CpfRun.neighbourhood`` says what ran). ``fast_math`` builds
    the GPU kernels with --use_fast_math (Fig 11; an error on the CPU).

    ``weighted``: also the SIR filter's estimate, the weighted mean of the
    predicted particles before resampling, sum_i L^i x^i / sum_i L^i
    (``CpfRun.weighted_estimates``), beside the paper's mean of the resampled
    particles. ``diversity`` (CPU only): the number of distinct ancestors of
    each step's resampling, the lineages (distinct initial particles) alive
    after it and the covariance of the resampled particles
    (``CpfRun.distinct``, ``lineages``, ``resampled_cov``; the timing
    includes them)."""
    n = int(n)
    radius = check_radius(radius, n)
    check_kernel(precision, neighbourhood)
    if backend != "cpu" and resolve_backend(backend, _on_gpu(model, radius)) == "cuda":
        from .cellular_gpu import run_cpf_gpu

        if diversity:
            raise ValueError("diversity is an option of the CPU filter; use backend='cpu'")
        return run_cpf_gpu(model, y, n, radius, seed, fast_math=fast_math,
                           neighbourhood=neighbourhood, precision=precision,
                           weighted=weighted)  # fmt: skip
    if fast_math:
        raise ValueError("fast_math is an option of the GPU kernels; the CPU has none")
    dtype = np.dtype(precision)
    divide = neighbourhood == "divide"
    y = np.asarray(y, dtype=np.float64)
    steps = y.shape[0]
    rng, draw_seeds = common.derive_seeds(seed, steps)
    start = time.perf_counter()
    x = model.init_particles(n, rng)
    estimates = np.empty((steps,) + x.shape[1:])
    weighted_estimates = np.empty_like(estimates) if weighted else None
    cloud = common.CloudDiagnostics(n, steps, x.shape[1:]) if diversity else None
    for k in range(steps):
        x = model.transition(x, k, rng)
        log_l = np.asarray(model.log_likelihood(y[k], x), dtype=np.float64)
        try:
            top = check_log_weights(log_l)
        except ValueError as error:
            raise ValueError(f"step {k + 1} of the filter: {error}") from error
        if weighted:
            w = np.exp(log_l - top)
            weighted_estimates[k] = (w @ x) / w.sum()
        k0, k1 = seed_keys([int(draw_seeds[k])])
        ancestors = cellular_log(log_l, (k0[0], k1[0]), radius, dtype=dtype, divide=divide)
        x = x[ancestors]
        estimates[k] = x.mean(axis=0)
        if diversity:
            cloud.record(k, ancestors, x)
    wall = time.perf_counter() - start
    extra = {}
    if diversity:
        extra = {"distinct": cloud.distinct, "lineages": cloud.lineages,
                 "resampled_cov": cloud.cov}  # fmt: skip
    return CpfRun(n, radius, int(seed), estimates, wall / max(steps, 1), wall,
                  weighted_estimates=weighted_estimates, precision=precision, **extra,
                  neighbourhood="scan" if neighbourhood == "search" else neighbourhood)  # fmt: skip


def _on_gpu(model, radius: int) -> bool:
    """Whether the GPU filter runs this model at this radius."""
    from ..cuda.geometry import CPF_MAX_RADIUS
    from .cellular_gpu import cpf_twin

    return radius <= CPF_MAX_RADIUS and cpf_twin(model) is not None
