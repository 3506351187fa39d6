"""Moazeni (2013) chapter 3 on the GPU: the kernels of ``gpu_kernels/moazeni2013/dp.cu``
(compiled through the library's cache, ``pfresample.cuda.kernels.Module``) and their
launches. ``dp.py`` is the CPU reference; every result is equal to it bit for bit
(tests/gpu/test_gpu_moazeni2013.py).

* ``GpuBlocked``: the block operations of ``dp.Blocked`` on a CuPy matrix, one launch
  an operation -- any order of ``dp`` (bottom-up, divide and conquer, ours) runs on the
  GPU with ``engine=GpuBlocked``, counting its calls as Table 1 does;
* ``solve_bottom_up``: the thesis's final implementation (§3.4: "a single kernel for
  all the blocks that are in the same diagonal-strip"), one min-plus launch (every K)
  and one triangular launch a block-diagonal.

Launch parameters live here: DP_TILE x DP_TILE threads a min-plus tile (the kernel's
``DP_TILE``), or, where the product's side is a multiple of RB, RB x RB a block of
RB_THREADS threads (``dp_minplus_rb``, 4 x 4 elements a thread); one thread a row for
the triangular and diagonal kernels (at most MAX_THREADS)."""

from __future__ import annotations

import time
from functools import cache

import numpy as np

from . import dp

SOURCE = "moazeni2013/dp.cu"
TILE = 16  # DP_TILE of dp.cu
RB, RB_THREADS = 64, 256  # DP_RB of dp.cu and its thread count (16 x 16, 4 x 4 elements each)
MAX_THREADS = 256
CTYPES = {"float32": "float", "int32": "int"}
KERNELS = ("dp_diagonal", "dp_minplus", "dp_minplus_rb", "dp_triangular")


@cache
def _module():
    from pfresample.cuda import kernels

    names = [f"{k}<{t}>" for k in KERNELS for t in CTYPES.values()]
    return kernels.Module(kernels.source(SOURCE), names, kernels.COMPILE_OPTIONS)


def kernel(name: str, dtype) -> object:
    return _module().get_function(f"{name}<{CTYPES[np.dtype(dtype).name]}>")


def minplus_launch(p: int, jobs: int) -> tuple[str, tuple, tuple]:
    """(kernel, grid, block) of ``jobs`` p x p min-plus products in one launch."""
    if p % RB == 0:
        return "dp_minplus_rb", (p // RB, p // RB, jobs), (RB_THREADS,)
    tiles = -(-p // TILE)
    return "dp_minplus", (tiles, tiles, jobs), (TILE, TILE)


def _job(c, a, b):
    """One job on the device: the corners of C, A and B (slice pairs), int32."""
    import cupy

    return cupy.asarray([x.start for pair in (c, a, b) for x in pair], dtype=cupy.int32)


class GpuBlocked(dp.Blocked):
    """dp.Blocked's operations on the GPU: ``self.m`` is a CuPy array."""

    def __init__(self, m, s: int, *, dry: bool = False, size: int | None = None):
        import cupy

        super().__init__(np.asarray(m) if dry else m, s, dry=True, size=size)
        self.dry = dry
        if not dry:
            side = self.blocks * self.s
            self.m = cupy.full((side, side), dp.infinity(m.dtype), dtype=m.dtype)
            self.m[: self.n1, : self.n1] = cupy.asarray(m)
        self.dtype = np.dtype(m.dtype)

    def _launch(self, kind: str, grid, block, args, name: str | None = None) -> None:
        import cupy

        start = time.perf_counter()
        kernel(name or f"dp_{kind}", self.dtype)(grid, block, args)
        cupy.cuda.get_current_stream().synchronize()
        self.calls.seconds[kind] += time.perf_counter() - start

    def diagonal(self, i: int) -> None:
        self.calls.diagonal += 1
        if not self.dry:
            args = (self.m, np.int64(self.m.shape[0]), np.int32(self.s), np.int32(i))
            self._launch("diagonal", (1,), (min(self.s, MAX_THREADS),), args)

    def rectangular(self, c, a, b) -> None:

        p = c[0].stop - c[0].start
        self.calls.rectangular += 1
        self.calls.rectangular_sizes.append(p)
        if self.dry:
            return
        name, grid, block = minplus_launch(p, 1)
        args = (self.m, np.int64(self.m.shape[0]), np.int32(p), _job(c, a, b), np.int32(1))
        self._launch("rectangular", grid, block, args, name)

    def triangular(self, c, a, b) -> None:

        p = c[0].stop - c[0].start
        self.calls.triangular += 1
        if self.dry:
            return
        jobs = _job(c, a, b)
        self._launch("triangular", (1,), (min(p, MAX_THREADS),),
                     (self.m, np.int64(self.m.shape[0]), np.int32(p), jobs))  # fmt: skip

    def result(self):
        return self.m[: self.n1, : self.n1]


def strip_jobs(blocks: int, s: int, d: int) -> tuple[np.ndarray | None, np.ndarray]:
    """The jobs of block-diagonal d: (min-plus jobs, triangular jobs), int32.
    A min-plus job is C's corner then, for each K = I+1 ... I+d-1, the corners
    of A(I, K) and B(K, I+d) (None for d < 2: no K); a triangular job C's, A's
    and B's corners, A = A(I, I), B = A(I+d, I+d)."""
    rows = range(blocks - d)
    minplus = None
    if d >= 2:
        minplus = np.asarray(
            [[i * s, (i + d) * s] + [v for k in range(i + 1, i + d)
             for v in (i * s, k * s, k * s, (i + d) * s)] for i in rows],
            dtype=np.int32,
        )  # fmt: skip
    tri = np.asarray([[i * s, (i + d) * s, i * s, i * s, (i + d) * s, (i + d) * s] for i in rows],
                     dtype=np.int32).reshape(-1, 6)  # fmt: skip
    return minplus, tri


def solve_bottom_up(m, s: int) -> tuple[object, dp.Calls, float]:
    """The bottom-up order with one launch a kind and block-diagonal: every
    diagonal block, then for D = 1, 2, ...: one min-plus launch over every
    block (I, I + D) and every K between (D >= 2), one triangular launch.
    Returns the CuPy matrix, the calls (a launch counts once) and the GPU's
    seconds (CUDA events around the whole, the upload and the job lists excluded:
    the lists, the schedule of (blocks, s), are built and uploaded first, so that
    no launch waits for the host)."""
    import cupy

    g = GpuBlocked(m, s)
    ld, blocks, dtype = np.int64(g.m.shape[0]), g.blocks, g.dtype
    # the job lists the CPU test runs (strip_jobs), on the device before the clock starts
    plan = [(d, *(None if j is None else cupy.asarray(j) for j in strip_jobs(blocks, s, d)))
            for d in range(1, blocks)]  # fmt: skip
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    kernel("dp_diagonal", dtype)((blocks,), (min(s, MAX_THREADS),),
                                 (g.m, ld, np.int32(s), np.int32(0)))  # fmt: skip
    g.calls.diagonal += 1
    for d, minplus, tri in plan:
        if minplus is not None:
            name, grid, block = minplus_launch(s, len(minplus))
            kernel(name, dtype)(grid, block, (g.m, ld, np.int32(s), minplus, np.int32(d - 1)))
            g.calls.rectangular += 1
        kernel("dp_triangular", dtype)(
            (len(tri),), (min(s, MAX_THREADS),), (g.m, ld, np.int32(s), tri)
        )
        g.calls.triangular += 1
    end.record()
    end.synchronize()
    return g.result(), g.calls, cupy.cuda.get_elapsed_time(start, end) / 1e3
