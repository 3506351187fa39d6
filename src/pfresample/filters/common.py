"""What the CPU and the GPU filters share: the stages of Algorithm 2.4,
the result record, the seeds of one run, the choice of backend and
SMC-EM's stopping rule."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import check_int

# The four stages of Algorithm 2.4, in the order of SirResult.stage_seconds's columns.
STAGES = (
    "prediction and weight update",
    "sum of weights",
    "normalisation and estimate",
    "resampling",
)
NO_B = -1  # SirResult.B for methods without a B parameter
GPU_STATE_DTYPE = np.float32  # the GPU filters' states: thesis §2.4, single precision
SCHEMES = ("multinomial", "butterfly")  # SMC-EM's resampling schemes (filters/smcem.py)
MAX_RADIX = 256  # Güldaş §4.3.2: "we set the maximum radix sequence to 256"


@dataclass(frozen=True)
class FilterResult:
    """One run of ``filters.engine.run_filter`` over T steps.

    ``estimates[k - 1]``: SUM_i W_k^i x_k^i, the posterior mean before step
    k's resampling ((T,) for a scalar state, (T, d) for a vector one);
    ``ess`` and ``resampled``: each step's ESS before resampling and whether
    it resampled; ``stages``: the stages of an adaptive resampler that ran
    (``gate="stages"``; else 1 where it resampled, 0 where not);
    ``log_likelihood``: the estimate of log p(z_1:T), the sum of
    ``log_likelihood_steps`` (log Z_k); ``stage_seconds`` (T, 4): the wall
    time of the four stages of the module docstring (``STAGES``; NaN where a
    GPU filter times the run whole), ``total_seconds`` their sum (on the
    GPU: the device time of the run), ``wall_seconds`` the host's clock
    around the loop; ``B``: each step's B (``NO_B`` for a method without);
    ``backend`` and ``device``: where it ran.

    Asked for: ``resampled_estimates`` (the estimate after each step's
    resampling: the mean of the particles, or their carried-weight mean),
    ``distinct``, ``lineages`` and ``resampled_cov`` (``diagnostics``: the
    distinct ancestors of each resampling, the initial particles still
    represented, the covariance of the resampled particles), ``snapshot``
    (the particles after step ``snapshot_step``), ``particles`` and
    ``log_weights`` (``keep_particles``: the last step's, before its
    resampling when it did not resample). GPU runs also give
    ``device_seconds`` and ``chunk_seconds`` (the D3 filter's replays)."""

    method: str
    n: int
    seed: int
    estimates: np.ndarray
    ess: np.ndarray
    resampled: np.ndarray
    log_likelihood: float
    log_likelihood_steps: np.ndarray
    stage_seconds: np.ndarray
    wall_seconds: float
    backend: str
    device: str
    total_seconds: float = math.nan
    B: np.ndarray | None = None
    stages: np.ndarray | None = None
    resampled_estimates: np.ndarray | None = None
    distinct: np.ndarray | None = None
    lineages: np.ndarray | None = None
    resampled_cov: np.ndarray | None = None
    snapshot: np.ndarray | None = None
    particles: np.ndarray | None = None
    log_weights: np.ndarray | None = None
    device_seconds: float | None = None
    chunk_seconds: tuple = ()

    @property
    def stage_totals(self) -> np.ndarray:
        """Seconds per stage, summed over the time steps (shape (4,))."""
        return self.stage_seconds.sum(axis=0)

    @property
    def stage_shares(self) -> np.ndarray:
        """Each stage's percentage of the total time (as Dülger's Tables 5.1, 6.2)."""
        return 100.0 * self.stage_totals / self.total_seconds


@dataclass(frozen=True)
class SirResult:
    """The outcome of :func:`run_sir` over T time steps.

    ``estimates[k - 1]`` is x^_k (shape (T,) for a scalar state, (T, d) else).
    ``stage_seconds[k - 1, s]`` is the time of stage s + 1 at step k
    (``time.perf_counter``); ``total_seconds`` is their sum, and
    ``wall_seconds`` the separately measured time of the whole loop (it also
    holds the loop's bookkeeping, so it is slightly larger). ``B[k - 1]`` is
    the B used at step k (``NO_B`` for methods without one). ``backend`` is
    where the filter ran, "cpu" or "cuda". With ``diagnostics`` (the CPU
    filter), ``resampled_estimates[k - 1]`` is the mean of the resampled
    particles (the cellular filter's estimate), ``resampled_cov[k - 1]`` their
    covariance (d x d; 1 x 1 for a scalar state), ``distinct[k - 1]`` the
    number of distinct ancestors of step k's resampling and ``lineages[k - 1]``
    the number of distinct initial particles the particles descend from after
    it; None otherwise.
    """

    method: str
    n: int
    seed: int
    estimates: np.ndarray
    stage_seconds: np.ndarray
    total_seconds: float
    wall_seconds: float
    B: np.ndarray
    backend: str = "cpu"
    resampled_estimates: np.ndarray | None = None
    distinct: np.ndarray | None = None
    lineages: np.ndarray | None = None
    resampled_cov: np.ndarray | None = None
    log_likelihood_steps: np.ndarray | None = None  # the GPU graph's log Z_k

    @property
    def stage_totals(self) -> np.ndarray:
        """Seconds per stage, summed over the time steps (shape (4,))."""
        return self.stage_seconds.sum(axis=0)

    @property
    def stage_shares(self) -> np.ndarray:
        """Each stage's percentage of the total time (as Tables 5.1, 6.2)."""
        return 100.0 * self.stage_totals / self.total_seconds


def derive_seeds(seed: int, steps: int) -> tuple[np.random.Generator, np.ndarray]:
    """The model-noise generator and the T resampling seeds of one run.

    Both come from ``SeedSequence(seed)``, through two spawned children, so
    the noise stream and the resampling seeds are independent of each other,
    and the same ``seed`` gives the same run. The noise stream does not
    depend on the method: runs of different methods with one seed share
    their initial particles and first prediction (common random numbers).
    """
    noise, draws = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(noise), draws.generate_state(steps, np.uint64)


def graph_inputs(y, seed: int, steps: int) -> np.ndarray:
    """A GPU filter run's inputs as one uint32 buffer (the device reads it,
    so a captured graph replays any run): the noise key (2 words), the
    resampling key of each of the ``steps`` steps (2 words each), both from
    ``derive_seeds(seed, steps)`` -- the noise key from the noise stream, as
    the CPU filter's noise -- and the measurements ``y`` as float32."""
    rng, draw_seeds = derive_seeds(seed, steps)
    key = rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)
    # A little-endian uint64 seed is its Philox key (rng.seed_keys: low word
    # k0, high word k1) as two uint32 words, so the view is the keys, without
    # the copies that dominate this function on a slow host.
    keys = draw_seeds.astype("<u8", copy=False).view("<u4").astype(np.uint32, copy=False)
    z = np.ascontiguousarray(y, dtype=np.float32).reshape(-1).view(np.uint32)
    return np.concatenate([key, keys, z])


@dataclass(frozen=True)
class FilterRun:
    """One run over T steps: ``estimates[t - 1]`` = pi^_t(phi) for phi(x) = x,
    ``ess[t - 1]`` the effective sample size (eq. 1.11) of the weights before
    resampling, ``level[t - 1]`` the interaction level (log2 of the largest
    block that interacted; 0 when nothing was resampled), ``stages[t - 1]``
    the butterfly stages run (K_t; the bootstrap filter: every stage of its
    method, 1 for a non-butterfly method), and ``seconds`` the wall time of
    the loop (on the GPU: the device time of the run's CUDA graph)."""

    method: str
    n: int
    seed: int
    estimates: np.ndarray
    ess: np.ndarray
    level: np.ndarray
    stages: np.ndarray
    seconds: float


@dataclass(frozen=True)
class EmRun:
    """``iterations`` EM iterations on one sequence: ``alpha[i]``,
    ``sigma[i]`` after iteration i (index 0: the initial guess), and the wall
    seconds of each iteration."""

    scheme: str
    n: int
    alpha: np.ndarray
    sigma: np.ndarray
    seconds: np.ndarray


def m_step(stats, length: int) -> tuple[float, float]:
    """Eq. 4.10 for (alpha, sigma) from the E-step's (S_1, S_2, S_3, S_4) of
    a sequence y_0 ... y_n with n = ``length``."""
    s1, s2, s3, _ = (float(v) for v in stats)
    alpha = s3 / s1
    sigma2 = (alpha * alpha * s1 - 2.0 * alpha * s3 + s2) / (length + 1)
    return alpha, math.sqrt(sigma2)


def resampling_period(n: int) -> int:
    """The multinomial scheme's d = ceil(log_256 N)."""
    return max(1, math.ceil(math.log(n) / math.log(MAX_RADIX) - 1e-12))


def iteration_seed(seed: int, i: int) -> int:
    """The seed of EM iteration i's filter, from ``(seed, i)``."""
    return int(np.random.SeedSequence([seed, i]).generate_state(1, np.uint64)[0])


@dataclass(frozen=True)
class CpfRun:
    """One run over T steps: ``estimates[k - 1]`` = x^_k, the mean of the
    resampled particles (shape (T,) for a scalar state, (T, d) else);
    ``step_seconds`` the mean time of a step (on the GPU: the device time of
    the run's graph over T, which is the step kernels' time plus the initial
    kernel), ``wall_seconds`` the host's clock around the whole run (on the
    GPU: the inputs' upload, the graph, the estimates' download).
    ``weighted_estimates``: the weighted mean of the predicted particles
    before resampling (the SIR filter's estimate), when asked for;
    ``distinct[k - 1]``: the number of distinct ancestors of step k's
    resampling, ``lineages[k - 1]`` the number of distinct initial particles
    the particles descend from after it, ``resampled_cov[k - 1]`` the
    covariance of the resampled particles (d x d) (CPU, when asked for);
    ``precision`` and ``neighbourhood``: the kernel that ran
    (``filters.cellular.run_cpf``)."""

    n: int
    radius: int
    seed: int
    estimates: np.ndarray
    step_seconds: float
    wall_seconds: float
    backend: str = "cpu"
    weighted_estimates: np.ndarray | None = None
    distinct: np.ndarray | None = None
    lineages: np.ndarray | None = None
    resampled_cov: np.ndarray | None = None
    precision: str = "float64"
    neighbourhood: str = "scan"


# The D3 filter's stages (filters/d3.py), in the order of D3Run.stage_seconds's columns.
D3_STAGES = ("prediction and weights", "normalisation and estimate", "resampling")


@dataclass(frozen=True)
class D3Run:
    """One filter run over T steps. ``estimates[k - 1]`` is x^_k ((T, D));
    ``resampled`` the number of steps that resampled; ``snapshot`` the
    particles right after the resampling of step ``snapshot_step`` (None
    when not asked for: the paper's Figs 5-6 at t = 200 s); ``stage_seconds``
    the seconds of each stage summed over the steps (``D3_STAGES``; NaN on
    the GPU, which times the run whole: ``device_seconds``, CUDA events
    around the steps, and ``chunk_seconds``, each replayed chunk of steps);
    ``wall_seconds`` the host's time of the whole loop."""

    method: str
    n: int
    seed: int
    estimates: np.ndarray
    resampled: int
    snapshot: np.ndarray | None
    stage_seconds: np.ndarray
    wall_seconds: float
    backend: str = "cpu"
    device_seconds: float | None = None  # the GPU's time of the steps (CUDA events)
    # the GPU's time of each replay of the run's graph of CHUNK steps (CUDA events between
    # them), in order: steps 3 ... 2 + CHUNK, then the next CHUNK, ...; empty on the CPU
    chunk_seconds: tuple = ()


class CloudDiagnostics:
    """What ``diversity`` / ``diagnostics`` record after each resampling of a
    CPU filter: the distinct ancestors, the distinct initial particles the
    particles descend from (their lineages, carried through every
    resampling) and the covariance of the resampled particles."""

    def __init__(self, n: int, steps: int, shape: tuple):
        d = int(np.prod(shape)) if shape else 1
        self.n = n
        self.origin = np.arange(n)
        self.distinct = np.empty(steps, dtype=np.int64)
        self.lineages = np.empty(steps, dtype=np.int64)
        self.cov = np.empty((steps, d, d))

    def record(self, k: int, ancestors: np.ndarray, resampled: np.ndarray) -> None:
        self.distinct[k] = np.count_nonzero(np.bincount(ancestors, minlength=self.n))
        self.origin = self.origin[ancestors]
        self.lineages[k] = np.count_nonzero(np.bincount(self.origin, minlength=self.n))
        states = resampled.reshape(self.n, -1)
        centred = states - states.mean(axis=0)  # np.cov's arithmetic without its checks
        self.cov[k] = centred.T @ centred / max(self.n - 1, 1)


# The precisions of the resampling's weights and sums ("float64": the library's;
# "float32": the paper's, "at a single precision"), and the ways a particle finds
# its neighbour: "search" (the GPU's binary search in its tile's prefix sums;
# float64 only), "scan" (the contract's running sums compared with u W) and
# "divide" (Fig 6, III.5: running sums of L^j / W_i compared with u).
PRECISIONS = ("float64", "float32")
NEIGHBOURHOODS = ("search", "scan", "divide")


def check_kernel(precision: str, neighbourhood: str) -> None:
    """ValueError naming the option unless (precision, neighbourhood) is a kernel of the CPF."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if neighbourhood not in NEIGHBOURHOODS:
        raise ValueError(f"neighbourhood must be one of {NEIGHBOURHOODS}, got {neighbourhood!r}")
    if precision == "float32" and neighbourhood == "search":
        raise ValueError(
            "neighbourhood='search' is float64 only (the difference of two float32 prefix sums "
            "keeps too few bits of W); use 'scan' or 'divide' with precision='float32'"
        )


def stop_iteration(alpha, sigma, window: int, tolerance: float) -> int | None:
    """The stopping rule: the first i >= 2 ``window`` with |mean(theta[i-w+1 ..
    i]) - mean(theta[i-2w+1 .. i-w])| < ``tolerance`` for theta = alpha and
    sigma (index 0 is the start), or None if no i of the trace satisfies it."""
    window = check_int(window, "window", minimum=1)
    if not tolerance > 0:
        raise ValueError(f"tolerance must be > 0, got {tolerance}")
    traces = [np.asarray(t, dtype=np.float64) for t in (alpha, sigma)]
    if traces[0].shape != traces[1].shape or traces[0].ndim != 1:
        raise ValueError("alpha and sigma must be traces of one length")
    if traces[0].size < 2 * window + 1:
        return None
    change = np.zeros(traces[0].size - 2 * window)
    for t in traces:
        c = np.concatenate([[0.0], np.cumsum(t)])
        means = (c[window:] - c[:-window]) / window  # means[j]: t[j .. j + w - 1]
        change = np.maximum(change, np.abs(means[window + 1 :] - means[1:-window]))
    hit = np.flatnonzero(change < tolerance)
    return int(hit[0]) + 2 * window if hit.size else None
