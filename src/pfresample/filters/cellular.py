"""The cellular particle filter (CPF) of Gelencsér-Horváth et al. 2013 (Fig 6).

One time step k (measurement z_k of x_k) of the filter on the ring:

1. prediction x_k^i ~ p(x_k | x_{k-1}^i) (Fig 6, IV: "Iteration on particles");
2. likelihoods L^i = p(z_k | x_k^i) (Fig 6, II: "Error calculation");
3. cellular resampling: particle i draws its ancestor from its neighbourhood
   {i, i-1, ..., i-r} mod N with probability L^j / W_i (Fig 6, III;
   ``resampling/cellular.py``);
4. the estimate, the mean of the resampled particles (Fig 6, III.8: "Estimation
   is calculated from these particle values").

The filter is ``run_filter(model, y, n, "cellular", radius=r, **CPF_OPTIONS)``.
No global sum or prefix sum is needed anywhere: a step is local to each
neighbourhood except for the estimate's mean. On the GPU (``cellular_gpu``, the
engine's choice for the growth and bearings-only models) a step is one kernel
and a run one CUDA graph; here it is NumPy. Weights are
exp(log L - max log L) in float64, or float32, the paper's precision
(``precision``; the common factor cancels in every neighbourhood's ratios; the
GPU shifts by each tile's own maximum), and a neighbourhood whose weights all
underflow draws again with its own maximum (``resampling.cellular.cellular_log``).

The growth model's start (``models/growth.py``, ``particles_from_noise``) is the
model's: with the paper's, the first prediction is the draw of x_1 from N(0,
sigma_v^2), so the particles the first weighting meets are the paper's.
"""

from __future__ import annotations

from .common import NEIGHBOURHOODS, PRECISIONS, check_kernel

__all__ = ["CPF_OPTIONS", "NEIGHBOURHOODS", "PRECISIONS", "check_kernel"]

# The CPF as run_filter's options (resampler "cellular" with its radius,
# precision and neighbourhood): the log-likelihoods handed to the resampler as
# they are (carried unnormalised), the weighted mean before resampling as
# SUM L x / SUM L in float64, and the paper's estimate, the mean of the
# resampled particles (FilterResult.resampled_estimates).
#
# ``weighted=False`` (a parameter of the cellular resampler, like ``radius``)
# runs the GPU's step kernel as the paper has it, without the weighted mean
# before resampling and the log-likelihood estimate: both are NaN then, and
# the kernel is 1.4-1.5x faster (evidence of issue 42). The CPU filter always
# computes them.
CPF_OPTIONS = {"arithmetic": "float64-raw", "estimator": "ratio", "resampled_estimates": "mean"}
