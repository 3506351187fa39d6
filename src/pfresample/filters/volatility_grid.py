"""The stochastic-volatility model of Güldaş (2015) §4.3.1 solved on a grid:
its exact log-likelihood, its exact E-step, exact EM and the maximum-likelihood
point, the references that SMC-EM (``filters.smcem``) is measured against.

The state is scalar, so the filter and the smoother are integrals over one
variable at a time. They are computed on the midpoint grid x_j = -R + (j +
1/2) h of [-R, R] (point-mass filter / forward-backward on a grid):

* prior p_0(x_j) proportional to N(x_j; 0, sigma^2), transition matrix
  K_ij proportional to N(x_j; alpha x_i, sigma^2) (each row normalised, so
  no mass leaves the grid), likelihood g_k(x_j) = N(y_k; 0, beta^2 e^{x_j});
* forward: a_0 = p_0 g_0 / c_0, a_k = (a_{k-1} K) g_k / c_k, and the
  log-likelihood l(theta) = sum_k log c_k;
* backward: b_n = 1, b_k = K (g_{k+1} b_{k+1}) / c_{k+1}; the smoothed
  marginal of x_k is a_k b_k, the pair (x_k, x_{k+1}) has
  a_k(i) K_ij g_{k+1}(j) b_{k+1}(j) / c_{k+1};
* the E-step: the smoothed means of S_1 ... S_4 (``filters.smcem``), the
  M-step eq. 4.10 (``common.m_step``).

The grid step is h = sigma / GRID_STEPS_PER_SIGMA (two points per standard
deviation) and R = GRID_HALF_WIDTH. The midpoint rule of a smooth integrand
converges geometrically in sigma / h: the log-likelihood and statistics agree
with h = sigma / 8 on [-12, 12] to 1e-8 (``tests/library/test_guldas_filters.py``;
measured 1e-13 on the study's sequences), and two of the study's ML points
and exact EM traces with h = sigma / 3 to 1e-14. R = 8 holds the states:
under the data, |x| stays below about 4 (y ~ beta e^{x/2} z with beta =
0.63), and the prior's N(0, sigma^2) below 8 for sigma < 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..models.volatility import BETA
from .common import m_step

GRID_STEPS_PER_SIGMA = 2  # h = sigma / 2
GRID_HALF_WIDTH = 8.0  # R: the grid covers [-R, R]
BAND_SIGMAS = 8.0  # K_ij is kept within 8 sigma of alpha x_i
SIGMA_FLOOR = 0.01  # below it the grid would need more than 4,800 points: an error
# The ML search stops at this sigma, leaving exact EM started there room to move below it.
ML_SIGMA_FLOOR = 0.02
SIGMA_CEILING = 2.0
LOG_2PI = math.log(2.0 * math.pi)


def grid(sigma: float, steps_per_sigma: int = GRID_STEPS_PER_SIGMA,
         half_width: float = GRID_HALF_WIDTH) -> np.ndarray:  # fmt: skip
    """The midpoints of [-R, R] with step sigma / steps_per_sigma (at least 200)."""
    if not SIGMA_FLOOR <= sigma <= SIGMA_CEILING:
        raise ValueError(f"sigma = {sigma} outside [{SIGMA_FLOOR}, {SIGMA_CEILING}] for the grid")
    m = max(200, math.ceil(2 * half_width / (sigma / steps_per_sigma)))
    h = 2 * half_width / m
    return -half_width + h * (np.arange(m) + 0.5)


@dataclass(frozen=True)
class GridSmoother:
    """Forward-backward output: the log-likelihood and the four expected statistics."""

    log_likelihood: float
    statistics: np.ndarray  # (S_1, S_2, S_3, S_4), their smoothed means


class _Band:
    """The transition matrix K as a band: row i holds K_ij for the WIDTH
    columns j = start_i ... start_i + WIDTH - 1 around alpha x_i (the kernel
    beyond BAND_SIGMAS standard deviations, below e^-32, is dropped)."""

    def __init__(self, x, alpha: float, sigma: float):
        h = x[1] - x[0]
        width = min(x.size, math.ceil(2 * BAND_SIGMAS * sigma / h) + 2)
        centre = alpha * x
        start = np.floor((centre - BAND_SIGMAS * sigma - x[0]) / h).astype(np.int64)
        start = np.clip(start, 0, x.size - width)
        self.columns = start[:, None] + np.arange(width)
        z2 = ((x[self.columns] - centre[:, None]) / sigma) ** 2
        # Less each row's smallest z^2, which the normalisation cancels: a row whose alpha x_i
        # lies beyond the grid (|alpha| > 1) then gives its mass to the edge instead of 0/0.
        band = np.exp(-0.5 * (z2 - z2.min(axis=1, keepdims=True)))
        self.band = band / band.sum(axis=1, keepdims=True)
        self.size = x.size

    def left(self, a):
        """a K (a row vector times K)."""
        return np.bincount(self.columns.ravel(), weights=(a[:, None] * self.band).ravel(),
                           minlength=self.size)  # fmt: skip

    def right(self, v):
        """K v (K times a column vector)."""
        return (self.band * v[self.columns]).sum(axis=1)


def _pieces(y, alpha, sigma, beta, x):
    y = np.asarray(y, dtype=np.float64)
    prior = np.exp(-0.5 * (x / sigma) ** 2)
    prior /= prior.sum()
    variance = beta * beta * np.exp(x)
    g = np.exp(-0.5 * (LOG_2PI + np.log(variance)[None, :] + y[:, None] ** 2 / variance[None, :]))
    return y, _Band(x, alpha, sigma), prior, g


def _forward(y, kernel, prior, g):
    n = y.size
    a = np.empty((n, prior.size))
    c = np.empty(n)
    v = prior * g[0]
    for k in range(n):
        if k:
            v = kernel.left(a[k - 1]) * g[k]
        c[k] = v.sum()
        if not c[k] > 0:
            raise FloatingPointError(f"the grid filter lost all mass at step {k}")
        a[k] = v / c[k]
    return a, c


def log_likelihood(y, alpha: float, sigma: float, beta: float = BETA, **grid_args) -> float:
    """l(alpha, sigma) = log p(y_0 ... y_n) by the grid filter (module docstring)."""
    x = grid(sigma, **grid_args)
    y, kernel, prior, g = _pieces(y, alpha, sigma, beta, x)
    # The grid's cell h cancels in c_k's ratios except for the density's own: the
    # discrete prior and kernel are probabilities, g a density in y, so sum log c_k is
    # the log-density of y.
    _, c = _forward(y, kernel, prior, g)
    return float(np.log(c).sum())


def smoother(y, alpha: float, sigma: float, beta: float = BETA, **grid_args) -> GridSmoother:
    """The log-likelihood and the exact E-step under (alpha, sigma, beta)."""
    x = grid(sigma, **grid_args)
    y, kernel, prior, g = _pieces(y, alpha, sigma, beta, x)
    a, c = _forward(y, kernel, prior, g)
    n = y.size
    b = np.ones(prior.size)
    x2, ex = x * x, np.exp(-x)
    s2 = s3 = s4 = 0.0
    s1 = 0.0
    for k in range(n - 1, -1, -1):
        gamma = a[k] * b  # the smoothed marginal of x_k
        m2 = float(gamma @ x2)
        s2 += m2
        if k < n - 1:
            s1 += m2
        s4 += y[k] ** 2 * float(gamma @ ex)
        if k:
            right = g[k] * b / c[k]  # g_k b_k / c_k: what the pair (x_{k-1}, x_k) needs
            s3 += float((a[k - 1] * x) @ kernel.right(right * x))
            b = kernel.right(right)
    return GridSmoother(float(np.log(c).sum()), np.array([s1, s2, s3, s4]))


def exact_em(y, alpha0: float, sigma0: float, iterations: int, beta: float = BETA,
             settled: float | None = None, **grid_args):  # fmt: skip
    """EM with the exact E-step: ``(alpha, sigma, loglik)``, each of length
    iterations + 1 (index i: after iteration i; loglik at (alpha_i, sigma_i)).
    ``settled``: stop once an iteration moves alpha and sigma by less than
    this (the arrays then end there)."""
    length = np.asarray(y).size - 1
    alpha, sigma = np.empty(iterations + 1), np.empty(iterations + 1)
    loglik = np.empty(iterations + 1)
    alpha[0], sigma[0] = alpha0, sigma0
    for i in range(iterations + 1):
        s = smoother(y, alpha[i], sigma[i], beta, **grid_args)
        loglik[i] = s.log_likelihood
        if i < iterations:
            alpha[i + 1], sigma[i + 1] = m_step(s.statistics, length)
            moved = max(abs(alpha[i + 1] - alpha[i]), abs(sigma[i + 1] - sigma[i]))
            if settled is not None and sigma[i + 1] < SIGMA_FLOOR:  # EM heads for sigma -> 0
                return alpha[: i + 1], sigma[: i + 1], loglik[: i + 1]
            if settled is not None and moved < settled:
                s = smoother(y, alpha[i + 1], sigma[i + 1], beta, **grid_args)
                loglik[i + 1] = s.log_likelihood
                return alpha[: i + 2], sigma[: i + 2], loglik[: i + 2]
    return alpha, sigma, loglik


def _nelder_mead(f, start, step, tolerance: float, max_evaluations: int):
    """Minimise f over R^2 from ``start`` (Nelder and Mead 1965, the standard
    coefficients 1, 2, 1/2, 1/2); stops when the simplex's values span less
    than ``tolerance``."""
    simplex = [np.asarray(start, float)]
    for d in range(len(start)):
        p = np.array(start, float)
        p[d] += step[d]
        simplex.append(p)
    values = [f(p) for p in simplex]
    evaluations = len(values)
    while evaluations < max_evaluations:
        order = np.argsort(values)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        if values[-1] - values[0] < tolerance:
            break
        centre = np.mean(simplex[:-1], axis=0)
        reflected = centre + (centre - simplex[-1])
        fr = f(reflected)
        evaluations += 1
        if fr < values[0]:
            expanded = centre + 2 * (centre - simplex[-1])
            fe = f(expanded)
            evaluations += 1
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centre + 0.5 * (simplex[-1] - centre)
            fc = f(contracted)
            evaluations += 1
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                for i in range(1, len(simplex)):
                    simplex[i] = simplex[0] + 0.5 * (simplex[i] - simplex[0])
                    values[i] = f(simplex[i])
                    evaluations += 1
    best = int(np.argmin(values))
    return simplex[best], values[best]


@dataclass(frozen=True)
class MlPoint:
    """A sequence's maximum-likelihood (alpha, sigma) with beta fixed, and l there."""

    alpha: float
    sigma: float
    log_likelihood: float

    @property
    def on_edge(self) -> bool:
        """Whether sigma is at the search's floor (l had no interior maximum)."""
        return self.sigma < ML_SIGMA_FLOOR * (1 + 1e-6)


ALPHA_RANGE = 1.5  # |alpha| searched: beyond 1 is a valid (non-stationary) model here
# The ML search's starts besides the caller's: l can have two maxima (one near alpha
# = 1 with a small sigma, one at low persistence with a large sigma).
ML_EXTRA_STARTS = ((0.5, 0.5), (0.0, 0.7), (0.99, 0.05))


def ml_point(y, starts, beta: float = BETA, tolerance: float = 1e-8, **grid_args) -> MlPoint:
    """The maximum of l(alpha, sigma) (beta fixed): Nelder-Mead on (alpha,
    log sigma) from each of ``starts`` ((alpha, sigma) pairs) and
    ML_EXTRA_STARTS, the best end kept. alpha is not bounded by 1: X_0 ~
    N(0, sigma^2) makes every alpha a model, and EM's alpha = S_3 / S_1 can
    exceed 1. Where l rises to the edge sigma -> 0 (alpha a little above 1: a
    path that hardly moves), the point returned lies on the search's edge
    sigma = ML_SIGMA_FLOOR; ``MlPoint.on_edge`` says so."""

    def minus_l(p):
        alpha, sigma = p[0], math.exp(p[1])
        if not (ML_SIGMA_FLOOR <= sigma <= SIGMA_CEILING and abs(alpha) <= ALPHA_RANGE):
            return math.inf
        return -log_likelihood(y, alpha, sigma, beta, **grid_args)

    best = None
    for alpha0, sigma0 in (*starts, *ML_EXTRA_STARTS):
        p, v = _nelder_mead(minus_l, (alpha0, math.log(sigma0)), (0.05, 0.3), tolerance, 400)
        if best is None or v < best[1]:
            best = (p, v)
    return MlPoint(float(best[0][0]), math.exp(best[0][1]), -best[1])
