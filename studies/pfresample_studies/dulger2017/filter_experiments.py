"""The SIR-filter experiments of Dülger (2017): §5.4 (Tables 5.1-5.2), §6.9
(Tables 6.2-6.3), §6.10 (Fig 6.23) and chapter 7 (Tables 7.2-7.3, 7.5-7.6).

A *filter model* of the catalog (config/dulger2017.yaml, ``filter_models``) is
the growth model of eqs. 2.34-2.35 or the radar of eqs. 7.1-7.2 with one
manoeuvring truth (a scenario spec, :mod:`pfresample.models.scenarios`). Its
J trajectories are generated once and cached (:mod:`pfresample.trajectories`).

A *filter cell* is one model x one method variant x one N: the SIR filter of
Algorithm 2.4 (:func:`pfresample.run_filter` with ``SIR_OPTIONS``) run R times on each of the
J trajectories, T steps each (thesis: J = 16, R = 100, T = 100). Run r of
trajectory j uses the seed :func:`run_seed` (seed, model, N, j, r): the same
for every method, so methods are compared on common random numbers (run_filter
derives the model noise and the resampling seeds from it), and a cell with
fewer runs holds the first runs of a larger one.

Per run the cell keeps the RMSE (:func:`run_rmse`), the seconds of each of the
four stages summed over the T steps, their total, the wall time of the loop
and the B of every step; the estimates of run 0 of trajectory 0 are kept for
Figs 7.1-7.2.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pfresample.backend import cuda_device, resolve_backend
from pfresample.constants import EPSILON_FILTER
from pfresample.filters import SIR_OPTIONS, STAGES, rmse, run_filter, run_filters
from pfresample.models import GrowthModel, RadarModel
from pfresample.resampling.registry import get_method
from pfresample.timing import cpu_name

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


def backend_device(backend: str) -> str:
    """The device a backend runs on: the GPU's name or the CPU model."""
    return (cuda_device() or "CUDA device") if backend == "cuda" else cpu_name()


@dataclass(frozen=True)
class FilterSettings:
    """How a filter cell runs: ``runs`` per trajectory, the config ``seed``,
    the ``backend`` asked for (auto / cpu / cuda) and epsilon of B (§5.4).
    ``timed_runs``: the runs r < timed_runs of each trajectory are made one at
    a time and timed; the others may run side by side (``run_filters``
    batches them on the GPU), with their times NaN. None: every run timed."""

    runs: int
    seed: int
    backend: str = "auto"
    epsilon: float = EPSILON_FILTER
    warmup_steps: int = WARMUP_STEPS
    timed_runs: int | None = None


def _sir_params(variant, settings) -> dict:
    """Algorithm 2.4's options (``SIR_OPTIONS``) and the variant's method parameters."""
    m = get_method(variant.method)
    params = {"epsilon": settings.epsilon} if m.B_rule == "metropolis" else {}
    if variant.segment_bytes is not None:
        params["segment_bytes"] = variant.segment_bytes
    return {**SIR_OPTIONS, **params}


def _sir(model, y, n, variant, seed, settings, backend):
    """Algorithm 2.4 (``run_filter`` with ``SIR_OPTIONS``) with the variant's method."""
    params = _sir_params(variant, settings)
    return run_filter(model, y, n, variant.method, seed=seed, backend=backend, **params)


def _sir_untimed(model, ys, n, variant, seeds, settings, backend) -> list:
    """Runs of :func:`_sir` whose times are not kept (``run_filters``: side by
    side on the GPU where that pays), their times set to NaN whichever way
    they ran, so that every timed figure of a cell comes from runs made alone."""
    params = _sir_params(variant, settings)
    results = run_filters(model, ys, n, variant.method, seeds=seeds, backend=backend, **params)
    nan = float("nan")
    return [
        dataclasses.replace(
            r,
            stage_seconds=np.full_like(r.stage_seconds, nan),
            total_seconds=nan,
            wall_seconds=nan,
        )  # fmt: skip
        for r in results
    ]


def part_runs(trajectories: int, runs: int, part: int, parts: int) -> list[tuple[int, int]]:
    """The runs ``(j, r)`` of part ``part`` of ``parts`` of a cell with
    ``trajectories`` x ``runs`` runs: contiguous near-equal slices of the runs
    in the order j = 0 ... J-1, r = 0 ... R-1, so the parts of a cell hold each
    run exactly once whatever ``parts`` is (at most J x R)."""
    total = trajectories * runs
    if not 1 <= parts <= total:
        raise ValueError(f"parts must be 1 ... {total} (trajectories x runs), got {parts}")
    if not 0 <= part < parts:
        raise ValueError(f"part must be 0 ... {parts - 1}, got {part}")
    start, stop = part * total // parts, (part + 1) * total // parts
    return [divmod(k, runs) for k in range(start, stop)]


def cpu_cell_parts(n: int, trajectories: int, runs: int, part_particles: int) -> int:
    """How many jobs a CPU filter cell of ``n`` particles is split into: one per
    ``part_particles`` of N, at least one and at most one per run. A CPU run
    costs about N times a constant, so every part does about the same work
    (one core, about a minute and a half a part on the 2-core AMD EPYC at
    part_particles = 2^15)."""
    return max(1, min(trajectories * runs, int(n) // int(part_particles)))


def run_filter_cell(
    name: str,
    spec: Mapping,
    variant,
    n: int,
    trajectories: Mapping[str, np.ndarray],
    settings: FilterSettings,
    part: tuple[int, int] = (0, 1),
) -> tuple[dict, dict]:
    """Run one filter cell: model ``name`` (catalog entry ``spec``), method
    variant ``variant`` (:class:`pfresample.experiments.Variant`, its own B
    rule), ``n`` particles, every trajectory of ``trajectories``
    (``truth``, ``y``), ``settings.runs`` runs each.

    Returns ``(arrays, metadata)`` for :func:`pfresample_studies.pipeline.artifacts.save_npz`:
    ``rmse`` (J, R), ``stage_seconds`` (J, R, 4: the four stages of
    Algorithm 2.4 summed over the T steps), ``total_seconds`` and
    ``wall_seconds`` (J, R), ``B`` (J, R, T; -1 for methods without B),
    ``seeds`` (J, R, uint64) and ``estimates`` (T,) or (T, 4) of run 0 of
    trajectory 0.

    ``part = (p, P)`` runs only part p of P of the runs (:func:`part_runs`),
    each run as in the whole cell (its seed is run_seed's): the per-run arrays
    are then flat, one entry per run of the part, with ``run_index`` (the
    runs' j x R + r), and :func:`merge_filter_parts` puts the P parts back
    into the whole cell's arrays.
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
    runs = part_runs(J, R, *part)
    count = len(runs)
    arrays = {
        "rmse": np.empty(count),
        "stage_seconds": np.empty((count, len(STAGES))),
        "total_seconds": np.empty(count),
        "wall_seconds": np.empty(count),
        "B": np.empty((count, T), dtype=np.int32),
        "seeds": np.empty(count, dtype=np.uint64),
        "run_index": np.array([j * R + r for j, r in runs], dtype=np.int64),
    }
    load_start = os.getloadavg()[0]
    timed = R if settings.timed_runs is None else min(R, settings.timed_runs)
    seeds = [run_seed(settings.seed, name, n, j, r) for j, r in runs]
    results: list = [None] * count
    for i, (j, r) in enumerate(runs):
        if r < timed:
            results[i] = _sir(model, y[j], n, variant, seeds[i], settings, backend)
    rest = [i for i, (_, r) in enumerate(runs) if r >= timed]
    if rest:
        ys = [y[runs[i][0]] for i in rest]
        batch = _sir_untimed(model, ys, n, variant, [seeds[i] for i in rest], settings, backend)
        for i, result in zip(rest, batch, strict=True):
            results[i] = result
    for i, ((j, r), result) in enumerate(zip(runs, results, strict=True)):
        arrays["rmse"][i] = run_rmse(spec["model"], result.estimates, truth[j])
        arrays["stage_seconds"][i] = result.stage_seconds.sum(axis=0)
        arrays["total_seconds"][i] = result.total_seconds
        arrays["wall_seconds"][i] = result.wall_seconds
        arrays["B"][i] = result.B
        arrays["seeds"][i] = seeds[i]
        if j == 0 and r == 0:
            arrays["estimates"] = np.asarray(result.estimates, dtype=np.float64)
        if r == R - 1 or i == count - 1:
            done = arrays["run_index"][: i + 1] // R == j
            log.info(
                "trajectory %d: mean RMSE %.4f, mean %.4f s per timed run (%d runs of this job)",
                j, arrays["rmse"][: i + 1][done].mean(),
                np.nanmean(arrays["total_seconds"][: i + 1][done]), done.sum(),
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
        "timed_runs": timed,
        "stages": list(STAGES),
        "rmse_columns": RMSE_COLUMNS[spec["model"]],
        "backend": backend,
        "backend_requested": settings.backend,
        "device": device,
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "threads": os.environ.get("PFRESAMPLE_THREADS"),
        "warmup_seconds": warm.total_seconds,
        # The host's 1-minute load average when the runs started and ended:
        # CPU times measured beside other jobs say so (Fig 6.23's caption).
        "load_average": [load_start, os.getloadavg()[0]],
        "part": list(part),
    }
    if part == (0, 1):
        return _whole(arrays, J, R), metadata
    return arrays, metadata


# Arrays of a cell with one entry per run: (J, R, ...) in a whole cell, flat
# (runs of the part, ...) in a part.
_PER_RUN = ("rmse", "stage_seconds", "total_seconds", "wall_seconds", "B", "seeds")


def _whole(flat: Mapping, J: int, R: int) -> dict:
    """The whole cell's arrays from flat per-run arrays covering every run
    once, in any order (``run_index``)."""
    index = np.asarray(flat["run_index"])
    if np.sort(index).tolist() != list(range(J * R)):
        raise ValueError(f"the parts do not hold each of the {J} x {R} runs exactly once")
    out = {}
    for key in _PER_RUN:
        values = np.asarray(flat[key])
        whole = np.empty((J * R,) + values.shape[1:], dtype=values.dtype)
        whole[index] = values
        out[key] = whole.reshape((J, R) + values.shape[1:])
    out["estimates"] = flat["estimates"]
    return out


def merge_filter_parts(parts: Sequence[tuple[Mapping, Mapping]]) -> tuple[dict, dict]:
    """The whole filter cell from the ``(arrays, metadata)`` of its P parts
    (:func:`run_filter_cell` with ``part``): the arrays of the whole cell, and
    part 0's metadata with ``part`` dropped, ``parts`` = P, the warm-up
    seconds of every part and the highest load average any part saw."""
    if not parts:
        raise ValueError("no parts to merge")
    metas = [meta for _, meta in parts]
    count = metas[0]["part"][1]
    if sorted(meta["part"][0] for meta in metas) != list(range(count)) or any(
        meta["part"][1] != count for meta in metas
    ):
        raise ValueError(
            f"expected parts 0 ... {count - 1} of {count}, got {[m['part'] for m in metas]}"
        )
    same = ("model", "variant", "n", "trajectories", "runs", "steps", "seed", "backend", "device")
    for meta in metas[1:]:
        differ = [k for k in same if meta[k] != metas[0][k]]
        if differ:
            raise ValueError(f"the parts differ in {differ}: not parts of one cell")
    flat = {key: np.concatenate([np.asarray(a[key]) for a, _ in parts]) for key in _PER_RUN}
    flat["run_index"] = np.concatenate([np.asarray(a["run_index"]) for a, _ in parts])
    first = [a for a, m in parts if m["part"][0] == 0][0]
    flat["estimates"] = first["estimates"]
    metadata = {k: v for k, v in metas[0].items() if k != "part"}
    metadata.update(
        parts=count,
        warmup_seconds=[m["warmup_seconds"] for m in sorted(metas, key=lambda m: m["part"][0])],
        load_average=[max(max(m["load_average"]) for m in metas)],
    )
    return _whole(flat, metas[0]["trajectories"], metas[0]["runs"]), metadata
