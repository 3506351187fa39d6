"""Resampling calls on the device: the weight statistics and B enqueued
before the method's kernel, on the current CuPy stream
(:func:`pfresample.cuda.stats.enqueue_inputs`), for K seeds at once, for
several B in one pass, and timed with CUDA events.

Every function here takes weights that ``validation.prepare`` checked and
converted, and kernel arguments it built: nothing is checked twice."""

from __future__ import annotations

import statistics
import time
from dataclasses import replace

from ..backend import cuda_device
from ..timing import Timing, cuda_event_times
from . import stats
from .cumulative import residual
from .rejection import rejection
from .stats import device_chooses_B, enqueue_checked_inputs, enqueue_inputs
from .workspace import Call, make_call

# Launchers whose kernels read the weight statistics (w_max; Residual's sum of
# the weights); the statistics kernel is then part of their time (thesis
# §6.5 counts it).
READS_STATS = {rejection, residual}


def needs_stats(m, kw: dict) -> bool:
    """Whether ``m``'s kernels read the weight statistics: Rejection and
    Residual do, and so does every method whose B the device chooses."""
    return m.gpu in READS_STATS or device_chooses_B(m, kw)


def resample_many(m, w, seeds, kw: dict, params: dict):
    """K resamplings on the device: (K, N) int32 CuPy array. ``kw`` are the
    method's checked kernel arguments (``B`` may be None: chosen on the
    device)."""
    call = make_call(w, seeds)
    enqueue_checked_inputs(m, call, kw, params)
    m.gpu(call, **kw)
    return call.out


def continue_chains(m, w, seeds, kws: list[dict]) -> list:
    """``resample_many`` for each of several B (``kws``: the checked kernel
    arguments, one per B) in one pass: the chains run to the smallest B,
    then continue from there to the next, and so on (metropolis.cu: the
    chain after B' < B iterations is the first part of the chain after B).
    The cost is that of the largest B alone. Results in the order of ``kws``."""
    import cupy

    call = make_call(w, seeds)
    enqueue_checked_inputs(m, call, kws[0], {})
    out: list = [None] * len(kws)
    start, done = None, 0
    for r in sorted(range(len(kws)), key=lambda r: kws[r]["B"]):
        step = replace(call, out=cupy.empty_like(call.out))
        m.gpu(step, **kws[r], start=start, m_start=done)
        out[r] = start = step.out
        done = kws[r]["B"]
    return out


def choose_B(m, w, params: dict) -> int:
    """The B the device chooses for ``m`` on these weights (as ``api.choose_B``)."""
    call = make_call(w, [0])
    enqueue_checked_inputs(m, call, {"B": None}, params)
    return int(call.ws.b.get()[0])


def time_resample(m, w, seed, kw: dict, params: dict, repeats: int, warmup: int) -> Timing:
    """Median time of one call with CUDA events around the kernels thesis
    §6.5 counts: statistics (sum, w_max), B, the method's kernel (and the
    prefix sum, for the cumulative family). The first call, with NVRTC
    compile or cache load, is timed apart with ``time.perf_counter``."""
    import cupy

    call = make_call(w, [seed])
    reads_stats = needs_stats(m, kw)

    def enqueue():  # without the validation pass when the method does not need it
        if reads_stats:
            enqueue_inputs(m, call, kw, params)
        m.gpu(call, **kw)

    start = time.perf_counter()
    enqueue_checked_inputs(m, call, kw, params)
    m.gpu(call, **kw)
    cupy.cuda.Device().synchronize()
    first = (time.perf_counter() - start) * 1e3
    times = cuda_event_times(enqueue, repeats, warmup=max(warmup - 1, 0))
    return Timing(statistics.median(times), tuple(times), "cuda", cuda_device(), first)


def enqueue_with_known_statistics(call: Call, m, kw: dict, params: dict, **extra):
    """``m``'s resampling of ``call.w``, enqueued where the caller knows the
    weights' statistics (``call.ws`` from ``stats.with_known_statistics``, its
    sum written by the caller's kernel): a comparison-based method reads them,
    and only B is computed where the device chooses it; the other methods
    compute what they read, as on their own. ``extra``: more keyword
    arguments of the method's launcher. Returns what the launcher returns."""
    if m.comparison_based:
        if stats.device_chooses_B(m, kw):
            stats.enqueue_B(call, m, params)
    elif needs_stats(m, kw):
        stats.enqueue_inputs(m, call, kw, params)
    return m.gpu(call, **kw, **extra)
