"""Moazeni (2013) chapter 3's real instances on the GPU: ``dp_weighted``'s recurrence
(w(i, k, j) in every candidate) by the kernels of ``kernels/dp_weighted.cuh``, one source a
family (``kernels/matrix_chain.cu``, ``kernels/triangulation.cu``), in ``dp_gpu``'s
bottom-up strip order with its job lists and launch shapes: the diagonal blocks, then
for each block-diagonal one min-plus launch (every block and K, register-blocked where
the block side is a multiple of 64) and one triangular launch. Equal bit for bit to
``dp_weighted.solve_diagonals`` (tests/gpu/test_gpu_moazeni2013_weighted.py)."""

from __future__ import annotations

from functools import cache

import numpy as np

from . import cuda_source, dp, dp_gpu, dp_weighted

SOURCES = {"chain": ("matrix_chain.cu", "Chain"), "perimeter": ("triangulation.cu", "Perimeter")}
KERNELS = ("wdp_diagonal", "wdp_minplus", "wdp_minplus_rb", "wdp_triangular_shared")
DELAY_NS = 200_000  # delay_ns before the start event: the host enqueues the first launches
FLAWS = ("none", "drop_last_product", "drop_weight")  # the tests' negative controls


@cache
def _module(family: str):
    from pfresample.cuda import kernels

    source, struct = SOURCES[family]
    names = [f"{k}<{struct}>" for k in KERNELS]
    return kernels.Module(cuda_source(source), names, kernels.COMPILE_OPTIONS)


@cache
def kernel(family: str, name: str):
    if name == "delay_ns":
        return _module(family).get_function(name)
    return _module(family).get_function(f"{name}<{SOURCES[family][1]}>")


def padded(inst: dp_weighted.Instance, side: int) -> np.ndarray:
    """The family's array padded with zeros to ``side`` (w is 0 on the padding)."""
    if inst.data.ndim == 1:
        out = np.zeros(side, dtype=inst.dtype)
        out[: inst.n] = inst.data
    else:
        out = np.zeros((side, side), dtype=inst.dtype)
        out[: inst.n, : inst.n] = inst.data
    return out


def solve(inst: dp_weighted.Instance, s: int = 64, *, flaw: str = "none", repeats: int = 1
          ) -> tuple[np.ndarray, list[float], float]:  # fmt: skip
    """Solve ``inst`` on the GPU with s x s blocks ``repeats`` times (each from the
    starting matrix): (the n x n matrix, each run's device seconds by CUDA events, the
    upload's seconds). The job lists and the padded arrays go up before the clock; each
    run's launches are enqueued behind ``delay_ns``, so the events time the device, not
    the host's launch latency. ``flaw`` (tests only): drop each strip job's last product,
    or w (FLAWS)."""
    import time

    if flaw not in FLAWS:
        raise ValueError(f"flaw must be one of {FLAWS}, got {flaw!r}")
    if s < 2 or s > 128:
        raise ValueError(f"block size must be in [2, 128] (the triangular part in shared memory), "
                         f"got {s}")  # fmt: skip
    import cupy

    n, dtype = inst.n, inst.dtype
    blocks = -(-n // s)
    side = blocks * s
    start_matrix = np.full((side, side), dp.infinity(dtype), dtype=dtype)
    start_matrix[:n, :n] = dp_weighted.matrix(inst)
    data = padded(inst, side)
    if flaw == "drop_weight":
        data[...] = 0
    begin = time.perf_counter()
    f = cupy.asarray(data)
    first = cupy.asarray(start_matrix)
    cupy.cuda.get_current_stream().synchronize()
    upload_s = time.perf_counter() - begin
    ld = np.int64(side)
    plan = []
    for d in range(1, blocks):
        minplus, tri = dp_gpu.strip_jobs(blocks, s, d)
        terms = d - 1
        if minplus is not None and flaw == "drop_last_product":
            minplus, terms = minplus[:, :-4], terms - 1
        plan.append((None if minplus is None or terms == 0 else cupy.asarray(minplus), terms,
                     cupy.asarray(tri)))  # fmt: skip
    family = inst.family
    times = []
    for _ in range(max(1, int(repeats))):
        m = first.copy()
        cupy.cuda.get_current_stream().synchronize()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        kernel(family, "delay_ns")((1,), (1,), (np.int64(DELAY_NS),))
        start.record()
        kernel(family, "wdp_diagonal")((blocks,), (min(s, dp_gpu.MAX_THREADS),),
                                       (m, ld, np.int32(s), f))  # fmt: skip
        for jobs, terms, tri in plan:
            if jobs is not None:
                name, grid, block, split = dp_gpu.minplus_launch(s, len(jobs), terms)
                args = (m, ld, np.int32(s), jobs, np.int32(terms), np.int32(split), f)
                kernel(family, "w" + name)(grid, block, args)
            name, grid, block, shared = dp_gpu.triangular_launch(s, len(tri), dtype)
            if name != "dp_triangular_shared":
                raise RuntimeError(f"s = {s}: the triangular part does not fit shared memory")
            fn = kernel(family, "wdp_triangular_shared")
            dp_gpu._allow_shared(fn, shared)
            fn(grid, block, (m, ld, np.int32(s), tri, f), shared_mem=shared)
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return cupy.asnumpy(m[:n, :n]), times, upload_s
