"""Launchers of the cumulative family (``cumulative.cu``): Systematic
(Algorithms 3.1 and 3.2), Stratified, Multinomial and Residual (Douc et al.
2005), on a tiled prefix sum; Systematic, Stratified and Multinomial also on
the float32 log-domain scan of Güldaş (2015) Appendix A (``precision=
"log32"``, ``resampling/log_scan.py``)."""

from __future__ import annotations

from functools import cache

import numpy as np

from ..contracts import ATANH_COEFFICIENTS, LOG_THREADS
from ..sums import needs_scaling
from .geometry import SCAN_THREADS, SCAN_TILE, TILE_SUMS_THREADS, block_size, blocks
from .kernels import CTYPES, NULL, flag, kernel
from .logweights import _device_taylor
from .workspace import Call, ScanBuffers

LOG32 = "log32"


@cache
def _device_odd(device_id: int):
    """log_scan.ATANH_COEFFICIENTS on the device ``device_id``, uploaded once."""
    import cupy

    return cupy.asarray(ATANH_COEFFICIENTS)


def _log_ratios(call: Call, log_offset):
    """r = N C / C_N of the log-domain scan into the call's LogScanBuffers
    (its four kernels, cumulative.cu), and the buffers."""
    import cupy

    lb = call.ws.log_scan()
    device = cupy.cuda.Device().id
    coef, odd = _device_taylor(device), _device_odd(device)
    terms = np.int32(coef.size)
    n, tiles = np.int64(call.n), np.int64(lb.tiles)
    offset = np.float64(0.0 if log_offset is None else log_offset)
    kernel("cumulative.cu", f"log_scan_tiles<{call.ctype}>")(
        (lb.tiles,), (LOG_THREADS,),
        (call.w, n, offset, coef, terms, odd, lb.local, lb.totals, lb.tile_end),
    )  # fmt: skip
    kernel("cumulative.cu", "log_scan_totals")(
        (1,), (LOG_THREADS,),
        (lb.totals, tiles, lb.local, n, lb.tile_end, coef, terms, odd, lb.top, lb.last),
    )  # fmt: skip
    kernel("cumulative.cu", "log_scan_ratios")(
        (lb.tiles,), (LOG_THREADS,),
        (lb.local, lb.totals, n, n, lb.top, coef, terms, odd, lb.r, lb.tile_max),
    )  # fmt: skip
    if lb.tiles > 1:
        kernel("cumulative.cu", "log_scan_carry")(
            (lb.tiles,), (LOG_THREADS,), (lb.r, n, lb.tile_max)
        )
    return lb


def _log_inverse_cdf(call: Call, log_offset, stratify: bool) -> None:
    lb = _log_ratios(call, log_offset)
    block = block_size(call.n)
    name = f"inverse_cdf_draws<float,{flag(stratify)}>"
    args = (lb.r, np.uint32(call.n), np.int64(call.lanes), *_key_args(call), np.int64(call.n),
            lb.rest, lb.last, call.out, NULL)  # fmt: skip
    kernel("cumulative.cu", name)((blocks(call.lanes, block),), (block,), args)


def _precision(call: Call, precision) -> np.dtype:
    """The precision of the prefix sum: the weights' own unless asked."""
    return np.dtype(precision) if precision is not None else call.w.dtype


def _divisor(call: Call):
    """The device float64 that ``call.w`` is divided by as the scan loads it
    (``Call.divisor``), or NULL."""
    return NULL if call.divisor is None else call.divisor


def divides_as_it_loads(m, kw: dict) -> bool:
    """Whether the registry method ``m`` (its checked kernel arguments ``kw``)
    reads the weights on the GPU only through the linear prefix sum, which
    can divide them as it loads them (``Call.divisor``): Systematic,
    Stratified and Multinomial, not in the log domain."""
    return m.gpu in (systematic, stratified, multinomial) and kw.get("precision") != LOG32


def _undivided(call: Call, what: str) -> None:
    """A launcher that reads ``call.w`` outside the linear scan refuses a divisor."""
    if call.divisor is not None:
        raise NotImplementedError(f"{what} reads the weights as they are; a divisor needs w itself")


def _key_args(call: Call) -> tuple:
    return (call.keys, np.int32(call.n_keys), call.k0, call.k1)


def _scaled(call: Call, sb: ScanBuffers) -> bool:
    """Whether the weights' prefix sum scales them (``sums.needs_scaling`` of
    their maximum, read on the host by the call's check; scaled when unknown)."""
    return call.ws.max is None or needs_scaling(call.ws.max, sb.dtype)


def _templates(values, sb: ScanBuffers, scaled: bool) -> str:
    """The template arguments of the prefix-sum kernels: weight and sum
    types, and whether the tiles are scaled (a kernel without the scaling
    arithmetic when not)."""
    return f"{CTYPES[values.dtype]},{CTYPES[sb.dtype]},{flag(scaled)}"


def _prefix_sum(values, sb: ScanBuffers, scaled: bool, go=NULL, divisor=NULL) -> None:
    """Pass 1 of the prefix sum of ``values`` (the weights, or Residual's
    fractions) in ``sb``'s precision: tile sums, then (the last block) the
    sum before each tile and C_N; see cumulative.cu. ``divisor``: a device
    float64 the values are divided by as they are loaded (``Call.divisor``)."""
    tiles = (sb.tile_sum, sb.tile_exp, sb.tile_end, sb.prefix, sb.carry)
    args = (values, divisor, np.int64(sb.n), *tiles, sb.total, sb.last, sb.exp_max)
    launch = kernel("cumulative.cu", f"scan_tiles<{_templates(values, sb, scaled)}>")
    launch((sb.tiles,), (SCAN_THREADS,), (*args, sb.tickets, go))


def _scaled_prefix_sum(values, sb: ScanBuffers, count, scaled: bool, go=NULL,
                       divisor=NULL) -> None:  # fmt: skip
    """Pass 2: r = (count * C) / C_N into ``sb.values()`` (may be ``values``
    itself), tiles scaled as in pass 1. ``count`` None: Residual's R, on the
    device."""
    count_args = (np.int64(-1 if count is None else count), sb.rest)
    tiles = (sb.tile_exp, sb.exp_max, sb.prefix, sb.carry)
    args = (values, divisor, np.int64(sb.n), *tiles, sb.total, *count_args, sb.values(), go)
    name = f"scaled_prefix_sum<{_templates(values, sb, scaled)}>"
    kernel("cumulative.cu", name)((sb.tiles,), (SCAN_THREADS,), args)


def _inverse_cdf_draws(call: Call, sb: ScanBuffers, count, stratify: bool, go=NULL) -> None:
    """One lane per (replica, output slot): slot s searches r for ``s + u``
    (stratified) or ``count * u``; ``count`` None: Residual's R."""
    block = block_size(call.n)
    name = f"inverse_cdf_draws<{CTYPES[sb.dtype]},{flag(stratify)}>"
    count_args = (np.int64(-1 if count is None else count), sb.rest)
    args = (
        sb.values(),
        np.uint32(call.n),
        np.int64(call.lanes),
        *_key_args(call),
        *count_args,
        sb.last,
        call.out,
        go,
    )
    kernel("cumulative.cu", name)((blocks(call.lanes, block),), (block,), args)


def systematic(call, *, precision=None, log_offset=None):
    """Systematic (Algorithms 3.1 and 3.2): the prefix sum, then per replica
    and tile the cumulative offspring and the ancestors they give."""
    if precision == LOG32:
        _undivided(call, "the log-domain scan")
        lb = _log_ratios(call, log_offset)
        tiles = -(-call.n // SCAN_TILE)
        args = (lb.r, np.int64(call.n), np.int64(tiles), lb.last, *_key_args(call), call.out)
        kernel("cumulative.cu", "systematic_from_ratios")(
            (tiles * call.out.shape[0],), (SCAN_THREADS,), args
        )
        return
    sb = call.ws.scan(_precision(call, precision))
    scaled = _scaled(call, sb)
    _prefix_sum(call.w, sb, scaled, divisor=_divisor(call))
    name = f"systematic<{_templates(call.w, sb, scaled)}>"
    args = (
        call.w,
        _divisor(call),
        np.int64(call.n),
        np.int64(sb.tiles),
        sb.tile_exp,
        sb.exp_max,
        sb.prefix,
        sb.carry,
        sb.total,
        sb.last,
        *_key_args(call),
        call.out,
    )
    kernel("cumulative.cu", name)((sb.tiles * call.out.shape[0],), (SCAN_THREADS,), args)


def _inverse_cdf(call: Call, precision, stratify: bool, gates) -> None:
    """The prefix sum and the draws; with ``gates`` (``cuda.butterfly.Gates``,
    one gate), only if the device decides so: the adaptive filter's
    resampling with a standard method (Fig 1.3), the output weights then
    even (each the total C_N: the same proportions as 1)."""
    sb = call.ws.scan(_precision(call, precision))
    scaled = _scaled(call, sb)
    go = NULL
    if gates is not None:
        _undivided(call, "the adaptive filter's gate")
        gates.gate(0, call.w, 0, 1, call.n, sb.dtype)
        go = gates.go[0:1]
    _prefix_sum(call.w, sb, scaled, go, _divisor(call))
    _scaled_prefix_sum(call.w, sb, call.n, scaled, go, _divisor(call))
    _inverse_cdf_draws(call, sb, call.n, stratify, go)
    if gates is not None:
        gates.weights(0, sb.total, 0, call.n, call.n)


def _log_or_linear(call, precision, log_offset, stratify: bool, gates) -> None:
    if precision == LOG32:
        _undivided(call, "the log-domain scan")
        if gates is not None:
            raise NotImplementedError("precision 'log32' has no gated (adaptive) GPU form")
        _log_inverse_cdf(call, log_offset, stratify)
    else:
        _inverse_cdf(call, precision, stratify, gates)


def stratified(call, *, precision=None, log_offset=None, gates=None):
    """Stratified: slot s draws in stratum [s, s+1) of r."""
    _log_or_linear(call, precision, log_offset, True, gates)


def multinomial(call, *, precision=None, log_offset=None, gates=None):
    """Multinomial: every slot draws anywhere in [0, N) of r."""
    _log_or_linear(call, precision, log_offset, False, gates)


def residual(call, *, precision=None):
    """Residual: floor(N w_i / sum w) copies, then R multinomial draws on
    the fractions (cumulative.residual, both of its fallbacks included).
    The sum of the weights is the statistics pass's (it reads STAT_SUM)."""
    _undivided(call, "Residual")
    sb = call.ws.scan(_precision(call, precision))
    pair = f"{call.ctype},{CTYPES[sb.dtype]}"
    n, tiles, stats = np.int64(call.n), np.int64(sb.tiles), call.ws.stats
    kernel("cumulative.cu", f"residual_tile_counts<{pair}>")(
        (sb.tiles,), (SCAN_THREADS,), (call.w, n, tiles, stats, sb.tile_counts)
    )
    plan = (sb.tile_offset, sb.rest, sb.plan, sb.residual_scale)
    kernel("cumulative.cu", "residual_plan")(
        (1,), (TILE_SUMS_THREADS,), (sb.tile_counts, tiles, n, stats, *plan)
    )
    block = block_size(call.n)
    kernel("cumulative.cu", f"residual_fractions<{pair}>")(
        (blocks(call.n, block),), (block,), (call.w, n, sb.residual_scale, sb.plan, sb.values())
    )
    _prefix_sum(sb.values(), sb, False)  # values in [0, 1): see cumulative.residual
    _scaled_prefix_sum(sb.values(), sb, None, False)  # in place: fractions -> r
    kernel("cumulative.cu", f"residual_copies<{pair}>")(
        (sb.tiles * call.out.shape[0],),
        (SCAN_THREADS,),
        (call.w, n, tiles, sb.residual_scale, sb.plan, sb.tile_offset, call.out),
    )
    _inverse_cdf_draws(call, sb, None, stratify=False)
