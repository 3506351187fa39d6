"""Dülger (2017) Fig 6.23's best CPU filter (native/sir_growth.c): its resamplers give the
library's NumPy ancestors exactly on the same draws, its tiled multi-threaded stage 4
gives its plain loop's, and the filter's RMSE agrees with the NumPy filter's within an
interval from the runs' variance; deliberate flaws (a tie taken by the later candidate,
the weight update dropped, a wrong uniform) are caught by the same comparisons."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pfresample as pr
from pfresample.filters import SIR_OPTIONS, rmse, run_filter
from pfresample.models import GrowthModel
from pfresample.resampling.cumulative import scaled_prefix_sum
from pfresample.rng import DOMAIN_GLOBAL, DOMAIN_PARTICLE, philox_block, seed_keys, uniform_float
from pfresample_studies.dulger2017.trajectories import growth_trajectories

SEED = 2017
Z = 3.2905  # two-sided 99.9 %: a fixed-seed check that a correct filter passes with margin


@pytest.fixture(autouse=True)
def native(native_build):
    from pfresample_studies.dulger2017 import native

    return native


def tied_weights(n: int, rng) -> np.ndarray:
    """Weights from a pool of four values, so that Uphill meets ties at every step, and
    some zeros (never chosen by Systematic)."""
    w = rng.choice(np.array([0.0, 0.25, 1.0, 2.0, 2.0], np.float32), n)
    w[0] = 1.0  # a positive weight first and last: the edges' own rules get exercised too
    w[-1] = 2.0
    return w


def library_draws(seed: int, n: int, B: int) -> np.ndarray:
    """The library's Uphill draws: particle i's Philox stream, counter m (lanes.Stream)."""
    k0, k1 = seed_keys([seed])
    i = np.arange(n, dtype=np.uint64)
    words = [philox_block((k0[0], k1[0]), i, m >> 2, DOMAIN_PARTICLE)[m & 3] for m in range(B)]
    return np.stack(words, axis=1).astype(np.uint32) if B else np.empty((n, 0), np.uint32)


@pytest.mark.parametrize("B", [0, 1, 6, 23])
def test_uphill_gives_the_library_ancestors_on_its_draws(native, B):
    rng = np.random.default_rng(SEED + B)
    for n, w in ((3001, tied_weights(3001, rng)), (1024, rng.gamma(0.5, 2.0, 1024))):
        w = w.astype(np.float32)
        ref = pr.resample(w, "uphill", seed=SEED, B=B, backend="cpu")
        draws = library_draws(SEED, n, B)
        assert np.array_equal(native.uphill_from_draws(w, B, draws), ref)
    # negative control: on tied weights a tie taken by the later candidate differs
    w = tied_weights(3001, rng)
    ref = pr.resample(w, "uphill", seed=SEED, B=B, backend="cpu")
    flawed = native.uphill_from_draws(w, B, library_draws(SEED, 3001, B), "uphill_ties_later")
    assert np.array_equal(flawed, ref) == (B == 0)


@pytest.mark.parametrize("threads", [1, 3])
def test_the_filters_tiled_uphill_equals_the_plain_loop(native, threads):
    rng = np.random.default_rng(SEED)
    w = tied_weights(1000, rng)  # not a multiple of the tile, nor of the threads
    for B in (0, 7, 12):
        draws = native.uphill_draws(99, w.size, B)
        plain = native.uphill_from_draws(w, B, draws)
        assert np.array_equal(native.uphill_resample(w, B, 99, threads), plain)
        flawed = native.uphill_resample(w, B, 99, threads, flaw="uphill_ties_later")
        assert np.array_equal(flawed, plain) == (B == 0)


def test_systematic_gives_the_library_ancestors(native):
    rng = np.random.default_rng(SEED)
    k0, k1 = seed_keys([SEED])
    u = float(uniform_float(philox_block((k0[0], k1[0]), 0, 0, DOMAIN_GLOBAL)[0]))
    for w in (rng.gamma(0.3, 1.0, 5000), tied_weights(4097, rng)):
        w = w.astype(np.float32)
        w[-7:] = 0.0  # zeros after the last positive weight: O = N from it on
        ref = pr.resample(w, "systematic", seed=SEED, backend="cpu", precision="float64")
        r, last = scaled_prefix_sum(w, np.dtype(np.float64), w.size)
        assert np.array_equal(native.systematic_from_ratios(r, u, last), ref)
        for threads in (1, 2, 5):
            assert np.array_equal(native.systematic_resample(w, u, threads), ref)
        # negative control: the other end of the stratum
        assert not np.array_equal(native.systematic_resample(w, 1.0 - u, 2), ref)


def cell(runs_of_trajectory) -> tuple[float, float]:
    """(mean RMSE, z half-width) of J trajectories x R runs as docs/dulger2017.md defines
    it: the mean of the trajectory means, sqrt(SUM_j s_j^2 / R) / J its standard error."""
    a = np.asarray(runs_of_trajectory)
    J, R = a.shape
    return float(a.mean()), math.sqrt(float(a.var(axis=1, ddof=1).sum()) / R) / J


@pytest.mark.parametrize("method", ["uphill", "systematic"])
def test_the_filters_rmse_agrees_with_the_numpy_filter(native, method, monkeypatch):
    monkeypatch.setenv("PFRESAMPLE_THREADS", "1")
    J, R, n = 4, 6, 512
    traj = growth_trajectories(J, 100, SEED)
    y, truth = traj["y"], traj["truth"]
    ours = native.GrowthFilter(n, threads=2)

    def rmses(run):
        return [[rmse(run(y[j], 1000 * j + r), truth[j][1:]) for r in range(R)] for j in range(J)]

    reference = rmses(lambda yj, s: run_filter(GrowthModel(), yj, n, method, seed=s,
                                               backend="cpu", **SIR_OPTIONS).estimates)  # fmt: skip
    m_ref, se_ref = cell(reference)
    for flaw, agrees in (("none", True), ("drop_weight_update", False)):
        m, se = cell(rmses(lambda yj, s, flaw=flaw: ours.run(yj, s, method, flaw=flaw).estimates))
        half = Z * math.hypot(se, se_ref)
        assert (abs(m - m_ref) <= half) == agrees, (flaw, m, m_ref, half)


def test_a_run_is_reproducible_and_reports_its_steps(native):
    y = growth_trajectories(1, 100, SEED)["y"][0]
    f = native.GrowthFilter(700, threads=3)
    a, b = f.run(y, 5, "uphill"), f.run(y, 5, "uphill")
    assert np.array_equal(a.estimates, b.estimates) and np.array_equal(a.B, b.B)
    assert a.B.min() >= 0 and a.stage_seconds.shape == (100, 4)
    assert np.all((a.ess > 0) & (a.ess <= 700 * (1 + 1e-12)))
    s = f.run(y, 5, "systematic")
    assert np.all(s.B == -1) and np.isfinite(s.estimates).all()


def test_bad_input_is_refused(native):
    f = native.GrowthFilter(64, threads=1)
    with pytest.raises(ValueError, match="method"):
        f.run(np.ones(3), 1, "metropolis")
    with pytest.raises(ValueError, match="flaw"):
        f.run(np.ones(3), 1, flaw="nope")
    with pytest.raises(ValueError, match="non-empty"):
        f.run(np.ones(0), 1)
    with pytest.raises(ValueError, match="n must be"):
        native.GrowthFilter(0)
    with pytest.raises(ValueError, match="weights"):
        native.uphill_resample(np.array([1.0, -1.0]), 2, 1)
    with pytest.raises(ValueError, match="shape"):
        native.uphill_from_draws(np.ones(4), 2, np.zeros((4, 3), np.uint32))
    with pytest.raises(ValueError, match="positive"):
        native.systematic_resample(np.zeros(5), 0.5)


def test_the_bounds_run(native):
    src = np.arange(1000, dtype=np.float64)
    dst = np.zeros_like(src)
    native.stream_copy(dst, src, 2, 2)
    assert np.array_equal(dst, src)
    w = np.linspace(0.0, 1.0, 777, dtype=np.float32)
    assert native.gather_bound(w, 0, 3, 1, 2) == 0.0
    total = native.gather_bound(w, 8, 3, 1, 2)  # 3 rounds of the maxima of 8 loads
    assert 0.0 < total <= 3 * 777
