"""Moazeni (2013) chapter 3 on the GPU: the kernels of ``kernels/dp.cu``
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
RB_THREADS threads (``dp_minplus_rb``, 4 x 4 elements a thread); a launch whose jobs
give fewer than SPLIT_TARGET thread blocks splits each job's terms over several
(``split``); one thread a row for the diagonal kernel and the global-memory triangular
kernel (at most MAX_THREADS), TRI_LANES threads an element for the shared-memory one
(``dp_triangular_shared``, where 3 p (p + 1) elements fit the device's shared memory)."""

from __future__ import annotations

import time
from functools import cache

import numpy as np

from . import cuda_source, dp

SOURCE = "dp.cu"
TILE = 16  # DP_TILE of dp.cu
RB, RB_THREADS = 64, 256  # DP_RB of dp.cu and its thread count (16 x 16, 4 x 4 elements each)
MAX_THREADS = 256
# Thread blocks a min-plus launch aims for: an H100's 132 SMs hold about 3 of
# dp_minplus_rb's (256 threads, ~80 registers each) at once, so 1,024 is ~2.5 waves.
SPLIT_TARGET = 1024
TRI_LANES = 4  # DP_TRI_LANES of dp.cu
CTYPES = {"float32": "float", "int32": "int"}
KERNELS = ("dp_diagonal", "dp_minplus", "dp_minplus_rb", "dp_triangular", "dp_triangular_shared")
# cuda.h's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
MAX_DYNAMIC_SHARED_ATTRIBUTE = 8


@cache
def _module():
    from pfresample.cuda import kernels

    names = [f"{k}<{t}>" for k in KERNELS for t in CTYPES.values()]
    return kernels.Module(cuda_source(SOURCE), names, kernels.COMPILE_OPTIONS)


def kernel(name: str, dtype) -> object:
    return _kernel(name, np.dtype(dtype).name)


@cache
def _kernel(name: str, dtype_name: str) -> object:
    # cached: a lookup costs host time between the strips' launches otherwise
    return _module().get_function(f"{name}<{CTYPES[dtype_name]}>")


@cache
def _shared_limit(device: int) -> int:
    """The device's dynamic shared memory a block, opted in (``attributes`` reads
    every attribute of the device: once, not on every triangular launch)."""
    import cupy

    return cupy.cuda.Device(device).attributes["MaxSharedMemoryPerBlockOptin"]


def minplus_launch(p: int, jobs: int, terms: int = 1) -> tuple[str, tuple, tuple, int]:
    """(kernel, grid, block, split) of ``jobs`` p x p min-plus targets of ``terms``
    products each in one launch: each job's terms split over ``split`` thread
    blocks of a tile where the jobs alone give fewer than SPLIT_TARGET blocks."""
    if p % RB == 0:
        name, tiles, block = "dp_minplus_rb", p // RB, (RB_THREADS,)
    else:
        name, tiles, block = "dp_minplus", -(-p // TILE), (TILE, TILE)
    split = max(1, min(terms, SPLIT_TARGET // (jobs * tiles * tiles)))
    return name, (tiles, tiles, jobs * split), block, split


def triangular_launch(p: int, jobs: int, dtype) -> tuple[str, tuple, tuple, int]:
    """(kernel, grid, block, dynamic shared bytes) of ``jobs`` p x p triangular
    jobs: the shared-memory kernel where C, A and B fit the device's shared
    memory a block, else the global-memory one."""
    import cupy

    shared = 3 * p * (p + 1) * np.dtype(dtype).itemsize
    if shared <= _shared_limit(cupy.cuda.Device().id):
        threads = min(MAX_THREADS, -(-p * TRI_LANES // 32) * 32)  # whole warps: shuffles
        return "dp_triangular_shared", (jobs,), (threads,), shared
    return "dp_triangular", (jobs,), (min(p, MAX_THREADS),), 0


def launch_triangular(m, ld, p: int, jobs) -> None:
    """The triangular jobs (6 corners each, int32 on the device) in one launch."""
    name, grid, block, shared = triangular_launch(p, len(jobs), m.dtype)
    fn = kernel(name, m.dtype)
    if shared:
        _allow_shared(fn, shared)
    fn(grid, block, (m, ld, np.int32(p), jobs), shared_mem=shared)


_SHARED_ALLOWED: dict[int, int] = {}  # function pointer -> dynamic shared bytes allowed


def _allow_shared(fn, nbytes: int) -> None:
    # the driver refuses more than 48 KiB of dynamic shared memory unless asked first
    from cupy_backends.cuda.api import driver

    if _SHARED_ALLOWED.get(fn.ptr, 0) < nbytes:
        driver.funcSetAttribute(fn.ptr, MAX_DYNAMIC_SHARED_ATTRIBUTE, nbytes)
        _SHARED_ALLOWED[fn.ptr] = nbytes


def launch_minplus(m, ld, p: int, jobs, terms: int) -> None:
    """``len(jobs)`` min-plus targets of ``terms`` products each in one launch."""
    name, grid, block, split = minplus_launch(p, len(jobs), terms)
    kernel(name, m.dtype)(grid, block, (m, ld, np.int32(p), jobs, np.int32(terms), np.int32(split)))


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

    def _timed(self, kind: str, launch, *args) -> None:
        import cupy

        start = time.perf_counter()
        launch(*args)
        cupy.cuda.get_current_stream().synchronize()
        self.calls.seconds[kind] += time.perf_counter() - start

    def diagonal(self, i: int) -> None:
        self.calls.diagonal += 1
        if not self.dry:
            args = (self.m, np.int64(self.m.shape[0]), np.int32(self.s), np.int32(i))
            self._timed("diagonal", kernel("dp_diagonal", self.dtype), (1,),
                        (min(self.s, MAX_THREADS),), args)  # fmt: skip

    def rectangular(self, c, a, b) -> None:

        p = c[0].stop - c[0].start
        self.calls.rectangular += 1
        self.calls.rectangular_sizes.append(p)
        if self.dry:
            return
        self._timed("rectangular", launch_minplus, self.m, np.int64(self.m.shape[0]), p,
                    _job(c, a, b)[None], 1)  # fmt: skip

    def triangular(self, c, a, b) -> None:

        p = c[0].stop - c[0].start
        self.calls.triangular += 1
        if self.dry:
            return
        self._timed("triangular", launch_triangular, self.m, np.int64(self.m.shape[0]), p,
                    _job(c, a, b)[None])  # fmt: skip

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


def solve_bottom_up(m, s: int, *, profile: bool = False) -> tuple[object, dp.Calls, float]:
    """The bottom-up order with one launch a kind and block-diagonal: every
    diagonal block, then for D = 1, 2, ...: one min-plus launch over every
    block (I, I + D) and every K between (D >= 2), one triangular launch.
    Returns the CuPy matrix, the calls (a launch counts once) and the GPU's
    seconds (CUDA events around the whole, the upload and the job lists excluded:
    the lists, the schedule of (blocks, s), are built and uploaded first, so that
    no launch waits for the host). With ``profile``, ``calls.seconds`` holds each
    kind's device time (an event pair around every launch, which adds a little to
    the whole)."""
    import cupy

    g = GpuBlocked(m, s)
    ld, blocks, dtype = np.int64(g.m.shape[0]), g.blocks, g.dtype
    # the job lists the CPU test runs (strip_jobs), on the device before the clock starts
    plan = [(d, *(None if j is None else cupy.asarray(j) for j in strip_jobs(blocks, s, d)))
            for d in range(1, blocks)]  # fmt: skip
    marks = []  # (kind, start, end) events with ``profile``

    def timed(kind, launch, *args):
        if profile:
            marks.append((kind, cupy.cuda.Event(), cupy.cuda.Event()))
            marks[-1][1].record()
        launch(*args)
        if profile:
            marks[-1][2].record()

    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    timed("diagonal", kernel("dp_diagonal", dtype), (blocks,), (min(s, MAX_THREADS),),
          (g.m, ld, np.int32(s), np.int32(0)))  # fmt: skip
    g.calls.diagonal += 1
    for d, minplus, tri in plan:
        if minplus is not None:
            timed("rectangular", launch_minplus, g.m, ld, s, minplus, d - 1)
            g.calls.rectangular += 1
        timed("triangular", launch_triangular, g.m, ld, s, tri)
        g.calls.triangular += 1
    end.record()
    end.synchronize()
    for kind, a, b in marks:
        g.calls.seconds[kind] += cupy.cuda.get_elapsed_time(a, b) / 1e3
    return g.result(), g.calls, cupy.cuda.get_elapsed_time(start, end) / 1e3
