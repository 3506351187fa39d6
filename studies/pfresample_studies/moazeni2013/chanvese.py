"""Moazeni (2013), chapter 5's segmentation benchmark: Chan-Vese active contours
(Chan and Vese 2001), one explicit step, the NumPy reference of
``kernels/chanvese.cu`` (the thesis times its Curvature2D with and
without shared-memory reuse, Tables 7 and 9).

    phi <- phi + dt delta_h(phi) (mu kappa - nu - l1 (I - c1)^2 + l2 (I - c2)^2)

with kappa = div(grad phi / |grad phi|_eps) in forward differences (0 at the far
edges) and their adjoint for the divergence, delta_h(x) = h / (pi (h^2 + x^2)), and
c1, c2 the image's means where phi > 0 and where phi <= 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Params:
    mu: float = 0.2
    nu: float = 0.0
    l1: float = 1.0
    l2: float = 1.0
    dt: float = 0.5
    eps: float = 1e-3
    heps: float = 1.0


def means(phi: np.ndarray, image: np.ndarray) -> tuple[float, float]:
    """c1, c2: the image's mean inside (phi > 0) and outside; 0 where a side is empty."""
    inside = phi > 0
    c1 = float(image[inside].mean()) if inside.any() else 0.0
    c2 = float(image[~inside].mean()) if (~inside).any() else 0.0
    return c1, c2


def curvature(phi: np.ndarray, eps: float) -> np.ndarray:
    """div(grad phi / |grad phi|_eps), forward differences and their adjoint."""
    g0, g1 = np.zeros_like(phi), np.zeros_like(phi)
    g0[:-1] = phi[1:] - phi[:-1]
    g1[:, :-1] = phi[:, 1:] - phi[:, :-1]
    nrm = np.sqrt(g0 * g0 + g1 * g1 + phi.dtype.type(eps) ** 2)
    n0, n1 = g0 / nrm, g1 / nrm
    div = n0 + n1
    div[1:] -= n0[:-1]
    div[:, 1:] -= n1[:, :-1]
    return div


def step(phi: np.ndarray, image: np.ndarray, c1: float, c2: float, p: Params) -> np.ndarray:
    """One explicit step at fixed c1, c2, in phi's dtype."""
    f = phi.dtype.type
    delta = f(p.heps) / (f(np.pi) * (f(p.heps) ** 2 + phi * phi))
    force = (f(p.mu) * curvature(phi, p.eps) - f(p.nu) - f(p.l1) * (image - f(c1)) ** 2
             + f(p.l2) * (image - f(c2)) ** 2)  # fmt: skip
    return phi + f(p.dt) * delta * force


def test_image(size: int, rng, noise: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """A disc and a square of intensity 1 on 0 with Gaussian noise, and the level
    set to start from (a signed distance to a centred circle), both float32."""
    y, x = np.mgrid[:size, :size] + 0.5
    truth = ((x - 0.35 * size) ** 2 + (y - 0.4 * size) ** 2 < (0.18 * size) ** 2) | (
        (np.abs(x - 0.7 * size) < 0.12 * size) & (np.abs(y - 0.65 * size) < 0.12 * size)
    )
    image = truth + rng.normal(0, noise, truth.shape)
    phi = 0.3 * size - np.hypot(x - size / 2, y - size / 2)
    return image.astype(np.float32), phi.astype(np.float32)
