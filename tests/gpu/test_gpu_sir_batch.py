"""Batched runs of the GPU SIR filter (filters/sir_batch.py) against the same
runs made one at a time, bit for bit.

Run on a GPU: ``pytest -m gpu tests/gpu/test_gpu_sir_batch.py``.

A batch puts K runs side by side as K branches of one CUDA graph, each with
its own buffers, workspace and inputs; the claim is that run i of a batch
equals ``run_filter(model, ys[i], n, method, seed=seeds[i])`` exactly: its
estimates, its B of every step and its log-likelihood. Every method of the
filter tables (Tables 5.1-7.6) is checked at N = 2^10 and at N = 1,536 (not
a power of two), with R = 1, 3 and 100 runs, on the growth model (one state
row) and, for a few methods, on the radar (four rows). The runs use distinct
seeds and two different measurement sets, so a run that read another run's
inputs or buffers would differ; the negative control builds a batch whose
member i reads run i + 1's inputs and checks that the comparison catches it.
"""

from __future__ import annotations

import numpy as np
import pytest

from pfresample.filters import SIR_OPTIONS, run_filter, run_filters, sir_batch
from pfresample.models import SCENARIOS, GrowthModel, RadarModel, truth_trajectory
from pfresample.resampling.registry import get_method

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

STEPS = 12
# Every method variant of the filter tables (config/studies/dulger2017.yaml):
# (method, segment_bytes).
TABLE_METHODS = [
    ("systematic", None),
    ("metropolis", None),
    ("metropolis-c1", 128),
    ("metropolis-c1", 2048),
    ("metropolis-c2", 128),
    ("metropolis-c2", 2048),
    ("rejection", None),
    ("uphill", None),
    ("uphill-ca", 128),
    ("uphill-c1", 128),
]


def _params(method: str, segment_bytes) -> dict:
    params = dict(SIR_OPTIONS)
    if segment_bytes is not None:
        params["segment_bytes"] = segment_bytes
    return params


def _measurements(model, count: int) -> list[np.ndarray]:
    """``count`` runs' measurements from two trajectories, alternating."""
    rngs = [np.random.default_rng(s) for s in (11, 12)]
    if isinstance(model, RadarModel):
        truth = truth_trajectory(SCENARIOS["scenario2"], model)[: STEPS + 1]
        sets = [model.simulate_measurements(truth[1:], rng) for rng in rngs]
    else:
        sets = [model.simulate(STEPS, rng)[1] for rng in rngs]
    return [sets[i % 2] for i in range(count)]


def _alone(model, ys, n, method, seeds, params) -> list:
    return [
        run_filter(model, y, n, method, seed=s, backend="cuda", **params)
        for y, s in zip(ys, seeds, strict=True)
    ]


def _mismatches(batched, alone) -> list[str]:
    """The runs whose estimates, B or log-likelihood differ in any bit."""
    bad = []
    for i, (b, a) in enumerate(zip(batched, alone, strict=True)):
        same = (
            np.array_equal(np.asarray(b.estimates), np.asarray(a.estimates))
            and np.array_equal(b.B, a.B)
            and np.array_equal(b.log_likelihood_steps, a.log_likelihood_steps, equal_nan=True)
        )
        if not same:
            bad.append(f"run {i} (seed {a.seed})")
    return bad


@pytest.mark.parametrize("n", [1024, 1536])
@pytest.mark.parametrize(("method", "segment_bytes"), TABLE_METHODS)
def test_batched_runs_equal_runs_alone(method, segment_bytes, n):
    model = GrowthModel()
    params = _params(method, segment_bytes)
    m = get_method(method)
    runs = 100
    ys = _measurements(model, runs)
    seeds = [1000 + 7 * i for i in range(runs)]
    alone = _alone(model, ys, n, method, seeds, params)
    keywords = {"segment_bytes": segment_bytes} if segment_bytes is not None else {}
    for count in (1, 3, 100):
        batched = sir_batch.run_sir_batch(model, ys[:count], n, m, seeds[:count], **keywords)
        assert len(batched) == count
        assert not _mismatches(batched, alone[:count]), (method, segment_bytes, n, count)
        assert all(np.isnan(r.total_seconds) and np.isnan(r.wall_seconds) for r in batched)
    # The engine's entry: the first run alone (timed), the rest batched.
    through = run_filters(model, ys, n, method, seeds=seeds, backend="cuda", **params)
    assert not _mismatches(through, alone)
    assert np.isfinite(through[0].total_seconds)


@pytest.mark.parametrize(("method", "segment_bytes"), [TABLE_METHODS[i] for i in (0, 1, 6, 8)])
def test_batched_radar_runs_equal_runs_alone(method, segment_bytes):
    model = RadarModel()
    params = _params(method, segment_bytes)
    ys = _measurements(model, 3)
    seeds = [5, 6, 7]
    alone = _alone(model, ys, 1024, method, seeds, params)
    batched = run_filters(model, ys, 1024, method, seeds=seeds, backend="cuda", **params)
    assert not _mismatches(batched, alone)


class _ShiftedBatch(sir_batch.FilterBatch):
    """A wrong batch: member i reads the inputs of run i + 1 (the last wraps to
    run 0), as a wrong offset into the runs would."""

    def run(self, ys, seeds):
        count = len(seeds)
        order = [(i + 1) % count for i in range(count)]
        return super().run([ys[j] for j in order], [seeds[j] for j in order])


def test_negative_control_a_run_reading_another_runs_inputs_is_caught():
    model = GrowthModel()
    m = get_method("systematic")
    ys = _measurements(model, 3)
    seeds = [21, 22, 23]
    alone = _alone(model, ys, 1024, "systematic", seeds, dict(SIR_OPTIONS))
    kw, params = sir_batch.sir_arguments(m, 1024)
    wrong = _ShiftedBatch(model, m, 1024, STEPS, kw, params, width=3).run(ys, seeds)
    assert len(_mismatches(wrong, alone)) == 3
