"""What the CPU and the GPU filters share: the stages of Algorithm 2.4,
the result record, the seeds of one run, the choice of backend and
SMC-EM's stopping rule."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import check_int
from . import seed_words

# The four stages of Algorithm 2.4, in the order of FilterResult.stage_seconds's columns.
STAGES = (
    "prediction and weight update",
    "sum of weights",
    "normalisation and estimate",
    "resampling",
)
NO_B = -1  # FilterResult.B for methods without a B parameter
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


def gpu_result(method: str, n: int, seed: int, estimates, *, wall_seconds: float,
               total_seconds: float, stage_seconds=None, log_likelihood_steps=None,
               **extra) -> FilterResult:  # fmt: skip
    """A GPU filter's run (``filters.gpu``) as a :class:`FilterResult`:
    ``total_seconds`` the device's time of the run, ``wall_seconds`` the
    host's clock; the stage times NaN where the run is timed whole, the ESS
    NaN where the graph keeps none, every step resampled unless ``extra``
    says otherwise, and the log-likelihood NaN where the graph keeps no
    ``log_likelihood_steps``."""
    from ..backend import cuda_device

    steps = len(estimates)
    nan = np.full(steps, np.nan)
    if stage_seconds is None:
        stage_seconds = np.full((steps, len(STAGES)), np.nan)
    log_z = nan if log_likelihood_steps is None else np.asarray(log_likelihood_steps, np.float64)
    extra.setdefault("resampled", np.ones(steps, dtype=bool))
    extra.setdefault("B", np.full(steps, NO_B, dtype=np.int64))
    return FilterResult(
        method=method, n=n, seed=int(seed), estimates=estimates, ess=extra.pop("ess", nan),
        log_likelihood=float(log_z.sum()), log_likelihood_steps=log_z,
        stage_seconds=stage_seconds, wall_seconds=wall_seconds, backend="cuda",
        device=cuda_device() or "CUDA device", total_seconds=total_seconds, **extra,
    )  # fmt: skip


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


def run_words(seed, steps, tail: np.ndarray) -> np.ndarray:
    """The uint32 words of a GPU run's inputs: the noise key (2 words), the
    ``steps`` resampling keys (2 words each), both of ``derive_seeds(seed,
    steps)``, then ``tail`` (the run's measurements as uint32 words). A
    little-endian uint64 seed is its Philox key (rng.seed_keys: low word k0,
    high word k1), so the resampling keys are the seeds' uint32 words.

    For an integer ``seed`` >= 0 (any size; NumPy integers too, which
    SeedSequence reads as ``int(seed)``) and an integer ``steps`` >= 0,
    ``seed_words`` computes the words, to the same bits, without NumPy's
    SeedSequence and Generator objects, which cost tens of microseconds a
    run; anything else goes through ``derive_seeds``, which gives the same
    words or the same error."""
    if (
        isinstance(seed, (int, np.integer))
        and seed >= 0
        and isinstance(steps, (int, np.integer))
        and steps >= 0
    ):
        noise, draws = seed_words.spawned_pools(int(seed))
        n = 2 * int(steps)
        out = np.empty(2 + n + len(tail), np.uint32)
        out[:2] = seed_words.noise_key(noise)
        out[2 : 2 + n] = seed_words.generate_state(draws, n)
        out[2 + n :] = tail
        return out
    rng, draw_seeds = derive_seeds(seed, steps)
    key = rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)
    keys = draw_seeds.astype("<u8", copy=False).view("<u4").astype(np.uint32, copy=False)
    return np.concatenate([key, keys, tail])


def graph_inputs(y, seed: int, steps: int) -> np.ndarray:
    """A GPU filter run's inputs as one uint32 buffer (the device reads it,
    so a captured graph replays any run): the noise key (2 words), the
    resampling key of each of the ``steps`` steps (2 words each), both from
    ``derive_seeds(seed, steps)`` -- the noise key from the noise stream, as
    the CPU filter's noise -- and the measurements ``y`` as float32
    (``run_words``)."""
    z = np.ascontiguousarray(y, dtype=np.float32).reshape(-1).view(np.uint32)
    return run_words(seed, steps, z)


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


# The D3 filter's stages (filters/d3.py), in the order of the d3_2014 study's stage_seconds columns.
D3_STAGES = ("prediction and weights", "normalisation and estimate", "resampling")


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
