"""What the errors of Gelencsér-Horváth et al. (2013) are measured against:
the two models of "Evaluation and results", their simulated trajectories
(the hidden truth and its observations), and the error measures of Figs 9-10.

* ``growth``: the "first model", the benchmark model of refs [8, 23, 32, 33],
  x_{t+1} = x_t/2 + 25 x_t/(1 + x_t^2) + 8 cos(1.2 t) + n_t, y_t = x_t^2/20 + u_t,
  n_t ~ N(0, 10), u_t ~ N(0, 1) (``pfresample.models.GrowthModel``, the same
  equations as Dülger's eqs. 2.34-2.35), T = 100 steps. The filters start it
  as the paper does (setup "paper": the particles that meet z_1 are N(0, 10)
  draws, weighted before any prediction: ``GrowthModel(particles_from_noise=True)``)
  or as the library did before (setup "thesis": x_0 ~ N(0, 2), predicted
  first); the trajectories are the same for both;
* ``bot``: the bearings-only tracking model of ref. [23] (Gordon, Salmond and
  Smith 1993; ``pfresample.models.BearingsOnlyModel``), T = 24 steps.

A trajectory set is ``{"truth", "y"}``: ``truth`` (count, T + 1) or
(count, T + 1, 4) holding x_0 ... x_T, ``y`` (count, T), ``y[j, t - 1]``
the observation of ``truth[j, t]``. Trajectory j of a model draws from
``SeedSequence(seed, spawn_key=(crc32("cpf2013-trajectory-<model>"), j))``,
so it does not depend on the set's size: the quick set (a few trajectories)
is the first rows of the paper-scale one (1,000 or 100).

The error measures, per trajectory; estimates x^_1 ... x^_T against the
truth x_1 ... x_T (x_0 is not estimated):

* growth (Fig 9, "the mean square error of the estimation"):
  MSE = (1/T) sum_t (x_t - x^_t)^2;
* bot (Fig 10, "(the root mean of) the position error"): with the
  Euclidean position error e_t = |(x_t, y_t) - (x^_t, y^_t)|,
  RMSE = sqrt((1/T) sum_t e_t^2); and the mean position error
  (1/T) sum_t e_t, the "mean of the position error" of Fig 8's caption.

The figures average these over the trajectories.
"""

from __future__ import annotations

import math
import zlib
from statistics import NormalDist

import numpy as np

from pfresample.models import BearingsOnlyModel, GrowthModel

from ..pipeline import artifacts

# The models by the names of the config, the paths and the tables.
MODELS = {"growth": GrowthModel, "bot": BearingsOnlyModel}
# The error measure of each model's figure (Fig 9, Fig 10), as tables name it.
ERROR_MEASURES = {"growth": "mse", "bot": "position_rmse"}
ERROR_LABELS = {
    "growth": "MSE, (1/T) Σ_t (x_t − x̂_t)²",
    "bot": "position RMSE, √((1/T) Σ_t |pos_t − poŝ_t|²)",
}
# The position columns of the bearings-only state (x, xdot, y, ydot).
POSITION_COLUMNS = (0, 2)


# The growth model's starts (catalog.SETUPS): the GrowthModel fields of each.
GROWTH_SETUPS = {"paper": {"particles_from_noise": True}, "thesis": {}}


def model(name: str, setup: str = "paper"):
    """The model called ``name`` ("growth" or "bot") with the paper's
    parameters; the growth model started as ``setup`` says (``GROWTH_SETUPS``;
    the bearings-only model has one start, its prior)."""
    if name not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}, got {name!r}")
    if setup not in GROWTH_SETUPS:
        raise ValueError(f"setup must be one of {sorted(GROWTH_SETUPS)}, got {setup!r}")
    return MODELS[name](**GROWTH_SETUPS[setup]) if name == "growth" else MODELS[name]()


def trajectory_rng(seed: int, name: str, j: int) -> np.random.Generator:
    """The generator of trajectory j of model ``name`` (module docstring)."""
    tag = zlib.crc32(f"cpf2013-trajectory-{name}".encode())
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(tag, int(j))))


def simulate(name: str, count: int, steps: int, seed: int) -> dict:
    """``count`` trajectories of ``steps`` steps of model ``name``:
    ``{"truth": (count, steps + 1[, 4]), "y": (count, steps)}``."""
    if count < 1 or steps < 1:
        raise ValueError(f"need count >= 1 and steps >= 1, got count={count}, steps={steps}")
    m = model(name)
    runs = [m.simulate(steps, trajectory_rng(seed, name, j)) for j in range(count)]
    return {"truth": np.stack([x for x, _ in runs]), "y": np.stack([y for _, y in runs])}


def check_set(name: str, arrays, where: str) -> None:
    """Raise ValueError (naming ``where``) unless ``arrays`` is a trajectory
    set of model ``name``: finite ``truth`` and ``y`` of matching shapes."""
    truth, y = np.asarray(arrays.get("truth")), np.asarray(arrays.get("y"))
    state = () if name == "growth" else (4,)
    ok = (
        y.ndim == 2
        and truth.shape == (y.shape[0], y.shape[1] + 1, *state)
        and y.size > 0
        and np.isfinite(truth).all()
        and np.isfinite(y).all()
    )
    if not ok:
        raise ValueError(
            f"{where}: not a {name} trajectory set: expected truth (count, T + 1"
            f"{', 4' if state else ''}) and y (count, T), finite; got truth {truth.shape}, "
            f"y {y.shape}"
        )


def load_set(name: str, path) -> dict:
    """Read the cached trajectory set of model ``name`` at ``path``; a file
    that is not one raises :class:`pfresample_studies.pipeline.artifacts.CorruptArtifact`
    naming it, so that the pipeline deletes and regenerates it."""
    arrays, _ = artifacts.load_npz(path)
    try:
        check_set(name, arrays, str(path))
    except ValueError as exc:
        raise artifacts.CorruptArtifact(f"{exc}; delete it to regenerate") from exc
    return arrays


def _aligned(estimates, truth, name: str) -> tuple[np.ndarray, np.ndarray]:
    est = np.asarray(estimates, dtype=np.float64)
    tru = np.asarray(truth, dtype=np.float64)
    if est.shape != tru.shape or est.shape[0] == 0:
        raise ValueError(
            f"{name}: estimates {est.shape} and truth {tru.shape} must be equal and non-empty "
            "(pass the truth x_1 ... x_T, without x_0)"
        )
    return est, tru


def trajectory_mse(estimates, truth) -> float:
    """Fig 9's error of one trajectory: (1/T) sum_t (x_t - x^_t)^2 (scalar states)."""
    est, tru = _aligned(estimates, truth, "trajectory_mse")
    if est.ndim != 1:
        raise ValueError(f"trajectory_mse takes scalar states (T,), got {est.shape}")
    return float(np.mean((tru - est) ** 2))


def position_errors(estimates, truth) -> np.ndarray:
    """e_t = |(x_t, y_t) - (x^_t, y^_t)| of a bearings-only run, shape (T,)
    (states (T, 4) ordered x, xdot, y, ydot)."""
    est, tru = _aligned(estimates, truth, "position_errors")
    if est.ndim != 2 or est.shape[1] != 4:
        raise ValueError(f"position_errors takes states (T, 4), got {est.shape}")
    cols = list(POSITION_COLUMNS)
    return np.sqrt(((tru[:, cols] - est[:, cols]) ** 2).sum(axis=1))


def position_rmse(estimates, truth) -> float:
    """Fig 10's error of one trajectory: sqrt((1/T) sum_t e_t^2)."""
    e = position_errors(estimates, truth)
    return float(np.sqrt(np.mean(e * e)))


def mean_position_error(estimates, truth) -> float:
    """(1/T) sum_t e_t, Fig 8's "mean of the position error"."""
    return float(np.mean(position_errors(estimates, truth)))


# The estimators a run's errors are measured for: the filter's own, and by name.
ESTIMATORS = ("weighted", "resampled")  # sum w x / sum w before resampling; mean after


def estimator_errors(name: str, estimates: dict, truth) -> dict[str, float]:
    """:func:`run_errors` of each estimator of one run: ``estimates`` maps
    "own" (the filter's estimate), "weighted" and "resampled" (``ESTIMATORS``;
    None where the run has not got it) to estimates. The filter's own errors
    keep the plain names; each estimator's take the suffix ``_weighted`` or
    ``_resampled`` (NaN where it is None)."""
    own = run_errors(name, estimates["own"], truth)
    out = dict(own)
    for estimator in ESTIMATORS:
        values = estimates.get(estimator)
        errors = dict.fromkeys(own, math.nan) if values is None else run_errors(name, values, truth)
        out |= {f"{measure}_{estimator}": value for measure, value in errors.items()}
    return out


# What the CPU cells measure of the particle cloud after each resampling (NaN where not
# measured): the distinct ancestors and the lineages (distinct initial particles alive)
# as fractions of N, the cloud's spread and how often it covers the truth.
CLOUD_MEASURES = ("distinct_fraction", "lineage_fraction", "spread", "coverage")
COVERAGE_LEVEL = 0.95


def coverage_bound(dim: int) -> float:
    """The COVERAGE_LEVEL quantile of chi-square with ``dim`` (1 or 2) degrees of freedom:
    z^2 for one (z the normal's two-sided quantile), -2 ln(1 - level) for two."""
    if dim == 1:
        return NormalDist().inv_cdf(0.5 + COVERAGE_LEVEL / 2.0) ** 2
    if dim == 2:
        return -2.0 * math.log(1.0 - COVERAGE_LEVEL)
    raise ValueError(f"coverage_bound takes 1 or 2 dimensions, got {dim}")


def cloud_measures(name: str, n: int, run, truth) -> dict[str, float]:
    """The particle cloud of one CPU run after each resampling (``run``: a
    a FilterResult with ``distinct``, ``lineages``, ``resampled_cov``;
    the cloud's mean is the mean of the resampled particles), over the
    steps: ``distinct_fraction`` and ``lineage_fraction`` (means of the
    counts over N), ``spread`` (the mean of sqrt(trace C_t), C_t the
    covariance of the resampled particles' positions -- the state of the
    growth model, (x, y) of the bearings-only one) and ``coverage`` (the
    fraction of steps whose true position lies inside the cloud's
    COVERAGE_LEVEL ellipse, (x_t - m_t)' C_t^-1 (x_t - m_t) <= the
    chi-square quantile: a calibrated Gaussian cloud covers COVERAGE_LEVEL
    of them). All NaN where the run did not measure them (the GPU)."""
    if getattr(run, "lineages", None) is None:
        return dict.fromkeys(CLOUD_MEASURES, math.nan)
    means = run.resampled_estimates if hasattr(run, "resampled_estimates") else run.estimates
    cols = [0] if name == "growth" else list(POSITION_COLUMNS)
    mean = np.asarray(means, dtype=np.float64).reshape(len(run.lineages), -1)[:, cols]
    true = np.asarray(truth, dtype=np.float64).reshape(len(run.lineages), -1)[:, cols]
    cov = np.asarray(run.resampled_cov)[:, cols][:, :, cols]
    gap = true - mean
    nees = np.empty(len(gap))
    for t, (d, c) in enumerate(zip(gap, cov, strict=True)):
        try:
            nees[t] = float(d @ np.linalg.solve(c, d))
        except np.linalg.LinAlgError:  # every particle in one point: no ellipse covers
            nees[t] = math.inf
    spread = np.sqrt(np.trace(cov, axis1=1, axis2=2))
    return {
        "distinct_fraction": float(np.mean(run.distinct)) / n,
        "lineage_fraction": float(np.mean(run.lineages)) / n,
        "spread": float(np.mean(spread)),
        "coverage": float(np.mean(nees <= coverage_bound(len(cols)))),
    }


def run_errors(name: str, estimates, truth) -> dict[str, float]:
    """The error measures of one run of model ``name`` (``truth`` x_1 ... x_T):
    ``{"mse": ...}`` for the growth model, ``{"position_rmse": ...,
    "mean_position_error": ...}`` for the bearings-only model."""
    if name == "growth":
        return {"mse": trajectory_mse(estimates, truth)}
    if name == "bot":
        return {
            "position_rmse": position_rmse(estimates, truth),
            "mean_position_error": mean_position_error(estimates, truth),
        }
    raise ValueError(f"model must be one of {sorted(MODELS)}, got {name!r}")
