"""The SIR-filter experiments of Dülger (2017): §5.4 (Tables 5.1-5.2), §6.9
(Tables 6.2-6.3), §6.10 (Fig 6.23) and chapter 7 (Tables 7.2-7.3, 7.5-7.6).

A *filter model* of the catalog (config/dulger2017.yaml, ``filter_models``) is
the growth model of eqs. 2.34-2.35 or the radar of eqs. 7.1-7.2 with one
manoeuvring truth (a scenario spec, :mod:`pfresample.models.scenarios`). Its
J trajectories are generated once and cached (:mod:`pfresample.trajectories`).

A *filter cell* is one model x one method variant x one N: the SIR filter of
Algorithm 2.4 (:func:`pfresample.filters.run_sir`) run R times on each of the
J trajectories, T steps each (thesis: J = 16, R = 100, T = 100). Run r of
trajectory j uses the seed :func:`run_seed` (seed, model, N, j, r): the same
for every method, so methods are compared on common random numbers (run_sir
derives the model noise and the resampling seeds from it), and a cell with
fewer runs holds the first runs of a larger one.

Per run the cell keeps the RMSE (:func:`run_rmse`), the seconds of each of the
four stages summed over the T steps, their total, the wall time of the loop
and the B of every step; the estimates of run 0 of trajectory 0 are kept for
Figs 7.1-7.2.
"""

from __future__ import annotations

import logging
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...backend import cuda_device, select_backend
from ...constants import EPSILON_FILTER
from ...filters import STAGES, rmse, run_sir
from ...models import GrowthModel, RadarModel
from ...timing import cpu_name

log = logging.getLogger("pfresample.filter_experiments")

# SeedSequence word of the filter runs; weights use (seed, dist, N, s) and the
# resampling draws (seed, dist, N, s, 1) (pfresample.experiments).
_FILTER_DOMAIN = 2

# The state columns an RMSE compares: the whole scalar state of the growth
# model, the position (p_x, p_y) of the radar state (chapter 7 reports the
# position RMSE, in metres).
RMSE_COLUMNS = {"growth": None, "radar": (0, 1)}

# Steps of the untimed warm-up run that starts every cell (first-call costs:
# thread pools, the Uphill SSD table of the cell's N, CUDA compiles).
WARMUP_STEPS = 5


def make_model(spec: Mapping):
    """The state-space model of a catalog entry (``model: growth | radar``),
    with the thesis's parameters (eqs. 2.34-2.35; Tables 7.1 / 7.4)."""
    kind = spec["model"]
    if kind == "growth":
        return GrowthModel()
    if kind == "radar":
        return RadarModel()
    raise ValueError(f"unknown filter model {kind!r}; expected 'growth' or 'radar'")


def model_steps(spec: Mapping) -> int:
    """T of a catalog entry: ``steps`` (growth) or the scenario's ``steps`` (radar)."""
    return int(spec["scenario"]["steps"] if spec["model"] == "radar" else spec["steps"])


def make_trajectories(spec: Mapping, count: int, seed: int) -> tuple[dict, dict]:
    """The J trajectories of a catalog entry, ``(arrays, metadata)`` for
    :func:`pfresample.trajectories.save_trajectories`. Trajectory j depends
    only on (seed, j) (:mod:`pfresample.trajectories`)."""
    from .trajectories import growth_trajectories, radar_trajectories

    if spec["model"] == "growth":
        arrays = growth_trajectories(count, model_steps(spec), seed)
    elif spec["model"] == "radar":
        arrays = radar_trajectories(spec["scenario"], count, seed)
    else:
        raise ValueError(f"unknown filter model {spec['model']!r}")
    metadata = {"what": "trajectory set", "spec": dict(spec), "count": count, "seed": seed}
    return arrays, metadata


def run_seed(seed: int, model: str, n: int, trajectory: int, run: int) -> int:
    """The seed of run ``run`` on trajectory ``trajectory`` of model ``model``
    with ``n`` particles: a 64-bit word of SeedSequence(seed, 2, crc32(model),
    n, trajectory, run). It does not depend on the method (common random
    numbers) nor on how many trajectories or runs a cell has."""
    entropy = [int(seed), _FILTER_DOMAIN, zlib.crc32(model.encode()), int(n), trajectory, run]
    return int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0])


def run_rmse(kind: str, estimates, truth) -> float:
    """RMSE of one run (:func:`pfresample.filters.rmse`) against the truth of
    its trajectory, ``truth`` holding x_0 ... x_T: e_k = |x_k - x^_k|
    (Euclidean over the position p_x, p_y for the radar),
    RMSE = sqrt(mean over k = 1 ... T of e_k^2)."""
    truth = np.asarray(truth)[1:]
    columns = RMSE_COLUMNS[kind]
    if columns is None:
        return rmse(estimates, truth)
    columns = list(columns)
    return rmse(np.asarray(estimates)[:, columns], truth[:, columns])


def resolve_backend(requested: str) -> str:
    """``"cpu"`` or ``"cuda"``: where the filter runs for the configured
    ``backend`` (auto: CUDA when a device is visible; cuda without one
    raises). Every variant of the catalog has a CUDA kernel and both models
    a device twin (pfresample.filters.sir_gpu), so the choice is run_sir's."""
    return select_backend(requested, None, True)


def backend_device(backend: str) -> str:
    """The device a backend runs on: the GPU's name or the CPU model."""
    return (cuda_device() or "CUDA device") if backend == "cuda" else cpu_name()


@dataclass(frozen=True)
class FilterSettings:
    """How a filter cell runs: ``runs`` per trajectory, the config ``seed``,
    the ``backend`` asked for (auto / cpu / cuda) and epsilon of B (§5.4)."""

    runs: int
    seed: int
    backend: str = "auto"
    epsilon: float = EPSILON_FILTER
    warmup_steps: int = WARMUP_STEPS


def _sir(model, y, n, variant, seed, settings, backend):
    return run_sir(
        model, y, n, variant.method, seed,
        epsilon=settings.epsilon, segment_bytes=variant.segment_bytes, backend=backend,
    )  # fmt: skip


def run_filter_cell(
    name: str,
    spec: Mapping,
    variant,
    n: int,
    trajectories: Mapping[str, np.ndarray],
    settings: FilterSettings,
) -> tuple[dict, dict]:
    """Run one filter cell: model ``name`` (catalog entry ``spec``), method
    variant ``variant`` (:class:`pfresample.experiments.Variant`, its own B
    rule), ``n`` particles, every trajectory of ``trajectories``
    (``truth``, ``y``), ``settings.runs`` runs each.

    Returns ``(arrays, metadata)`` for :func:`pfresample.pipeline.artifacts.save_npz`:
    ``rmse`` (J, R), ``stage_seconds`` (J, R, 4: the four stages of
    Algorithm 2.4 summed over the T steps), ``total_seconds`` and
    ``wall_seconds`` (J, R), ``B`` (J, R, T; -1 for methods without B),
    ``seeds`` (J, R, uint64) and ``estimates`` (T,) or (T, 4) of run 0 of
    trajectory 0.
    """
    if not variant.own_B:
        raise ValueError(f"{variant.name}: filter cells use the method's own B rule")
    model = make_model(spec)
    truth, y = np.asarray(trajectories["truth"]), np.asarray(trajectories["y"])
    J, T, R = y.shape[0], y.shape[1], settings.runs
    backend = resolve_backend(settings.backend)
    device = backend_device(backend)
    log.info(
        "%s, %s, N = %d: %d trajectories x %d runs, T = %d, backend %s (%s)",
        name, variant.name, n, J, R, T, backend, device,
    )  # fmt: skip
    warm = _sir(model, y[0, : settings.warmup_steps], n, variant, 0, settings, backend)
    arrays = {
        "rmse": np.empty((J, R)),
        "stage_seconds": np.empty((J, R, len(STAGES))),
        "total_seconds": np.empty((J, R)),
        "wall_seconds": np.empty((J, R)),
        "B": np.empty((J, R, T), dtype=np.int32),
        "seeds": np.empty((J, R), dtype=np.uint64),
    }
    for j in range(J):
        for r in range(R):
            seed = run_seed(settings.seed, name, n, j, r)
            result = _sir(model, y[j], n, variant, seed, settings, backend)
            arrays["rmse"][j, r] = run_rmse(spec["model"], result.estimates, truth[j])
            arrays["stage_seconds"][j, r] = result.stage_seconds.sum(axis=0)
            arrays["total_seconds"][j, r] = result.total_seconds
            arrays["wall_seconds"][j, r] = result.wall_seconds
            arrays["B"][j, r] = result.B
            arrays["seeds"][j, r] = seed
            if j == 0 and r == 0:
                arrays["estimates"] = np.asarray(result.estimates, dtype=np.float64)
        log.info(
            "trajectory %d: mean RMSE %.4f, mean %.4f s per run",
            j, arrays["rmse"][j].mean(), arrays["total_seconds"][j].mean(),
        )  # fmt: skip
    metadata = {
        "what": "filter cell",
        "model": name,
        "model_spec": dict(spec),
        "variant": variant.as_dict(),
        "n": int(n),
        "trajectories": J,
        "runs": R,
        "steps": T,
        "seed": settings.seed,
        "seed_rule": "pfresample.filter_experiments.run_seed(seed, model, n, j, r)",
        "epsilon": settings.epsilon,
        "stages": list(STAGES),
        "rmse_columns": RMSE_COLUMNS[spec["model"]],
        "backend": backend,
        "backend_requested": settings.backend,
        "device": device,
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "threads": os.environ.get("PFRESAMPLE_THREADS"),
        "warmup_seconds": warm.total_seconds,
    }
    return arrays, metadata
