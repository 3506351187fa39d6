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
thesis gives sigma_v^2 and sigma_n^2 as variances. Every filter predicts them
(eq. 2.34 from x_0) before it weighs them with z_1.

``particles_from_noise`` is the start of Gelencsér-Horváth et al. (2013, "GPU
CPF algorithm": the particles are "initialized with N samples of the same
distribution as n_t", N(0, 10), and the kernel weighs them before it predicts):
the particles that meet z_1 are N(0, sigma_v^2) draws, not predictions from x_0.
It is realised as the point mass x_0 = 0 and a first step (k = 0) without eq.
2.34's drift: f(0) = 0/2 + 25 * 0 / 1 = 0 exactly, so that step gives
x_1 = sigma_v v_0 ~ N(0, sigma_v^2), the same law, and every filter -- CPU, the
GPU graph, the fused kernel, the cellular kernel -- runs this start unchanged.
The truth (``simulate``) keeps the drift at every step: the flag is the
filter's start, not the system's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..backend import array_module
from ..cuda import geometry
from ..cuda.kernels import NULL
from ..cuda.twin import launch

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
    particles_from_noise: bool = False  # the start of Gelencsér-Horváth et al. (docstring)

    @staticmethod
    def drift(k: int) -> float:
        """Eq. 2.34's time-varying term of the step from x_k to x_{k+1}: 8 cos(1.2 k)."""
        return 8.0 * math.cos(1.2 * k)

    def filter_drift(self, k: int) -> float:
        """The drift the filters use at step k: :meth:`drift`, except 0 at
        k = 0 when ``particles_from_noise`` (the module docstring)."""
        return 0.0 if (k == 0 and self.particles_from_noise) else self.drift(k)

    @property
    def start_mean(self) -> float:
        """The mean of the filters' x_0: ``init_mean``, or 0 when ``particles_from_noise``."""
        return 0.0 if self.particles_from_noise else self.init_mean

    @property
    def start_sd(self) -> float:
        """The standard deviation of the filters' x_0: sqrt(``init_var``), or 0
        (the point mass) when ``particles_from_noise``."""
        return 0.0 if self.particles_from_noise else math.sqrt(self.init_var)

    @staticmethod
    def _f(x) -> np.ndarray:
        x = array_module(x).asarray(x, dtype=np.float64)
        return x / 2.0 + 25.0 * x / (1.0 + x * x)

    def mean_transition(self, x, k: int) -> np.ndarray:
        """The noise-free part of eq. 2.34 as the filters step: the mean of
        x_{k+1} given x_k = x (``filter_drift``)."""
        return self._f(x) + self.filter_drift(k)

    def transition(self, x, k: int, rng: np.random.Generator) -> np.ndarray:
        """Draw x_{k+1} given x_k = x (eq. 2.34), one draw per particle."""
        mean = self.mean_transition(x, k)
        return mean + math.sqrt(self.sigma_v2) * rng.standard_normal(mean.shape)

    def observe(self, x) -> np.ndarray:
        """The mean of z_k given x_k = x (eq. 2.35 without n_k)."""
        x = array_module(x).asarray(x, dtype=np.float64)
        return x * x / 20.0

    def cuda_twin(self, graph: str, **options):
        """This model's device code for the GPU graph ``graph`` (the SIR graph's, the CPF's;
        ``cuda.twin``), or None for a graph it has none for."""
        twin = {"sir": GrowthTwin, "cpf": GrowthCpf}.get(graph)
        return None if twin is None else twin(self, **options)

    def log_likelihood(self, y: float, x) -> np.ndarray:
        """log p(z_k = y | x_k = x): the Gaussian density of n_k (eq. 2.35)."""
        r = y - self.observe(x)
        return -0.5 * (r * r / self.sigma_n2 + math.log(2.0 * math.pi * self.sigma_n2))

    def init_particles(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """N particles drawn from N(init_mean, init_var) (§2.6), or the point
        mass 0 when ``particles_from_noise``; N normals are drawn either way,
        so that both starts leave ``rng`` in the same state (common random
        numbers for every later step)."""
        return self.start_mean + self.start_sd * rng.standard_normal(n)

    def simulate(self, steps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A ground-truth trajectory: ``x`` of shape (steps + 1,) holding
        x_0 ... x_T (x_0 = ``x0``) and ``y`` of shape (steps,) holding
        z_1 ... z_T, so ``y[k - 1]`` is the measurement of ``x[k]``."""
        x = np.empty(steps + 1)
        y = np.empty(steps)
        x[0] = self.x0
        sd_v = math.sqrt(self.sigma_v2)
        for k in range(steps):  # the system's eq. 2.34: its drift at every step
            x[k + 1] = self._f(x[k]) + self.drift(k) + sd_v * rng.standard_normal()
            y[k] = self.observe(x[k + 1]) + math.sqrt(self.sigma_n2) * rng.standard_normal()
        return x, y


class GrowthTwin:
    """The growth model (eqs. 2.34-2.35) on the device: one state row."""

    rows, measurement_size = 1, 1
    fused = True  # filters.sir_fused runs it with Systematic resampling
    per_block = 4  # particles a Philox block serves (models.cuh, GROWTH_PER_BLOCK)

    def __init__(self, model):
        self.model = model

    def log_likelihood_constant(self) -> float:
        """What the kernel's log g(z | x) leaves out of the model's: -1/2 log(2 pi sigma_n^2)."""
        return -0.5 * math.log(2.0 * math.pi * self.model.sigma_n2)

    def init(self, x, key) -> None:
        """x_0 ~ N(start_mean, start_sd^2) (models/growth.py: N(init_mean,
        init_var), or the point mass 0 of ``particles_from_noise``); ``key``:
        the device's noise key (2 uint32)."""
        m = self.model
        n = x.shape[-1]
        args = (x, np.uint32(n), key, np.float32(m.start_mean), np.float32(m.start_sd))
        launch("models.cu", "growth_init", geometry.blocks(n, self.per_block), args)

    def _step_args(self, k: int, z, top) -> tuple:
        """The arguments of step k that follow the noise key in both
        prediction kernels: the Philox block, eq. 2.34's drift (with the
        index of the state propagated), sigma_v, z, 1 / sigma_n^2, top."""
        m = self.model
        drift = m.filter_drift(k)
        return (np.uint64(k + 1), np.float32(drift), np.float32(m.sigma_v2**0.5), z,
                np.float32(1.0 / m.sigma_n2), top)  # fmt: skip

    def predict(self, x, log_w, k: int, z, key, top) -> None:
        """Step k of eq. 2.34 in place, log p(z | x) into ``log_w``, and
        ``top`` (uint32, on the device) raised to their maximum."""
        n = x.shape[-1]
        args = (x, log_w, np.uint32(n), key, *self._step_args(k, z, top))
        launch("models.cu", "growth_predict", geometry.blocks(n, self.per_block), args)

    def predict_through(self, src, ancestors, x, log_w, k: int, z, key, top) -> None:
        """:meth:`predict` of the states ``src[ancestors]`` into ``x`` (the
        gather fused into the prediction; ``ancestors`` None: ``src`` itself)."""
        n = x.shape[-1]
        anc = NULL if ancestors is None else ancestors
        args = (src, anc, x, log_w, np.uint32(n), key, *self._step_args(k, z, top))
        launch("models.cu", "growth_predict_through", geometry.blocks(n, self.per_block), args)


class GrowthCpf:
    """The growth model (eqs. 2.34-2.35): one state row."""

    rows, prefix = 1, "cpf_growth"

    def __init__(self, model):
        self.model = model

    def drift(self, k: int) -> np.float32:
        """The drift of the step from x_k to x_{k+1}: eq. 2.34's 8 cos(1.2 k)
        (0 at k = 0 with the paper's start: ``GrowthModel.filter_drift``)."""
        return np.float32(self.model.filter_drift(k))

    def init_args(self) -> tuple:
        m = self.model
        f = np.float32
        return (f(m.sigma_v2**0.5), f(m.start_mean), f(m.start_sd), self.drift(0))

    def step_args(self) -> tuple:
        m = self.model
        return (np.float32(m.sigma_v2**0.5), np.float32(1.0 / m.sigma_n2))
