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
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfresample.filters.adaptive import amse, run_adaptive, run_bootstrap
from pfresample.filters.smcem import (
    expected_statistics,
    m_step,
    resampling_period,
    run_smcem,
    transpose_permutation,
)
from pfresample.models import BimodalModel, VolatilityModel

Z = 4.0

FILTERS = [
    ("bootstrap", "multinomial", None),
    ("bootstrap", "butterfly-multinomial", None),
    ("adaptive", "butterfly-multinomial", None),
    ("adaptive", "butterfly-multinomial", (1024,)),  # adaptive multinomial
]


def _run(kind, method, radix, model, y, n, seed, tau=0.6):
    if kind == "bootstrap":
        return run_bootstrap(model, y, n, method, seed)
    return run_adaptive(model, y, n, method, seed, tau=tau, radix=radix)


@pytest.mark.parametrize("kind, method, radix", FILTERS)
def test_bimodal_estimates_have_mean_zero(kind, method, radix):
    model = BimodalModel()
    truth, y = model.simulate(30)
    runs = np.array([_run(kind, method, radix, model, y, 1024, s).estimates for s in range(60)])
    final = runs[:, -1]  # the estimate at T, where the modes sit at +-15
    half_width = Z * final.std(ddof=1) / math.sqrt(final.size)
    assert abs(final.mean() - truth[-1]) < half_width
    assert half_width < 0.2 * y[-1]  # a 20 % imbalance of the modes would show


@pytest.mark.parametrize("method", ["multinomial", "butterfly-multinomial"])
def test_bimodal_amse_falls_as_one_over_n(method):
    model = BimodalModel()
    truth, y = model.simulate(20)
    sizes = np.array([256, 1024, 4096])
    log_amse, se = [], []
    for n in sizes:
        a = np.array(
            [amse(run_bootstrap(model, y, n, method, s).estimates, truth) for s in range(60)]
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
    assert run.stages.max() == 0 and run.level.max() == 0
    assert run.ess[-1] < run.ess[0]  # the weights degenerate, nothing resets them


@pytest.mark.parametrize("method", ["butterfly-multinomial", "butterfly-systematic"])
def test_adaptive_above_one_is_the_bootstrap_filter(method):
    model = BimodalModel()
    _, y = model.simulate(15)
    n = 2**12
    adaptive = run_adaptive(model, y, n, method, 5, tau=1.5)
    bootstrap = run_bootstrap(model, y, n, method, 5)
    assert np.all(adaptive.stages == 2) and np.all(adaptive.level == 12)
    np.testing.assert_allclose(adaptive.estimates, bootstrap.estimates, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(adaptive.ess, bootstrap.ess)


def test_adaptive_level_counts_radix_2_stages():
    model = BimodalModel()
    _, y = model.simulate(20)
    run = run_adaptive(model, y, 1024, "butterfly-multinomial", 6, tau=0.6, radix=(2,) * 10)
    np.testing.assert_array_equal(run.level, run.stages)  # log2 of 2^k
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
