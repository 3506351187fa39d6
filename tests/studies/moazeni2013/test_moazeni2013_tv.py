"""Moazeni (2013) chapter 6 on the CPU (pfresample_studies.moazeni2013.tv): the
gradient of the energy (eqs. 9-13) against central finite differences, the discrete
adjoint exactly, a descent step lowering the energy, and the phantom and the tensor fit
against closed forms (FA of the bundle, a noiseless fit recovering the truth)."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import tv

SEED = 2013
B = 1.0  # ms/um^2 (1,000 s/mm^2)


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(SEED)
    truth = tv.phantom(8)
    g = tv.gradient_directions(12, rng)
    d_hat = tv.log_linear_fit(tv.signals(truth, g, B, 1.0, 0.05, rng), g, B)
    return truth, d_hat, tv.cholesky_start(d_hat)


BLOCKS = {  # the three variants' energies (tv.variant_blocks at a 4 x 4 thread block)
    "global_sync": {},
    "thread_sync": {"curv_block": (4, 4, 4), "norm_block": (4, 4, 4)},
    "unsync": {"curv_block": (2, 2, 2), "norm_block": (2, 8, 8)},
}


@pytest.mark.parametrize("variant", BLOCKS)
def test_the_gradient_is_the_energys(case, variant):
    """Central differences, h = 1e-6: truncation O(h^2) ~ 1e-12 and rounding about
    eps_machine * G / h ~ 2e-16 * 1e3 / 1e-6 ~ 2e-7 against gradients of 1e-2 ... 1,
    so 1e-4 relative (with a 1e-6 absolute floor) separates a right gradient from a
    wrong one."""
    _, d_hat, L = case
    lam, eps, h = 3.0, 0.01, 1e-6
    blocks = BLOCKS[variant]
    G = tv.gradient(L, d_hat, lam, eps, **blocks)
    rng = np.random.default_rng(SEED)
    for _ in range(16):
        idx = tuple(int(rng.integers(0, s)) for s in L.shape)
        up, down = L.copy(), L.copy()
        up[idx] += h
        down[idx] -= h
        fd = (
            tv.energy(up, d_hat, lam, eps, **blocks) - tv.energy(down, d_hat, lam, eps, **blocks)
        ) / (2 * h)
        assert G[idx] == pytest.approx(fd, rel=1e-4, abs=1e-6), idx
    # negative controls: without eq. 7's off-diagonal weights, or with the other
    # variants' blocks, the gradient differs
    wrong = tv.WEIGHTS.copy()
    tv.WEIGHTS[:] = 1.0
    try:
        G1 = tv.gradient(L, d_hat, lam, eps, **blocks)
    finally:
        tv.WEIGHTS[:] = wrong
    assert not np.allclose(G1, G, rtol=1e-4)
    for other, other_blocks in BLOCKS.items():
        if other != variant:
            assert not np.allclose(tv.gradient(L, d_hat, lam, eps, **other_blocks), G, rtol=1e-4)


def test_blocks_that_do_not_tile_the_volume_are_refused(case):
    _, d_hat, L = case
    with pytest.raises(ValueError, match="whole number of blocks"):
        tv.gradient(L, d_hat, 3.0, 0.01, curv_block=(3, 3, 3))


def test_the_divergence_is_the_gradients_adjoint():
    rng = np.random.default_rng(SEED)
    u, v = rng.normal(size=(5, 6, 7)), [rng.normal(size=(5, 6, 7)) for _ in range(3)]
    lhs = sum((g * w).sum() for g, w in zip(tv._grad(u), v, strict=True))
    assert lhs == pytest.approx((u * tv._grad_adjoint(*v)).sum(), rel=1e-12)


def test_a_small_step_lowers_the_energy(case):
    truth, d_hat, L = case
    _, history = tv.solve(L, d_hat, lam=3.0, eps=0.01, step=0.01, iterations=5, truth=truth)
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


def test_fa_by_the_frobenius_norm_is_fa_by_eigenvalues(case):
    truth, d_hat, _ = case
    ev = np.linalg.eigvalsh(tv.full_matrix(d_hat))
    mean = ev.mean(axis=-1, keepdims=True)
    fa = np.sqrt(1.5) * np.sqrt(((ev - mean) ** 2).sum(-1)) / np.sqrt((ev**2).sum(-1))
    assert np.allclose(tv.fractional_anisotropy(d_hat), fa, rtol=1e-10, atol=1e-12)


def test_the_compiled_solver_agrees_with_numpy(case):
    """native/tv.c in float32 against NumPy in float64 and float32: the same bound as
    the GPU's (4 times NumPy's own float32 difference), after 20 steps."""
    from pfresample_studies.moazeni2013 import native

    _, d_hat, L0 = case
    kw = {"lam": 3.0, "eps": 0.01, "step": 0.01, "iterations": 20}
    L64, _ = tv.solve(L0, d_hat, **kw)
    L32, _ = tv.solve(L0, d_hat, dtype=np.float32, **kw)
    bound = 4 * np.abs(L32 - L64).max() + 1e-6
    Lc = native.tv_solve(L0, d_hat, **kw)
    assert np.abs(Lc - L64).max() <= bound
    wrong = native.tv_solve(L0, d_hat, **{**kw, "lam": 2.0})  # negative control
    assert np.abs(wrong - L64).max() > bound


def _scalar_tv_denoise(f, weight, iterations=4000):
    """argmin_u 1/2 |u - f|^2 + weight TV(u), TV as tv.py discretises it (forward
    differences, zero at the far edge, the isotropic norm; eps = 0), by the
    accelerated primal-dual method of Chambolle and Pock (2011, alg. 2: the data
    term is 1-strongly convex) on tv._grad and its adjoint tv._grad_adjoint."""
    tau = sigma = 1 / np.sqrt(12.0)  # |grad|^2 <= 4 a dimension
    u = f.copy()
    bar = u.copy()
    p = np.zeros((3, *f.shape))
    for _ in range(iterations):
        p += sigma * np.stack(tv._grad(bar))
        p /= np.maximum(1.0, np.sqrt((p * p).sum(axis=0)) / weight)
        new = (u - tau * tv._grad_adjoint(*p) + tau * f) / (1 + tau)
        theta = 1 / np.sqrt(1 + 2 * tau)
        tau, sigma = theta * tau, sigma / theta
        bar = new + theta * (new - u)
        u = new
    return u


def _tv_objective(u, f, weight):
    return 0.5 * ((u - f) ** 2).sum() + weight * tv._norm(u, 0.0)[1].sum()


@pytest.mark.parametrize("weight", [0.05, 0.2])
def test_scalar_tv_agrees_with_scikit_image(weight):
    """scikit-image's denoise_tv_chambolle minimises 1/2 |u - f|^2 + weight TV(u)
    with TV isotropic over forward differences and a zero difference at the far
    edge -- the TV of tv.py (its ``_norm`` with eps = 0). On a noisy piecewise-
    constant volume, its answer and a primal-dual solve on tv.py's difference
    operators agree to 1e-4 (RMS) and their objectives to 1e-5 relative (each
    method stops short of the minimum: scikit-image on its own rule, here ~1e-6
    relative above it however many iterations it is allowed); the data term being
    1-strongly convex, a gap in the objective of delta bounds the distance to the
    minimiser by sqrt(2 delta). Negative control: another weight's answer is far.
    (The chapter's energy is not this: it couples six channels through R, eq. 7,
    and smooths |grad u| by eps; what is shared, and checked, is the TV.)"""
    restoration = pytest.importorskip("skimage.restoration")
    rng = np.random.default_rng([SEED, 6])
    x = np.indices((12, 12, 12)).sum(axis=0)
    f = np.where(x < 14, 0.2, 0.8) + np.where(x % 7 == 0, 0.3, 0.0) + rng.normal(0, 0.1, x.shape)
    theirs = restoration.denoise_tv_chambolle(f, weight=weight, eps=1e-12, max_num_iter=20000)
    ours = _scalar_tv_denoise(f, weight)
    assert np.sqrt(np.mean((ours - theirs) ** 2)) < 1e-4
    j_ours, j_theirs = _tv_objective(ours, f, weight), _tv_objective(theirs, f, weight)
    assert abs(j_theirs - j_ours) <= 1e-5 * j_theirs
    other = _scalar_tv_denoise(f, 2 * weight)
    assert np.sqrt(np.mean((other - theirs) ** 2)) > 1e-2
