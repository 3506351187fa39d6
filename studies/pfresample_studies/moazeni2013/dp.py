"""Moazeni (2013), chapter 3: non-serial polyadic dynamic programming, the CPU
references of the GPU decompositions.

**The recurrence** (eq. 1): for 0 <= i < j < n,

    m[i, j] = min( m[i, j], min_{i <= k < j} m[i, k] + m[k+1, j] ),  m[i, i] = a(i),

with m[i, j] (i < j) starting at a given value (+inf: the answer is then the
sum of a over i..j, whatever the split). In the **transformed domain** of eq. 2
(i' = i, j' = j + 1, size n' = n + 1) it reads

    m'[i, j] = min( m'[i, j], min_{i < k < j} m'[i, k] + m'[k, j] ),  m'[i, i+1] = a(i),

so that a block of the matrix depends on blocks of its own row and column
only; the main diagonal m'[i, i] takes no part (we keep it at +inf).

**Blocks** (§3.3.1): cut the transformed matrix into s x s blocks A(I, J).
With min-plus products (Definition 1, ``x`` below) and element-wise minima
(Definition 2, ``+``),

    A(I, J) = (+_{K=I+1}^{J-1} A(I, K) x A(K, J))          (eq. 4, rectangular)
              + (A(I, I) x A(I, J)) + (A(I, J) x A(J, J))    (eq. 5, triangular)

where eq. 5 depends on A(I, J) itself: its element (r, c) needs the elements
below it in its column and left of it in its row, so it is solved one
anti-diagonal t = (s - 1 - r) + c at a time (the thesis's Fig 8 is missing
from the text; this is the order its dependence allows). The diagonal blocks
A(I, I) are eq. 2 inside one block (``diagonal`` calls, not counted by the
thesis's Table 1).

**Two orders** (§3.5), both counting their kernel calls as Table 1 does (one
call a block for the triangular part, one a block and K for the rectangular):

* bottom-up (Fig 11, missing from the text: every block of block-diagonal
  D = J - I, D = 1, 2, ..., eq. 4 then eq. 5) -- for B blocks a side,
  B(B-1)/2 triangular and C(B, 3) rectangular calls;
* divide and conquer (Fig 10, its pseudo-code with the target first in
  ``triangular`` and the two triangles first in ``rectangular``): the top
  call is rectangular on the whole matrix with quadrant size n'/4 after the
  diagonal blocks; ``triangular(C, A, B, p)`` recurses into
  ``rectangular(A, B, C, p/2)`` while p > M, else is one triangular call.
  It recomputes some blocks (idempotent: min with the same terms), which is
  why its triangular calls exceed the bottom-up's at n >= 2,048.

With M = s = 256 these reproduce Table 1's call counts exactly (tests).

**Exactness.** Every candidate is one addition of two stored values and the
rest are minima, so any order of evaluation gives the same matrix bit for bit,
in float32 as in int32 (the decompositions, the compiled CPU code and the GPU
kernels are checked equal, not close), but for the sign of a zero where -0.0
and +0.0 tie: they are equal, and which one a minimum keeps depends on its
order (``np.minimum`` keeps its second argument, the kernels their first), so
matrices are compared with ``np.array_equal``. int32 uses a large finite value
for "no value yet" (``INT_INF``): inputs must be non-negative and every sum of
two stored values must stay below 2**31, which ``check_weights`` and
``check_initial`` enforce.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

INT_INF = np.int32(2**30 - 1)  # "+inf" of the int32 matrices: INT_INF + INT_INF < 2**31
DTYPES = ("float32", "int32")
MIN_PLUS_CHUNK = 16  # k-values a min-plus product adds at once (memory: s * s * chunk)


def infinity(dtype) -> np.generic:
    """The "no value yet" of a matrix of ``dtype``: +inf, or INT_INF for int32."""
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return np.float32(np.inf)
    if dtype == np.int32:
        return INT_INF
    raise ValueError(f"dtype must be one of {DTYPES}, got {dtype}")


def check_weights(a, dtype) -> np.ndarray:
    """a(i) as a 1-D array of ``dtype``, or a ValueError that names the problem."""
    a = np.asarray(a)
    if a.ndim != 1 or a.size < 1:
        raise ValueError(f"a must be a non-empty 1-D array, got shape {a.shape}")
    dtype = np.dtype(dtype)
    if dtype.name not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype}")
    if dtype == np.int32:
        if not np.issubdtype(a.dtype, np.integer):
            raise ValueError("int32 weights must be integers")
        if a.min() < 0 or int(a.astype(np.int64).sum()) >= int(INT_INF):
            raise ValueError(
                f"int32 weights must be >= 0 with a sum below {int(INT_INF)} (so that no sum "
                "of two stored values overflows), got min "
                f"{a.min()} and sum {int(a.astype(np.int64).sum())}"
            )
    elif not np.isfinite(a).all():
        raise ValueError("a must be finite")
    return a.astype(dtype)


def check_initial(init, upper: np.ndarray, dtype) -> np.ndarray:
    """The entries of ``init`` where ``upper`` holds, as ``dtype``, or a ValueError
    that names the first bad value and its (i, j): int32 values integers in
    [0, INT_INF] (INT_INF is "no value", as +inf is in float32), so that no sum of
    two stored values reaches 2**31 (both are at most INT_INF, and a minimum never
    exceeds an entry's initial value); float32 values finite or +inf (NaN and -inf
    have no place in a minimum of sums; a finite value beyond float32's range would
    become +inf, "no value")."""
    dtype = np.dtype(dtype)
    values = init[upper]
    if dtype == np.int32:
        if not np.issubdtype(init.dtype, np.integer):
            raise ValueError(f"int32 initial values must be integers, got {init.dtype}")
        bad = (values < 0) | (values > int(INT_INF))
        why = f"must be in [0, {int(INT_INF)}] (INT_INF: no value)"
        cast = values.astype(dtype)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            cast = values.astype(dtype)
        bad = np.isnan(values) | (values == -np.inf) | (np.isfinite(values) & ~np.isfinite(cast))
        why = "must be finite in float32, or +inf (no value)"
    if bad.any():
        first = np.flatnonzero(bad)[0]
        i, j = (int(x[first]) for x in np.nonzero(upper))
        raise ValueError(f"init[{i}, {j}] = {values[first]} {why}")
    return cast


def transformed(a, init=None, dtype="float32") -> np.ndarray:
    """The transformed matrix of eq. 2, (n + 1, n + 1): m'[i, i+1] = a(i), the
    other upper entries ``init`` (an (n + 1, n + 1) array read above the
    diagonal j > i + 1, checked by ``check_initial``, or None for "no value
    yet"), the rest "no value"."""
    a = check_weights(a, dtype)
    n1 = a.size + 1
    inf = infinity(dtype)
    m = np.full((n1, n1), inf, dtype=dtype)
    if init is not None:
        init = np.asarray(init)
        if init.shape != (n1, n1):
            raise ValueError(f"init must be ({n1}, {n1}), got {init.shape}")
        upper = np.triu(np.ones((n1, n1), dtype=bool), k=2)
        m[upper] = check_initial(init, upper, dtype)
    idx = np.arange(a.size)
    m[idx, idx + 1] = a
    return m


def answer(m: np.ndarray) -> np.generic:
    """m[0, n-1] of eq. 1: the top-right entry of the solved transformed matrix."""
    return m[0, -1]


def solve_direct(a, init=None, dtype="float32") -> np.ndarray:
    """Eq. 1 as printed, three Python loops in the original domain (n, n): the
    brute-force reference for small n."""
    a = check_weights(a, dtype)
    n = a.size
    m = transformed(a, None if init is None else init, dtype)
    # back to the original domain: o[i, j] = m'[i, j + 1]
    o = np.full((n, n), infinity(dtype), dtype=dtype)
    for i in range(n):
        o[i, i:] = m[i, i + 1 :]
    for d in range(1, n):
        for i in range(n - d):
            j = i + d
            best = o[i, j]
            for k in range(i, j):
                best = min(best, o[i, k] + o[k + 1, j])
            o[i, j] = best
    return o


def solve_diagonals(m: np.ndarray) -> np.ndarray:
    """Eq. 2 in place, one diagonal d = j - i at a time, vectorised along it
    (every i of the diagonal and every k at once): the NumPy reference."""
    n1 = m.shape[0]
    for d in range(2, n1):
        i = np.arange(n1 - d)[:, None]
        k = i + np.arange(1, d)[None, :]
        cand = (m[i, k] + m[k, i + d]).min(axis=1)
        rows = i[:, 0]
        m[rows, rows + d] = np.minimum(m[rows, rows + d], cand)
    return m


def min_plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Definition 1's product over the last two axes: (..., p, q) x (..., q, r)
    -> (..., p, r), c[p, r] = min_q a[p, q] + b[q, r], in chunks of q."""
    out = None
    for q0 in range(0, a.shape[-1], MIN_PLUS_CHUNK):
        q1 = min(q0 + MIN_PLUS_CHUNK, a.shape[-1])
        part = (a[..., :, q0:q1, None] + b[..., None, q0:q1, :]).min(axis=-2)
        out = part if out is None else np.minimum(out, part)
    return out


@dataclass
class Calls:
    """Kernel calls as Table 1 counts them, and the elements each touched."""

    diagonal: int = 0
    triangular: int = 0
    rectangular: int = 0
    rectangular_sizes: list = field(default_factory=list)  # the size of each call
    seconds: dict = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))  # per kind


KINDS = ("diagonal", "triangular", "rectangular")


class Blocked:
    """The transformed matrix padded to B x B blocks of size s, with the
    block operations of eqs. 4-5 (in place) and their call counts."""

    def __init__(self, m: np.ndarray, s: int, *, dry: bool = False, size: int | None = None):
        if s < 1:
            raise ValueError(f"block size must be >= 1, got {s}")
        self.n1, self.s, self.dry = m.shape[0], int(s), dry
        # padded to whole blocks, or to ``size`` a side (a multiple of s, >= n1)
        size = -(-self.n1 // self.s) * self.s if size is None else int(size)
        self.blocks = size // self.s
        self.m = np.empty((0, 0), dtype=m.dtype) if dry else np.full(
            (size, size), infinity(m.dtype), dtype=m.dtype)  # fmt: skip
        if not dry:
            self.m[: self.n1, : self.n1] = m
        self.calls = Calls()

    def block(self, i: int, j: int, p: int | None = None) -> tuple[slice, slice]:
        """Rows and columns of block (i, j) of size p (default s), in elements."""
        p = self.s if p is None else p
        return slice(i * p, (i + 1) * p), slice(j * p, (j + 1) * p)

    def diagonal(self, i: int) -> None:
        """Eq. 2 inside diagonal block (i, i)."""
        self.calls.diagonal += 1
        if not self.dry:
            start = time.perf_counter()
            r, c = self.block(i, i)
            self.m[r, c] = solve_diagonals(self.m[r, c].copy())
            self.calls.seconds["diagonal"] += time.perf_counter() - start

    def rectangular(self, c: tuple, a: tuple, b: tuple) -> None:
        """C = C + A x B (eq. 4), each a (rows, cols) pair of slices."""
        self.calls.rectangular += 1
        self.calls.rectangular_sizes.append(c[0].stop - c[0].start)
        if not self.dry:
            start = time.perf_counter()
            self.m[c] = np.minimum(self.m[c], min_plus(self.m[a], self.m[b]))
            self.calls.seconds["rectangular"] += time.perf_counter() - start

    def triangular(self, c: tuple, a: tuple, b: tuple) -> None:
        """C = C + A x C + C x B (eq. 5) for the rectangle C between the
        upper-left triangle A (its rows) and the lower-right triangle B (its
        columns), one anti-diagonal of C at a time."""
        self.calls.triangular += 1
        if self.dry:
            return
        start = time.perf_counter()
        C, A, B = self.m[c], self.m[a], self.m[b]
        p, q = C.shape
        inf = infinity(C.dtype)
        upper_a = np.arange(p)[None, :] > np.arange(p)[:, None]  # A[r, r'] with r' > r
        lower_b = np.arange(q)[:, None] < np.arange(q)[None, :]  # B[c', c] with c' < c
        a_up = np.where(upper_a, A, inf)
        b_lo = np.where(lower_b, B, inf)
        for t in range(p + q - 1):  # t = (p - 1 - r) + c
            r = np.arange(max(0, p - 1 - t), min(p, p - 1 - t + q))
            cc = t - (p - 1 - r)
            # min over r' > r of A[r, r'] + C[r', c], and over c' < c of C[r, c'] + B[c', c]
            down = (a_up[r, :] + C[:, cc].T).min(axis=1)
            left = (C[r, :] + b_lo[:, cc].T).min(axis=1)
            C[r, cc] = np.minimum(C[r, cc], np.minimum(down, left))
        self.m[c] = C
        self.calls.seconds["triangular"] += time.perf_counter() - start

    def result(self) -> np.ndarray:
        return self.m[: self.n1, : self.n1]


def solve_bottom_up(m, s: int, *, dry: bool = False, engine=None) -> tuple[np.ndarray, Calls]:
    """The bottom-up order (Fig 11, re-derived): the diagonal blocks, then
    block-diagonal D = 1, 2, ...: for every block (I, I + D) eq. 4 over
    K = I+1 ... I+D-1, then eq. 5. ``dry``: count the calls only (``m`` may
    then be any array of the matrix's shape and dtype, e.g. np.empty).
    ``engine``: the class of the block operations (default Blocked, NumPy;
    dp_gpu.GpuBlocked runs each on the GPU)."""
    g = (engine or Blocked)(m, s, dry=dry)
    for i in range(g.blocks):
        g.diagonal(i)
    for d in range(1, g.blocks):
        for i in range(g.blocks - d):
            j = i + d
            for k in range(i + 1, j):
                g.rectangular(g.block(i, j), g.block(i, k), g.block(k, j))
            g.triangular(g.block(i, j), g.block(i, i), g.block(j, j))
    return (None if dry else g.result()), g.calls


def solve_divide_and_conquer(m, threshold: int, *, dry: bool = False, engine=None
                             ) -> tuple[np.ndarray, Calls]:  # fmt: skip
    """The divide-and-conquer order of Fig 10 with recursion threshold M.

    The matrix is padded to 4 * p elements a side with p = M * 2**L (the
    quadrant size of the top call); the diagonal blocks of size M are solved
    first, then ``rectangular(A, B, C, p)`` on the whole matrix: A, B its
    upper-left and lower-right triangles of size 2p, C the rectangle between
    them. Fig 10's body, quadrants X00, X01, X10, X11 of size p:

        triangular(A01, A00, A11, p); triangular(C10, A11, B00, p)
        triangular(B01, B00, B11, p)
        compute_rectangular(C00, A01, C10); triangular(C00, A00, B00, p)
        compute_rectangular(C11, C10, B01); triangular(C11, A11, B11, p)
        compute_rectangular(C01, A01, C11); compute_rectangular(C01, C00, B01)
        triangular(C01, A00, B11, p)

    and ``triangular(C, A, B, p)`` is ``rectangular(A, B, C, p / 2)`` while
    p > M, else one compute_triangular call. A matrix of at most 2M a side
    is the diagonal blocks and one triangular call."""
    if threshold < 1:
        raise ValueError(f"threshold M must be >= 1, got {threshold}")
    n1 = m.shape[0]
    p = threshold
    while 4 * p < n1:
        p *= 2
    g = (engine or Blocked)(shaped(4 * p, m.dtype) if dry else m, threshold, dry=dry,
                            size=4 * p)  # fmt: skip
    for i in range(g.blocks):
        g.diagonal(i)

    def tri(c, a, b, size):
        # c, a, b: (row0, col0) corners of the size x size target and triangles
        if size > threshold:
            rect(a, b, c, size // 2)
        else:
            g.triangular(_sl(c, size), _sl(a, size), _sl(b, size))

    def rect(a, b, c, h):
        # a, b: corners of triangles of size 2h; c: corner of the 2h x 2h rectangle.
        # Fig 10 first finishes A's and B's off-diagonal quadrants (recomputing them
        # where they are complete), then C as ours does (C10 is independent of B01).
        tri(_quadrant(a, 0, 1, h), a, _quadrant(a, 1, 1, h), h)
        tri(_quadrant(b, 0, 1, h), b, _quadrant(b, 1, 1, h), h)
        _split_rectangle(g, tri, a, b, c, h)

    size = 4 * p
    if size <= 2 * threshold:
        tri((0, threshold), (0, 0), (threshold, threshold), threshold)
    else:
        half = size // 2
        rect((0, 0), (half, half), (0, half), p)
    return (None if dry else g.result()), g.calls


def _quadrant(x: tuple[int, int], r: int, k: int, h: int) -> tuple[int, int]:
    """The corner of quadrant (r, k), of size h, of the block whose corner is x."""
    return (x[0] + r * h, x[1] + k * h)


def _split_rectangle(g, tri, a, b, c, h: int) -> None:
    """The 2h x 2h rectangle C (corner c) between the triangles A and B (corners
    a, b) whose quadrants are complete, quadrant by quadrant (``solve_recursive``'s
    docstring; the end of Fig 10's body): C10, then C00 and C11 after one product
    each, then C01 after two; ``tri(c, a, b, h)`` finishes an h x h rectangle."""

    def q(x, r, k):
        return _quadrant(x, r, k, h)

    tri(q(c, 1, 0), q(a, 1, 1), q(b, 0, 0), h)
    g.rectangular(_sl(q(c, 0, 0), h), _sl(q(a, 0, 1), h), _sl(q(c, 1, 0), h))
    tri(q(c, 0, 0), q(a, 0, 0), q(b, 0, 0), h)
    g.rectangular(_sl(q(c, 1, 1), h), _sl(q(c, 1, 0), h), _sl(q(b, 0, 1), h))
    tri(q(c, 1, 1), q(a, 1, 1), q(b, 1, 1), h)
    g.rectangular(_sl(q(c, 0, 1), h), _sl(q(a, 0, 1), h), _sl(q(c, 1, 1), h))
    g.rectangular(_sl(q(c, 0, 1), h), _sl(q(c, 0, 0), h), _sl(q(b, 0, 1), h))
    tri(q(c, 0, 1), q(a, 0, 0), q(b, 1, 1), h)


def _sl(corner: tuple[int, int], size: int) -> tuple[slice, slice]:
    return slice(corner[0], corner[0] + size), slice(corner[1], corner[1] + size)


def solve_recursive(m, s: int, base: int, *, dry: bool = False, engine=None
                    ) -> tuple[np.ndarray, Calls]:  # fmt: skip
    """The bottom-up order with eq. 5 split into min-plus products (ours: the
    lever the issue names, since the triangular part is 96 % of the thesis's
    time). ``tri(C, A, B, p)`` for the p x p rectangle C between the complete
    triangles A (its rows) and B (its columns), quadrants X00 ... X11:

        tri(C10, A11, B00)
        C00 += A01 x C10;            tri(C00, A00, B00)
        C11 += C10 x B01;            tri(C11, A11, B11)
        C01 += A01 x C11 + C00 x B01; tri(C01, A00, B11)

    down to p <= ``base``, where one anti-diagonal sweep finishes it. Unlike
    Fig 10's body it does not recompute A's and B's off-diagonal quadrants
    (they are complete), so every element is finished once: 4**L sweeps of
    base size and 4 products a split. ``s`` must be ``base`` times a power of 2."""
    if base < 1 or s < base or s % base or (s // base) & (s // base - 1):
        raise ValueError(f"block size {s} must be base {base} times a power of 2")
    g = (engine or Blocked)(m, s, dry=dry)

    def tri(c, a, b, p):
        if p <= base:
            g.triangular(_sl(c, p), _sl(a, p), _sl(b, p))
            return
        _split_rectangle(g, tri, a, b, c, p // 2)

    for i in range(g.blocks):
        g.diagonal(i)
    for d in range(1, g.blocks):
        for i in range(g.blocks - d):
            j = i + d
            for k in range(i + 1, j):
                g.rectangular(g.block(i, j), g.block(i, k), g.block(k, j))
            tri((i * s, j * s), (i * s, i * s), (j * s, j * s), s)
    return (None if dry else g.result()), g.calls


def bottom_up_counts(blocks: int) -> tuple[int, int]:
    """Table 1's (triangular, rectangular) calls of the bottom-up order for B
    blocks a side: B(B-1)/2 and C(B, 3)."""
    return blocks * (blocks - 1) // 2, math.comb(blocks, 3)


def operations(n: int) -> int:
    """Min-plus operations (one add and one min) of eq. 1 for n weights:
    sum over i < j of (j - i) candidates = (n^3 - n) / 6."""
    return (n**3 - n) // 6


def shaped(n: int, dtype="float32") -> np.ndarray:
    """An n x n read-only array of zeros that takes no memory: the matrix a
    dry run (call counts only) is given."""
    return np.broadcast_to(np.zeros((), dtype=dtype), (n, n))
