"""Sequential Monte Carlo EM for the stochastic-volatility model (Güldaş
2015, §4.3; after Cappé, Godsill and Moulines 2007, the thesis's ref. [56]).

The model (``models.volatility``) is in the exponential family with the
sufficient statistics of §4.3.1,

    S_1 = sum_{k=0}^{n-1} x_k^2,        S_2 = sum_{k=0}^{n} x_k^2,
    S_3 = sum_{k=0}^{n-1} x_k x_{k+1},  S_4 = sum_{k=0}^{n} y_k^2 exp(-x_k),

all additive in the path, so each particle carries its four running sums and
they are resampled with it (§4.3: the simple path-space estimate, whose
paths collapse, kept as the thesis keeps it). The E-step is the weighted
mean of the sums at time n; the M-step is eq. 4.10:

    alpha = S_3 / S_1,   beta^2 = S_4 / (n + 1),
    sigma^2 = (alpha^2 S_1 - 2 alpha S_3 + S_2) / (n + 1),

with beta fixed at beta* as in §4.3.2.

Resampling follows §4.3.2's "hard communication constraints" (largest radix
256):

* ``"multinomial"``: standard multinomial resampling at every
  ceil(log_256 N)-th step (steps d, 2d, ...), the weights carried between;
* ``"butterfly"``: one butterfly-multinomial stage of radix r_1 (the first
  radix of ``default_radix(N, max_radix=256)``) at every step, i.e. blocks of
  r_1 contiguous particles, then a permutation. The thesis does not say
  which; we use the transpose of the (N / r_1) x r_1 particle matrix (the
  transposes of its Appendix A): afterwards each contiguous block holds
  particles from r_1 different former blocks, so the next step's stage is
  the next stage of a butterfly, and over ceil(log_{r_1} N) steps every
  particle can reach every other, as one full butterfly would let it.

§4.3.1 runs both of its filters: ``filter="bootstrap"`` resamples on that
schedule whatever the weights; ``filter="adaptive"`` (Fig 1.3) resamples on
the same schedule only where the effective sample size (eq. 1.11) is below
``tau * N`` (the multinomial scheme: all N particles; the butterfly scheme:
its one stage, the adaptive butterfly's gate), and carries the weights
otherwise. The permutation follows every step of the butterfly scheme,
resampled or not (it moves weights with their particles).

Convergence: EM's iterates approach a stationary point of the likelihood
geometrically and, for these short sequences, slowly (hundreds of
iterations where the likelihood is flat: ``filters.volatility_grid``'s
exact EM shows it). :func:`stop_iteration` is the stopping rule: the first
iteration i >= 2 w at which the means of (alpha, sigma) over the last two
windows of w iterations differ by less than ``tolerance`` in both; with
``tolerance`` set, :func:`run_smcem` stops there.
"""

from __future__ import annotations

import time

import numpy as np

from ..backend import resolve_backend
from ..models.volatility import BETA, VolatilityModel
from ..radix import default_radix
from ..validation import check_int
from .common import (
    MAX_RADIX,
    SCHEMES,
    EmRun,
    iteration_seed,
    m_step,
    resampling_period,
    stop_iteration,
)
from .engine import run_filter
from .sir import weights_from_log

ALPHA_0 = 0.8  # the EM's initial guess (the thesis gives none)
SIGMA_0 = 0.3
FILTERS = ("bootstrap", "adaptive")  # §4.3.1's two particle filters
TAU = 0.6  # the adaptive filter's ESS threshold (§4.2.3's tau)
STOP_WINDOW = 20  # the stopping rule's window w, in iterations


def transpose_permutation(n: int, r: int) -> np.ndarray:
    """The permutation that transposes the (N / r) x r particle matrix: new
    position p holds the particle at (p mod (N / r)) r + p div (N / r)."""
    rows = n // r
    p = np.arange(n)
    return (p % rows) * r + p // rows


class _PathStatistics:
    """The volatility model with each particle's four running sums (§4.3.1)
    beside its state, as one (N, 5) state for ``run_filter``: column 0 is
    x_k, columns 1-4 S_1 ... S_4. Filter step 0 weighs y_0 against the
    initial particles (no transition: ``transition`` at k = 0 keeps them);
    step k >= 1 draws x_k from x_{k-1} and adds the sums' terms."""

    def __init__(self, model: VolatilityModel, y: np.ndarray):
        self.model, self.y = model, y

    def init_particles(self, n: int, rng) -> np.ndarray:
        x = self.model.init_particles(n, rng)
        state = np.zeros((n, 5))
        state[:, 0] = x
        state[:, 2] = x * x
        state[:, 4] = self.y[0] ** 2 * np.exp(-x)
        return state

    def transition(self, state: np.ndarray, k: int, rng) -> np.ndarray:
        if k == 0:
            return state
        x = state[:, 0]
        new = self.model.transition(x, k - 1, rng)
        out = np.empty_like(state)
        out[:, 0] = new
        stats = state[:, 1:].copy()
        stats[:, 0] += x * x
        stats[:, 1] += new * new
        stats[:, 2] += x * new
        stats[:, 3] += self.y[k] ** 2 * np.exp(-new)
        out[:, 1:] = stats
        return out

    def log_likelihood(self, y_k, state: np.ndarray) -> np.ndarray:
        return self.model.log_likelihood(y_k, state[:, 0])


def expected_statistics(
    model: VolatilityModel, y, n: int, scheme: str, seed: int, *, filter: str = "bootstrap",
    tau: float = TAU,
) -> np.ndarray:  # fmt: skip
    """One particle filter over y_0 ... y_n with ``n`` particles under
    ``model`` (the current parameters): the weighted mean of the four
    statistics at time n (the E-step). ``filter``: "bootstrap" or
    "adaptive" (module docstring), the latter with threshold ``tau``.

    The filter is ``run_filter`` on the path-statistics state
    (:class:`_PathStatistics`), steps 0 ... n, resampling at the end of step
    k - 1 what the thesis's step k resamples before its prediction (so step
    k's resampling seed is the k-th: ``seed_offset=1``), never after step n."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if filter not in FILTERS:
        raise ValueError(f"filter must be one of {FILTERS}, got {filter!r}")
    n = check_int(n, "n", minimum=2)
    y = np.asarray(y, dtype=np.float64)
    length = y.size - 1
    steps = np.arange(length + 1)
    threshold = tau if filter == "adaptive" else None
    options = {"arithmetic": "float32", "stage4_weights": "unnormalised", "seed_offset": 1,
               "keep_particles": True, "backend": "cpu"}  # fmt: skip
    if scheme == "butterfly":
        r1 = default_radix(n, MAX_RADIX)[0]
        radix = (r1, n // r1) if n > r1 else (n,)  # N <= 256: one block, one stage
        run = run_filter(
            _PathStatistics(model, y), y, n, "butterfly-multinomial", seed=seed,
            ess_threshold=threshold, gate="stages", radix=radix, max_stages=1,
            permutation=transpose_permutation(n, r1), resample_at=steps < length, **options,
        )  # fmt: skip
    else:
        period = resampling_period(n)
        schedule = ((steps + 1) % period == 0) & (steps < length)
        run = run_filter(_PathStatistics(model, y), y, n, "multinomial", seed=seed,
                         ess_threshold=threshold, resample_at=schedule, **options)  # fmt: skip
    w = weights_from_log(run.log_weights).astype(np.float64)
    return w @ np.ascontiguousarray(run.particles[:, 1:]) / w.sum()


def run_smcem(
    y, n: int, scheme: str, seed: int, *, iterations: int = 100,
    alpha0: float = ALPHA_0, sigma0: float = SIGMA_0, beta: float = BETA, backend: str = "cpu",
    filter: str = "bootstrap", tau: float = TAU, tolerance: float | None = None,
    window: int = STOP_WINDOW,
) -> EmRun:  # fmt: skip
    """SMC-EM (§4.3): up to ``iterations`` times, a particle filter
    (``filter``: "bootstrap" or "adaptive") under the current (alpha, sigma)
    and beta fixed, then eq. 4.10. Iteration i's filter uses seed ``(seed,
    i)``. With ``tolerance``, the run stops at :func:`stop_iteration`'s
    iteration (the arrays then end there). ``backend="cuda"``: the filters
    on the GPU (``filters.guldas_gpu``; another draw of the same algorithm;
    the bootstrap filter only)."""
    if filter not in FILTERS:
        raise ValueError(f"filter must be one of {FILTERS}, got {filter!r}")
    if resolve_backend(backend, filter == "bootstrap") == "cuda":
        if filter != "bootstrap":
            raise NotImplementedError("SMC-EM's adaptive filter has no GPU code; use backend='cpu'")
        from .guldas_gpu import smcem_e_step

        e_step = smcem_e_step(y, n, scheme, beta)
    else:
        e_step = cpu_e_step(y, n, scheme, beta, filter=filter, tau=tau)
    return em_loop(e_step, np.asarray(y).size - 1, n, scheme, seed, iterations=iterations,
                   alpha0=alpha0, sigma0=sigma0, tolerance=tolerance, window=window)  # fmt: skip


def cpu_e_step(y, n: int, scheme: str, beta: float, *, filter: str = "bootstrap",
               tau: float = TAU):  # fmt: skip
    """SMC-EM's E-step on the CPU as :func:`em_loop` takes it:
    ``e_step(alpha, sigma, seed)`` -> the four statistics of
    :func:`expected_statistics` under (alpha, sigma) and ``beta``."""

    def e_step(alpha: float, sigma: float, seed) -> np.ndarray:
        model = VolatilityModel(alpha=alpha, beta=beta, sigma=sigma)
        return expected_statistics(model, y, n, scheme, seed, filter=filter, tau=tau)

    return e_step


def em_loop(
    e_step, length: int, n: int, scheme: str, seed: int, *, iterations: int, alpha0: float,
    sigma0: float, tolerance: float | None, window: int,
) -> EmRun:  # fmt: skip
    """SMC-EM's iterations, whatever runs the E-step: ``e_step(alpha, sigma,
    seed)`` -> the four statistics (:func:`cpu_e_step`, or the GPU graph's,
    ``guldas_gpu.smcem_e_step``), iteration i's seed ``iteration_seed(seed,
    i)``, then the M-step (eq. 4.10) over ``length`` (n, the last time index).
    ``seconds``: each iteration's wall time (E-step, copy back, M-step);
    ``tolerance``: stop at :func:`stop_iteration`'s iteration."""
    alpha, sigma = np.empty(iterations + 1), np.empty(iterations + 1)
    seconds = np.empty(iterations)
    alpha[0], sigma[0] = alpha0, sigma0
    for i in range(iterations):
        start = time.perf_counter()
        stats = e_step(alpha[i], sigma[i], iteration_seed(seed, i))
        alpha[i + 1], sigma[i + 1] = m_step(stats, length)
        seconds[i] = time.perf_counter() - start
        if tolerance is not None and i + 1 >= 2 * window:
            if stop_iteration(alpha[: i + 2], sigma[: i + 2], window, tolerance) is not None:
                return EmRun(scheme, n, alpha[: i + 2], sigma[: i + 2], seconds[: i + 1])
    return EmRun(scheme, n, alpha, sigma, seconds)
