"""Bearings-only tracking (BOT) of Gordon, Salmond & Smith (1993), "Novel
approach to nonlinear/non-Gaussian Bayesian state estimation", IEE Proc. F
140, 107-113: the simulation example of the paper, reference [23] of
Gelencsér-Horváth et al. (2013), who filter it over 24 steps (their
"Evaluation and results": "we generated 100 trajectories over 24 time steps
based on the given state transition equations in [23]").

The state is x = (x, xdot, y, ydot), a target in the plane seen from a sensor
at the origin. With a unit time step::

    x_k = F x_{k-1} + G w_k,   F = [[1, 1, 0, 0],    G = [[0.5, 0  ],      (B1)
                                    [0, 1, 0, 0],         [1,   0  ],
                                    [0, 0, 1, 1],         [0,   0.5],
                                    [0, 0, 0, 1]],        [0,   1  ]]

    z_k = atan2(y_k, x_k) + v_k                                            (B2)

with w_k ~ N(0, q I_2), sqrt(q) = 0.001, and v_k ~ N(0, r), sqrt(r) = 0.005.
The simulated measurement is wrapped into (-pi, pi], the range of atan2, and
the likelihood is the density of v_k at the residual wrapped into [-pi, pi)
(radar.wrap_angle): the truth starts at x < 0 with y falling through 0 (the
noise-free track of (B1) from x_0 crosses y = 0 between steps 12 and 13), so
its bearings cross the +-pi cut mid-run, and an unwrapped residual would be
almost 2 pi there. The truth starts at x_0 = (-0.05, 0.001, 0.7, -0.055); the
filter's prior is N((0, 0, 0.4, -0.05), diag(0.5^2, 0.005^2, 0.3^2, 0.01^2)).

Where the values were checked (public copies found with the search tool; the
paper itself was not readable there: the studylib.net copy of its text,
https://studylib.net/doc/18235234/novel-approach-to-nonlinear-non-gaussian-bayesian-state,
shows only the abstract, which confirms that the paper's simulation example
is bearings-only tracking):

* T. Bailey (2005), ``demo_bearing_only.m`` (MATLAB, "the bearing-only
  target-tracking problem as described in" Gordon, Salmond & Smith 1993):
  F, G, Q = 0.001^2 I, R = 0.005^2, atan2(y, x), the residual wrapped
  (pi_to_pi), x_true = (-0.05, 0.001, 0.7, -0.055), "Gordon's prior" with mean
  (0, 0, 0.4, -0.05) and P = diag(0.5^2, 0.005^2, 0.3^2, 0.01^2), 24 steps,
  each measurement of the state just propagated (z_i of x_{i+1}, as
  ``simulate`` does). Every value here.
* An anonymous Python experiment script (``X0Real``, ``initX``, ``initP``):
  x_0, the prior mean and covariance, q = 0.001^2, R = 0.005^2, 24 samples.
* An anonymous R script (``simulate_bearings``): F, G, q = 0.001^2,
  r = 0.005^2 and x_0 (its comments call the variances standard deviations).
* A Julia particle-filter test ("Bearing-only tracking example from Gordon et
  al. 1993"): F, G, sqrt(q) = 0.001, sqrt(r) = 0.005, the prior and 24 steps,
  but x_0 = (-0.05, 0.01, 0.7, -0.055), an x-velocity of 0.01 where the other
  sources have 0.001, and the bearing as atan(y / x), which is pi off for
  x < 0. We keep 0.001 and atan2.
* ReBEL's ``gssm_bot.m`` (Oregon Health & Science University; it cites
  Gordon, Salmond & Ewing 1995): F, G and the wrapped atan2 bearing, but noise
  standard deviations of 0.01 for both w and v (its comment says
  "cov = 0.001^2" for w). We keep 0.001 and 0.005.

The code sources above are stored in the search tool's code index without
their repositories' names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..backend import array_module
from ..cuda.twin import launch, rows4_init
from .radar import wrap_angle

# Gordon, Salmond & Smith (1993); see the module docstring for the sources.
Q_SD = 0.001  # sqrt(q): standard deviation of each component of w_k (B1)
R_SD = 0.005  # sqrt(r): standard deviation of the bearing noise v_k (B2), rad
TRUE_X0 = (-0.05, 0.001, 0.7, -0.055)  # the truth's x_0 = (x, xdot, y, ydot)
PRIOR_MEAN = (0.0, 0.0, 0.4, -0.05)  # the filter's prior on x_0: mean ...
PRIOR_SD = (0.5, 0.005, 0.3, 0.01)  # ... and standard deviations (diagonal)
STEPS = 24  # time steps (Gelencsér-Horváth et al. 2013, "Evaluation and results")

STATE_DIM = 4
NOISE_DIM = 2


def wrap_bearing(a) -> np.ndarray:
    """``a`` mapped into (-pi, pi], the range of atan2 (the measurement of
    (B2)); radar.wrap_angle maps into [-pi, pi) and differs only at -pi."""
    return -wrap_angle(-np.asarray(a, dtype=np.float64))


@dataclass(frozen=True)
class BearingsOnlyModel:
    """Eqs. (B1)–(B2) with the paper's parameters as defaults.

    N particles are a float64 array of shape (N, 4), rows (x, xdot, y, ydot);
    a measurement is a bearing (float, radians).
    """

    q_sd: float = Q_SD
    r_sd: float = R_SD
    x0: tuple[float, ...] = TRUE_X0
    prior_mean: tuple[float, ...] = PRIOR_MEAN
    prior_sd: tuple[float, ...] = PRIOR_SD

    def transition_matrix(self) -> np.ndarray:
        """F of (B1): positions advance by one time step of velocity."""
        f = np.eye(STATE_DIM)
        f[0, 1] = f[2, 3] = 1.0
        return f

    def noise_gain(self) -> np.ndarray:
        """G of (B1): maps w_k = (w_x, w_y) into the state."""
        return np.array([[0.5, 0.0], [1.0, 0.0], [0.0, 0.5], [0.0, 1.0]])

    def mean_transition(self, x, k: int = 0) -> np.ndarray:
        """F x ((B1) without w_k). ``k`` is unused: the model is time-invariant;
        it is accepted so that every model has the same interface."""
        xp = array_module(x)  # NumPy or CuPy: the filters run the model on either
        return xp.asarray(x, dtype=np.float64) @ xp.asarray(self.transition_matrix().T)

    def transition(self, x, k: int, rng: np.random.Generator) -> np.ndarray:
        """Draw x_{k+1} = F x_k + G w_{k+1} (B1) for each row of ``x``; w is
        ``q_sd`` times ``rng.standard_normal((N, 2))``."""
        mean = self.mean_transition(x, k)
        w = self.q_sd * rng.standard_normal(mean.shape[:-1] + (NOISE_DIM,))
        return mean + w @ array_module(w).asarray(self.noise_gain().T)

    def observe(self, x) -> np.ndarray:
        """The bearing atan2(y, x) of each state ((B2) without v_k), shape (...,)."""
        xp = array_module(x)
        x = xp.asarray(x, dtype=np.float64)
        return xp.arctan2(x[..., 2], x[..., 0])

    def residual(self, y, x) -> np.ndarray:
        """y - atan2(y_k, x_k) wrapped into [-pi, pi)."""
        xp = array_module(x)
        return wrap_angle(xp.asarray(y, dtype=np.float64) - self.observe(x))

    def cuda_twin(self, graph: str, **options):
        """This model's device code for the GPU graph ``graph`` (the SIR graph's, the CPF's;
        ``cuda.twin``), or None for a graph it has none for."""
        twin = {"sir": BotTwin, "cpf": BotCpf}.get(graph)
        return None if twin is None else twin(self, **options)

    def log_likelihood(self, y, x) -> np.ndarray:
        """log p(z_k = y | x_k = x): the Gaussian density of v_k (B2) at the
        wrapped residual, constant included, one value per state."""
        r = self.residual(y, x)
        var = self.r_sd * self.r_sd
        return -0.5 * (r * r / var + math.log(2.0 * math.pi * var))

    def init_particles(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """N particles drawn from the prior N(prior_mean, diag(prior_sd^2)),
        shape (N, 4)."""
        z = rng.standard_normal((n, STATE_DIM))
        xp = array_module(z)
        return xp.asarray(self.prior_mean) + z * xp.asarray(self.prior_sd)

    def simulate(self, steps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A ground-truth trajectory: ``x`` of shape (steps + 1, 4) holding
        x_0 ... x_T (x_0 = ``x0``) and ``y`` of shape (steps,) holding the
        bearings z_1 ... z_T wrapped into (-pi, pi], so ``y[k - 1]`` is the
        measurement of ``x[k]``."""
        x = np.empty((steps + 1, STATE_DIM))
        y = np.empty(steps)
        x[0] = self.x0
        for k in range(steps):
            x[k + 1] = self.transition(x[k], k, rng)
            y[k] = wrap_bearing(self.observe(x[k + 1]) + self.r_sd * rng.standard_normal())
        return x, y


class BotTwin:
    """Bearings-only tracking (models/bearings.py) on the device: rows x,
    xdot, y, ydot of a (4, N) array; one particle a thread."""

    rows, measurement_size = 4, 1

    def __init__(self, model):
        self.model = model

    def log_likelihood_constant(self) -> float:
        """What the kernel's log g(z | x) leaves out of the model's: -1/2 log(2 pi r_sd^2)."""
        return -0.5 * math.log(2.0 * math.pi * self.model.r_sd**2)

    def init(self, x, key) -> None:
        rows4_init(x, key, self.model.prior_mean, self.model.prior_sd)

    def predict(self, x, log_w, k: int, z, key, top) -> None:
        m = self.model
        n = x.shape[-1]
        args = (x, log_w, np.uint32(n), key, np.uint64(k + 1), np.float32(m.q_sd), z)
        launch("models.cu", "bot_predict", n, (*args, np.float32(1.0 / m.r_sd**2), top))


class BotCpf:
    """Bearings-only tracking: rows x, vx, y, vy."""

    rows, prefix = 4, "cpf_bot"

    def __init__(self, model):
        self.model = model

    def drift(self, k: int) -> np.float32:
        return np.float32(0.0)  # time-invariant

    def init_args(self) -> tuple:
        m = self.model
        f = np.float32
        return (f(m.q_sd), *(f(v) for v in m.prior_mean), *(f(v) for v in m.prior_sd))

    def step_args(self) -> tuple:
        m = self.model
        return (np.float32(m.q_sd), np.float32(1.0 / m.r_sd**2))
