"""Moazeni (2013) chapter 6 on the CPU (pfresample.studies.moazeni2013.tv): the
gradient of the energy (eqs. 9-13) against central finite differences, the discrete
adjoint exactly, a descent step lowering the energy, and the phantom and the tensor fit
against closed forms (FA of the bundle, a noiseless fit recovering the truth)."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample.studies.moazeni2013 import tv

SEED = 2013
B = 1000.0  # s/mm^2


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(SEED)
    truth = tv.phantom(8)
    g = tv.gradient_directions(12, rng)
    d_hat = tv.log_linear_fit(tv.signals(truth, g, B, 1.0, 0.05, rng), g, B)
    return truth, d_hat, tv.cholesky_start(d_hat)


def test_the_gradient_is_the_energys(case):
    """Central differences, h = 1e-7: truncation O(h^2) ~ 1e-14 and rounding about
    eps_machine * G / h ~ 1e-8 against gradients of 1e-3 ... 1e-1, so 1e-5 relative
    (with a 1e-9 absolute floor) separates a right gradient from a wrong one."""
    _, d_hat, L = case
    lam, eps, h = 1e5, 1e-5, 1e-7
    G = tv.gradient(L, d_hat, lam, eps)
    rng = np.random.default_rng(SEED)
    for _ in range(12):
        idx = tuple(int(rng.integers(0, s)) for s in L.shape)
        up, down = L.copy(), L.copy()
        up[idx] += h
        down[idx] -= h
        fd = (tv.energy(up, d_hat, lam, eps) - tv.energy(down, d_hat, lam, eps)) / (2 * h)
        assert G[idx] == pytest.approx(fd, rel=1e-5, abs=1e-9), idx
    # negative control: the gradient without eq. 7's off-diagonal weights is wrong
    wrong = tv.WEIGHTS.copy()
    tv.WEIGHTS[:] = 1.0
    try:
        G1 = tv.gradient(L, d_hat, lam, eps)
    finally:
        tv.WEIGHTS[:] = wrong
    assert not np.allclose(G1, G, rtol=1e-5)


def test_the_divergence_is_the_gradients_adjoint():
    rng = np.random.default_rng(SEED)
    u, v = rng.normal(size=(5, 6, 7)), [rng.normal(size=(5, 6, 7)) for _ in range(3)]
    lhs = sum((g * w).sum() for g, w in zip(tv._grad(u), v, strict=True))
    assert lhs == pytest.approx((u * tv._grad_adjoint(*v)).sum(), rel=1e-12)


def test_a_small_step_lowers_the_energy(case):
    truth, d_hat, L = case
    _, history = tv.solve(L, d_hat, lam=1e4, eps=1e-5, step=1e-4, iterations=5, truth=truth)
    energies = [r["energy"] for r in history]
    assert all(b < a for a, b in zip(energies, energies[1:], strict=False))


def test_the_phantom_and_a_noiseless_fit():
    truth = tv.phantom(16, fa=0.8)
    fa = tv.fractional_anisotropy(truth)
    assert fa.max() == pytest.approx(0.8, abs=1e-9) and fa.min() == pytest.approx(0, abs=1e-9)
    g = tv.gradient_directions(12, np.random.default_rng(SEED))
    s = tv.signals(truth, g, B, 1.0, 0.0, np.random.default_rng(SEED))
    assert np.allclose(tv.log_linear_fit(s, g, B), truth, rtol=0, atol=1e-12)
    assert np.allclose(tv.tensor(tv.cholesky_start(truth)), truth, rtol=0, atol=1e-15)
