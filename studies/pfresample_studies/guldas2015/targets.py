"""The particle-weight sets of Güldaş (2015) §4.1: particles drawn i.i.d.
from pi_0, weights g(x), test function phi(x) = x, and the exact moments
under the weighted target pi_hat_0(dx) = pi_0(dx) g(x) / pi_0(g) that the
errors of eqs. 4.1-4.6 and Theorem 3.4 are measured against.

* ``gaussian(a, sigma)``: x ~ U[-a, a], g(x) = exp(-x^2 / 2 sigma^2).
  §4.1.2-4.1.3 take a = 2 sigma, §4.1.4 a = sigma (sigma = 10). pi_hat_0
  is N(0, sigma^2) truncated to [-a, a].
* ``poisson(lam)``: x ~ Poisson(lam), g(x) = lam^x / x! (§4.1.4, lam =
  100). pi_hat_0(x) is proportional to (lam^x / x!)^2, mean 99.7497 (not
  lam) and variance 50.00. g(100) is about 1e42, beyond float32: the
  weights are handled as log-weights.

Each target works on NumPy or CuPy arrays alike (``xp``), so that a cell
draws and weighs its particles on the device that resamples them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# The Poisson sums of the exact moments run over x = 0 ... lam + POISSON_TAIL_SD sd,
# past which (lam^x / x!)^2 is below 1e-300 of its peak for lam <= 1e4.
POISSON_TAIL_SD = 40


@dataclass(frozen=True)
class Target:
    """A particle law pi_0 with a potential g; phi(x) = x throughout §4.1."""

    name: str
    kind: str  # "gaussian" or "poisson"
    parameters: tuple[float, ...]  # (a, sigma) or (lam,)
    title: str  # how figures name it, e.g. "g(x) = exp(-x²/2σ²), x ~ U[-10, 10]"

    def draw(self, rng, shape):
        """Particles x ~ pi_0 i.i.d. (float64) of ``shape`` (N, or (sets, N))
        from ``rng`` (a NumPy Generator or a CuPy RandomState; both have
        ``uniform`` and ``poisson``)."""
        if self.kind == "gaussian":
            a = self.parameters[0]
            return rng.uniform(-a, a, size=shape)
        return rng.poisson(self.parameters[0], size=shape).astype("float64")

    def log_g(self, x, xp=np):
        """log g(x), float64."""
        if self.kind == "gaussian":
            sigma = self.parameters[1]
            return -(x * x) / (2.0 * sigma * sigma)
        lam = self.parameters[0]
        top = int(x.max()) if x.size else 0
        # log x! by a table of cumulative log k: exact to float64 rounding, on any xp.
        log_factorial = xp.concatenate(
            (xp.zeros(1), xp.cumsum(xp.log(xp.arange(1, top + 1, dtype=xp.float64))))
        )
        return x * math.log(lam) - log_factorial[x.astype(xp.int64)]

    def weighted_moments(self) -> tuple[float, float]:
        """(pi_hat_0(phi), Var_{pi_hat_0}(phi)) for phi(x) = x, exact."""
        if self.kind == "gaussian":
            a, sigma = self.parameters
            alpha = a / sigma
            density = math.exp(-alpha * alpha / 2) / math.sqrt(2 * math.pi)
            mass = math.erf(alpha / math.sqrt(2))  # 2 Phi(alpha) - 1
            return 0.0, sigma * sigma * (1.0 - 2.0 * alpha * density / mass)
        lam = self.parameters[0]
        x = np.arange(0, math.ceil(lam + POISSON_TAIL_SD * math.sqrt(lam) + 10), dtype=np.float64)
        log_p = 2.0 * (x * math.log(lam) - np.array([math.lgamma(v + 1) for v in x]))
        p = np.exp(log_p - log_p.max())
        p /= p.sum()
        mean = float(p @ x)
        return mean, float(p @ (x - mean) ** 2)

    def theorem_3_4_limit(self, r: int) -> float:
        """(1 - 1/r) Var_{pi_hat_0}(phi): the limit of (N / log_r N) LMSE for
        radix-r butterfly resampling (Theorem 3.4 as §4.1.1 restates it)."""
        return (1.0 - 1.0 / r) * self.weighted_moments()[1]


def gaussian(a: float, sigma: float) -> Target:
    title = f"g(x) = exp(-x²/2σ²), σ = {sigma:g}, x ~ U[-{a:g}, {a:g}]"
    return Target(f"gaussian-a{a:g}", "gaussian", (float(a), float(sigma)), title)


def poisson(lam: float) -> Target:
    title = f"g(x) = λ^x/x!, x ~ Poisson({lam:g})"
    return Target(f"poisson-l{lam:g}", "poisson", (float(lam),), title)
