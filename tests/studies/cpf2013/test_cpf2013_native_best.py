"""cpf2013: the best CPU code (native/cpf_best.c) is the library's CPF. Its cellular
choice gives ``cellular_log``'s ancestors on the same log-weights and uniforms (every
neighbourhood that underflows included), its whole run replaying the NumPy filter's own
draws gives the NumPy filter's estimates, its own runs (counter-based random numbers)
match the NumPy filter's error within an interval from the runs' spread, and deliberate
flaws (a dropped neighbour, weights ignored) are caught by the same comparisons."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from pfresample.filters import CPF_OPTIONS, run_filter
from pfresample.resampling.cellular import cellular_log, draws_of
from pfresample.rng import uniform_float
from pfresample_studies.cpf2013 import targets

SEED = 2013


pytestmark = pytest.mark.usefixtures("native_build")


def ring(n: int, rng) -> np.ndarray:
    """Log-weights with a spread of 30 and a third of them 900 lower: under the ring's
    shift many neighbourhoods underflow and draw again with their own shift; a few -inf."""
    lw = rng.normal(0.0, 30.0, n)
    lw[rng.random(n) < 0.3] -= 900.0
    lw[rng.random(n) < 0.02] = -np.inf
    return lw


@pytest.mark.parametrize("n, radius", [(1000, 7), (4096, 256), (333, 332), (64, 0), (97, 40)])
def test_choice_equals_cellular_log(n, radius):
    from pfresample_studies.cpf2013 import native

    lw = ring(n, np.random.default_rng(SEED + n))
    key = (np.uint64(SEED), np.uint64(n))
    u = uniform_float(draws_of(key, n)).astype(np.float64)
    reference = cellular_log(lw, key, radius)
    for threads in (1, 2, 3):
        assert np.array_equal(native.choose(lw, u, radius, threads=threads), reference)
    if radius > 0:  # the negative control: one neighbour fewer must be seen
        flawed = native.choose(lw, u, radius, threads=2, flaw="drop_farthest")
        assert not np.array_equal(flawed, reference)


def test_a_neighbourhood_of_minus_inf_takes_the_nearest_finite_before():
    from pfresample_studies.cpf2013 import native

    lw = np.full(50, -np.inf)
    lw[[3, 30]] = 0.0
    key = (np.uint64(1), np.uint64(2))
    u = uniform_float(draws_of(key, 50)).astype(np.float64)
    got = native.choose(lw, u, 4)
    assert np.array_equal(got, cellular_log(lw, key, 4))
    assert set(got.tolist()) == {3, 30}


@pytest.mark.parametrize("name, n, radius", [("growth", 600, 16), ("bot", 500, 33)])
def test_whole_run_replaying_numpy_draws_gives_its_estimates(name, n, radius):
    from pfresample_studies.cpf2013 import native

    model = targets.model(name)
    y = targets.simulate(name, 1, targets_steps(name), SEED)["y"][0]
    reference = run_filter(model, y, n, "cellular", seed=SEED, radius=radius, backend="cpu",
                           **CPF_OPTIONS).resampled_estimates  # fmt: skip
    draws = native.numpy_draws(name, n, y.size, SEED)
    for threads in (1, 2):
        got = native.run(name, y, n, radius, draws=draws, threads=threads)
        assert got.shape == reference.shape
        np.testing.assert_allclose(got, reference, rtol=1e-9, atol=1e-12)
    flawed = native.run(name, y, n, radius, draws=draws, flaw="drop_farthest")
    assert np.abs(flawed - reference).max() > 1e-6


def targets_steps(name: str) -> int:
    return {"growth": 100, "bot": 24}[name]


def test_thread_count_changes_only_the_estimates_rounding():
    from pfresample_studies.cpf2013 import native

    y = targets.simulate("growth", 1, 100, SEED)["y"][0]
    one = native.run("growth", y, 1001, 20, seed=5, threads=1)
    three = native.run("growth", y, 1001, 20, seed=5, threads=3)
    np.testing.assert_allclose(one, three, rtol=1e-12, atol=1e-12)


COUNT = 24  # trajectories of the statistical comparison


@functools.cache
def numpy_mse() -> tuple[np.ndarray, dict]:
    """The NumPy filter's MSE on each of COUNT growth trajectories (N = 256, r = 16)."""
    model, data = targets.model("growth"), targets.simulate("growth", COUNT, 100, SEED)
    mse = np.empty(COUNT)
    for j in range(COUNT):
        ref = run_filter(model, data["y"][j], 256, "cellular", seed=j, radius=16,
                         backend="cpu", **CPF_OPTIONS).resampled_estimates  # fmt: skip
        mse[j] = np.mean((ref - data["truth"][j, 1:]) ** 2)
    return mse, data


def paired_z(flaw: str) -> float:
    """Each trajectory's MSE by the C filter (its own random numbers) minus the NumPy
    filter's: the mean over the standard error of the mean."""
    from pfresample_studies.cpf2013 import native

    reference, data = numpy_mse()
    d = np.empty(COUNT)
    for j in range(COUNT):
        got = native.run("growth", data["y"][j], 256, 16, seed=10_000 + j, threads=2, flaw=flaw)
        d[j] = np.mean((got - data["truth"][j, 1:]) ** 2) - reference[j]
    return float(d.mean() / (d.std(ddof=1) / np.sqrt(COUNT)))


def test_own_runs_match_the_numpy_filters_error_and_a_flaw_does_not():
    # |z| < 3.3: a 99.9% interval from the runs' spread (fixed seeds: deterministic)
    assert abs(paired_z("none")) < 3.3
    assert paired_z("self") > 3.3  # the weights ignored: the error must be resolved higher


def test_bad_input_is_refused():
    from pfresample_studies.cpf2013 import native

    y = np.zeros(5)
    with pytest.raises(ValueError, match="r <= N - 1"):
        native.run("growth", y, 10, 10)
    with pytest.raises(ValueError, match="model"):
        native.run("radar", y, 10, 2)
    with pytest.raises(ValueError, match="threads"):
        native.run("growth", y, 10, 2, threads=0)
    with pytest.raises(ValueError, match="finite"):
        native.choose(np.array([0.0, np.nan]), np.zeros(2), 1)
    with pytest.raises(ValueError, match="sizes"):
        native.run("growth", y, 10, 2, draws=(np.zeros(3), np.zeros(3)))
