"""The univariate non-stationary growth model of thesis §2.6 (eqs. 2.34–2.35).

Dülger (2017), eq. 2.34 and eq. 2.35, written with the indices of the text::

    x_{k+1} = x_k / 2 + 25 x_k / (1 + x_k^2) + 8 cos(1.2 k) + v_k      (2.34)
    z_k     = x_k^2 / 20 + n_k                                          (2.35)

with v_k ~ N(0, sigma_v^2 = 10) and n_k ~ N(0, sigma_n^2 = 1). The cosine
takes the index of the state being propagated (k in x_{k+1} = f(x_k, k)), as
eq. 2.34 is printed; Arulampalam et al. (the thesis's ref. [2]) write
x_k = f(x_{k-1}) + 8 cos(1.2 k), one step of phase apart. We follow the thesis.

The experiments (§5.4, §6.9) start the truth at x_0 = 0.1, run T = 100 steps
and initialise the particles "as N(0, 2)"; we read the 2 as a variance, as the
thesis gives sigma_v^2 and sigma_n^2 as variances.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Thesis §2.6 (below eq. 2.35) and §5.4 / §6.9.
SIGMA_V2 = 10.0  # variance of the process noise v_k
SIGMA_N2 = 1.0  # variance of the measurement noise n_k
X0 = 0.1  # initial true state x_0 (§5.4, §6.9)
INIT_MEAN = 0.0  # particles initialised as N(0, 2) (§2.6) ...
INIT_VAR = 2.0  # ... 2 read as the variance (see the module docstring)
STEPS = 100  # T, the number of time steps (§5.4, §6.9)


@dataclass(frozen=True)
class GrowthModel:
    """Eqs. 2.34–2.35 with the thesis's parameters as defaults.

    A state is a float; N particles are a float64 array of shape (N,), a
    measurement a float.
    """

    sigma_v2: float = SIGMA_V2
    sigma_n2: float = SIGMA_N2
    x0: float = X0
    init_mean: float = INIT_MEAN
    init_var: float = INIT_VAR

    def mean_transition(self, x, k: int) -> np.ndarray:
        """The noise-free part of eq. 2.34: the mean of x_{k+1} given x_k = x."""
        x = np.asarray(x, dtype=np.float64)
        return x / 2.0 + 25.0 * x / (1.0 + x * x) + 8.0 * math.cos(1.2 * k)

    def transition(self, x, k: int, rng: np.random.Generator) -> np.ndarray:
        """Draw x_{k+1} given x_k = x (eq. 2.34), one draw per particle."""
        mean = self.mean_transition(x, k)
        return mean + math.sqrt(self.sigma_v2) * rng.standard_normal(mean.shape)

    def observe(self, x) -> np.ndarray:
        """The mean of z_k given x_k = x (eq. 2.35 without n_k)."""
        x = np.asarray(x, dtype=np.float64)
        return x * x / 20.0

    def log_likelihood(self, y: float, x) -> np.ndarray:
        """log p(z_k = y | x_k = x): the Gaussian density of n_k (eq. 2.35)."""
        r = y - self.observe(x)
        return -0.5 * (r * r / self.sigma_n2 + math.log(2.0 * math.pi * self.sigma_n2))

    def init_particles(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """N particles drawn from N(init_mean, init_var) (§2.6)."""
        return self.init_mean + math.sqrt(self.init_var) * rng.standard_normal(n)

    def simulate(self, steps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A ground-truth trajectory: ``x`` of shape (steps + 1,) holding
        x_0 ... x_T (x_0 = ``x0``) and ``y`` of shape (steps,) holding
        z_1 ... z_T, so ``y[k - 1]`` is the measurement of ``x[k]``."""
        x = np.empty(steps + 1)
        y = np.empty(steps)
        x[0] = self.x0
        for k in range(steps):
            x[k + 1] = self.transition(x[k], k, rng)
            y[k] = self.observe(x[k + 1]) + math.sqrt(self.sigma_n2) * rng.standard_normal()
        return x, y
