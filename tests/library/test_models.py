"""The state-space models of the filter experiments against hand computations
of their equations (thesis eqs. 2.34–2.35 and 7.1–7.2; the bearings-only
tracking model's eqs. B1–B2, models/bearings.py)."""

import math

import numpy as np
import pytest

from pfresample.models import BearingsOnlyModel, GrowthModel, RadarModel
from pfresample.models.bearings import wrap_bearing
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


def test_the_papers_start_draws_x1_from_the_noise_law_before_any_weighting():
    """Gelencsér-Horváth et al.: the particles that meet z_1 are N(0, 10)
    draws. particles_from_noise realises them as x_0 = 0 and a first step
    without the drift: f(0) = 0 exactly, so x_1 = sqrt(10) v, bit for bit;
    every later step is eq. 2.34 with its drift; the generator is left where
    the thesis start leaves it (common random numbers); the truth is the
    same trajectory either way."""
    paper, thesis = GrowthModel(particles_from_noise=True), GrowthModel()
    rng_p, rng_t = np.random.default_rng(7), np.random.default_rng(7)
    x0 = paper.init_particles(1000, rng_p)
    thesis.init_particles(1000, rng_t)
    np.testing.assert_array_equal(x0, np.zeros(1000))
    v = np.random.default_rng(8).standard_normal(1000)
    np.testing.assert_array_equal(
        paper.transition(x0, 0, np.random.default_rng(8)), math.sqrt(10.0) * v
    )
    assert paper.filter_drift(0) == 0.0 and thesis.filter_drift(0) == 8.0
    assert paper.mean_transition(2.0, 1) == thesis.mean_transition(2.0, 1)
    assert (paper.start_mean, paper.start_sd) == (0.0, 0.0)
    assert (thesis.start_mean, thesis.start_sd) == (0.0, math.sqrt(2.0))
    np.testing.assert_array_equal(rng_p.standard_normal(5), rng_t.standard_normal(5))
    a, b = (
        paper.simulate(30, np.random.default_rng(9)),
        thesis.simulate(30, np.random.default_rng(9)),
    )
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    # The law of x_1 over many draws: N(0, 10) (the negative control: the thesis start's
    # x_1 has mean f(x_0) + 8, about 8).
    x1 = paper.transition(paper.init_particles(200_000, rng_p), 0, rng_p)
    assert abs(x1.mean()) < 0.03 and x1.var() == pytest.approx(10.0, rel=0.02)
    x1_thesis = thesis.transition(thesis.init_particles(200_000, rng_t), 0, rng_t)
    assert abs(x1_thesis.mean()) > 7.0


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


# --- bearings-only tracking (eqs. B1-B2, Gordon, Salmond & Smith 1993) ------------------------

BOT_F = np.array(
    [[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0]]
)
BOT_G = np.array([[0.5, 0.0], [1.0, 0.0], [0.0, 0.5], [0.0, 1.0]])


def test_bot_parameters_are_gordon_salmond_smith():
    m = BearingsOnlyModel()
    assert (m.q_sd, m.r_sd) == (0.001, 0.005)
    assert m.x0 == (-0.05, 0.001, 0.7, -0.055)
    assert m.prior_mean == (0.0, 0.0, 0.4, -0.05) and m.prior_sd == (0.5, 0.005, 0.3, 0.01)
    np.testing.assert_array_equal(m.transition_matrix(), BOT_F)
    np.testing.assert_array_equal(m.noise_gain(), BOT_G)


def test_bot_mean_transition_by_hand():
    # F x with a unit step: x += xdot, y += ydot
    got = BearingsOnlyModel().mean_transition(np.array([[-0.05, 0.001, 0.7, -0.055]]))
    np.testing.assert_allclose(got, [[-0.049, 0.001, 0.645, -0.055]], rtol=0, atol=1e-15)


def test_bot_transition_adds_the_known_draw():
    x = np.array([[-0.05, 0.001, 0.7, -0.055], [1.0, -0.2, 0.3, 0.4]])
    w = np.random.default_rng(8).standard_normal((2, 2)) * 0.001
    got = BearingsOnlyModel().transition(x, 5, np.random.default_rng(8))
    assert got.shape == (2, 4)
    # G w: positions get w / 2, velocities w
    expected = x @ BOT_F.T + np.column_stack([w[:, 0] / 2, w[:, 0], w[:, 1] / 2, w[:, 1]])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


@pytest.mark.slow
def test_bot_transition_has_mean_f_x_and_covariance_g_q_g():
    m = BearingsOnlyModel()
    n = 400_000
    x = np.tile([-0.05, 0.001, 0.7, -0.055], (n, 1))
    d = m.transition(x, 0, np.random.default_rng(9)) - x @ BOT_F.T
    sigma = 0.001**2 * BOT_G @ BOT_G.T  # cov of G w: q [[1/4, 1/2], [1/2, 1]] per axis
    # Tolerances are 5 standard errors of the estimators: the sample mean of
    # component i has SE sqrt(S_ii / n); for Gaussian data the sample
    # covariance of (i, j) has variance (S_ii S_jj + S_ij^2) / n.
    se_mean = np.sqrt(np.diag(sigma) / n)
    assert np.all(np.abs(d.mean(axis=0)) < 5 * se_mean)
    se_cov = np.sqrt((np.outer(np.diag(sigma), np.diag(sigma)) + sigma**2) / n)
    assert np.all(np.abs(np.cov(d.T) - sigma) < 5 * se_cov)


def test_bot_observe_by_hand():
    x = np.array([[1.0, 0.0, 1.0, 0.0], [-1.0, 0.0, 1.0, 0.0], [-1.0, 0.0, -1.0, 0.0]])
    y = BearingsOnlyModel().observe(x)
    assert y.shape == (3,)
    # atan2 keeps the quadrant: 45, 135 and -135 degrees
    np.testing.assert_allclose(y, [math.pi / 4, 3 * math.pi / 4, -3 * math.pi / 4], rtol=1e-15)


def test_bot_likelihood_by_hand():
    var = 0.005**2
    x = np.array([[1.0, 0.3, 1.0, -0.2], [2.0, 0.0, 2.0, 0.0]])  # both at bearing pi / 4
    ll = BearingsOnlyModel().log_likelihood(math.pi / 4 + 0.003, x)  # residual 3 mrad
    expected = -0.5 * (0.003**2 / var + math.log(2 * math.pi * var))
    assert ll.shape == (2,)
    np.testing.assert_allclose(ll, [expected, expected], rtol=1e-9)


def test_bot_likelihood_wraps_across_the_cut():
    m = BearingsOnlyModel()
    d, var = 0.002, 0.005**2
    # bearing pi - d (left of the sensor, just above the x-axis), measured -pi + d
    particle = np.array([[math.cos(math.pi - d), 0.0, math.sin(math.pi - d), 0.0]])
    y = -math.pi + d
    # (-pi + d) - (pi - d) = -2 pi + 2d: wrapped, a residual of 2d, not almost -2 pi
    assert m.residual(y, particle)[0] == pytest.approx(2 * d, abs=1e-12)
    expected = -0.5 * ((2 * d) ** 2 / var + math.log(2 * math.pi * var))
    assert m.log_likelihood(y, particle)[0] == pytest.approx(expected, rel=1e-9)


def test_wrap_bearing_is_atan2s_range():
    # (-pi, pi]: pi stays, -pi becomes pi; elsewhere as radar.wrap_angle
    assert wrap_bearing(math.pi) == math.pi and wrap_bearing(-math.pi) == math.pi
    a = np.array([0.1, -3.0, 3.5, -3.5, 7.0, -10.0])
    np.testing.assert_allclose(wrap_bearing(a), wrap_angle(a), atol=1e-15)


def test_bot_noise_free_track_crosses_the_cut():
    # F^k x_0: x stays < 0 (-0.05 + 0.001 k) and y turns negative between steps
    # 12 and 13, so the bearing passes through the +-pi cut (x < 0, y = 0)
    m = BearingsOnlyModel()
    track = [np.asarray(m.x0)]
    for _ in range(24):
        track.append(m.mean_transition(track[-1]))
    track = np.array(track)
    assert np.all(track[:, 0] < 0)
    b = m.observe(track)
    assert np.all(b[:13] > math.pi / 2) and np.all(b[13:] < -math.pi / 2)
    # b[12] = 2.33, b[13] = -2.76: a turn of +1.20 rad through the cut, not -5.09
    assert wrap_angle(b[13] - b[12]) == pytest.approx(b[13] - b[12] + 2 * math.pi)
    assert 0 < wrap_angle(b[13] - b[12]) < 1.3


def test_bot_simulate_shapes_and_start():
    m = BearingsOnlyModel()
    x, y = m.simulate(24, np.random.default_rng(10))
    assert x.shape == (25, 4) and y.shape == (24,)
    np.testing.assert_array_equal(x[0], [-0.05, 0.001, 0.7, -0.055])
    assert np.all((-math.pi < y) & (y <= math.pi))
    # y[k - 1] measures x[k]: the wrapped residuals are the N(0, 0.005^2) noise
    assert np.all(np.abs(m.residual(y, x[1:])) < 5 * 0.005)
    # the process noise is small: each step stays within 5 sd of F x
    step = x[1:] - x[:-1] @ BOT_F.T
    assert np.all(np.abs(step) < 5 * 0.001)


def test_bot_init_particles_follow_the_prior():
    n = 100_000
    p = BearingsOnlyModel().init_particles(n, np.random.default_rng(11))
    assert p.shape == (n, 4)
    sd = np.array([0.5, 0.005, 0.3, 0.01])
    # 5 standard errors: sd / sqrt(n) for the mean, about sd / sqrt(2 n) for the sd
    assert np.all(np.abs(p.mean(axis=0) - [0.0, 0.0, 0.4, -0.05]) < 5 * sd / math.sqrt(n))
    assert np.all(np.abs(p.std(axis=0) - sd) < 5 * sd / math.sqrt(2 * n))
