"""Moazeni (2013) chapter 3 on real instances: the recurrence with its triangle term,

    t[i, j] = min_{i < k < j} (t[i, k] + t[k, j]) + w(i, k, j),   t[i, i+1] = 0,

over the n vertices of a polygon (t[0, n-1] is the answer). Eq. 1 of the thesis drops
w; with it, the same blocks and orders apply (the matrix is eq. 2's transformed domain
as it stands: k strictly between i and j), each candidate carrying w(i, k, j).

Two families, each exact in its dtype:

* ``chain`` (int32): w = (p[i] * p[j]) * p[k] -- the matrix-chain order of the n - 1
  matrices p[0] x p[1], ..., p[n-2] x p[n-1] (the least number of scalar
  multiplications), a triangulation of the n-gon whose triangles cost the product of
  their vertices' weights. Integer arithmetic: any order gives the same matrix.
* ``perimeter`` (float32): w = (d[i, k] + d[k, j]) + d[i, j], d the distances of the
  polygon's vertices (computed in float64, rounded once to float32): the triangulation
  of least total perimeter. Every candidate is (t[i, k] + t[k, j]) + w in that order in
  every implementation and the rest are minima, so NumPy, the C code and the GPU agree
  bit for bit; only additions, so no compiler fuses a multiply into them.

Ito and Nakano's GPU solver of the optimal polygon triangulation (IEICE Trans. Inf. &
Syst. E96-D(12), 2013; Nishida, Ito and Nakano at ICA3PP 2012) solved a convex 8,192-gon
in 5.57 s on a GeForce GTX 680 (the abstract; 1,939.02 s on their CPU): the size
``bench/moazeni2013_ch3_real.py`` times here. Their weight function is not in what we
could read; both families here have the same O(n^3) candidates of a few operations each.

``solve_textbook`` is the three loops as printed (the small-n check);
``solve_diagonals`` the NumPy reference, one diagonal at a time; ``native`` runs
``native/dp_weighted.c`` (blocked, OpenMP) and ``dp_weighted_gpu`` the CUDA kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import dp

FAMILIES = {"chain": "int32", "perimeter": "float32"}
CHAIN_BOUND = 2**29  # (n - 2) max(p)^3 below it: t + t + w < 2**31, and below INT_INF


@dataclass(frozen=True)
class Instance:
    """One problem: ``family``, its array (``p``: n int32 vertex weights, or ``d``: n x n
    float32 distances), n vertices."""

    family: str
    data: np.ndarray

    @property
    def n(self) -> int:
        return int(self.data.shape[0])

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(FAMILIES[self.family])


def chain(p) -> Instance:
    """The matrix-chain instance of dimensions ``p`` (n >= 2 non-negative integers; 0 is
    allowed: ties everywhere), or a ValueError that names what is wrong."""
    p = np.asarray(p)
    if p.ndim != 1 or p.size < 2:
        raise ValueError(f"p must be 1-D with at least 2 dimensions, got shape {p.shape}")
    if not np.issubdtype(p.dtype, np.integer):
        raise ValueError(f"p must be integers, got {p.dtype}")
    if p.min() < 0:
        raise ValueError(f"p must be >= 0, got {p.min()}")
    bound = max(p.size - 2, 1) * int(p.max()) ** 3
    if bound >= CHAIN_BOUND:
        raise ValueError(f"(n - 2) max(p)^3 = {bound} must be below {CHAIN_BOUND} (int32: no "
                         "sum of two costs and a weight may overflow)")  # fmt: skip
    return Instance("chain", p.astype(np.int32))


def polygon(xy) -> Instance:
    """The perimeter instance of the vertices ``xy`` (n x 2, finite, n >= 2; repeated
    vertices allowed: zero distances)."""
    xy = np.asarray(xy, dtype=np.float64)
    if xy.ndim != 2 or xy.shape[1] != 2 or xy.shape[0] < 2:
        raise ValueError(f"xy must be n x 2 with n >= 2, got shape {xy.shape}")
    if not np.isfinite(xy).all():
        raise ValueError("xy must be finite")
    d = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=-1)).astype(np.float32)
    return Instance("perimeter", d)


def random_chain(n: int, seed: int, *, high: int = 32, zeros: bool = False) -> Instance:
    """n dimensions in [1, high) (with ``zeros``, a fifth of them 0 and the rest in
    [1, 4): many ties), seeded by (seed, n)."""
    rng = np.random.default_rng([int(seed), int(n), 58])
    if zeros:
        p = rng.integers(1, 4, n)
        p[rng.random(n) < 0.2] = 0
        return chain(p)
    return chain(rng.integers(1, high, n))


def random_polygon(n: int, seed: int, *, regular: bool = False, repeats: bool = False
                   ) -> Instance:  # fmt: skip
    """A convex n-gon: vertices on the unit circle at sorted random angles, or at equal
    angles (``regular``: every triangulation of a fan ties), or with every vertex twice
    (``repeats``: zero distances)."""
    rng = np.random.default_rng([int(seed), int(n), 59])
    m = -(-n // 2) if repeats else n
    angles = np.arange(m) * (2 * np.pi / m) if regular else np.sort(rng.random(m) * 2 * np.pi)
    xy = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    if repeats:
        xy = np.repeat(xy, 2, axis=0)[:n]
    return polygon(xy)


def matrix(inst: Instance) -> np.ndarray:
    """The starting matrix, n x n: 0 at (i, i+1), "no value" everywhere else."""
    m = np.full((inst.n, inst.n), dp.infinity(inst.dtype), dtype=inst.dtype)
    idx = np.arange(inst.n - 1)
    m[idx, idx + 1] = 0
    return m


def weight(inst: Instance, i, k, j) -> np.ndarray:
    """w(i, k, j) (broadcast), in the family's dtype and order of operations."""
    if inst.family == "chain":
        p = inst.data
        return (p[i] * p[j]) * p[k]  # int32: below CHAIN_BOUND, no overflow
    d = inst.data
    return (d[i, k] + d[k, j]) + d[i, j]


def solve_textbook(inst: Instance) -> np.ndarray:
    """The three loops as printed, one candidate at a time (small n)."""
    t = matrix(inst)
    n = inst.n
    for gap in range(2, n):
        for i in range(n - gap):
            j = i + gap
            best = t[i, j]
            for k in range(i + 1, j):
                cand = (t[i, k] + t[k, j]) + weight(inst, i, k, j)
                best = cand if cand < best else best
            t[i, j] = best
    return t


def solve_diagonals(inst: Instance, *, drop_weight: bool = False) -> np.ndarray:
    """The NumPy reference: one diagonal at a time, every i and k of it at once.
    ``drop_weight`` (tests' negative control) leaves w out."""
    t = matrix(inst)
    n = inst.n
    for gap in range(2, n):
        i = np.arange(n - gap)[:, None]
        k = i + np.arange(1, gap)[None, :]
        j = i + gap
        cand = t[i, k] + t[k, j]
        if not drop_weight:
            cand = cand + weight(inst, i, k, j)
        t[i[:, 0], i[:, 0] + gap] = cand.min(axis=1)
    return t


def answer(t: np.ndarray):
    """t[0, n-1]: the least cost of the whole polygon (chain)."""
    return t[0, -1]


def operations(n: int) -> int:
    """Candidates of the recurrence for n vertices: C(n, 3) = sum over i < j of (j - i - 1)."""
    return n * (n - 1) * (n - 2) // 6
