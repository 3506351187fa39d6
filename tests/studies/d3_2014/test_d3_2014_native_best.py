"""The best CPU code for Das et al.'s Table 5 (``studies/d3_2014/native/d3_best.c``):
one resampling equals NumPy exactly (systematic on given weights and u; D3's strides,
range maxima, claims and moves on given weights and uniforms, against the library's
``resampling.d3``), on one thread and on several where the sums are exact (integer
weights); whole runs of both filters agree with the NumPy filters statistically (the
paired RMSE difference's 99 % interval holds 0); and deliberately flawed variants are
caught by the same comparisons (negative controls)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from pfresample.filters import D3_OPTIONS, run_filter, velocity_errors
from pfresample.models import UuvModel
from pfresample.resampling import d3
from pfresample.rng import DOMAIN_PARTICLE, philox_block, seed_keys, uniform_float

pytestmark = pytest.mark.usefixtures("native_build")


def native():
    from pfresample_studies.d3_2014 import native as module

    return module


def key_of(seed: int) -> tuple[int, int]:
    k0, k1 = seed_keys([seed])
    return int(k0[0]), int(k1[0])


def weights(n: int, seed: int, integer: bool) -> np.ndarray:
    """Heavy-tailed weights with zeros inside and at the end (the last-positive cap) and
    repeated values (ties of the range maxima); ``integer``: small integers, whose sums
    are exact in any order, so any thread count gives the one-thread prefix sum."""
    rng = np.random.default_rng(seed)
    w = np.floor(rng.pareto(1.5, n) * 4) if integer else rng.pareto(1.5, n)
    w[rng.random(n) < 0.2] = 0.0
    w[-3:] = 0.0
    w[0] = max(w[0], 1.0)
    return w


def reference_systematic(w: np.ndarray, u: float) -> np.ndarray:
    """d3_best.c's convention in NumPy: slot i takes the first j with C_j > (i + u)
    C_N / N (numpy.cumsum: sequential), at most the last positive weight."""
    c = np.cumsum(w)
    n = w.size
    targets = (np.arange(n, dtype=np.float64) + u) * (c[-1] / n)
    return np.minimum(np.searchsorted(c, targets, side="right"), np.flatnonzero(w > 0)[-1])


def library_uniforms(key, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The uniforms resampling.d3.d3 draws for moves (a) and (b) (its contract)."""
    streams = np.arange(n, dtype=np.uint64)
    ua, ub = np.empty((n, 2)), np.empty((n, 2))
    for d in range(2):
        block = philox_block(key, streams, (2 * d) >> 2, DOMAIN_PARTICLE)
        ua[:, d] = uniform_float(block[(2 * d) & 3])
        ub[:, d] = uniform_float(block[(2 * d + 1) & 3])
    return ua, ub


def case(n: int, seed: int, integer: bool = False):
    rng = np.random.default_rng(seed + 100)
    x = rng.normal(size=(n, 2))
    w = weights(n, seed, integer)
    pw = np.round(-0.5 * (x * x).sum(axis=1), 1)  # rounded: ties among the prior weights
    return x, w, pw


# --- one resampling, exactly -----------------------------------------------------------


@pytest.mark.parametrize(("integer", "threads"), [(False, 1), (True, 1), (True, 2), (True, 3)])
def test_systematic_equals_the_numpy_reference(integer, threads):
    for seed, n in ((1, 1), (2, 7), (3, 1000), (4, 4099)):
        w = weights(n, seed, integer) if n > 1 else np.ones(1)
        u = float(np.random.default_rng(seed).random())
        got = native().systematic(w, u, threads=threads)
        np.testing.assert_array_equal(got, reference_systematic(w, u))


def test_negative_control_shifted_weights_are_caught_by_the_systematic_comparison():
    w = weights(1000, 5, False)
    flawed = native().systematic(w, 0.4, threads=2, flaw="shifted_weights")
    assert (flawed != reference_systematic(w, 0.4)).any()


@pytest.mark.parametrize("noise", d3.NOISES)
@pytest.mark.parametrize(("integer", "threads"), [(False, 1), (True, 3)])
def test_the_d3_step_equals_the_library_on_its_strides_and_uniforms(noise, integer, threads):
    """Given the library's strides (resampling.d3.strides, the prefix stride) and its
    uniforms, the compiled step's range maxima, claims and moves give resampling.d3.d3's
    particles bit for bit; l_i and p_i are plan's."""
    n = 2000
    x, w, pw = case(n, 7, integer)
    key = key_of(8)
    j_ref, l_ref, p_ref, _ = d3.plan(w, pw, key)
    ua, ub = library_uniforms(key, n)
    out, j, l_, p = native().d3_step(x, w, pw, j=j_ref, ua=ua, ub=ub, noise=noise,
                                     threads=threads)  # fmt: skip
    np.testing.assert_array_equal(j, j_ref)
    np.testing.assert_array_equal(l_, l_ref)
    np.testing.assert_array_equal(p, p_ref)
    assert out.tobytes() == d3.d3(x, w, pw, key, noise=noise).tobytes()


@pytest.mark.parametrize(("integer", "threads"), [(False, 1), (True, 2), (True, 3)])
def test_the_d3_steps_own_strides_equal_the_numpy_reference(integer, threads):
    """The compiled code's strides: systematic (the header's convention) and the
    paper's thresholds (resampling.d3.paper_thresholds; the first j with C_j / C_N >=
    u_i), both capped at the last positive weight; then the rest as the library."""
    n = 3000
    x, w, pw = case(n, 9, integer)
    key = key_of(10)
    ua, ub = library_uniforms(key, n)
    c = np.cumsum(w)
    last = np.flatnonzero(w > 0)[-1]
    thresholds = d3.paper_thresholds(n, 160, key)
    for kw, j_ref in (
        ({"u": 0.25}, reference_systematic(w, 0.25)),
        ({"thresholds": thresholds},
         np.minimum(np.searchsorted(c / c[-1], thresholds, side="left"), last)),
    ):  # fmt: skip
        out, j, l_, p = native().d3_step(x, w, pw, ua=ua, ub=ub, threads=threads, **kw)
        np.testing.assert_array_equal(j, j_ref)
        i = np.arange(n)
        lo, hi = np.minimum(i, j_ref), np.maximum(i, j_ref)
        np.testing.assert_array_equal(l_, d3.range_argmax(w, lo, hi))
        np.testing.assert_array_equal(p, d3.range_argmax(pw, lo, hi))
        ref, _, _, _ = native().d3_step(x, w, pw, j=j_ref, ua=ua, ub=ub, threads=1)
        assert out.tobytes() == ref.tobytes()


@pytest.mark.parametrize("flaw", ["open_range", "shifted_weights"])
def test_negative_control_a_flawed_d3_step_is_caught(flaw):
    n = 2000
    x, w, pw = case(n, 11, False)
    key = key_of(12)
    j_ref, l_ref, p_ref, _ = d3.plan(w, pw, key)
    ua, ub = library_uniforms(key, n)
    out, _, l_, p = native().d3_step(x, w, pw, j=j_ref, ua=ua, ub=ub, threads=2, flaw=flaw)
    assert (l_ != l_ref).any() or (p != p_ref).any()
    assert out.tobytes() != d3.d3(x, w, pw, key).tobytes()


def test_the_exp_of_the_weights_is_libms_to_rounding():
    x = np.concatenate([np.linspace(-744.0, 0.0, 20001), -np.logspace(-12, 2, 200)])
    got, want = native().exp(x), np.exp(x)
    assert np.max(np.abs(got - want) / want) < 1e-14
    assert native().exp(np.array([-746.0, -1e6])).max() <= 5e-324  # float32 makes it 0


# --- whole runs, statistically ----------------------------------------------------------

STEPS, N, SEEDS = 150, 800, 10


def paired_interval(a: np.ndarray, b: np.ndarray, level: float = 0.99) -> np.ndarray:
    """Student-t interval (per component) of the mean of the paired differences a - b."""
    d = a - b
    half = stats.t.ppf(0.5 + level / 2, d.shape[0] - 1) * d.std(axis=0, ddof=1)
    half /= np.sqrt(d.shape[0])
    return np.stack([d.mean(axis=0) - half, d.mean(axis=0) + half])


@pytest.fixture(scope="module")
def uuv_case():
    """The study's model in the paper's regime (no process noise in the filter) over
    its first STEPS steps, one trajectory."""
    full = replace(UuvModel(), filter_process_sd=0.0)
    model = replace(full, duration=STEPS * full.dt)
    truth, y = UuvModel(duration=STEPS * full.dt).simulate(2014)
    return model, y, truth[1:]


@pytest.mark.parametrize("kind", ["systematic", "d3"])
def test_whole_runs_agree_with_the_numpy_filter_and_a_flawed_one_does_not(uuv_case, kind):
    """RMSE over the run of the compiled filter and of run_filter (D3_OPTIONS; d3 with
    eq. 5 and the prefix stride), SEEDS seeds, paired by their common initial
    particles: the 99 % interval of the mean difference holds 0 in both components;
    with the weights shifted by half the cloud it does not (not in both). (One thread:
    the exact tests cover the thread counts.)"""
    model, y, truth = uuv_case
    ours, numpy_, flawed = [], [], []
    for s in range(SEEDS):
        numpy_.append(velocity_errors(
            run_filter(model, y, N, kind, seed=s, backend="cpu", **D3_OPTIONS).estimates,
            truth)[0])  # fmt: skip
        for runs, flaw in ((ours, "none"), (flawed, "shifted_weights")):
            r = native().run(model, y, N, kind, seed=s, threads=1, flaw=flaw)
            runs.append(velocity_errors(r.estimates, truth)[0])
    ours, numpy_, flawed = map(np.asarray, (ours, numpy_, flawed))
    lo, hi = paired_interval(ours, numpy_)
    assert ((lo <= 0) & (0 <= hi)).all(), (lo, hi)
    lo, hi = paired_interval(flawed, numpy_)
    assert not ((lo <= 0) & (0 <= hi)).all(), (lo, hi)  # the same criterion fails


def test_a_run_times_its_window_and_returns_its_particles(uuv_case):
    model, y, _ = uuv_case
    r = native().run(model, y, 500, "d3", seed=3, cdf="paper", noise="fig9", skip=2)
    assert 0 < r.window_seconds <= r.seconds
    assert r.particles.shape == (500, 2) and np.isfinite(r.particles).all()
    assert np.isfinite(r.estimates).all() and r.estimates.shape == (STEPS, 2)


# --- bad input and the bounds -----------------------------------------------------------


def test_bad_input_is_refused_with_a_reason(uuv_case):
    model, y, _ = uuv_case
    nat = native()
    with pytest.raises(ValueError, match="index 2"):
        nat.systematic(np.array([1.0, 2.0, -1.0]), 0.5)
    with pytest.raises(ValueError, match="no positive weight"):
        nat.systematic(np.zeros(4), 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        nat.systematic(np.ones(4), 1.0)
    with pytest.raises(ValueError, match="kind"):
        nat.run(model, y, 10, "multinomial", seed=0)
    with pytest.raises(ValueError, match="cdf"):
        nat.run(model, y, 10, "d3", seed=0, cdf="local")
    with pytest.raises(ValueError, match="flaw"):
        nat.systematic(np.ones(4), 0.5, flaw="other")
    with pytest.raises(ValueError, match="exactly one"):
        nat.d3_step(np.zeros((4, 2)), np.ones(4), np.zeros(4), ua=np.zeros((4, 2)),
                    ub=np.zeros((4, 2)))  # fmt: skip
    with pytest.raises(ValueError, match="threads"):
        nat.systematic(np.ones(4), 0.5, threads=0)


def test_the_bounds_are_measured():
    nat = native()
    assert nat.copy_seconds(1 << 12, 4, threads=2) > 0
    assert nat.barrier_seconds(10, threads=2) > 0
    assert nat.bytes_per_step("d3", 10) > nat.bytes_per_step("systematic", 10) > 0
