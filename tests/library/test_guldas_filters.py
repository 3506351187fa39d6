"""The filters and SMC-EM of Güldaş (2015), §4.2–4.3 (filters/adaptive.py,
filters/smcem.py, models/bimodal.py, models/volatility.py).

* Bimodal model: the filtering mean is exactly 0 (symmetry); each filter's
  run-averaged estimate lies within 4 standard errors of it (standard error
  from the runs' own spread; a false alarm about 6e-5 per filter), and the
  interval is narrow enough to see a 20 % imbalance of the modes. The AMSE
  falls as 1/N: the weighted least-squares slope of log AMSE on log N is -1
  within 4 of its standard errors (each log AMSE's standard error by the
  delta method, se(AMSE) / AMSE).
* Adaptive filter: tau = 0 never resamples; tau above 1 resamples every step
  with every stage and equals the bootstrap filter with the same method and
  seed.
* SMC-EM: eq. 4.10 on hand-built statistics; on a long simulated path, the
  complete-data M-step recovers alpha* and sigma* within 4 asymptotic
  standard errors (Var alpha^ ~ (1 - alpha^2) / n, Var sigma^ ~ sigma^2 /
  (2 n)); both resampling schemes' E-steps agree with a large-N reference
  within 4 standard errors of their difference; one SMC-EM iteration equals
  eq. 4.10 of a large-N E-step within 4 standard errors; the butterfly
  scheme's permutation mixes the blocks.
* SMC-EM against the exact solution (filters/volatility_grid.py): on a tiny
  model (n = 2) the grid smoother's statistics equal a brute-force 3-D
  quadrature and eq. 4.10 maximises Q there (no point around it higher, zero
  gradient); the grid is converged (finer and wider grids agree to 1e-8); the
  particle E-step's mean lies within 4 standard errors of the exact one (and
  far from another parameter's: the control); exact EM never lowers the
  likelihood and stops at the ML point; the stopping rule against a brute
  force on a geometric trace, never on a drift (the control), and run_smcem
  ends where it says; the adaptive SMC-EM filter with tau > 1 is the
  bootstrap's to the bit, with tau = 0.6 not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfresample.filters import ADAPTIVE_OPTIONS, BOOTSTRAP_OPTIONS, run_filter, volatility_grid
from pfresample.filters.adaptive import amse, interaction_level
from pfresample.filters.smcem import (
    expected_statistics,
    m_step,
    resampling_period,
    run_smcem,
    stop_iteration,
    transpose_permutation,
)
from pfresample.models import BimodalModel, VolatilityModel
from pfresample.radix import default_radix

Z = 4.0

FILTERS = [
    ("bootstrap", "multinomial", None),
    ("bootstrap", "butterfly-multinomial", None),
    ("adaptive", "butterfly-multinomial", None),
    ("adaptive", "butterfly-multinomial", (1024,)),  # adaptive multinomial
]


def run_bootstrap(model, y, n, method, seed, **kw):
    """Fig 1.2's filter (``run_filter`` with ``BOOTSTRAP_OPTIONS``) on the CPU."""
    return run_filter(model, y, n, method, seed=seed, backend="cpu", **BOOTSTRAP_OPTIONS, **kw)


def run_adaptive(model, y, n, method, seed, *, tau, radix=None):
    """Fig 1.3's filter (``run_filter`` with ``ADAPTIVE_OPTIONS``) on the CPU."""
    kw = {} if radix is None else {"radix": radix}
    return run_filter(model, y, n, method, seed=seed, backend="cpu", ess_threshold=tau,
                      **ADAPTIVE_OPTIONS, **kw)  # fmt: skip


def level(run, radix=None):
    """Each step's interaction level (Fig 4.11) of a run of the butterfly or a
    standard method."""
    if radix is None:
        radix = default_radix(run.n) if run.method.startswith("butterfly") else (run.n,)
    return interaction_level(run.stages, radix)


def _run(kind, method, radix, model, y, n, seed, tau=0.6):
    if kind == "bootstrap":
        return run_bootstrap(model, y, n, method, seed)
    return run_adaptive(model, y, n, method, seed, tau=tau, radix=radix)


@pytest.mark.parametrize("kind, method, radix", FILTERS)
@pytest.mark.slow
def test_bimodal_estimates_have_mean_zero(kind, method, radix):
    model = BimodalModel()
    truth, y = model.simulate(30)
    runs = np.array(
        [_run(kind, method, radix, model, y, 1024, s).resampled_estimates for s in range(60)]
    )
    final = runs[:, -1]  # the estimate at T, where the modes sit at +-15
    half_width = Z * final.std(ddof=1) / math.sqrt(final.size)
    assert abs(final.mean() - truth[-1]) < half_width
    assert half_width < 0.2 * y[-1]  # a 20 % imbalance of the modes would show


@pytest.mark.parametrize("method", ["multinomial", "butterfly-multinomial"])
@pytest.mark.slow
def test_bimodal_amse_falls_as_one_over_n(method):
    model = BimodalModel()
    truth, y = model.simulate(20)
    sizes = np.array([256, 1024, 4096])
    log_amse, se = [], []
    for n in sizes:
        a = np.array(
            [
                amse(run_bootstrap(model, y, n, method, s).resampled_estimates, truth)
                for s in range(60)
            ]
        )
        log_amse.append(math.log(a.mean()))
        se.append(a.std(ddof=1) / math.sqrt(a.size) / a.mean())
    x, w = np.log(sizes), 1.0 / np.square(se)
    xm = (w * x).sum() / w.sum()
    slope = (w * (x - xm) * (np.array(log_amse))).sum() / (w * (x - xm) ** 2).sum()
    slope_se = 1.0 / math.sqrt((w * (x - xm) ** 2).sum())
    assert abs(slope + 1.0) < Z * slope_se
    assert slope_se < 0.25  # the test can tell -1 from -0.5


def test_adaptive_with_tau_zero_never_resamples():
    model = BimodalModel()
    _, y = model.simulate(15)
    run = run_adaptive(model, y, 256, "butterfly-multinomial", 4, tau=0.0)
    assert run.stages.max() == 0 and level(run).max() == 0
    assert run.ess[-1] < run.ess[0]  # the weights degenerate, nothing resets them


@pytest.mark.parametrize("method", ["butterfly-multinomial", "butterfly-systematic"])
def test_adaptive_above_one_is_the_bootstrap_filter(method):
    model = BimodalModel()
    _, y = model.simulate(15)
    n = 2**12
    adaptive = run_adaptive(model, y, n, method, 5, tau=1.5)
    bootstrap = run_bootstrap(model, y, n, method, 5)
    assert np.all(adaptive.stages == 2) and np.all(level(adaptive) == 12)
    np.testing.assert_allclose(
        adaptive.resampled_estimates, bootstrap.resampled_estimates, rtol=0, atol=1e-12
    )
    np.testing.assert_array_equal(adaptive.ess, bootstrap.ess)


def test_adaptive_level_counts_radix_2_stages():
    model = BimodalModel()
    _, y = model.simulate(20)
    run = run_adaptive(model, y, 1024, "butterfly-multinomial", 6, tau=0.6, radix=(2,) * 10)
    np.testing.assert_array_equal(level(run, (2,) * 10), run.stages)  # log2 of 2^k
    assert 0 < run.stages.mean() < 10  # Fig 4.11: between none and every stage


def test_m_step_is_eq_4_10():
    s1, s2, s3, s4 = 40.0, 41.5, 38.0, 90.0
    alpha, sigma = m_step((s1, s2, s3, s4), 100)
    assert alpha == pytest.approx(s3 / s1)
    assert sigma**2 == pytest.approx((alpha**2 * s1 - 2 * alpha * s3 + s2) / 101)


def test_complete_data_m_step_recovers_the_parameters():
    model, length = VolatilityModel(), 20000
    x, y = model.simulate(length, np.random.default_rng(2015))
    stats = (
        np.sum(x[:-1] ** 2),
        np.sum(x**2),
        np.sum(x[:-1] * x[1:]),
        np.sum(y**2 * np.exp(-x)),
    )
    alpha, sigma = m_step(stats, length)
    assert abs(alpha - model.alpha) < Z * math.sqrt((1 - model.alpha**2) / length)
    assert abs(sigma - model.sigma) < Z * model.sigma / math.sqrt(2 * length)
    assert stats[3] / (length + 1) == pytest.approx(model.beta**2, rel=Z * math.sqrt(2 / length))


@pytest.mark.parametrize("scheme", ["multinomial", "butterfly"])
@pytest.mark.slow
def test_e_step_agrees_with_a_large_n_reference(scheme):
    model = VolatilityModel()
    _, y = model.simulate(50, np.random.default_rng(7))
    reference = np.array([expected_statistics(model, y, 2**14, "multinomial", s) for s in range(4)])
    runs = np.array([expected_statistics(model, y, 1024, scheme, 100 + s) for s in range(40)])
    diff = runs.mean(axis=0) - reference.mean(axis=0)
    se = np.sqrt(runs.var(axis=0, ddof=1) / len(runs) + reference.var(axis=0, ddof=1) / 4)
    assert np.all(np.abs(diff) < Z * se)
    assert np.all(se < 0.05 * np.abs(reference.mean(axis=0)))  # a 5 % bias would show


def test_transpose_mixes_the_blocks():
    n, r = 2**12, 64
    order = transpose_permutation(n, r)
    assert sorted(order) == list(range(n))
    old_block = order // r  # the block each particle came from
    for block in old_block.reshape(-1, r):
        assert len(set(block)) == r  # r particles from r different blocks
    assert resampling_period(2**11) == 2 and resampling_period(2**21) == 3


@pytest.mark.parametrize("scheme", ["multinomial", "butterfly"])
@pytest.mark.slow
def test_one_em_iteration_is_the_m_step_of_the_e_step(scheme):
    # run_smcem's first iteration from (0.9, 0.2) against eq. 4.10 applied to a
    # large-N E-step under the same parameters: equal within 4 standard errors
    # of their difference (each side's spread over its seeds).
    _, y = VolatilityModel().simulate(100, np.random.default_rng(11))
    model = VolatilityModel(alpha=0.9, sigma=0.2)
    reference = np.array([
        m_step(expected_statistics(model, y, 2**14, "multinomial", s), 100) for s in range(4)
    ])  # fmt: skip
    runs = [run_smcem(y, 1024, scheme, s, iterations=1, alpha0=0.9, sigma0=0.2) for s in range(30)]
    first = np.array([(r.alpha[1], r.sigma[1]) for r in runs])
    assert np.all(first[:, 0] != 0.9)  # the iteration moved
    diff = first.mean(axis=0) - reference.mean(axis=0)
    se = np.sqrt(first.var(axis=0, ddof=1) / len(first) + reference.var(axis=0, ddof=1) / 4)
    assert np.all(np.abs(diff) < Z * se)
    assert np.all(Z * se < 0.02)  # an update off by 0.02 in alpha or sigma would show


# --- SMC-EM against the exact solution (filters/volatility_grid.py), issue 40 ---


def _posterior_grid(y, alpha, sigma, beta, h=0.02, half=3.0):
    """The exact posterior of (x_0, x_1, x_2) given y_0 ... y_2 on a 3-D grid
    (midpoints of [-half, half]^3, step h), by brute force: no recursion
    shared with volatility_grid."""
    x = -half + h * (np.arange(int(2 * half / h)) + 0.5)
    x0, x1, x2 = np.meshgrid(x, x, x, indexing="ij", sparse=True)
    log_p = (
        -0.5 * (x0 / sigma) ** 2
        - 0.5 * ((x1 - alpha * x0) / sigma) ** 2
        - 0.5 * ((x2 - alpha * x1) / sigma) ** 2
    )
    for xk, yk in ((x0, y[0]), (x1, y[1]), (x2, y[2])):
        log_p = log_p - 0.5 * (xk + yk**2 / (beta**2 * np.exp(xk)))
    p = np.exp(log_p - log_p.max())
    return (x0, x1, x2), p / p.sum()


@pytest.mark.slow
def test_exact_statistics_and_the_m_step_maximise_q_on_a_tiny_model():
    # n = 2: y_0, y_1, y_2. Q(theta) = E[log p_theta(x, y) | y] under theta' by a
    # brute-force 3-D quadrature; eq. 4.10 applied to the smoother's statistics
    # must be its maximiser (no grid point around it higher, gradient zero), and
    # the smoother's statistics must equal the brute-force expectations.
    y = np.array([0.9, -0.4, 1.3])
    theta, beta = (0.9, 0.3), 0.63
    (x0, x1, x2), p = _posterior_grid(y, *theta, beta)

    def e(f) -> float:  # the posterior mean of f(x_0, x_1, x_2)
        return float((p * np.broadcast_to(f, p.shape)).sum())

    brute = np.array([
        e(x0**2) + e(x1**2),
        e(x0**2) + e(x1**2) + e(x2**2),
        e(x0 * x1) + e(x1 * x2),
        sum(yk**2 * e(np.exp(-xk)) for xk, yk in zip((x0, x1, x2), y, strict=True)),
    ])  # fmt: skip
    exact = volatility_grid.smoother(y, *theta, beta).statistics
    np.testing.assert_allclose(exact, brute, rtol=1e-6)

    def q(alpha, sigma):  # the terms of E[log p] that depend on (alpha, sigma)
        s1, s2, s3, _ = brute
        return -1.5 * math.log(sigma**2) - (s2 - 2 * alpha * s3 + alpha**2 * s1) / (2 * sigma**2)

    a_hat, s_hat = m_step(exact, 2)
    best = q(a_hat, s_hat)
    for da in np.linspace(-0.05, 0.05, 21):
        for ds in np.linspace(-0.05, 0.05, 21):
            if s_hat + ds > 0:
                assert q(a_hat + da, s_hat + ds) <= best + 1e-9
    step = 1e-5
    assert abs(q(a_hat + step, s_hat) - q(a_hat - step, s_hat)) / (2 * step) < 1e-4
    assert abs(q(a_hat, s_hat + step) - q(a_hat, s_hat - step)) / (2 * step) < 1e-4


@pytest.mark.slow
def test_grid_is_converged():
    # Two points per standard deviation against eight, and a wider range: the
    # log-likelihood and the statistics agree far below any Monte Carlo error here.
    _, y = VolatilityModel().simulate(60, np.random.default_rng(3))
    for alpha, sigma in ((0.975, 0.16), (0.5, 0.5), (0.99, 0.06)):
        base = volatility_grid.smoother(y, alpha, sigma)
        fine = volatility_grid.smoother(y, alpha, sigma, steps_per_sigma=8, half_width=12.0)
        assert abs(base.log_likelihood - fine.log_likelihood) < 1e-8
        np.testing.assert_allclose(base.statistics, fine.statistics, rtol=1e-8)


@pytest.mark.slow
def test_grid_e_step_is_the_limit_of_the_particle_e_step():
    # The particle E-step at N = 2^12 on a short sequence (n = 15, where paths
    # hardly collapse) against the exact one: within 4 standard errors of the
    # runs' mean; the exact statistics under other parameters are far outside
    # (the negative control).
    model = VolatilityModel()
    _, y = model.simulate(15, np.random.default_rng(21))
    runs = np.array([expected_statistics(model, y, 2**12, "multinomial", s) for s in range(40)])
    mean, se = runs.mean(axis=0), runs.std(axis=0, ddof=1) / math.sqrt(len(runs))
    exact = volatility_grid.smoother(y, model.alpha, model.sigma).statistics
    assert np.all(np.abs(mean - exact) < Z * se)
    other = volatility_grid.smoother(y, 0.8, 0.3).statistics
    assert np.any(np.abs(mean - other) > 20 * se)


@pytest.mark.slow
def test_exact_em_climbs_to_the_ml_point():
    _, y = VolatilityModel().simulate(100, np.random.default_rng(5))
    ml = volatility_grid.ml_point(y, [(0.975, 0.16), (0.8, 0.3)])
    alpha, sigma, loglik = volatility_grid.exact_em(y, 0.8, 0.3, 60)
    assert np.all(np.diff(loglik) > -1e-9)  # EM never lowers the likelihood
    assert loglik[-1] <= ml.log_likelihood + 1e-6  # nor passes the maximum
    em = volatility_grid.exact_em(y, ml.alpha, ml.sigma, 3)
    assert abs(em[0][-1] - ml.alpha) < 1e-3 and abs(em[1][-1] - ml.sigma) < 1e-3  # a fixed point


@pytest.mark.slow
def test_ml_search_survives_the_edges():
    # A short sequence lets Nelder-Mead wander to |alpha| near 1.5, where alpha x_i
    # leaves the grid: the likelihood stays finite there and the search ends.
    _, y = VolatilityModel().simulate(20, np.random.default_rng(2017))
    assert np.isfinite(volatility_grid.log_likelihood(y, 1.5, 0.05))
    ml = volatility_grid.ml_point(y, [(0.975, 0.16), (0.8, 0.3)])
    assert np.isfinite(ml.log_likelihood) and abs(ml.alpha) <= volatility_grid.ALPHA_RANGE


def test_stopping_rule():
    w, tol = 10, 1e-3
    i = np.arange(400)
    geometric = 0.9 + 0.2 * 0.97**i
    stop = stop_iteration(geometric, np.full_like(geometric, 0.2), w, tol)
    brute = next(
        k for k in range(2 * w, i.size)
        if abs(geometric[k - w + 1 : k + 1].mean() - geometric[k - 2 * w + 1 : k - w + 1].mean())
        < tol
    )  # fmt: skip
    assert stop == brute
    assert stop_iteration(geometric, np.full_like(geometric, 0.2), w, tol / 10) > stop
    drift = 0.5 + 2 * tol / w * i  # a change of 2 tol per window: never stops (negative control)
    assert stop_iteration(drift, np.full_like(drift, 0.2), w, tol) is None
    assert stop_iteration(np.full(2 * w, 0.5), np.full(2 * w, 0.2), w, tol) is None  # too short
    with pytest.raises(ValueError, match="tolerance"):
        stop_iteration(geometric, geometric, w, 0.0)
    # run_smcem stops there: the trace ends at the rule's iteration
    _, y = VolatilityModel().simulate(30, np.random.default_rng(9))
    run = run_smcem(y, 256, "multinomial", 1, iterations=60, tolerance=0.05, window=3)
    assert run.alpha.size < 61
    assert stop_iteration(run.alpha, run.sigma, 3, 0.05) == run.alpha.size - 1


@pytest.mark.parametrize("scheme", ["multinomial", "butterfly"])
def test_adaptive_smcem_filter(scheme):
    # tau above 1: the adaptive filter resamples wherever the bootstrap filter
    # does, so its E-step is the bootstrap's to the bit; tau = 0.6 resamples less
    # and differs.
    model = VolatilityModel()
    _, y = model.simulate(40, np.random.default_rng(4))
    boot = expected_statistics(model, y, 1024, scheme, 3)
    always = expected_statistics(model, y, 1024, scheme, 3, filter="adaptive", tau=2.0)
    np.testing.assert_array_equal(always, boot)
    gated = expected_statistics(model, y, 1024, scheme, 3, filter="adaptive", tau=0.6)
    assert not np.array_equal(gated, boot)
    with pytest.raises(ValueError, match="filter must be one of"):
        expected_statistics(model, y, 1024, scheme, 3, filter="smoother")
