"""A scalar linear-Gaussian state-space model with its exact filter: the
model on which a particle filter's answers are known.

    x_0     ~ N(m_0, p_0^2)
    x_{k+1} = a x_k + q v_k,      v_k ~ N(0, 1)
    z_k     = x_k + r n_k,        n_k ~ N(0, 1),      k = 1 ... T

Every filter of ``pfresample.filters`` predicts before it weighs (Algorithm
2.4: x_1 from x_0, then z_1), so the Kalman filter here predicts first too.
``log_likelihood`` is the normalised log-density log N(z; x, r^2) (not "up to
a constant" as the other models'), so that a filter's estimate of log
p(z_1:T) can be compared with :meth:`LinearGaussianModel.kalman`'s exact
value. The class is also the protocol's worked example
(docs/library.md, "Your own model"): four methods on NumPy arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..backend import array_module


@dataclass(frozen=True)
class LinearGaussianModel:
    """The model of the module docstring; N particles are float64 (N,).
    Its methods compute with the array module of the particles, so it runs
    on CuPy arrays too (``run_filter``'s GPU path for such models)."""

    array_generic = True  # run_filter(backend="auto") may run it on CuPy arrays

    a: float = 0.9
    q: float = 1.0
    r: float = 1.0
    m0: float = 0.0
    p0: float = 1.0

    def __post_init__(self):
        for name in ("a", "q", "r", "m0", "p0"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be finite, got {getattr(self, name)!r}")
        for name in ("q", "r", "p0"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")

    def init_particles(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.m0 + self.p0 * rng.standard_normal(n)

    def mean_transition(self, x, k: int) -> np.ndarray:
        """The mean of x_{k+1} given x_k = x (D3's prior weights need it)."""
        return self.a * array_module(x).asarray(x, dtype=np.float64)

    def transition(self, x, k: int, rng: np.random.Generator) -> np.ndarray:
        mean = self.mean_transition(x, k)
        return mean + self.q * rng.standard_normal(mean.shape)

    def observe(self, x) -> np.ndarray:
        return np.asarray(x, dtype=np.float64)

    def log_likelihood(self, y, x) -> np.ndarray:
        """log N(y; x, r^2), normalised."""
        # y - x, not float(y) - x: y may be a device scalar (a captured run's
        # measurement, filters.capture), which float() would read back to the host
        e = (y - array_module(x).asarray(x, dtype=np.float64)) / self.r
        return -0.5 * e * e - math.log(self.r) - 0.5 * math.log(2 * math.pi)

    def simulate(self, steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(truth x_0 ... x_T, measurements z_1 ... z_T) from ``seed``."""
        rng = np.random.default_rng(seed)
        x = np.empty(steps + 1)
        x[0] = self.m0 + self.p0 * rng.standard_normal()
        for k in range(steps):
            x[k + 1] = self.a * x[k] + self.q * rng.standard_normal()
        return x, x[1:] + self.r * rng.standard_normal(steps)

    def kalman(self, y) -> tuple[np.ndarray, np.ndarray, float]:
        """The exact filter: (means E[x_k | z_1:k], variances, log p(z_1:T)),
        the last the sum of log N(z_k; m_k|k-1, P_k|k-1 + r^2)."""
        y = np.asarray(y, dtype=np.float64)
        m, p = self.m0, self.p0**2
        means, variances, log_z = np.empty(y.size), np.empty(y.size), 0.0
        for k, z in enumerate(y):
            m, p = self.a * m, self.a**2 * p + self.q**2  # predict
            s = p + self.r**2
            log_z += -0.5 * ((z - m) ** 2 / s + math.log(2 * math.pi * s))
            gain = p / s
            m, p = m + gain * (z - m), (1 - gain) * p  # update
            means[k], variances[k] = m, p
        return means, variances, log_z
