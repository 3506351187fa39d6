"""The bimodal model of Güldaş (2015), §4.2.1, eqs. 4.7–4.8::

    x_{t+1} ~ N(x_t, sigma_1)                                               (4.7)
    g_t(x)  = 0.5 exp{-(x - 0.5 t)^2 / 2 sigma_2^2}
            + 0.5 exp{-(x + 0.5 t)^2 / 2 sigma_2^2}                          (4.8)

The minus signs in the exponents are missing in print; without them g_t
grows without bound. The potential is symmetric in x and so is the random
walk: with a symmetric initial law every filtering distribution is symmetric,
and its mean is exactly 0 for phi(x) = x ("the exact values of expectations
under filtering distribution can be computed easily", §4.2.1). A filter's
error is then its estimate itself.

The thesis gives neither sigma_1, sigma_2 nor the initial law. Chosen here
(and kept): sigma_1 = 1 read as a standard deviation (eq. 4.7 writes
N(x_t, sigma_1), not sigma_1^2), sigma_2 = 1, x_0 ~ N(0, 1). The modes at
+-0.5 t then separate by t while the random walk spreads by sqrt(t): the two
modes stay apart, and a filter must keep both in balance, which resampling
noise disturbs; that imbalance is what the AMSE measures.

The model has no random observations: the potential depends on t alone. So
that it fits the filters' interface, the "measurement" of step t is the mode
offset y_t = 0.5 t (``simulate`` returns them) and ``log_likelihood(y, x)``
is log g with 0.5 t = y.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..cuda import geometry
from ..cuda.twin import launch

SIGMA_1 = 1.0  # standard deviation of the random-walk step (eq. 4.7)
SIGMA_2 = 1.0  # width of each mode of the potential (eq. 4.8)
INIT_SD = 1.0  # x_0 ~ N(0, INIT_SD^2)
MODE_SPEED = 0.5  # the modes sit at +-0.5 t (eq. 4.8)
STEPS = 100  # T of §4.2.1


@dataclass(frozen=True)
class BimodalModel:
    """Eqs. 4.7–4.8 with this module's choices as defaults. A state is a
    float; N particles are a float64 array of shape (N,)."""

    sigma_1: float = SIGMA_1
    sigma_2: float = SIGMA_2
    init_sd: float = INIT_SD

    def transition(self, x, k: int, rng: np.random.Generator) -> np.ndarray:
        """x_{k+1} ~ N(x_k, sigma_1^2), one draw per particle (eq. 4.7)."""
        x = np.asarray(x, dtype=np.float64)
        return x + self.sigma_1 * rng.standard_normal(x.shape)

    def cuda_twin(self, graph: str, **options):
        """This model's device code for the GPU graph ``graph`` (Güldaş's
        bootstrap and adaptive graphs', ``carry`` the adaptive filter's;
        ``cuda.twin``), or None for a graph it has none for."""
        twin = {"guldas": BimodalTwin}.get(graph)
        return None if twin is None else twin(self, **options)

    def log_likelihood(self, y: float, x) -> np.ndarray:
        """log g_t(x) of eq. 4.8 with 0.5 t = ``y``: log 0.5 plus the
        log-sum-exp of the two modes' exponents (no underflow far from both)."""
        x = np.asarray(x, dtype=np.float64)
        scale = 2.0 * self.sigma_2 * self.sigma_2
        return math.log(0.5) + np.logaddexp(-((x - y) ** 2) / scale, -((x + y) ** 2) / scale)

    def init_particles(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """N draws of x_0 ~ N(0, init_sd^2)."""
        return self.init_sd * rng.standard_normal(n)

    def filtering_mean(self, steps: int) -> np.ndarray:
        """The exact filtering mean of phi(x) = x at t = 1 ... steps: 0."""
        return np.zeros(steps)

    def simulate(self, steps: int, rng: np.random.Generator | None = None):
        """``(truth, y)``: the filtering means (all 0) and the mode offsets
        y_t = 0.5 t, t = 1 ... steps. ``rng`` is not used (the model has no
        random observations); it is accepted for the common interface."""
        t = np.arange(1, steps + 1, dtype=np.float64)
        return self.filtering_mean(steps), MODE_SPEED * t


class BimodalTwin:
    """Eqs. 4.7-4.8 on the device (``models.cu``): one state row; the
    "measurement" of step t is the mode offset 0.5 t. ``carry``: add log g_t
    to the carried log-weights (the adaptive filter) rather than start from
    even ones."""

    rows, measurement_size = 1, 1
    per_block = 4  # models.cuh, SCALAR_PER_BLOCK

    def __init__(self, model, carry: bool = False):
        self.model, self.carry = model, carry

    def log_likelihood_constant(self) -> float:
        """What the kernel's log g_t leaves out of the model's: nothing (both keep log 0.5)."""
        return 0.0

    def init(self, x, key) -> None:
        """x_0 ~ N(0, init_sd^2) (growth_init draws N(mean, sd^2), four a Philox block)."""
        n = x.shape[-1]
        args = (x, np.uint32(n), key, np.float32(0.0), np.float32(self.model.init_sd))
        launch("models.cu", "growth_init", geometry.blocks(n, self.per_block), args)

    def predict(self, x, log_w, k: int, z, key, top) -> None:
        m = self.model
        n = x.shape[-1]
        args = (x, log_w, np.uint32(n), key, np.uint64(k + 1), np.float32(m.sigma_1), z)
        args += (np.float32(0.5 / m.sigma_2**2), np.int32(self.carry), top)
        launch("models.cu", "bimodal_predict", geometry.blocks(n, self.per_block), args)
