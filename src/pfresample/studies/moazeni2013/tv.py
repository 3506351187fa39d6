"""Moazeni (2013), chapter 6: total-variation regularisation of diffusion-tensor
images (Christiansen et al. 2007), the CPU reference in NumPy, with a synthetic
phantom whose truth is known, so that quality can be measured (the thesis reports
none).

* **Unknowns**: per voxel the six entries of a lower-triangular L, D = L L^T (eq. 6).
* **Energy** (eqs. 6-8): G(L) = R(D) + (lambda / 2) F(D), with
  R = sqrt(sum_ij w_ij TV[d_ij]^2) (eq. 7: w = 1 on the diagonal, 2 off it),
  TV[u] = sum over voxels of |grad u|_eps = sqrt(ux^2 + uy^2 + uz^2 + eps^2), forward
  differences with a zero difference at the far edge (Neumann), and
  F = sum_ij w_ij sum_voxels (d_ij - d^_ij)^2 (the Frobenius norm of D - D^).
* **Gradient** (eqs. 9-13): dR/dd_ij = (w_ij TV[d_ij] / R) * dTV/du, where dTV/du is
  the exact adjoint of the discrete TV (minus the divergence of grad u / |grad u|_eps:
  the thesis's "curvature" term, here in the discretisation whose energy it is the
  gradient of, so that finite differences check it); dF/dd_ij = 2 w_ij (d_ij - d^_ij);
  the chain rule through D = L L^T gives dG/dL (eq. 13).
* **Solver** (eq. 14): steepest descent on L with a fixed step. lambda, the step, eps
  and the stopping rule are not printed; chosen by the quality curve (docs).
* **Phantom**: piecewise-constant isotropic regions and a curving fibre bundle
  (prolate tensors along the fibre), diffusion-weighted signals S = S0 exp(-b g^T D g)
  for ``directions`` gradient directions plus Gaussian noise, and the log-linear
  least-squares tensor fit (D^); metrics: tensor RMSE (Frobenius, per voxel) and the
  fractional anisotropy error against the truth.
"""

from __future__ import annotations

import numpy as np

PAIRS = ((0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2))  # {kl} = 11, 21, 22, 31, 32, 33
WEIGHTS = np.array([1.0, 2.0, 1.0, 2.0, 2.0, 1.0])  # eq. 7's off-diagonal 2


def tensor(L: np.ndarray) -> np.ndarray:
    """D = L L^T per voxel: L (..., 6) in PAIRS order -> D's six entries (..., 6)."""
    full = np.zeros(L.shape[:-1] + (3, 3))
    for c, (i, j) in enumerate(PAIRS):
        full[..., i, j] = L[..., c]
    d = np.einsum("...ik,...jk->...ij", full, full)
    return np.stack([d[..., i, j] for i, j in PAIRS], axis=-1)


def _grad(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward differences along x, y, z (the last difference 0: Neumann)."""
    out = []
    for axis in range(3):
        g = np.zeros_like(u)
        sl = [slice(None)] * 3
        sl[axis] = slice(0, -1)
        g[tuple(sl)] = np.diff(u, axis=axis)
        out.append(g)
    return tuple(out)


def _grad_adjoint(gx, gy, gz) -> np.ndarray:
    """The adjoint of ``_grad`` (minus the backward-difference divergence)."""
    out = np.zeros_like(gx)
    for axis, g in enumerate((gx, gy, gz)):
        lo = [slice(None)] * 3
        hi = [slice(None)] * 3
        lo[axis], hi[axis] = slice(0, -1), slice(1, None)
        out[tuple(lo)] -= g[tuple(lo)]
        out[tuple(hi)] += g[tuple(lo)]
    return out


def tv(u: np.ndarray, eps: float) -> float:
    gx, gy, gz = _grad(u)
    return float(np.sqrt(gx * gx + gy * gy + gz * gz + eps * eps).sum())


def tv_gradient(u: np.ndarray, eps: float) -> np.ndarray:
    """d TV[u] / d u: the adjoint of the gradient applied to grad u / |grad u|_eps."""
    gx, gy, gz = _grad(u)
    norm = np.sqrt(gx * gx + gy * gy + gz * gz + eps * eps)
    return _grad_adjoint(gx / norm, gy / norm, gz / norm)


def energy(L: np.ndarray, d_hat: np.ndarray, lam: float, eps: float) -> float:
    """G(L) = R + (lambda / 2) F (eqs. 6-8); L, d_hat: (X, Y, Z, 6)."""
    d = tensor(L)
    r = np.sqrt(sum(w * tv(d[..., c], eps) ** 2 for c, w in enumerate(WEIGHTS)))
    f = float((WEIGHTS * (d - d_hat) ** 2).sum())
    return float(r + lam / 2 * f)


def gradient(L: np.ndarray, d_hat: np.ndarray, lam: float, eps: float) -> np.ndarray:
    """dG/dL (eqs. 9-13), (X, Y, Z, 6)."""
    d = tensor(L)
    tvs = np.array([tv(d[..., c], eps) for c in range(6)])
    r = np.sqrt((WEIGHTS * tvs**2).sum())
    dgd = np.empty_like(d)  # dG / dd_ij
    for c in range(6):
        dgd[..., c] = WEIGHTS[c] * tvs[c] / r * tv_gradient(d[..., c], eps)
        dgd[..., c] += lam * WEIGHTS[c] * (d[..., c] - d_hat[..., c])
    # dD/dL through D = L L^T, in full matrices: dG/dL = (S + S^T) L, S the symmetric
    # matrix of dG/dd with each off-diagonal pair's derivative split in two halves
    S = np.zeros(d.shape[:-1] + (3, 3))
    for c, (i, j) in enumerate(PAIRS):
        if i == j:
            S[..., i, i] = dgd[..., c]
        else:
            S[..., i, j] = S[..., j, i] = dgd[..., c] / 2
    full = np.zeros_like(S)
    for c, (i, j) in enumerate(PAIRS):
        full[..., i, j] = L[..., c]
    g = 2 * S @ full
    return np.stack([g[..., i, j] for i, j in PAIRS], axis=-1)


def solve(L0, d_hat, *, lam: float, eps: float, step: float, iterations: int, truth=None,
          every: int = 1):  # fmt: skip
    """Steepest descent (eq. 14) from L0; with ``truth`` (X, Y, Z, 6) the tensor
    RMSE and FA error every ``every`` iterations. Returns (L, history rows)."""
    L = np.array(L0, dtype=np.float64)
    history = []
    for it in range(iterations + 1):
        if truth is not None and it % every == 0:
            d = tensor(L)
            history.append({"iteration": it, "energy": energy(L, d_hat, lam, eps),
                            "tensor_rmse": tensor_rmse(d, truth),
                            "fa_error": fa_error(d, truth)})  # fmt: skip
        if it < iterations:
            L -= step * gradient(L, d_hat, lam, eps)
    return L, history


def full_matrix(d: np.ndarray) -> np.ndarray:
    m = np.zeros(d.shape[:-1] + (3, 3))
    for c, (i, j) in enumerate(PAIRS):
        m[..., i, j] = m[..., j, i] = d[..., c]
    return m


def tensor_rmse(d: np.ndarray, truth: np.ndarray) -> float:
    """The root mean over voxels of the squared Frobenius distance."""
    return float(np.sqrt((WEIGHTS * (d - truth) ** 2).sum(axis=-1).mean()))


def fractional_anisotropy(d: np.ndarray) -> np.ndarray:
    ev = np.linalg.eigvalsh(full_matrix(d))
    mean = ev.mean(axis=-1, keepdims=True)
    num = np.sqrt(((ev - mean) ** 2).sum(axis=-1))
    den = np.sqrt((ev**2).sum(axis=-1))
    return np.sqrt(1.5) * num / np.where(den > 0, den, 1.0)


def fa_error(d: np.ndarray, truth: np.ndarray) -> float:
    """The mean absolute FA difference over voxels."""
    return float(np.abs(fractional_anisotropy(d) - fractional_anisotropy(truth)).mean())


def phantom(size: int, *, md: float = 0.7e-3, fa: float = 0.8) -> np.ndarray:
    """The true tensors (size^3, 6), mm^2/s: two isotropic regions (a sphere in a
    box, diffusivities md and md/2) and a bundle along a quarter circle in the
    x-y plane, prolate along its tangent with fractional anisotropy ``fa`` and
    mean diffusivity md."""
    x, y, z = np.meshgrid(*(np.arange(size) + 0.5,) * 3, indexing="ij")
    c = size / 2
    truth = np.zeros((size, size, size, 6))
    iso = np.where((x - c) ** 2 + (y - c) ** 2 + (z - c) ** 2 < (size / 4) ** 2, md / 2, md)
    for k in (0, 2, 5):
        truth[..., k] = iso
    radius = np.hypot(x, y)
    bundle = (np.abs(radius - 0.6 * size) < 0.12 * size) & (np.abs(z - c) < 0.2 * size)
    # a prolate tensor l1 > l2 = l3 has FA = (r - 1) / sqrt(r^2 + 2), r = l1 / l2:
    # solved for r, with (l1 + 2 l2) / 3 = md
    r = (1 + np.sqrt(1 - (1 - fa * fa) * (1 - 2 * fa * fa))) / (1 - fa * fa)
    l2 = 3 * md / (r + 2)
    l1 = r * l2
    t = np.stack([-y, x, np.zeros_like(x)], axis=-1) / np.maximum(radius, 1e-9)[..., None]
    for cidx, (i, j) in enumerate(PAIRS):
        value = l2 * (i == j) + (l1 - l2) * t[..., i] * t[..., j]
        truth[..., cidx] = np.where(bundle, value, truth[..., cidx])
    return truth


def gradient_directions(count: int, rng) -> np.ndarray:
    """``count`` unit vectors, well spread (random, antipodally symmetric set)."""
    g = rng.normal(size=(count, 3))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def signals(truth, directions, b: float, s0: float, noise: float, rng) -> np.ndarray:
    """Diffusion-weighted signals (..., 1 + count): S0 then S0 exp(-b g^T D g),
    each with Gaussian noise of standard deviation ``noise`` (a fraction of S0)."""
    full = full_matrix(truth)
    adc = np.einsum("ki,...ij,kj->...k", directions, full, directions)
    s = np.concatenate([np.full(truth.shape[:-1] + (1,), s0), s0 * np.exp(-b * adc)], axis=-1)
    return s + rng.normal(0, noise * s0, s.shape)


def log_linear_fit(s, directions, b: float) -> np.ndarray:
    """D^ by least squares on log(S / S0) = -b g^T D g (signals clipped above 0)."""
    s = np.maximum(s, 1e-6)
    y = -np.log(s[..., 1:] / s[..., :1]) / b
    design = np.stack([directions[:, i] * directions[:, j] * (1 if i == j else 2)
                       for i, j in PAIRS], axis=1)  # fmt: skip
    coef, *_ = np.linalg.lstsq(design, y.reshape(-1, y.shape[-1]).T, rcond=None)
    return coef.T.reshape(s.shape[:-1] + (6,))


def cholesky_start(d_hat: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """L0 with L0 L0^T the nearest positive definite tensor to D^ (eigenvalues
    floored at ``floor``)."""
    ev, vec = np.linalg.eigh(full_matrix(d_hat))
    ev = np.maximum(ev, floor)
    pd = np.einsum("...ik,...k,...jk->...ij", vec, ev, vec)
    chol = np.linalg.cholesky(pd)
    return np.stack([chol[..., i, j] for i, j in PAIRS], axis=-1)
