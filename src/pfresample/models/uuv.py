"""The unmanned underwater vehicle (UUV) velocity model of Das, Mazumdar &
Banerjee (2014), §3.2, eqs. 11-12, with DVL measurements.

The state is the global-frame velocity x = (Xdot, Ydot) in m/s; the inputs
are the body-frame accelerations f_x, f_y (m/s^2), the heading rate r
(rad/s) and the heading psi (rad). With the sampling time t = dt = 0.01 s,
as printed::

    Xdot_{t+1} = Xdot_t - r dt Ydot_t + f_x cos(psi) dt - f_y sin(psi) dt   (11)
    Ydot_{t+1} = Ydot_t - r dt Xdot_t + f_x sin(psi) dt - f_y cos(psi) dt   (12)

plus process noise, and a Doppler velocity log (DVL) measures both
velocities with Gaussian noise of mean 0.0123 m/s and variance 0.151
("typical mean of 0.0123 m/s and variance as 0.151"), 36,000 steps for the
paper's 360 s.

Eq. 12 is not a rotation: both coupling terms have a minus sign, so the
transition matrix [[1, -r dt], [-r dt, 1]] has eigenvalues 1 +- r dt and
(Xdot - Ydot) grows by exp(psi(t) - psi(0)) over a run, and the f_y term
has the sign opposite to the body-to-global rotation. ``signs="printed"``
(default) keeps eqs. 11-12 as printed; ``signs="rotation"`` uses the
rotation [[1, -r dt], [r dt, 1]] and + f_y cos(psi) (the kinematics of
Fossen 2002, the paper's ref. [20]).

**What the paper leaves open, chosen here** (docs/d3_2014.md; the values
live in config/studies/d3_2014.yaml): the inputs, the process noise, the
initial state and its spread Q. The manoeuvre is a zig-zag (Fossen's
standard manoeuvring test): the heading rate switches between +r0 and -r0
every half period, so the heading is a triangle wave between psi0 and
psi0 + r0 * period / 2 and stays bounded, and with it the printed model's
growth; the surge and sway accelerations are slow sinusoids. The process
noise is N(0, process_sd^2) per component and step; the truth starts at x0;
the particles start from N(x0, init_sd^2 I) (the paper's X_0 ~ N(0, Q)
about "a pre-designated mean").

**The filter's process noise is its own parameter** (``filter_process_sd``;
None: the truth's ``process_sd``). The truth moves with ``process_sd``; the
filter's particles (:meth:`UuvModel.transition`, the GPU's ``uuv_predict``)
with ``filter_process_sd``. The paper's filter propagates its particles
through eqs. 11-12, which print no noise term (§2 step 1, §4.1 step 1), and
its prior weights work "even in the absence of any knowledge about the
associated process noise" (§3): ``filter_process_sd=0`` is that regime, in
which copies made by resampling stay identical until a resampler moves them.

The model is linear and Gaussian given the inputs (the DVL bias is known),
so the Kalman filter (:func:`kalman_filter`) gives the exact posterior mean:
the RMSE no particle filter can beat on average.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

# Das et al. 2014, §3.2.
DT = 0.01  # s, "a simulated sampling time of 0.01 s"
DURATION = 360.0  # s, "over duration of 360 s"
DVL_MEAN = 0.0123  # m/s, mean of the DVL noise
DVL_VAR = 0.151  # (m/s)^2, its variance
SIGNS = ("printed", "rotation")


@dataclass(frozen=True)
class UuvModel:
    """Eqs. 11-12 with the paper's dt, duration and DVL noise, and the
    manoeuvre, noise and initial values this project chose (module
    docstring). A state is a float64 array of shape (2,); N particles are
    (N, 2); a measurement is (2,)."""

    dt: float = DT
    duration: float = DURATION
    obs_mean: float = DVL_MEAN
    obs_var: float = DVL_VAR
    process_sd: float = 0.005  # m/s per step, the truth's process noise
    x0: tuple = (1.5, 0.0)  # m/s: surge along X, no sway
    init_sd: float = 0.5  # m/s: spread of the initial particles
    turn_rate: float = 0.05  # rad/s: r0 of the zig-zag
    zigzag_period: float = 40.0  # s: one full left-right cycle
    heading0: float = 0.0  # rad
    surge_accel: float = 0.05  # m/s^2: amplitude of f_x
    surge_period: float = 120.0  # s
    sway_accel: float = 0.02  # m/s^2: amplitude of f_y
    sway_period: float = 60.0  # s
    signs: str = "printed"
    filter_process_sd: float | None = None  # m/s per step, the filter's; None: process_sd

    def __post_init__(self):
        if self.signs not in SIGNS:
            raise ValueError(f"signs must be one of {SIGNS}, got {self.signs!r}")
        for name in ("process_sd", "filter_process_sd"):
            value = getattr(self, name)
            if value is not None and not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if not (self.dt > 0 and self.duration >= self.dt):
            raise ValueError(f"need dt > 0 and duration >= dt, got {self.dt}, {self.duration}")

    @property
    def particle_sd(self) -> float:
        """The process noise the filter's particles move with (m/s per step)."""
        return self.process_sd if self.filter_process_sd is None else float(self.filter_process_sd)

    @property
    def steps(self) -> int:
        """T, the number of filter steps (36,000 for 360 s at 0.01 s)."""
        return int(round(self.duration / self.dt))

    @cached_property
    def inputs(self) -> np.ndarray:
        """(T, 4) inputs of step k = 0 ... T - 1 (x_{k+1} from x_k): f_x,
        f_y, r and psi at time k dt."""
        t = np.arange(self.steps) * self.dt
        half = max(1, int(round(self.zigzag_period / (2 * self.dt))))  # steps per half cycle
        r = self.turn_rate * np.where((np.arange(self.steps) // half) % 2 == 0, 1.0, -1.0)
        psi = self.heading0 + np.concatenate([[0.0], np.cumsum(r[:-1]) * self.dt])
        fx = self.surge_accel * np.sin(2 * np.pi * t / self.surge_period)
        fy = self.sway_accel * np.sin(2 * np.pi * t / self.sway_period)
        return np.stack([fx, fy, r, psi], axis=1)

    @cached_property
    def _transitions(self) -> tuple[np.ndarray, np.ndarray]:
        """(F, b) of every step: (T, 2, 2) and (T, 2)."""
        fx, fy, r, psi = self.inputs.T
        a = r * self.dt
        c, s = np.cos(psi) * self.dt, np.sin(psi) * self.dt
        sign = -1.0 if self.signs == "printed" else 1.0  # eq. 12's r dt Xdot and f_y cos terms
        f = np.empty((self.steps, 2, 2))
        f[:, 0, 0] = f[:, 1, 1] = 1.0
        f[:, 0, 1] = -a
        f[:, 1, 0] = sign * a
        b = np.stack([fx * c - fy * s, fx * s + sign * fy * c], axis=1)
        return f, b

    def matrices(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(F_k, b_k) with mean x_{k+1} = F_k x_k + b_k (eqs. 11-12)."""
        f, b = self._transitions
        return f[k], b[k]

    def mean_transition(self, x, k: int) -> np.ndarray:
        """The noise-free eqs. 11-12: the mean of x_{k+1} given x_k = x ((2,) or (N, 2))."""
        f, b = self.matrices(k)
        return np.asarray(x, dtype=np.float64) @ f.T + b

    def transition(self, x, k: int, rng: np.random.Generator) -> np.ndarray:
        """Draw the filter's x_{k+1} given x_k = x, one draw per particle, with
        the filter's process noise (:attr:`particle_sd`); with none, the
        noise-free eqs. 11-12 and no draw."""
        mean = self.mean_transition(x, k)
        sd = self.particle_sd
        if sd == 0.0:
            return mean
        return mean + sd * rng.standard_normal(mean.shape)

    def observe(self, x) -> np.ndarray:
        """The noise-free DVL reading of x (the bias is noise: see log_likelihood)."""
        return np.asarray(x, dtype=np.float64)

    def cuda_twin(self, graph: str, **options):
        """This model's device code for the GPU graph ``graph`` (Das et al.'s
        filter's, "d3"; ``cuda.twin``), or None for a graph it has none for."""
        return UuvTwin(self, **options) if graph == "d3" else None

    def log_likelihood(self, y, x) -> np.ndarray:
        """log p(y | x) up to a constant: y = x + v, v ~ N(obs_mean, obs_var I)."""
        return self.log_likelihood_components(y, x).sum(axis=-1)

    def log_likelihood_components(self, y, x) -> np.ndarray:
        """log p(y_d | x_d) of each component d up to a constant ((N, 2)): the
        DVL's noise is independent between components, so the likelihood is
        their product (the per-component D3 of Fig 9 resamples each with its own)."""
        resid = np.asarray(y, dtype=np.float64) - self.obs_mean - np.asarray(x)
        return -0.5 * (resid * resid) / self.obs_var

    def init_particles(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """N particles from N(x0, init_sd^2 I): (N, 2) float64."""
        return np.asarray(self.x0) + self.init_sd * rng.standard_normal((n, 2))

    def simulate(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(truth, y): the true velocities x_0 ... x_T ((T + 1, 2)) and the
        DVL readings y_k of x_k, k = 1 ... T ((T, 2)), from ``seed``."""
        rng = np.random.default_rng(seed)
        steps = self.steps
        truth = np.empty((steps + 1, 2))
        truth[0] = self.x0
        noise = self.process_sd * rng.standard_normal((steps, 2))
        for k in range(steps):
            f, b = self.matrices(k)
            truth[k + 1] = f @ truth[k] + b + noise[k]
        y = truth[1:] + self.obs_mean + np.sqrt(self.obs_var) * rng.standard_normal((steps, 2))
        return truth, y


def kalman_filter(model: UuvModel, y) -> np.ndarray:
    """The exact posterior means x^_1 ... x^_T ((T, 2)) of the linear
    Gaussian model, from the prior N(x0, init_sd^2 I), with the truth's
    process noise (``process_sd``, whatever the filter's): the RMSE floor of
    any filter of the same measurements."""
    y = np.asarray(y, dtype=np.float64)
    mean = np.asarray(model.x0, dtype=np.float64)
    cov = model.init_sd**2 * np.eye(2)
    q = model.process_sd**2 * np.eye(2)
    r = model.obs_var * np.eye(2)
    out = np.empty((y.shape[0], 2))
    for k in range(y.shape[0]):
        f, b = model.matrices(k)
        mean = f @ mean + b
        cov = f @ cov @ f.T + q
        gain = cov @ np.linalg.inv(cov + r)
        mean = mean + gain @ (y[k] - model.obs_mean - mean)
        cov = (np.eye(2) - gain) @ cov
        out[k] = mean
    return out


class UuvTwin:
    """The UUV model on the device (``models.cu``'s uuv_* kernels, which
    ``filters.d3_gpu`` launches): rows Xdot, Ydot of a (2, N) array, and the
    model's numbers as the kernels take them."""

    rows, measurement_size = 2, 2

    def __init__(self, model):
        self.model = model

    def log_likelihood_constant(self) -> float:
        """What the kernels' log g leaves out of the model's: nothing (both drop the Gaussian's)."""
        return 0.0

    def table(self) -> np.ndarray:
        """Each step's (F_01, F_10, b_0, b_1) as float32, flat: what uuv_predict reads."""
        f, b = self.model._transitions
        table = np.stack([f[:, 0, 1], f[:, 1, 0], b[:, 0], b[:, 1]], axis=1)
        return table.astype(np.float32).ravel()

    def predict_args(self) -> tuple:
        """obs_mean, the particles' process sd and 1 / obs_var (float32)."""
        m, f = self.model, np.float32
        return (f(m.obs_mean), f(m.particle_sd), f(1.0 / m.obs_var))

    def init_args(self) -> tuple:
        """x0 and init_sd (float32): uuv_init's N(x0, init_sd^2 I)."""
        m, f = self.model, np.float32
        return (f(m.x0[0]), f(m.x0[1]), f(m.init_sd))
