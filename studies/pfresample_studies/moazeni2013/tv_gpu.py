"""Moazeni (2013) chapter 6 on the GPU (``kernels/tv.cu``): the
three solvers of §6.3-6.4 in float32, and chapter 5's Chan-Vese step
(``chanvese.cu``). Launch parameters live here: TILE x TILE threads a block (the
thesis's 8 x 8 and 16 x 16), P's march CHUNK planes a block, 256 threads a
one-voxel-a-thread launch, one 1,024-thread block for the reduction.

* ``global_sync``: LLT, TVnorm (a channel a launch), Reduction, P (a channel a
  launch) and Solver, the whole volume one image (equal to ``tv.solve``'s to
  float32 rounding);
* ``thread_sync``: one kernel an iteration, each TILE^3 cube an image of its own,
  its intermediates in global memory;
* ``unsync``: one kernel an iteration, each thread's 2 x 2 x 2 cube an image of its
  own, in registers.

``tv.variant_blocks`` gives each variant's energy, so the NumPy reference solves
the same problem as each kernel (the secondary approaches change the answer: their
error against GlobalSync is measured, not assumed)."""

from __future__ import annotations

from functools import cache

import numpy as np

from . import chanvese, cuda_source, sharedmem, tv

SOURCE = "tv.cu"
CV_SOURCE = "chanvese.cu"
TILES = (8, 16)  # the thesis's two thread blocks (§6.5: 8 x 8 and 16 x 16)
CHUNK = 16  # planes a block of tv_p marches (more blocks than one march of n0)
THREADS = 256  # a block of the one-voxel-a-thread kernels (tv_llt, tv_solver)
REDUCE_THREADS = 1024  # tv_reduce's single block
PROFILE_DELAY_NS = 1_000_000  # before a profiled step: longer than enqueueing its launches
# cuda.h: CU_FUNC_ATTRIBUTE_{SHARED_SIZE_BYTES, NUM_REGS, LOCAL_SIZE_BYTES,
# PREFERRED_SHARED_MEMORY_CARVEOUT}
SHARED_ATTRIBUTE, REGS_ATTRIBUTE, LOCAL_ATTRIBUTE, CARVEOUT_ATTRIBUTE = 1, 4, 3, 9


def _plan(kernel: sharedmem.Kernel, reuse: bool) -> sharedmem.Plan:
    return sharedmem.plan(kernel) if reuse else sharedmem.identity(kernel)


@cache
def _module(source: str, tile: int, reuse: bool, p_only: bool = False):
    from pfresample.cuda import kernels

    shape = sharedmem.curvature3d(tile) if source == SOURCE else sharedmem.curvature2d(tile)
    options = (*kernels.COMPILE_OPTIONS, f"-DTILE={tile}", *_plan(shape, reuse).macros())
    return kernels.Module(cuda_source(source), (), (*options, *(("-DP_ONLY",) if p_only else ())))


@cache
def function(name: str, tile: int, reuse: bool = False, p_only: bool = False):
    """A kernel of tv.cu (``tv_*``) or chanvese.cu (``cv_step``) at this tile,
    its shared arrays in their own partitions or, with ``reuse``, chapter 5's; with
    ``p_only`` tv_threadsync's and tv_unsync's function P alone (tv.cu's P_ONLY)."""
    source = CV_SOURCE if name.startswith("cv_") else SOURCE
    return _module(source, tile, reuse, p_only).get_function(name)


def attributes(fn, threads: int, carveout: int | None = None) -> dict:
    """Registers a thread, static shared and local bytes, and the blocks of
    ``threads`` resident on an SM (the occupancy calculator, under ``carveout``
    per cent of the unified L1/shared memory if given)."""
    from cupy_backends.cuda.api import driver

    if carveout is not None:
        driver.funcSetAttribute(fn.ptr, CARVEOUT_ATTRIBUTE, int(carveout))
    blocks = driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.ptr, threads, 0)
    return {"registers": driver.funcGetAttribute(REGS_ATTRIBUTE, fn.ptr),
            "shared_bytes": driver.funcGetAttribute(SHARED_ATTRIBUTE, fn.ptr),
            "local_bytes": driver.funcGetAttribute(LOCAL_ATTRIBUTE, fn.ptr),
            "blocks_per_sm": int(blocks)}  # fmt: skip


def to_device(a: np.ndarray):
    """(n0, n1, n2, 6) host array -> channel-major (6, n0, n1, n2) float32 on the GPU."""
    import cupy

    return cupy.ascontiguousarray(cupy.asarray(np.moveaxis(np.asarray(a, np.float32), -1, 0)))


def to_host(a) -> np.ndarray:
    return np.moveaxis(a.get(), 0, -1)


def check_shape(shape, variant: str, tile: int) -> None:
    if tile not in TILES:
        raise ValueError(f"tile must be one of {TILES}, got {tile}")
    blocks = tv.variant_blocks(variant, tile)
    tv.check_blocks(tuple(shape), blocks["curv_block"], blocks["norm_block"])


class Solver:
    """One variant's steepest descent on the GPU from L0 (n0, n1, n2, 6) against
    d_hat; ``step()`` launches one iteration's kernels on the current stream."""

    def __init__(self, L0, d_hat, variant: str, tile: int, *, lam: float, eps: float,
                 step: float, reuse: bool = False):  # fmt: skip
        import cupy

        if variant not in tv.VARIANTS:
            raise ValueError(f"variant must be one of {tv.VARIANTS}, got {variant!r}")
        shape = tuple(np.shape(L0)[:3])
        check_shape(shape, variant, tile)
        self.variant, self.tile, self.reuse, self.shape = variant, tile, reuse, shape
        self.V = int(np.prod(shape))
        self.lam, self.eps, self.step_size = np.float32(lam), np.float32(eps), np.float32(step)
        self.L, self.d_hat = to_device(L0), to_device(d_hat)
        n0, n1, n2 = shape
        if variant == "global_sync":
            self.D = cupy.empty_like(self.L)
            self.P = cupy.empty_like(self.L)
            self.norm_grid = (-(-n2 // tile), -(-n1 // tile), n0)
            self.blocks = int(np.prod(self.norm_grid))
            self.partial = cupy.empty(6 * self.blocks, dtype=cupy.float32)
            self.tv = cupy.empty(6, dtype=cupy.float64)
            self.scale = cupy.empty(6, dtype=cupy.float32)
            self.p_grid = (-(-n2 // (tile - 2)), -(-n1 // (tile - 2)), -(-n0 // CHUNK))
        elif variant == "thread_sync":
            self.D = cupy.empty_like(self.L)
            self.N = cupy.empty((18, *shape), dtype=cupy.float32)

    def launches(self, p_only: bool = False) -> list[tuple[str, object]]:
        """One iteration as (kernel, launch) pairs, in order (Table 10's rows); with
        ``p_only`` a secondary solver's function P alone (Fig 53: it reads, and leaves,
        the state a full iteration left)."""
        n0, n1, n2 = (np.int32(s) for s in self.shape)
        t, V = self.tile, np.int64(self.V)
        block = (t, t)
        if p_only and self.variant == "global_sync":
            raise ValueError("p_only is for the one-kernel solvers (GlobalSync's P is a kernel)")
        if self.variant == "thread_sync":
            grid = (int(n2) // t, int(n1) // t, int(n0) // t)
            fn = function("tv_threadsync", t, p_only=p_only)
            args = (self.L, self.d_hat, self.D, self.N, n0, n1, n2, self.lam, self.eps,
                    self.step_size)  # fmt: skip
            return [("Solver", lambda: fn(grid, block, args))]
        if self.variant == "unsync":
            grid = (int(n2) // (2 * t), int(n1) // (2 * t), int(n0) // 2)
            fn = function("tv_unsync", t, p_only=p_only)
            args = (self.L, self.d_hat, n0, n1, n2, self.lam, self.eps, self.step_size)
            return [("Solver", lambda: fn(grid, block, args))]
        ones = (-(-self.V // THREADS),)
        llt, norm = function("tv_llt", t, self.reuse), function("tv_norm", t, self.reuse)
        red, p = function("tv_reduce", t, self.reuse), function("tv_p", t, self.reuse)
        solver = function("tv_solver", t, self.reuse)
        out = [("LLT", lambda: llt(ones, (THREADS,), (self.L, self.D, V)))]
        for c in range(6):
            u, part = self.D[c], self.partial[c * self.blocks :]
            out.append(("TVnorm", lambda u=u, part=part: norm(
                self.norm_grid, block, (u, part, n0, n1, n2, self.eps))))  # fmt: skip
        out.append(("Reduction", lambda: red((1,), (REDUCE_THREADS,), (
            self.partial, np.int32(self.blocks), self.tv, self.scale))))  # fmt: skip
        for c in range(6):
            out.append(("P", lambda c=c: p(self.p_grid, block, (
                self.D[c], self.P[c], self.scale, np.int32(c), n0, n1, n2, np.int32(CHUNK),
                self.eps))))  # fmt: skip
        out.append(("Solver", lambda: solver(ones, (THREADS,), (
            self.L, self.D, self.d_hat, self.P, V, self.lam, self.step_size))))  # fmt: skip
        return out

    def iterate(self, iterations: int) -> float:
        """``iterations`` steps; their device seconds (CUDA events around them)."""
        import cupy

        launches = self.launches()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(iterations):
            for _, launch in launches:
                launch()
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) / 1e3

    def profile(self, iterations: int) -> dict[str, tuple[int, float]]:
        """Each kernel's calls and device seconds over ``iterations`` steps
        (events around every launch: Table 10's execution time), each step's
        launches enqueued behind ``delay_ns`` so that the events time the kernels
        and not the host's launch latency."""
        import cupy

        launches = self.launches()
        events = [(name, cupy.cuda.Event(), cupy.cuda.Event()) for name, _ in launches]
        totals: dict[str, list] = {name: [0, 0.0] for name, _ in launches}
        delay = function("delay_ns", self.tile)
        for _ in range(iterations):
            delay((1,), (1,), (np.int64(PROFILE_DELAY_NS),))
            for (_, launch), (_, a, b) in zip(launches, events, strict=True):
                a.record()
                launch()
                b.record()
            events[-1][2].synchronize()
            for name, a, b in events:
                totals[name][0] += 1
                totals[name][1] += cupy.cuda.get_elapsed_time(a, b) / 1e3
        return {name: (calls, seconds) for name, (calls, seconds) in totals.items()}

    def tensor(self):
        """D = L L^T on the GPU, channel-major (for the quality metrics)."""
        import cupy

        D = cupy.empty_like(self.L)
        function("tv_llt", self.tile)((-(-self.V // THREADS),), (THREADS,),
                                      (self.L, D, np.int64(self.V)))  # fmt: skip
        return D

    def result(self) -> np.ndarray:
        return to_host(self.L)


def quality(D, truth) -> tuple[float, float]:
    """Tensor RMSE and FA error (``tv.tensor_rmse``, ``tv.fa_error``) of
    channel-major D against channel-major truth, both on the GPU."""
    import cupy

    d, t = (cupy.moveaxis(x.astype(cupy.float64), 0, -1) for x in (D, truth))
    return tv.tensor_rmse(d, t), tv.fa_error(d, t)


def chanvese_step(phi, image, c1: float, c2: float, p: chanvese.Params, tile: int = 16,
                  reuse: bool = False):  # fmt: skip
    """One Chan-Vese step on the GPU (device arrays h x w float32): the new level set."""
    import cupy

    h, w = phi.shape
    out = cupy.empty_like(phi)
    grid = (-(-w // (tile - 2)), -(-h // (tile - 2)))
    args = (phi, image, out, np.int32(h), np.int32(w), *(np.float32(v) for v in (
        c1, c2, p.mu, p.nu, p.l1, p.l2, p.dt, p.eps, p.heps)))  # fmt: skip
    function("cv_step", tile, reuse)(grid, (tile, tile), args)
    return out
