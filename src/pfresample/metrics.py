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

:class:`OffspringStats` accumulates these chunk by chunk -- per particle the
integer sums of ``o`` and ``o^2``, and the K squared errors -- so no K x N
array is ever held, on the host or on the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .api import offspring
from .backend import is_device_array
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
    """Offspring statistics of K draws on one weight sequence, added a draw
    or a (C x N) chunk of draws at a time (:meth:`add`).

    ``target`` defaults to the unbiased expectation ``N w_i / sum w``; pass an
    exact expectation (``pfresample.expectation``) to measure the distance
    from that instead. Per particle only the integer sums of the counts c and
    of c^2 are kept, so memory is O(N) whatever K is, and each particle's
    offspring mean and variance are exact up to one rounding. CuPy chunks
    stay on the device (``cuda.offspring``) until a summary is read.
    """

    def __init__(self, weights=None, target=None):
        if target is None:
            if weights is None:
                raise TypeError("OffspringStats needs the weights or a target")
            target = unbiased(weights)
        self.xp = xp = _array_module(target)
        self.target = xp.asarray(target, dtype=xp.float64)
        self.n = int(self.target.shape[0])
        self.k = 0
        self._sums = xp.zeros(self.n, dtype=xp.int64)
        self._sums_sq = xp.zeros(self.n, dtype=xp.int64)
        self._se: list = []

    def add(self, ancestors) -> None:
        """Add one draw (ancestors of length N) or a batch (K x N)."""
        if is_device_array(ancestors):
            from .cuda.offspring import accumulate_offspring

            rows = ancestors.reshape(-1, self.n)
            se = accumulate_offspring(rows, self.target, self._sums, self._sums_sq)
        else:
            counts = np.atleast_2d(offspring(ancestors, self.n))
            self._sums += counts.sum(axis=0)
            self._sums_sq += (counts * counts).sum(axis=0)
            d = counts - self.target
            se = (d * d).sum(axis=1)
        self._se.append(se)
        self.k += int(se.shape[0])

    @property
    def squared_errors(self) -> np.ndarray:
        """SE(o_l) of every draw so far (eq. 2.29), on the host."""
        return _to_host(self.xp.concatenate(self._se)) if self._se else np.zeros(0)

    def _mean(self):
        return self._sums / self.k

    @property
    def mean_offspring(self) -> np.ndarray:
        """Per-particle mean of the offspring counts over the draws."""
        return _to_host(self._mean())

    def _variance(self):
        mean = self._mean()
        return self.xp.maximum(self._sums_sq / self.k - mean * mean, 0.0)

    @property
    def offspring_variance(self) -> np.ndarray:
        """Per-particle variance over the draws (divisor K)."""
        return _to_host(self._variance())

    @property
    def variance(self) -> float:
        """Var = sum_i Var(o^i) (eq. 2.32)."""
        return float(self._variance().sum())

    @property
    def bias2(self) -> float:
        """||Bias||^2 = sum_i (mean_l o_l^i - e_i)^2 (eq. 2.32)."""
        bias = self._mean() - self.target
        return float((bias * bias).sum())

    def quality(self) -> Quality:
        if self.k < 2:
            raise ValueError("need at least two draws")
        se = self.squared_errors
        return Quality(
            n=self.n,
            k=self.k,
            mse=float(se.mean()),
            variance=self.variance,
            bias2=self.bias2,
            mse_ci=confidence_interval(se)[1],
        )


def _array_module(x):
    if is_device_array(x):
        import cupy

        return cupy
    return np


def _to_host(x):
    return x.get() if is_device_array(x) else x
