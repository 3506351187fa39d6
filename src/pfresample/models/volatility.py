"""The stochastic-volatility model of Güldaş (2015), §4.3.1 (after Kim,
Shephard and Chib 1998, the thesis's ref. [64])::

    X_0 ~ N(0, sigma^2),
    X_n ~ N(alpha X_{n-1}, sigma^2),          n >= 1,
    Y_n ~ N(0, beta^2 exp(X_n)),              n >= 0,

with the true parameters alpha* = 0.975, beta* = 0.63, sigma* = 0.16 and
sequences of length n = 100 (observations y_0 ... y_n: eq. 4.10 divides by
n + 1). The model is in the exponential family with the sufficient
statistics of §4.3.1 (``filters.smcem``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALPHA = 0.975  # alpha* (§4.3.1)
BETA = 0.63  # beta*
SIGMA = 0.16  # sigma*
LENGTH = 100  # n: observations y_0 ... y_n


@dataclass(frozen=True)
class VolatilityModel:
    """§4.3.1's model with parameters (alpha, beta, sigma). States are
    float64 arrays; ``y`` is a float."""

    alpha: float = ALPHA
    beta: float = BETA
    sigma: float = SIGMA

    def init_particles(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """N draws of X_0 ~ N(0, sigma^2)."""
        return self.sigma * rng.standard_normal(n)

    def transition(self, x, k: int, rng: np.random.Generator) -> np.ndarray:
        """X_{k+1} ~ N(alpha X_k, sigma^2), one draw per particle."""
        x = np.asarray(x, dtype=np.float64)
        return self.alpha * x + self.sigma * rng.standard_normal(x.shape)

    def log_likelihood(self, y: float, x) -> np.ndarray:
        """log of the N(0, beta^2 exp(x)) density at y."""
        x = np.asarray(x, dtype=np.float64)
        variance = self.beta * self.beta * np.exp(x)
        return -0.5 * (math.log(2.0 * math.pi) + np.log(variance) + y * y / variance)

    def simulate(self, length: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(x, y)``, each of shape (length + 1,): X_0 ... X_n and Y_0 ... Y_n."""
        x = np.empty(length + 1)
        x[0] = self.sigma * rng.standard_normal()
        for k in range(length):
            x[k + 1] = self.alpha * x[k] + self.sigma * rng.standard_normal()
        y = self.beta * np.exp(x / 2.0) * rng.standard_normal(length + 1)
        return x, y
