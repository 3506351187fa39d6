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

Both are ``run_filter`` with ``BOOTSTRAP_OPTIONS`` or ``ADAPTIVE_OPTIONS``:
weights carried as float64 log-weights and handed to the resamplers as
float32 exp(lw - max lw) (the engine's "float32" arithmetic), on the GPU
``filters.guldas_gpu`` for the bimodal model.
"""

from __future__ import annotations

import math

import numpy as np

# Fig 1.2's bootstrap filter as run_filter's options: float32 w~ handed to every
# method, the estimate after resampling (the mean of the resampled particles).
BOOTSTRAP_OPTIONS = {"arithmetic": "float32", "stage4_weights": "unnormalised",
                     "resampled_estimates": "mean"}  # fmt: skip
# Fig 1.3's adaptive filter: the resampler's stages run while ESS < tau N
# (ess_threshold=tau), the weights they leave are carried, the estimate after.
ADAPTIVE_OPTIONS = {"arithmetic": "float32", "stage4_weights": "unnormalised",
                    "gate": "stages", "resampled_estimates": "weighted"}  # fmt: skip


def interaction_level(stages, radix) -> np.ndarray:
    """Fig 4.11's interaction level of each step: log2 of the largest block
    that interacted, log2(r_1 ... r_{K_t}) for the K_t = ``stages[t]`` stages
    run with the radix sequence ``radix`` (a standard method: ``(N,)``)."""
    return np.array([math.log2(math.prod(radix[: int(k)])) for k in stages])


def amse(estimates, truth) -> float:
    """The time-averaged squared error of one run, (1/T) sum_t (pi^_t(phi) -
    pi_t(phi))^2; its mean over runs is AMSE^{N,T,M} (§4.2.1)."""
    e = np.asarray(estimates, dtype=np.float64) - np.asarray(truth, dtype=np.float64)
    return float(np.mean(e * e))
