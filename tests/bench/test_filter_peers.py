"""Fast CPU checks of bench/filter_peers.py's helpers (skipped without ``particles``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("particles")
pytest.importorskip("scipy")

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "filter_peers.py"


@pytest.fixture(scope="module")
def fp():
    sys.path.insert(0, str(SCRIPT.parent))  # the script imports its folder's _common, as when run
    spec = importlib.util.spec_from_file_location("filter_peers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parse_size(fp):
    assert fp.parse_size("2^16") == fp.parse_size("2**16") == fp.parse_size("65536") == 2**16


def test_t_interval_known_value(fp):
    # n = 4: half-width t_{0.995, 3} * sd / sqrt(4), t_{0.995, 3} = 5.840909
    mean, half = fp.t_interval([1.0, 2.0, 3.0, 2.0], confidence=0.99)
    values = np.array([1.0, 2.0, 3.0, 2.0])
    assert mean == pytest.approx(2.0)
    assert half == pytest.approx(5.840909 * values.std(ddof=1) / 2.0, rel=1e-5)
    with pytest.raises(ValueError):
        fp.t_interval([1.0])


def test_paired_summary(fp):
    ours = np.array([4.0, 5.0, 6.0, 5.5])
    same = fp.paired_summary(ours, ours + 0.001 * np.array([1, -1, 1, -1]))
    assert same["diff_contains_0"] and same["overlap"]
    shifted = fp.paired_summary(ours, ours + 1.0 + 0.01 * np.array([1, -1, 1, -1]))
    assert not shifted["diff_contains_0"]  # the paired interval sees a constant shift
    assert shifted["overlap"]  # which the two separate intervals would hide


def test_trajectories_fixed(fp):
    model = fp.GrowthModel()
    a, b = fp.trajectories(model, 2, steps=10), fp.trajectories(model, 2, steps=10)
    assert np.array_equal(a[1][0], b[1][0]) and np.array_equal(a[1][1], b[1][1])
    assert not np.array_equal(a[0][1], a[1][1])
    assert a[0][0].shape == (11,) and a[0][1].shape == (10,)


def test_particles_filter_shape_and_alignment(fp):
    model = fp.GrowthModel()
    (x, y), *_ = fp.trajectories(model, 1, steps=30)
    est = fp.run_particles(model, y, 512, seed=3)
    assert est.shape == (30,) and np.all(np.isfinite(est))
    ours = fp.run_ours(model, y, 512, seed=3)
    assert ours.shape == est.shape
    # Same quantity at the same index: both track the truth about equally well.
    assert fp.rmse(est, x[1:]) == pytest.approx(fp.rmse(ours, x[1:]), rel=0.5)


def test_first_state_law(fp):
    # particles' X_0 is our x_1: mean 8 cos(0) + E[f(x_0)] = 8 (f is odd, x_0 ~ N(0, 2)).
    np.random.seed(0)  # noqa: NPY002
    draws = fp.FirstState(fp.GrowthModel()).rvs(size=200_000)
    assert draws.mean() == pytest.approx(8.0, abs=0.1)
