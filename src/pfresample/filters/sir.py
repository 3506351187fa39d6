"""The SIR particle filter of thesis Algorithm 2.4: ``run_filter`` with
``SIR_OPTIONS`` (``filters.engine``; on the GPU ``filters.sir_gpu``).

One time step k of Algorithm 2.4, in its four stages:

1. for each particle: prediction x_k^i ~ p(x_k | x_{k-1}^i) and weight update
   w~_k^i = p(z_k | x_k^i);
2. s = SUM(w~_k);
3. normalisation w_k^i = w~_k^i / s and the estimate x^_k = SUM(x_k^i w_k^i)
   ("in stage 3, we calculate the estimation results of the filter after
   normalization process", §2.6);
4. RESAMPLE(x_k, w~_k or w_k).

Stage 4 follows §6.9: "In stage 4, we use the weights of particles without
normalization for the Metropolis, Rejection and Uphill resampling methods, and
the normalized weights for the Systematic resampling method." Here every
comparison-based method of the registry (Metropolis, Rejection, Uphill and
their coalesced variants) gets w~, every cumulative one (Systematic,
Stratified, Multinomial, Residual) gets w. Stage 4 includes choosing B, as the
thesis counts the B kernels with the resampler (§6.5).
"""

from __future__ import annotations

import numpy as np

from ..logweights import check_log_weights


def weights_from_log(log_w: np.ndarray) -> np.ndarray:
    """Unnormalised float32 weights w~ = exp(log w - max log w), under the
    library's log-weight contract (``logweights``): -inf is a zero weight; a
    NaN or +inf log-likelihood, or all of them -inf, raises ``ValueError``
    naming the first bad particle.

    Subtracting the maximum first keeps the largest weight at exactly 1: the
    raw likelihoods of eq. 2.35 or 7.2 are often far below float32's
    smallest number (a particle 50 m off in range alone gives exp(-12.5)
    times a tiny density; one far off in bearing exp(-10^6)), and all of them
    underflowing to zero would make the weights unusable. The common factor
    exp(-max) cancels in the normalisation and no resampler depends on the
    scale of the weights. Float32 because the thesis is single precision
    throughout (§2.4) and the resamplers take float32 by default.
    """
    log_w = np.asarray(log_w, dtype=np.float64)
    top = check_log_weights(log_w)
    # NumPy's exp, not logweights.exp_nonpositive: no other backend has to
    # match these bits (the GPU filter computes its own float32 weights).
    return np.exp(log_w - top).astype(np.float32)


# Algorithm 2.4's filter as run_filter's options: single precision (§2.4), stage 4
# by §6.9 (the engine's default), resampling every step.
SIR_OPTIONS = {"arithmetic": "float32"}


def rmse(estimates, truth) -> float:
    """Root mean squared error of one filter run over its time steps.

    ``estimates`` and ``truth`` have the same shape: (T,) for a scalar state,
    (T, d) for a vector one (pass the columns to compare, e.g. the positions
    of the radar state). The error at step k is e_k = |truth_k - estimate_k|
    (the Euclidean norm over the d columns), as §5.4 defines it ("the
    difference between the true state and estimated state" at each time
    step), and

        RMSE = sqrt( (1/T) * sum_{k=1..T} e_k^2 ).

    For the growth model pass ``truth = x[1:]`` (x_1 ... x_T; x_0 is not
    estimated). Averaging over trajectories and runs is left to the caller.
    """
    est = np.asarray(estimates, dtype=np.float64)
    tru = np.asarray(truth, dtype=np.float64)
    if est.shape != tru.shape or est.ndim not in (1, 2) or est.shape[0] == 0:
        raise ValueError(
            f"estimates {est.shape} and truth {tru.shape} must be equal (T,) or (T, d)"
        )
    err2 = (est - tru) ** 2
    if err2.ndim == 2:
        err2 = err2.sum(axis=1)
    return float(np.sqrt(err2.mean()))
