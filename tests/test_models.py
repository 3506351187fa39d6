"""The state-space models of the filter experiments against hand computations
of their equations (thesis eqs. 2.34–2.35 and 7.1–7.2)."""

import math

import numpy as np
import pytest

from pfresample.models import GrowthModel, RadarModel
from pfresample.models.radar import wrap_angle

BEARING_VAR = (0.1 * math.pi / 180.0) ** 2  # Table 7.1's R[1, 1]


# --- growth model (eqs. 2.34-2.35) -------------------------------------------------------------


def test_growth_parameters_are_the_thesis_values():
    m = GrowthModel()
    assert (m.sigma_v2, m.sigma_n2, m.x0, m.init_mean, m.init_var) == (10.0, 1.0, 0.1, 0.0, 2.0)


def test_growth_mean_transition_by_hand():
    # x = 2, k = 1: 2/2 + 25*2/(1 + 4) + 8 cos(1.2) = 1 + 10 + 2.898862035813389
    assert GrowthModel().mean_transition(2.0, 1) == pytest.approx(13.898862035813389, abs=1e-12)
    # x = 0, k = 0: only the cosine term, 8 cos(0) = 8
    assert GrowthModel().mean_transition(0.0, 0) == 8.0


def test_growth_transition_adds_the_known_draw():
    x = np.array([-1.0, 0.5, 2.0])
    z = np.random.default_rng(5).standard_normal(3)
    expected = GrowthModel().mean_transition(x, 3) + math.sqrt(10.0) * z
    got = GrowthModel().transition(x, 3, np.random.default_rng(5))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_growth_observe_and_likelihood_by_hand():
    m = GrowthModel()
    assert m.observe(2.0) == pytest.approx(0.2)  # 2^2 / 20
    # y = 1.2, x = 2: residual 1, log N(1; 0, 1) = -(1 + log 2 pi) / 2
    assert m.log_likelihood(1.2, 2.0) == pytest.approx(-1.4189385332046727, abs=1e-12)


def test_growth_likelihood_is_maximal_at_the_true_state():
    m = GrowthModel()
    grid = np.linspace(-10.0, 10.0, 2001)  # step 0.01, holds +-3 exactly
    ll = m.log_likelihood(m.observe(3.0), grid)
    # eq. 2.35 sees x^2 only: +3 and -3 are equally likely, nothing else as much
    assert set(np.abs(grid[ll == ll.max()]).round(9)) == {3.0}


def test_growth_simulate_shapes_and_start():
    x, y = GrowthModel().simulate(100, np.random.default_rng(0))
    assert x.shape == (101,) and y.shape == (100,)
    assert x[0] == 0.1
    # y[k - 1] measures x[k]: the residuals are the N(0, 1) noise n_k
    res = y - x[1:] ** 2 / 20.0
    assert abs(res.mean()) < 0.4 and 0.7 < res.std() < 1.3


def test_growth_init_particles_have_variance_two():
    p = GrowthModel().init_particles(200_000, np.random.default_rng(1))
    assert p.shape == (200_000,)
    assert abs(p.mean()) < 0.02 and p.var() == pytest.approx(2.0, rel=0.02)


# --- radar model (eqs. 7.1-7.2) ----------------------------------------------------------------


def test_radar_parameters_are_table_7_1():
    m = RadarModel()
    assert m.dt == 1.0 and m.x0 == (1000.0, 1000.0, 0.0, 0.0)
    assert m.p0_diag == (100.0**2, 100.0**2, 10.0**2, 10.0**2)
    assert m.q_diag == (10.0, 10.0) and m.r_diag == (100.0, BEARING_VAR)


def test_radar_mean_transition_by_hand():
    # F x with T = 1: positions move by one second of velocity
    got = RadarModel().mean_transition(np.array([[1000.0, 1000.0, 5.0, -3.0]]), 0)
    np.testing.assert_array_equal(got, [[1005.0, 997.0, 5.0, -3.0]])


def test_radar_transition_adds_the_known_draw():
    q1, q2 = np.random.default_rng(7).standard_normal(2) * math.sqrt(10.0)
    got = RadarModel().transition(
        np.array([[1000.0, 1000.0, 5.0, -3.0]]), 4, np.random.default_rng(7)
    )
    # G q with T = 1: positions get q / 2, velocities q
    expected = [[1005.0 + q1 / 2, 997.0 + q2 / 2, 5.0 + q1, -3.0 + q2]]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_radar_observe_by_hand():
    y = RadarModel().observe(np.array([300.0, 400.0, 7.0, 9.0]))
    np.testing.assert_allclose(y, [500.0, math.atan2(400.0, 300.0)], rtol=1e-15)
    assert y[1] == pytest.approx(0.9272952180016122)


def test_radar_likelihood_by_hand():
    x = np.array([300.0, 400.0, 0.0, 0.0])
    y = np.array([510.0, 0.9272952180016122 + 0.001])  # residuals 10 m and 1 mrad
    expected = -0.5 * (
        10.0**2 / 100.0
        + 0.001**2 / BEARING_VAR
        + math.log(2 * math.pi * 100.0)
        + math.log(2 * math.pi * BEARING_VAR)
    )
    assert RadarModel().log_likelihood(y, x) == pytest.approx(expected, rel=1e-12)


def test_radar_likelihood_is_maximal_at_the_true_state():
    m = RadarModel()
    truth = np.array([1200.0, 800.0, 3.0, 4.0])
    particles = truth + np.random.default_rng(2).normal(0.0, 20.0, (500, 4))
    ll = m.log_likelihood(m.observe(truth), np.vstack([truth, particles]))
    assert ll.argmax() == 0


def test_bearing_wraps_around():
    m = RadarModel()
    d, r = 0.002, 1000.0
    particle = np.array([r * math.cos(math.pi - d), r * math.sin(math.pi - d), 0.0, 0.0])
    y = np.array([r, -math.pi + d])
    # (-pi + d) - (pi - d) = -2 pi + 2d: wrapped, a residual of 2d, not almost -2 pi
    assert m.residual(y, particle)[1] == pytest.approx(2 * d, abs=1e-9)
    exact = m.log_likelihood(m.observe(particle), particle)
    assert exact - m.log_likelihood(y, particle) == pytest.approx(0.5 * (2 * d) ** 2 / BEARING_VAR)
    assert wrap_angle(3 * math.pi / 2) == pytest.approx(-math.pi / 2)


def test_radar_simulate_measurements():
    m = RadarModel()
    truth = np.array([[1000.0 + t, 1000.0 - 2 * t, 1.0, -2.0] for t in range(50)])
    y = m.simulate_measurements(truth, np.random.default_rng(3))
    assert y.shape == (50, 2)
    assert np.all((-math.pi <= y[:, 1]) & (y[:, 1] < math.pi))
    res = m.residual(y, truth)
    assert np.all(np.abs(res[:, 0]) < 50.0)  # 5 sigma of the 10 m range noise
    assert np.all(np.abs(res[:, 1]) < 5 * math.sqrt(BEARING_VAR))
    with pytest.raises(ValueError, match="shape"):
        m.simulate_measurements(truth[:, :2], np.random.default_rng(3))


def test_radar_init_particles_follow_p0():
    p = RadarModel().init_particles(100_000, np.random.default_rng(4))
    assert p.shape == (100_000, 4)
    np.testing.assert_allclose(p.mean(axis=0), [1000.0, 1000.0, 0.0, 0.0], atol=2.0)
    np.testing.assert_allclose(p.std(axis=0), [100.0, 100.0, 10.0, 10.0], rtol=0.02)
