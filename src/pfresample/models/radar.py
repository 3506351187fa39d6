"""Radar tracking of thesis chapter 7: a 2-D nearly-constant-velocity target
(eq. 7.1) seen through range and bearing (eq. 7.2).

The state is x = [p_x, p_y, v_x, v_y] (m, m/s). Eq. 7.1::

    x_k = F x_{k-1} + G q_k,   F = [[1, 0, T, 0],    G = [[T^2/2, 0    ],
                                    [0, 1, 0, T],         [0,     T^2/2],
                                    [0, 0, 1, 0],         [T,     0    ],
                                    [0, 0, 0, 1]],        [0,     T    ]]

with q_k ~ N(0, Q). Eq. 7.2::

    y_k = [sqrt(p_x^2 + p_y^2), arctan(p_y / p_x)] + v_k,   v_k ~ N(0, R).

Tables 7.1 (scenario 1) and 7.4 (scenario 2) give the same parameters:
T = 1 s, x_0 = [1000, 1000, 0, 0], P_0 = diag[100^2, 100^2, 10^2, 10^2],
Q = diag[10, 10], R = diag[10^2, (0.1 pi / 180)^2]. Eq. 7.2 measures from the
origin, so the sensor sits at (0, 0). The bearing is computed with arctan2,
which equals arctan(p_y / p_x) for p_x > 0 (the tables' x_0 lies there) and
stays right in the other quadrants. The manoeuvring truth trajectories
(Figs 7.1–7.2) are not defined here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..backend import array_module
from ..cuda import geometry
from ..cuda.twin import launch, rows4_init

# Tables 7.1 and 7.4 (identical for both scenarios).
SAMPLING_TIME = 1.0  # T, seconds
X0 = (1000.0, 1000.0, 0.0, 0.0)  # initial state vector [p_x, p_y, v_x, v_y]
P0_DIAG = (100.0**2, 100.0**2, 10.0**2, 10.0**2)  # covariance of x_0
Q_DIAG = (10.0, 10.0)  # covariance of q_k (acceleration noise)
R_DIAG = (10.0**2, (0.1 * math.pi / 180.0) ** 2)  # covariance of v_k: range m^2, bearing rad^2
SENSOR = (0.0, 0.0)  # eq. 7.2 measures from the origin

STATE_DIM = 4
MEASUREMENT_DIM = 2


def wrap_angle(a) -> np.ndarray:
    """``a`` mapped into [-pi, pi): a bearing residual of +pi - d and one of
    -pi + d are both small angles of size d, not 2 pi apart."""
    xp = array_module(a)
    return xp.mod(xp.asarray(a, dtype=np.float64) + math.pi, 2.0 * math.pi) - math.pi


@dataclass(frozen=True)
class RadarModel:
    """Eqs. 7.1–7.2 with the parameters of Tables 7.1 / 7.4 as defaults.

    N particles are a float64 array of shape (N, 4); a measurement is
    (range, bearing) of shape (2,).
    """

    dt: float = SAMPLING_TIME
    x0: tuple[float, ...] = X0
    p0_diag: tuple[float, ...] = P0_DIAG
    q_diag: tuple[float, float] = Q_DIAG
    r_diag: tuple[float, float] = R_DIAG
    sensor: tuple[float, float] = SENSOR

    def transition_matrix(self) -> np.ndarray:
        """F of eq. 7.1."""
        f = np.eye(STATE_DIM)
        f[0, 2] = f[1, 3] = self.dt
        return f

    def noise_gain(self) -> np.ndarray:
        """G of eq. 7.1 (maps the acceleration noise q_k into the state)."""
        half = self.dt * self.dt / 2.0
        return np.array([[half, 0.0], [0.0, half], [self.dt, 0.0], [0.0, self.dt]])

    def mean_transition(self, x, k: int = 0) -> np.ndarray:
        """F x (eq. 7.1 without q_k). ``k`` is unused: the model is time-invariant;
        it is accepted so that every model has the same interface."""
        return np.asarray(x, dtype=np.float64) @ self.transition_matrix().T

    def transition(self, x, k: int, rng: np.random.Generator) -> np.ndarray:
        """Draw x_{k+1} = F x_k + G q_k (eq. 7.1) for each row of ``x``."""
        mean = self.mean_transition(x, k)
        q = rng.standard_normal(mean.shape[:-1] + (2,)) * np.sqrt(self.q_diag)
        return mean + q @ self.noise_gain().T

    def observe(self, x) -> np.ndarray:
        """(range, bearing) of each state (eq. 7.2 without v_k), shape (..., 2)."""
        x = np.asarray(x, dtype=np.float64)
        dx = x[..., 0] - self.sensor[0]
        dy = x[..., 1] - self.sensor[1]
        return np.stack([np.hypot(dx, dy), np.arctan2(dy, dx)], axis=-1)

    def residual(self, y, x) -> np.ndarray:
        """y - h(x) with the bearing difference wrapped into [-pi, pi)."""
        r = np.asarray(y, dtype=np.float64) - self.observe(x)
        r[..., 1] = wrap_angle(r[..., 1])
        return r

    def cuda_twin(self, graph: str, **options):
        """This model's device code for the GPU graph ``graph`` (the SIR graph's;
        ``cuda.twin``), or None for a graph it has none for."""
        twin = {"sir": RadarTwin}.get(graph)
        return None if twin is None else twin(self, **options)

    def log_likelihood(self, y, x) -> np.ndarray:
        """log p(y_k = y | x_k = x): the Gaussian density of v_k (eq. 7.2, R
        diagonal) at the wrapped residual, one value per state."""
        r = self.residual(y, x)
        var = np.asarray(self.r_diag)
        return -0.5 * (r * r / var + np.log(2.0 * math.pi * var)).sum(axis=-1)

    def init_particles(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """N particles drawn from N(x_0, P_0) (Tables 7.1 / 7.4), shape (N, 4)."""
        z = rng.standard_normal((n, STATE_DIM))
        return np.asarray(self.x0) + z * np.sqrt(self.p0_diag)

    def simulate_measurements(self, truth_states, rng: np.random.Generator) -> np.ndarray:
        """Noisy measurements (eq. 7.2) of a given truth trajectory of shape
        (T, 4): shape (T, 2), row k the (range, bearing) of row k plus v_k.
        The bearing is wrapped into [-pi, pi)."""
        truth = np.asarray(truth_states, dtype=np.float64)
        if truth.ndim != 2 or truth.shape[1] != STATE_DIM:
            raise ValueError(f"truth_states must have shape (T, 4), got {truth.shape}")
        y = self.observe(truth) + rng.standard_normal(truth.shape[:1] + (2,)) * np.sqrt(self.r_diag)
        y[:, 1] = wrap_angle(y[:, 1])
        return y


class RadarTwin:
    """The radar model (eqs. 7.1-7.2) on the device: rows p_x, p_y, v_x, v_y
    of a (4, N) array, so that each row is read and written coalesced."""

    rows, measurement_size = 4, 2
    per_block = 2  # models.cuh, RADAR_PER_BLOCK

    def __init__(self, model):
        self.model = model

    def log_likelihood_constant(self) -> float:
        """What the kernel's log g(z | x) leaves out of the model's: -1/2 SUM log(2 pi R_jj)."""
        return -0.5 * sum(math.log(2.0 * math.pi * v) for v in self.model.r_diag)

    def init(self, x, key) -> None:
        rows4_init(x, key, self.model.x0, [v**0.5 for v in self.model.p0_diag])

    def predict(self, x, log_w, k: int, z, key, top) -> None:
        m = self.model
        n = x.shape[-1]
        f = np.float32
        args = (x, log_w, np.uint32(n), key, np.uint64(k + 1), f(m.dt))
        args += (f(m.q_diag[0] ** 0.5), f(m.q_diag[1] ** 0.5), f(m.sensor[0]), f(m.sensor[1]))
        args += (z, f(1.0 / m.r_diag[0]), f(1.0 / m.r_diag[1]), top)
        launch("models.cu", "radar_predict", geometry.blocks(n, self.per_block), args)
