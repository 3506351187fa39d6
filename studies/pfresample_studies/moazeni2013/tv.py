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

from pfresample.backend import array_module

PAIRS = ((0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2))  # {kl} = 11, 21, 22, 31, 32, 33
WEIGHTS = np.array([1.0, 2.0, 1.0, 2.0, 2.0, 1.0])  # eq. 7's off-diagonal 2


def tensor(L: np.ndarray) -> np.ndarray:
    """D = L L^T per voxel: L (..., 6) in PAIRS order -> D's six entries (..., 6)."""
    full = np.zeros(L.shape[:-1] + (3, 3), dtype=L.dtype)
    for c, (i, j) in enumerate(PAIRS):
        full[..., i, j] = L[..., c]
    d = np.einsum("...ik,...jk->...ij", full, full)
    return np.stack([d[..., i, j] for i, j in PAIRS], axis=-1)


Block = tuple[int, int, int] | None
# The chapter's three GPU solvers (§6.4): GlobalSync solves eq. 8 on the whole volume;
# the secondary approaches cut it into images of their own (variant_blocks).
VARIANTS = ("global_sync", "thread_sync", "unsync")


def variant_blocks(variant: str, tile: int) -> dict[str, Block]:
    """The energy each variant minimises, as ``energy``'s blocks, for thread blocks
    of tile x tile (axes n0, n1, n2 of the volume): GlobalSync none; ThreadSync a
    tile^3 cube a block (its differences and its TV norms); UnSync differences
    within each thread's 2 x 2 x 2 cube and TV norms over the block's cubes
    (2 x 2 tile x 2 tile voxels)."""
    if variant == "global_sync":
        return {"curv_block": None, "norm_block": None}
    if variant == "thread_sync":
        return {"curv_block": (tile,) * 3, "norm_block": (tile,) * 3}
    if variant == "unsync":
        return {"curv_block": (2, 2, 2), "norm_block": (2, 2 * tile, 2 * tile)}
    raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


def _edge_mask(shape, axis: int, block: Block) -> np.ndarray:
    """True where the forward difference along ``axis`` exists: not at the far
    edge of the volume, nor (with ``block``) at the far edge of a block."""
    idx = np.arange(shape[axis])
    keep = idx < shape[axis] - 1
    if block is not None:
        keep &= (idx + 1) % block[axis] != 0
    view = [1, 1, 1]
    view[axis] = -1
    return keep.reshape(view)


def _grad(u: np.ndarray, block: Block = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward differences along each axis, 0 at the far edge (Neumann); with
    ``block`` also 0 across the edges of blocks of that shape, so that each block
    is an image of its own (the secondary approaches of §6.4.2)."""
    out = []
    for axis in range(3):
        g = np.zeros_like(u)
        sl = [slice(None)] * 3
        sl[axis] = slice(0, -1)
        g[tuple(sl)] = np.diff(u, axis=axis)
        out.append(g * _edge_mask(u.shape, axis, block) if block is not None else g)
    return tuple(out)


def _grad_adjoint(gx, gy, gz, block: Block = None) -> np.ndarray:
    """The adjoint of ``_grad`` (minus the backward-difference divergence)."""
    out = np.zeros_like(gx)
    for axis, g in enumerate((gx, gy, gz)):
        if block is not None:
            g = g * _edge_mask(g.shape, axis, block)
        lo = [slice(None)] * 3
        hi = [slice(None)] * 3
        lo[axis], hi[axis] = slice(0, -1), slice(1, None)
        out[tuple(lo)] -= g[tuple(lo)]
        out[tuple(hi)] += g[tuple(lo)]
    return out


def _norm(u: np.ndarray, eps: float, block: Block = None):
    gx, gy, gz = _grad(u, block)
    return (gx, gy, gz), np.sqrt(gx * gx + gy * gy + gz * gz + eps * eps)


def _block_sum(a: np.ndarray, block: Block) -> np.ndarray:
    """Sums over blocks of shape ``block`` (the whole volume without one)."""
    if block is None:
        return a.sum().reshape(1, 1, 1)
    X, Y, Z = a.shape
    bx, by, bz = block
    return a.reshape(X // bx, bx, Y // by, by, Z // bz, bz).sum(axis=(1, 3, 5))


def _spread(b: np.ndarray, shape, block: Block) -> np.ndarray:
    """A per-block array back at every voxel."""
    if block is None:
        return np.broadcast_to(b.reshape(()), shape)
    for axis, size in enumerate(block):
        b = np.repeat(b, size, axis=axis)
    return b


def check_blocks(shape, *blocks: Block) -> None:
    for block in blocks:
        if block is not None and any(s % b for s, b in zip(shape, block, strict=True)):
            raise ValueError(f"the volume {shape} is not a whole number of blocks {block}")


def tv_gradient(u: np.ndarray, eps: float, block: Block = None) -> np.ndarray:
    """d TV[u] / d u: the adjoint of the gradient applied to grad u / |grad u|_eps
    (the thesis's curvature term of eq. 10, with its sign)."""
    (gx, gy, gz), norm = _norm(u, eps, block)
    return _grad_adjoint(gx / norm, gy / norm, gz / norm, block)


def _regulariser(d, eps, curv_block: Block, norm_block: Block):
    """Per channel TV over each norm block (6, blocks...) and R over each block."""
    tvs = np.stack([_block_sum(_norm(d[..., c], eps, curv_block)[1], norm_block)
                    for c in range(6)])  # fmt: skip
    weights = WEIGHTS.astype(d.dtype).reshape(6, 1, 1, 1)
    return tvs, np.sqrt((weights * tvs**2).sum(axis=0))


def energy(L: np.ndarray, d_hat: np.ndarray, lam: float, eps: float, *,
           curv_block: Block = None, norm_block: Block = None) -> float:  # fmt: skip
    """G(L) = R + (lambda / 2) F (eqs. 6-8); L, d_hat: (X, Y, Z, 6). With blocks,
    the secondary approaches' energy: differences cut at ``curv_block``'s edges
    and R summed over ``norm_block``s, each with its own TV norms."""
    check_blocks(L.shape[:3], curv_block, norm_block)
    d = tensor(L)
    _, r = _regulariser(d, eps, curv_block, norm_block)
    f = float((WEIGHTS * (d - d_hat) ** 2).sum())
    return float(r.sum() + lam / 2 * f)


def gradient(L: np.ndarray, d_hat: np.ndarray, lam: float, eps: float, *,
             curv_block: Block = None, norm_block: Block = None) -> np.ndarray:  # fmt: skip
    """dG/dL (eqs. 9-13), (X, Y, Z, 6), in L's dtype (float32 or float64)."""
    check_blocks(L.shape[:3], curv_block, norm_block)
    d = tensor(L)
    tvs, r = _regulariser(d, eps, curv_block, norm_block)
    dgd = np.empty_like(d)  # dG / dd_ij
    weights = WEIGHTS.astype(d.dtype)
    for c in range(6):
        scale = _spread(weights[c] * tvs[c] / r, d.shape[:3], norm_block)  # eq. 9's TV / alpha
        dgd[..., c] = scale * tv_gradient(d[..., c], eps, curv_block)
        dgd[..., c] += lam * weights[c] * (d[..., c] - d_hat[..., c])
    # dD/dL through D = L L^T, in full matrices: dG/dL = (S + S^T) L, S the symmetric
    # matrix of dG/dd with each off-diagonal pair's derivative split in two halves
    S = np.zeros(d.shape[:-1] + (3, 3), dtype=d.dtype)
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
          every: int = 1, curv_block: Block = None, norm_block: Block = None,
          dtype=np.float64):  # fmt: skip
    """Steepest descent (eq. 14) from L0 in ``dtype``; with ``truth`` (X, Y, Z, 6)
    the energy, tensor RMSE and FA error every ``every`` iterations. Returns
    (L, history rows)."""
    L = np.array(L0, dtype=dtype)
    d_hat = np.asarray(d_hat, dtype=dtype)
    blocks = {"curv_block": curv_block, "norm_block": norm_block}
    history = []
    for it in range(iterations + 1):
        if truth is not None and (it % every == 0 or it == iterations):
            d = tensor(L)
            history.append({"iteration": it, "energy": energy(L, d_hat, lam, eps, **blocks),
                            "tensor_rmse": tensor_rmse(d, truth),
                            "fa_error": fa_error(d, truth)})  # fmt: skip
        if it < iterations:
            L -= (step * gradient(L, d_hat, lam, eps, **blocks)).astype(dtype)
    return L, history


def full_matrix(d: np.ndarray) -> np.ndarray:
    m = np.zeros(d.shape[:-1] + (3, 3))
    for c, (i, j) in enumerate(PAIRS):
        m[..., i, j] = m[..., j, i] = d[..., c]
    return m


def tensor_rmse(d, truth) -> float:
    """The root mean over voxels of the squared Frobenius distance (NumPy or
    CuPy arrays, (..., 6))."""
    xp = array_module(d)
    return float(xp.sqrt((xp.asarray(WEIGHTS) * (d - truth) ** 2).sum(axis=-1).mean()))


def fractional_anisotropy(d: np.ndarray) -> np.ndarray:
    """FA = sqrt(3/2) |D - (tr D / 3) I|_F / |D|_F, the eigenvalue formula written
    with the Frobenius norm (invariant under rotation), so no eigen-solver is needed."""
    xp = array_module(d)
    weights = xp.asarray(WEIGHTS)
    trace = d[..., 0] + d[..., 2] + d[..., 5]
    dev = d.copy()
    for k in (0, 2, 5):
        dev[..., k] -= trace / 3
    num = xp.sqrt((weights * dev**2).sum(axis=-1))
    den = xp.sqrt((weights * d**2).sum(axis=-1))
    return np.sqrt(1.5) * num / xp.where(den > 0, den, 1.0)


def fa_error(d: np.ndarray, truth: np.ndarray) -> float:
    """The mean absolute FA difference over voxels."""
    diff = fractional_anisotropy(d) - fractional_anisotropy(truth)
    return float(array_module(diff).abs(diff).mean())


def phantom(size: int, *, md: float = 0.7, fa: float = 0.8) -> np.ndarray:
    """The true tensors (size^3, 6) in um^2/ms (0.7 um^2/ms = 0.7e-3 mm^2/s, so that
    the unknowns are of order 1 and b is in ms/um^2: 1 = 1,000 s/mm^2): two
    isotropic regions (a sphere in a box, diffusivities md and md/2) and a bundle
    along a quarter circle in the x-y plane, prolate along its tangent with
    fractional anisotropy ``fa`` and mean diffusivity md."""
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


def _cholesky(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form Cholesky factor of each voxel's D (PAIRS order), and where
    D is not positive definite (a pivot not above 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        l11 = np.sqrt(d[..., 0])
        l21, l31 = d[..., 1] / l11, d[..., 3] / l11
        r22 = d[..., 2] - l21 * l21
        l22 = np.sqrt(r22)
        l32 = (d[..., 4] - l31 * l21) / l22
        r33 = d[..., 5] - l31 * l31 - l32 * l32
        L = np.stack([l11, l21, l22, l31, l32, np.sqrt(r33)], axis=-1)
    bad = ~((d[..., 0] > 0) & (r22 > 0) & (r33 > 0))
    return L, bad


def cholesky_start(d_hat: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """L0 with L0 L0^T = D^ where D^ is positive definite (its closed-form
    Cholesky factor), else the nearest positive definite tensor to D^ (its
    eigenvalues floored at ``floor``)."""
    L, bad = _cholesky(d_hat)
    if bad.any():
        ev, vec = np.linalg.eigh(full_matrix(d_hat[bad]))
        pd = np.einsum("...ik,...k,...jk->...ij", vec, np.maximum(ev, floor), vec)
        L[bad] = _cholesky(np.stack([pd[..., i, j] for i, j in PAIRS], axis=-1))[0]
    return L
