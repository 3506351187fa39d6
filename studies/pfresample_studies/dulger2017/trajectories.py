"""The cached trajectory sets of the filter experiments (thesis §5.4, §6.9, §7.1).

"We create 16 different trajectories ... We use these 16 trajectories in all
the number of particles" (§5.4, §6.9): for the growth model (eqs. 2.34–2.35)
each trajectory is an independent simulation from x_0 = 0.1. For the radar
(§7.1) "we create 16 different trajectories by adding different measurement
noises to the true state of the aircraft": one deterministic truth
(:func:`pfresample.models.scenarios.truth_trajectory`) measured 16 times
through eq. 7.2 with fresh noise.

A set is a dict of two float64 arrays: ``truth`` (count, steps + 1[, 4]),
row 0 of each trajectory x_0, and ``y`` (count, steps[, 2]), ``y[j, k - 1]``
the measurement z_k of ``truth[j, k]``.

Trajectory j draws its noise from ``np.random.default_rng(SeedSequence([seed,
j]))``, so trajectory j is the same whatever ``count`` is: a set of 16 is the
first 16 of a set of 32. The two scenarios measured with one seed share their
noise draws (common random numbers); the pipeline picks the seeds.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pfresample.models.growth import GrowthModel
from pfresample.models.radar import MEASUREMENT_DIM, STATE_DIM, RadarModel
from pfresample.models.scenarios import DEFAULT_RADAR_MODEL, truth_trajectory

from ..pipeline import artifacts as io

ARRAY_NAMES = ("truth", "y")

# The thesis's growth model as a shared default argument (GrowthModel is frozen).
DEFAULT_GROWTH_MODEL = GrowthModel()


def _check_positive(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def _check_seed(seed) -> None:
    # SeedSequence takes non-negative integers only; say so before it does.
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")


def trajectory_rng(seed: int, j: int) -> np.random.Generator:
    """The generator of trajectory j of the set with ``seed``."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(j)]))


def growth_trajectories(
    count: int,
    steps: int,
    seed: int,
    model: GrowthModel = DEFAULT_GROWTH_MODEL,
) -> dict:
    """``count`` independent growth-model trajectories of ``steps`` steps
    (eqs. 2.34–2.35, x_0 = 0.1, §5.4/§6.9): ``truth`` (count, steps + 1) and
    ``y`` (count, steps)."""
    _check_positive(count, "count")
    _check_positive(steps, "steps")
    _check_seed(seed)
    truth = np.empty((count, steps + 1))
    y = np.empty((count, steps))
    for j in range(count):
        truth[j], y[j] = model.simulate(steps, trajectory_rng(seed, j))
    return {"truth": truth, "y": y}


def radar_trajectories(
    spec: Mapping,
    count: int,
    seed: int,
    model: RadarModel = DEFAULT_RADAR_MODEL,
) -> dict:
    """``count`` noisy measurement sequences (eq. 7.2, R of Table 7.1) of the
    one truth of scenario ``spec`` (§7.1): ``truth`` (count, steps + 1, 4),
    the same truth in every row, and ``y`` (count, steps, 2)."""
    _check_positive(count, "count")
    _check_seed(seed)
    truth = truth_trajectory(spec, model)
    y = np.stack(
        [model.simulate_measurements(truth[1:], trajectory_rng(seed, j)) for j in range(count)]
    )
    return {"truth": np.repeat(truth[np.newaxis], count, axis=0), "y": y}


def check_shapes(arrays: Mapping, where: str) -> None:
    """Raise ValueError (naming ``where``) unless ``arrays`` is a trajectory
    set: finite float ``truth`` and ``y`` of matching shapes, scalar states
    (growth) or 4-states with 2-measurements (radar)."""
    missing = [name for name in ARRAY_NAMES if name not in arrays]
    if missing:
        raise ValueError(f"{where}: missing array(s) {missing}")
    truth, y = np.asarray(arrays["truth"]), np.asarray(arrays["y"])
    shapes = f"truth {truth.shape}, y {y.shape}"
    if truth.ndim == 2 and y.ndim == 2:
        trailing_ok = True
    elif truth.ndim == 3 and y.ndim == 3:
        trailing_ok = truth.shape[2] == STATE_DIM and y.shape[2] == MEASUREMENT_DIM
    else:
        trailing_ok = False
    if not trailing_ok or truth.shape[0] != y.shape[0] or truth.shape[1] != y.shape[1] + 1:
        raise ValueError(
            f"{where}: expected truth (count, steps + 1) and y (count, steps), or truth "
            f"(count, steps + 1, {STATE_DIM}) and y (count, steps, {MEASUREMENT_DIM}); got {shapes}"
        )
    if y.shape[0] < 1 or y.shape[1] < 1:
        raise ValueError(f"{where}: empty trajectory set ({shapes})")
    for name, a in (("truth", truth), ("y", y)):
        if a.dtype.kind != "f" or not np.isfinite(a).all():
            raise ValueError(f"{where}: {name} must be finite floats (dtype {a.dtype})")


def save_trajectories(path, arrays: Mapping, metadata: dict | None = None):
    """Write a trajectory set atomically (:func:`pfresample_studies.pipeline.artifacts.save_npz`)
    after checking its shapes; returns the path."""
    check_shapes(arrays, str(path))
    return io.save_npz(path, {name: arrays[name] for name in ARRAY_NAMES}, metadata)


def load_trajectories(path) -> tuple[dict, dict]:
    """Read a trajectory set: ``(arrays, metadata)``. A file that is not a
    complete trajectory set raises :class:`pfresample_studies.pipeline.artifacts.CorruptArtifact`
    naming it, so the pipeline can delete and regenerate it."""
    arrays, metadata = io.load_npz(path)
    try:
        check_shapes(arrays, str(path))
    except ValueError as exc:
        raise io.CorruptArtifact(f"{exc}; delete it to regenerate") from exc
    return arrays, metadata
