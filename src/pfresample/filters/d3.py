"""The particle filters of Das et al. (2014): the SIR filter with systematic
(or any registry) resampling, and the D3 filter: ``run_filter`` with
``D3_OPTIONS`` (on the GPU, for the UUV model, ``filters.d3_gpu``).

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

import numpy as np

from .common import D3_STAGES

__all__ = ["D3_OPTIONS", "D3_STAGES", "prior_log_weights", "velocity_errors", "weights_of_columns"]


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


# Das et al.'s filter as run_filter's options: float32 w~ normalised in float64,
# the normalised weights handed to every method (D3's likelihood weights).
D3_OPTIONS = {"arithmetic": "float32-w64", "stage4_weights": "normalised"}


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
