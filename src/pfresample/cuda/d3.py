"""Launcher of D3 resampling (Das et al. 2014, ``d3.cu``): the contract is
``pfresample.resampling.d3``'s."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..contracts import D3_CDFS as CDFS
from ..contracts import D3_NOISES as NOISES
from . import cumulative
from .geometry import D3_THREADS, blocks, resident_threads
from .kernels import CTYPES, NULL, kernel
from .workspace import Call


def _element_strides(a, slot_axis: int) -> tuple[np.int64, np.int64]:
    """(slot, component) strides of ``a`` in elements: element (i, d) is at
    ``i * slot + d * component`` from ``a``'s first element."""
    steps = []
    for axis in (slot_axis, 1 - slot_axis) if a.ndim == 2 else (0,):
        if a.strides[axis] % a.itemsize:
            raise ValueError("the particle arrays' strides must be whole elements")
        steps.append(a.strides[axis] // a.itemsize)
    return np.int64(steps[0]), np.int64(steps[1] if len(steps) > 1 else 0)


def _int32_buffer(a, n: int, name: str):
    if a.dtype != np.int32 or a.shape != (n,) or not a.flags.c_contiguous:
        raise ValueError(f"{name} must be a contiguous int32 array of shape ({n},)")
    return a


def d3(
    call: Call,
    x,
    pw,
    *,
    noise: str = "eq5",
    cdf: str = "prefix",
    precision=None,
    threads: int | None = None,
    rows_layout: bool = False,
    out=None,
    strides=None,
    l_=None,
    iterations=None,
):
    """D3 on the device: the new particles (``out``, or a new CuPy array
    shaped like ``x``, of its dtype). Everything is enqueued on the current
    stream and nothing is read back, so a CUDA graph can capture the call.

    ``call``: a :class:`~pfresample.cuda.workspace.Call` of one seed: made
    by ``make_call(w, [seed])`` (the key (k0, k1) on the host), or a filter's
    with ``n_keys=1`` and ``keys`` the key (k0, k1) in device memory, read
    by the kernels at every launch (a captured graph's step key). Its weight
    statistics must be on the device (``stats.enqueue_stats`` or
    ``enqueue_checked_inputs``, or the filter's own): ``cdf="local"`` reads
    their sum and scale, ``ws.stats[STAT_SUM]`` and ``[STAT_SCALE]``.

    ``x``: the states, float32 or float64: (N,), or (N, D) with the slot
    on axis 0; ``rows_layout=True``: (D, N), the slot on axis 1 (a filter's
    rows of state components, no transpose needed). Any strides of whole
    elements; ``out`` (same shape and dtype, any such strides) must not
    overlap ``x``: every move reads the input particles. ``pw``: the prior
    weights (or their logarithms), contiguous (N,) float32 or float64, only
    compared.

    ``noise``, ``cdf``, ``precision``: as in ``pfresample.resample_d3``.
    ``threads``: threads per block of the three kernels (1 to 1024;
    geometry.D3_THREADS when None); the particles depend on it only with
    ``cdf="paper"``, whose thresholds are drawn a block (Figs 8-9).

    Buffers, each a contiguous int32 array of N that the caller may pass in
    (a capture passes them and ``out``: then the call allocates nothing):

    * ``strides``: j_i of every slot (default: ``call.out[0]``). With
      ``cdf="prefix"`` Systematic's ancestors (``cuda.cumulative.systematic``
      into it); with ``cdf="local"`` the local CDF's search (d3_local_strides),
      with ``cdf="paper"`` the paper's (d3_paper_strides).
    * ``l_``: l_i, the first maximum of w over R_i (default: the workspace's
      kept ``spare((N,))``).
    * ``iterations`` (``cdf="local"`` or ``"paper"``; None: not counted): the weights
      slot i added in its search, j_i + 1 when its threshold is passed, N
      when none is (the paper's Fig 11, iterations per thread).

    The first call for an N and precision compiles the kernels and makes the
    workspace's scan buffers: make it before a capture."""
    import cupy

    if noise not in NOISES:
        raise ValueError(f"noise must be one of {', '.join(NOISES)}, got {noise!r}")
    if cdf not in CDFS:
        raise ValueError(f"cdf must be one of {', '.join(CDFS)}, got {cdf!r}")
    if call.n_keys > 1:
        raise ValueError("D3 takes one seed a call (make_call(w, [seed]))")
    n = call.n
    if x.dtype not in CTYPES or x.ndim not in (1, 2):
        raise TypeError("x must be a float32 or float64 array of 1 or 2 dimensions")
    slot_axis = 1 if rows_layout and x.ndim == 2 else 0
    if x.shape[slot_axis] != n:
        layout = "(D, N)" if rows_layout else "(N,) or (N, D)"
        raise ValueError(f"x must have shape {layout} with N = {n}, got {tuple(x.shape)}")
    dims = 1 if x.ndim == 1 else int(x.shape[1 - slot_axis])
    if pw.dtype not in CTYPES or pw.shape != (n,) or not pw.flags.c_contiguous:
        raise ValueError(f"pw must be a contiguous float32 or float64 array of shape ({n},)")
    if out is None:
        out = cupy.empty_like(x)
    elif out.shape != x.shape or out.dtype != x.dtype:
        raise ValueError("out must have the shape and dtype of x")
    threads = D3_THREADS if threads is None else int(threads)
    if not 1 <= threads <= 1024:
        raise ValueError(f"threads must be in 1..1024, got {threads}")
    if iterations is not None and cdf == "prefix":
        raise ValueError("iterations counts the local CDF's search (cdf='local' or 'paper')")

    strides = _int32_buffer(call.out[0] if strides is None else strides, n, "strides")
    l_ = _int32_buffer(call.ws.spare((n,)) if l_ is None else l_, n, "l_")
    counts = NULL if iterations is None else _int32_buffer(iterations, n, "iterations")
    x_steps, out_steps = _element_strides(x, slot_axis), _element_strides(out, slot_axis)

    grid, block = (blocks(n, threads),), (threads,)
    keys = (call.keys, np.int32(call.n_keys), call.k0, call.k1)
    if cdf == "prefix":
        cumulative.systematic(replace(call, out=strides.reshape(1, n)), precision=precision)
    else:
        search = "d3_local_strides" if cdf == "local" else "d3_paper_strides"
        kernel("d3.cu", f"{search}<{call.ctype}>")(
            grid, block, (call.w, np.uint32(n), call.ws.stats, *keys, strides, counts)
        )
    states = CTYPES[x.dtype]
    common = (np.uint32(n), np.uint32(dims), *keys, np.int32(NOISES.index(noise)))
    moves = f"d3_moves<{states},{call.ctype},{CTYPES[pw.dtype]}>"
    kernel("d3.cu", moves)(
        grid, block, (x, *x_steps, call.w, pw, strides, *common, out, *out_steps, l_)
    )
    kernel("d3.cu", f"d3_claims<{states}>")(
        grid, block, (x, *x_steps, strides, l_, *common, out, *out_steps)
    )
    return out


def occupancy(threads: int | None = None, states: str = "float", weights: str = "float",
              prior: str = "double", kernel: str = "d3_moves") -> float:  # fmt: skip
    """The theoretical occupancy of a D3 kernel at ``threads`` threads per
    block: ``d3_moves`` (the kernel whose loop dominates our step), or
    ``d3_paper_strides`` / ``d3_local_strides`` (the O(N^2) searches that
    dominate the paper's): the warps an SM holds at once (its registers,
    shared memory and block limits allowing, as the driver computes them)
    over the most it can hold (the paper's Fig 10, "multiprocessor
    utilization ... in terms of active resident warps")."""
    import cupy

    threads = D3_THREADS if threads is None else int(threads)
    if kernel == "d3_moves":
        name = f"d3_moves<{states},{weights},{prior}>"
    elif kernel in ("d3_paper_strides", "d3_local_strides"):
        name = f"{kernel}<{weights}>"
    else:
        raise ValueError(f"no D3 kernel {kernel!r}")
    attributes = cupy.cuda.Device().attributes
    per_sm = resident_threads("d3.cu", name, threads) // attributes["MultiProcessorCount"]
    warps = (per_sm // threads) * -(-threads // 32)  # blocks an SM holds x warps a block
    return warps / (attributes["MaxThreadsPerMultiProcessor"] // 32)
