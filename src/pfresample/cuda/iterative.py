"""Launchers of the Metropolis family (Algorithms 3.3, 5.1, 5.2, and
Megopolis, Chesser et al. 2021) and the
Uphill family (Algorithms 6.1-6.3): B iterations per lane, candidates drawn
over the whole array or inside s-segments (``lanes.cuh``,
:class:`pfresample.constants.CandidateScope`)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..constants import WARP_SIZE, CandidateScope
from ..sums import ratio_scale
from . import geometry
from .geometry import MAP_THREADS, block_size, blocks, resident_threads
from .kernels import NULL, flag, kernel
from .workspace import Call


def _product_ready(call: Call) -> Call:
    """``call`` on weights ready for the Metropolis family's acceptance
    products: times ``sums.ratio_scale`` of the maximum (the CPU's
    ``resampling.metropolis.product_ready``), so the same call unless the
    maximum is tiny. The maximum is the one the statistics read back
    (``ws.max``; a filter sets 1), else read here."""
    top = call.ws.max if call.ws.max is not None else float(call.w.max())
    scale = ratio_scale(top, call.w.dtype)
    if scale == 1.0:
        return call
    import cupy

    w = cupy.empty_like(call.w)
    args = (call.w, np.int64(call.n), call.w.dtype.type(scale), w)
    grid = blocks(call.n, MAP_THREADS)
    kernel("logweights.cu", f"scale_weights<{call.ctype}>")((grid,), (MAP_THREADS,), args)
    return dataclasses.replace(call, w=w)


def _iterative(
    call: Call, family: str, scope: CandidateScope, B, per_segment: int, segments: int, chain=()
) -> None:
    """Launch the Metropolis or Uphill kernel of ``scope`` (see lanes.cuh);
    ``chain``: Metropolis's (start, m_start), see ``run.continue_chains``."""
    if family == "metropolis":
        call = _product_ready(call)
    block = block_size(call.n)
    # Metropolis is a chain, one thread a lane; Uphill's B candidates split.
    group = 1
    if family == "uphill":
        grouped = f"uphill<{call.ctype},{int(scope)},false,true>"
        group = geometry.lane_group(
            call.lanes, block, resident_threads("uphill.cu", grouped, block)
        )
    shared = call.n % WARP_SIZE == 0 and block % WARP_SIZE == 0 and group == 1
    name = f"{family}<{call.ctype},{int(scope)},{flag(shared)}"
    b = np.int32(-1 if B is None else B)
    args = (*call.lane_args(), b, call.ws.b, np.uint32(per_segment), np.uint32(segments), *chain)
    if family == "uphill":
        name += f",{flag(group > 1)}"
        args += (np.uint32(group),)
    name += ">"
    grid = blocks(call.lanes * group, block)
    kernel(f"{family}.cu", name)((grid,), (block,), (*args, call.out))


def _chain(start, m_start: int) -> tuple:
    """Metropolis's continuation arguments: from the ancestors ``start``
    after ``m_start`` iterations, or (None) from each particle itself."""
    return (start, np.int32(m_start)) if start is not None else (NULL, np.int32(0))


def metropolis(call, *, B, per_segment, segments, start=None, m_start=0):
    """Metropolis (Algorithm 3.3)."""
    chain = _chain(start, m_start)
    _iterative(call, "metropolis", CandidateScope.ARRAY, B, per_segment, segments, chain)


def metropolis_c1(call, *, B, per_segment, segments, start=None, m_start=0):
    """Metropolis-C1 (Algorithm 5.1)."""
    chain = _chain(start, m_start)
    _iterative(call, "metropolis", CandidateScope.FIXED_SEGMENT, B, per_segment, segments, chain)


def metropolis_c2(call, *, B, per_segment, segments, start=None, m_start=0):
    """Metropolis-C2 (Algorithm 5.2)."""
    chain = _chain(start, m_start)
    scope = CandidateScope.SEGMENT_PER_ITERATION
    _iterative(call, "metropolis", scope, B, per_segment, segments, chain)


def megopolis(call, *, B, per_segment, segments, start=None, m_start=0):
    """Megopolis (Chesser et al. 2021; metropolis.cu). It has no s-segments:
    ``per_segment`` and ``segments`` (N and 1) are not used."""
    call = _product_ready(call)
    block = block_size(call.n)
    shared = call.n % WARP_SIZE == 0 and block % WARP_SIZE == 0
    b = np.int32(-1 if B is None else B)
    args = (*call.lane_args(), b, call.ws.b, *_chain(start, m_start), call.out)
    launch = kernel("metropolis.cu", f"megopolis<{call.ctype},{flag(shared)}>")
    launch((blocks(call.lanes, block),), (block,), args)


# The launchers that continue chains from one B to the next (run.continue_chains).
CONTINUABLE = (metropolis, metropolis_c1, metropolis_c2, megopolis)


def uphill(call, *, B, per_segment, segments):
    """Uphill (Algorithm 6.1)."""
    _iterative(call, "uphill", CandidateScope.ARRAY, B, per_segment, segments)


def uphill_ca(call, *, B, per_segment, segments):
    """Uphill-CA (Algorithm 6.2)."""
    _iterative(call, "uphill", CandidateScope.SEGMENT_PER_ITERATION, B, per_segment, segments)


def uphill_c1(call, *, B, per_segment, segments):
    """Uphill-C1 (Algorithm 6.3)."""
    _iterative(call, "uphill", CandidateScope.FIXED_SEGMENT, B, per_segment, segments)
