"""The SIR particle filter of thesis Algorithm 2.4 on the CPU (NumPy).

One time step k of Algorithm 2.4, in its four stages:

1. for each particle: prediction x_k^i ~ p(x_k | x_{k-1}^i) and weight update
   w~_k^i = p(z_k | x_k^i);
2. s = SUM(w~_k);
3. normalisation w_k^i = w~_k^i / s and the estimate x^_k = SUM(x_k^i w_k^i)
   ("in stage 3, we calculate the estimation results of the filter after
   normalization process", §2.6);
4. RESAMPLE(x_k, w~_k or w_k).

Stage 4 follows §6.9: "In stage 4, we use the weights of particles without
normalization for the Metropolis, Rejection and Uphill resampling methods, and
the normalized weights for the Systematic resampling method." Here every
comparison-based method of the registry (Metropolis, Rejection, Uphill and
their coalesced variants) gets w~, every cumulative one (Systematic,
Stratified, Multinomial, Residual) gets w. Stage 4 includes choosing B, as the
thesis counts the B kernels with the resampler (§6.5).
"""

from __future__ import annotations

import time

import numpy as np

from ..api import choose_B, resample
from ..backend import resolve_backend
from ..constants import EPSILON_FILTER
from ..logweights import check_log_weights
from ..resampling.registry import get_method
from .common import NO_B, STAGES, CloudDiagnostics, SirResult, derive_seeds


def weights_from_log(log_w: np.ndarray) -> np.ndarray:
    """Unnormalised float32 weights w~ = exp(log w - max log w), under the
    library's log-weight contract (``logweights``): -inf is a zero weight; a
    NaN or +inf log-likelihood, or all of them -inf, raises ``ValueError``
    naming the first bad particle.

    Subtracting the maximum first keeps the largest weight at exactly 1: the
    raw likelihoods of eq. 2.35 or 7.2 are often far below float32's
    smallest number (a particle 50 m off in range alone gives exp(-12.5)
    times a tiny density; one far off in bearing exp(-10^6)), and all of them
    underflowing to zero would make the weights unusable. The common factor
    exp(-max) cancels in the normalisation and no resampler depends on the
    scale of the weights. Float32 because the thesis is single precision
    throughout (§2.4) and the resamplers take float32 by default.
    """
    log_w = np.asarray(log_w, dtype=np.float64)
    top = check_log_weights(log_w)
    # NumPy's exp, not logweights.exp_nonpositive: no other backend has to
    # match these bits (the GPU filter computes its own float32 weights).
    return np.exp(log_w - top).astype(np.float32)


def _stage4_B(w: np.ndarray, method: str, B_rule, B, epsilon: float, ssd_table) -> int | None:
    """The B of this step: the fixed one when given, Murray's rule with the
    filter's epsilon for the Metropolis family, the SSD rule for Uphill."""
    if B_rule is None or B is not None:
        return B
    if B_rule == "metropolis":
        return choose_B(w, method, epsilon=epsilon)
    return choose_B(w, method, ssd_table=ssd_table)


def run_sir(
    model,
    y,
    n: int,
    method: str,
    seed: int,
    *,
    B=None,
    epsilon=EPSILON_FILTER,
    segment_bytes=None,
    ssd_table=None,
    backend="cpu",
    stage_times=True,
    normalised=None,
    diagnostics=False,
) -> SirResult:
    """Run Algorithm 2.4 with ``n`` particles over the measurements ``y``
    (``y[k - 1]`` = z_k, k = 1 ... T), resampling at every step with the
    registry method ``method``.

    ``B`` fixes the inner-loop length at every step; when None, B is chosen
    per step: ``epsilon`` (default 1/10, "We set epsilon to 1/10 in
    calculation of B", §5.4) for the Metropolis family, the SSD rule for the
    Uphill family (``ssd_table``: the SSD table of this N, computed when
    not given). ``segment_bytes`` is passed on to the coalesced variants.
    ``backend`` is "cpu" (NumPy, this module), "cuda" (``sir_gpu``, a GPU
    needed) or "auto" (the GPU when one is visible). An unknown method raises
    the registry's ``ValueError``. ``stage_times=False`` leaves out the GPU
    filter's timing marks between the stages (at small N each costs about as
    much as a kernel): ``stage_seconds`` is then NaN and ``total_seconds`` the
    device time of the whole run -- except for the growth model with
    Systematic, which then runs as one kernel (``filters/sir_fused.py``: the
    same numbers, faster at small N) that times its own phases. The CPU
    filter always times its stages. ``normalised`` overrides §6.9's choice of
    stage 4's weights for every method (True: w, False: w~; CPU only), an
    ablation of the thesis's filter.
    ``diagnostics`` (CPU only) also records each step's mean and covariance
    of the resampled particles, its number of distinct ancestors and the
    lineages alive after it (``SirResult.resampled_estimates``,
    ``resampled_cov``, ``distinct``, ``lineages``), outside the stage timers.
    """
    m = get_method(method)
    if B is not None and m.B_rule is None:
        raise TypeError(f"method {m.name!r} takes no B")
    if normalised is not None and backend != "cpu":
        raise NotImplementedError("normalised= is an option of the CPU filter; use backend='cpu'")
    if diagnostics and backend != "cpu":
        raise NotImplementedError("diagnostics= is an option of the CPU filter; use backend='cpu'")
    if backend != "cpu":
        from .sir_gpu import device_twin, run_sir_gpu

        on_gpu = m.gpu is not None and device_twin(model) is not None
        if resolve_backend(backend, on_gpu) == "cuda":
            return run_sir_gpu(
                model,
                y,
                n,
                m,
                seed,
                B=B,
                epsilon=epsilon,
                segment_bytes=segment_bytes,
                ssd_table=ssd_table,
                stage_times=stage_times,
            )
    y = np.asarray(y, dtype=np.float64)
    steps = y.shape[0]
    rng, draw_seeds = derive_seeds(seed, steps)
    x = model.init_particles(n, rng)
    estimates = np.empty((steps,) + x.shape[1:])
    stage_seconds = np.empty((steps, len(STAGES)))
    used_B = np.full(steps, NO_B, dtype=np.int64)
    resampled = np.empty_like(estimates) if diagnostics else None
    cloud = CloudDiagnostics(n, steps, x.shape[1:]) if diagnostics else None
    unnormalised = m.comparison_based if normalised is None else not normalised  # stage 4's w~
    wall_start = time.perf_counter()
    for k in range(steps):
        t0 = time.perf_counter()
        x = model.transition(x, k, rng)  # x_{k+1} from x_k: eq. 2.34 / 7.1
        try:
            w_tilde = weights_from_log(model.log_likelihood(y[k], x))
        except ValueError as error:
            raise ValueError(f"step {k + 1} of the filter: {error}") from error
        t1 = time.perf_counter()
        total = w_tilde.sum(dtype=np.float64)
        t2 = time.perf_counter()
        w = w_tilde / np.float32(total)
        estimates[k] = w @ x
        t3 = time.perf_counter()
        w_in = w_tilde if unnormalised else w
        b = _stage4_B(w_in, m.name, m.B_rule, B, epsilon, ssd_table)
        ancestors = resample(
            w_in, m.name, seed=int(draw_seeds[k]), B=b, segment_bytes=segment_bytes, backend="cpu"
        )
        x = x[ancestors]
        t4 = time.perf_counter()
        stage_seconds[k] = (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
        if b is not None:
            used_B[k] = b
        if diagnostics:
            resampled[k] = x.mean(axis=0)
            cloud.record(k, ancestors, x)
    wall = time.perf_counter() - wall_start
    extra = {}
    if diagnostics:
        extra = {"resampled_estimates": resampled, "distinct": cloud.distinct,
                 "lineages": cloud.lineages, "resampled_cov": cloud.cov}  # fmt: skip
    return SirResult(
        m.name, n, int(seed), estimates, stage_seconds, float(stage_seconds.sum()), wall, used_B,
        **extra,
    )  # fmt: skip


def rmse(estimates, truth) -> float:
    """Root mean squared error of one filter run over its time steps.

    ``estimates`` and ``truth`` have the same shape: (T,) for a scalar state,
    (T, d) for a vector one (pass the columns to compare, e.g. the positions
    of the radar state). The error at step k is e_k = |truth_k - estimate_k|
    (the Euclidean norm over the d columns), as §5.4 defines it ("the
    difference between the true state and estimated state" at each time
    step), and

        RMSE = sqrt( (1/T) * sum_{k=1..T} e_k^2 ).

    For the growth model pass ``truth = x[1:]`` (x_1 ... x_T; x_0 is not
    estimated). Averaging over trajectories and runs is left to the caller.
    """
    est = np.asarray(estimates, dtype=np.float64)
    tru = np.asarray(truth, dtype=np.float64)
    if est.shape != tru.shape or est.ndim not in (1, 2) or est.shape[0] == 0:
        raise ValueError(
            f"estimates {est.shape} and truth {tru.shape} must be equal (T,) or (T, d)"
        )
    err2 = (est - tru) ** 2
    if err2.ndim == 2:
        err2 = err2.sum(axis=1)
    return float(np.sqrt(err2.mean()))
