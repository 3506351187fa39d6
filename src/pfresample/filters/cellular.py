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
exp(log L - max log L) in float64 (the common factor cancels in every
neighbourhood's ratios; the GPU shifts by each tile's own maximum), and a
neighbourhood whose weights all underflow draws again with its own maximum
(``resampling.cellular.cellular_log``).
"""

from __future__ import annotations

import time

import numpy as np

from ..logweights import check_log_weights
from ..resampling.cellular import cellular_log
from ..rng import seed_keys
from ..validation import check_radius
from . import common
from .common import CpfRun


def run_cpf(
    model, y, n: int, radius: int, seed: int, *, backend="cpu", fast_math=False, scan=False
) -> CpfRun:
    """Run the CPF with ``n`` particles and neighbourhood radius ``radius``
    (0 <= r <= N - 1) over the measurements ``y`` (``y[k - 1]`` = z_k).
    ``backend``: "cpu", "cuda" or "auto" (the GPU when one is visible and
    the model has device code: the growth and bearings-only models);
    ``fast_math`` builds the GPU kernels with --use_fast_math (Fig 11);
    ``scan`` makes the GPU kernel scan every neighbourhood, as the paper's
    does, instead of searching the tile's prefix sums (cellular.cu; the
    same distribution, O(r) instead of O(log r) a particle). The CPU
    always scans."""
    n = int(n)
    radius = check_radius(radius, n)
    if backend != "cpu" and common.select_filter_backend(backend, _on_gpu(model, radius)) == "cuda":
        from .cellular_gpu import run_cpf_gpu

        return run_cpf_gpu(model, y, n, radius, seed, fast_math=fast_math, scan=scan)
    if fast_math or scan:
        raise ValueError("fast_math and scan are options of the GPU kernels; the CPU has neither")
    y = np.asarray(y, dtype=np.float64)
    steps = y.shape[0]
    rng, draw_seeds = common.derive_seeds(seed, steps)
    start = time.perf_counter()
    x = model.init_particles(n, rng)
    estimates = np.empty((steps,) + x.shape[1:])
    for k in range(steps):
        x = model.transition(x, k, rng)
        log_l = np.asarray(model.log_likelihood(y[k], x), dtype=np.float64)
        try:
            check_log_weights(log_l)
        except ValueError as error:
            raise ValueError(f"step {k + 1} of the filter: {error}") from error
        k0, k1 = seed_keys([int(draw_seeds[k])])
        x = x[cellular_log(log_l, (k0[0], k1[0]), radius)]
        estimates[k] = x.mean(axis=0)
    wall = time.perf_counter() - start
    return CpfRun(n, radius, int(seed), estimates, wall / max(steps, 1), wall)


def _on_gpu(model, radius: int) -> bool:
    """Whether the GPU filter runs this model at this radius."""
    from ..cuda.geometry import CPF_MAX_RADIUS
    from .cellular_gpu import cpf_twin

    return radius <= CPF_MAX_RADIUS and cpf_twin(model) is not None
