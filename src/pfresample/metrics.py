"""Quality of a resampler over K offspring draws (thesis §2.5).

For one weight sequence with target ``e_i = N w_i / sum w`` and offspring
counts ``o_l`` of draws l = 1..K:

* SE(o_l) = sum_i (o_l^i - e_i)^2                         (eq. 2.29)
* MSE = (1/K) sum_l SE(o_l)                               (eq. 2.30)
* MSE = Var + ||Bias||^2                                  (eq. 2.31)
* Var = sum_i Var(o^i), ||Bias||^2 = sum_i (mean_l o_l^i - e_i)^2   (eq. 2.32)

Var(o^i) is the variance over the K draws with divisor K, the one for which
eq. 2.31 holds exactly. The thesis reports MSE/N and the bias contribution
||Bias||^2 / MSE.

:class:`OffspringStats` accumulates these batch by batch -- per particle the
sums of ``d = o - e`` and ``d^2``, and the K squared errors -- so no K x N
array is ever held.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .api import offspring
from .constants import CONFIDENCE_LEVEL
from .expectation import unbiased


def confidence_interval(samples, level: float = CONFIDENCE_LEVEL) -> tuple[float, float]:
    """``(mean, half_width)`` of the normal-approximation confidence interval
    of the mean of ``samples`` (the thesis's 99% intervals; fine for K >= 30)."""
    x = np.asarray(samples, dtype=np.float64)
    if x.size < 2:
        raise ValueError("a confidence interval needs at least two samples")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    return float(x.mean()), float(z * x.std(ddof=1) / math.sqrt(x.size))


@dataclass(frozen=True)
class Quality:
    """Summary of K draws on one weight sequence."""

    n: int
    k: int
    mse: float
    variance: float
    bias2: float
    mse_ci: float  # half width of the 99% confidence interval of the MSE

    @property
    def mse_per_n(self) -> float:
        return self.mse / self.n

    @property
    def bias_fraction(self) -> float:
        """Contribution of the squared bias to the MSE, ||Bias||^2 / MSE."""
        return self.bias2 / self.mse if self.mse > 0 else 0.0


class OffspringStats:
    """Streaming accumulator of offspring statistics for one weight sequence.

    ``target`` defaults to the unbiased expectation ``N w_i / sum w``; pass an
    exact expectation (``pfresample.expectation``) to measure the distance
    from that instead.
    """

    def __init__(self, weights, target=None):
        self.target = unbiased(weights) if target is None else np.asarray(target, np.float64)
        self.n = self.target.size
        self.k = 0
        self._sum = np.zeros(self.n)
        self._sum2 = np.zeros(self.n)
        self._se: list[np.ndarray] = []

    def add(self, ancestors) -> None:
        """Add one draw (ancestors of length N) or a batch (K x N)."""
        counts = offspring(ancestors, self.n)
        d = np.atleast_2d(counts) - self.target
        self._sum += d.sum(axis=0)
        self._sum2 += (d * d).sum(axis=0)
        self._se.append((d * d).sum(axis=1))
        self.k += d.shape[0]

    @property
    def squared_errors(self) -> np.ndarray:
        """SE(o_l) of every draw so far (eq. 2.29)."""
        return np.concatenate(self._se) if self._se else np.zeros(0)

    @property
    def mean_offspring(self) -> np.ndarray:
        return self.target + self._sum / self.k

    @property
    def offspring_variance(self) -> np.ndarray:
        """Per-particle variance over the draws (divisor K)."""
        mean_d = self._sum / self.k
        return np.maximum(self._sum2 / self.k - mean_d**2, 0.0)

    def quality(self) -> Quality:
        if self.k < 2:
            raise ValueError("need at least two draws")
        se = self.squared_errors
        mean_d = self._sum / self.k
        return Quality(
            n=self.n,
            k=self.k,
            mse=float(se.mean()),
            variance=float(self.offspring_variance.sum()),
            bias2=float(np.sum(mean_d**2)),
            mse_ci=confidence_interval(se)[1],
        )
