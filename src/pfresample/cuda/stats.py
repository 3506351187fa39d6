"""The weight statistics on the device (sum, maximum, first bad entry) and
the B of the Metropolis and Uphill families, computed there: B never travels
to the host. The public API reads the statistics back once to raise on bad
weights, and to scale float64 weights whose sum would overflow or lose its
bits (:func:`enqueue_checked_inputs`); the timed calls do not."""

from __future__ import annotations

import copy
import math

import numpy as np

from ..constants import EPSILON_RESAMPLING
from ..sums import stats_scale
from ..validation import ALL_ZERO, bad_weight_error
from .geometry import REDUCE_THREADS
from .kernels import NULL, kernel
from .workspace import (
    STAT_BAD,
    STAT_COUNT,
    STAT_MAX,
    STAT_SCALE,
    STAT_SUM,
    Call,
    Workspace,
    device_ssd_table,
)


def enqueue_stats(call: Call, metropolis_epsilon: float | None = None) -> None:
    """Sum, maximum and first bad index of the weights into ``ws.stats``;
    with ``metropolis_epsilon``, Metropolis's B into ``ws.b`` in the same
    launch (its last block). The sum is of the weights times ``ws.scale``."""
    ws = call.ws
    args = (call.w, np.int64(call.n), ws.part_sum, ws.part_max, ws.part_bad, ws.tickets[0:1])
    if metropolis_epsilon is None:
        b_args = (np.float64(0.0), NULL)  # no B
    else:
        b_args = (np.float64(math.log(metropolis_epsilon)), ws.b)
    kernel("reduce.cu", f"weight_stats<{call.ctype}>")(
        (ws.parts,), (REDUCE_THREADS,), (*args, ws.stats, np.float64(ws.scale), *b_args)
    )


def check_stats(call: Call) -> float:
    """Raise on bad weights, as ``validation.check_weights`` does on the host
    (one small device-to-host copy, which synchronises); return the scale
    the sum needs (:func:`pfresample.sums.stats_scale`). The maximum stays in
    ``ws.max`` for the cumulative family (``sums.needs_scaling``)."""
    stats = call.ws.stats.get()
    bad = int(stats[STAT_BAD])
    if bad < call.n:
        raise bad_weight_error(bad, float(call.w[bad].get()))
    if not stats[STAT_MAX] > 0:
        raise ValueError(ALL_ZERO)
    call.ws.max = float(stats[STAT_MAX])
    return stats_scale(call.ws.max, call.w.dtype)


def enqueue_B(call: Call, m, params: dict) -> None:
    """``m``'s B into ``ws.b``, from the statistics already in ``ws.stats``:
    Metropolis's formula (one thread), or Uphill's SSD and FIND-B."""
    ws = call.ws
    if m.B_rule == "metropolis":
        log_eps = math.log(params.get("epsilon", EPSILON_RESAMPLING))
        kernel("reduce.cu", "metropolis_b")(
            (1,), (1,), (np.int64(call.n), np.float64(log_eps), ws.stats, ws.b)
        )
    elif m.B_rule == "uphill":
        table = device_ssd_table(call.n, params.get("ssd_table"))
        args = (call.w, np.int64(call.n), ws.part_sum, ws.tickets[1:2], table)
        kernel("reduce.cu", f"uphill_b<{call.ctype}>")(
            (ws.parts,), (REDUCE_THREADS,), (*args, np.int32(table.size), ws.stats, ws.b)
        )
    else:
        raise ValueError(f"method {m.name!r} has no B rule")


def device_chooses_B(m, kw: dict) -> bool:
    """Whether ``m`` has a B rule and no B was given: the device chooses it."""
    return m.B_rule is not None and kw.get("B") is None


def enqueue_inputs(m, call: Call, kw: dict, params: dict) -> None:
    """What ``m``'s kernel reads, enqueued before it: the weight statistics,
    and B when the device chooses it -- Metropolis's in the statistics' own
    launch (its last block), Uphill's in a second one that reads their sum."""
    device_B = device_chooses_B(m, kw)
    metropolis = device_B and m.B_rule == "metropolis"
    enqueue_stats(call, params.get("epsilon", EPSILON_RESAMPLING) if metropolis else None)
    if device_B and not metropolis:
        enqueue_B(call, m, params)


def enqueue_checked_inputs(m, call: Call, kw: dict, params: dict) -> None:
    """:func:`enqueue_inputs`, the weights checked (:func:`check_stats`),
    and, for float64 weights whose sum needs it, the inputs again with the
    weights scaled (``ws.scale``, kept for the timed calls that follow)."""
    enqueue_inputs(m, call, kw, params)
    scale = check_stats(call)
    if scale != 1.0:
        call.ws.scale = scale
        enqueue_inputs(m, call, kw, params)


# ---------------------------------------------------------------- known statistics
# A filter that computes w~ = exp(log w - max log w) knows what the statistics
# pass would find: the largest weight is exp(0) = 1, no entry is bad (a
# non-finite estimate raises after the run), no scaling is needed (w~ <= 1),
# and its own reduction writes the sum. These calls hand a resampler that
# record, so that it skips the pass (a reduction kernel fewer a step):
# ``run.enqueue_with_known_statistics`` enqueues the resampler on them.


def known_statistics(n: int, rows: int | None = None):
    """Device statistics records (``workspace.STAT_*``) of N weights whose
    maximum is 1, with no bad entry and no scaling: one record, or ``rows``
    of them (one a filter step). The sum slot is the caller's to fill
    (:func:`sum_slot`: a kernel writes it before the resampler reads it)."""
    import cupy

    shape = (STAT_COUNT,) if rows is None else (rows, STAT_COUNT)
    record = cupy.zeros(shape, dtype=np.float64)
    record[..., STAT_MAX] = 1.0
    record[..., STAT_BAD] = n
    record[..., STAT_SCALE] = 1.0
    return record


def sum_slot(record):
    """The one-element view of a record's sum (``STAT_SUM``) a kernel writes."""
    return record[..., STAT_SUM : STAT_SUM + 1]


def with_known_statistics(ws: Workspace, record, b=None) -> Workspace:
    """A view of the workspace ``ws`` whose resampler reads ``record`` (from
    :func:`known_statistics`) instead of computing the statistics, with the
    largest weight 1 known on the host; ``b``: where a B chosen on the device
    goes (a one-element int32 array; None: ``ws.b``)."""
    view = copy.copy(ws)
    view.stats = record
    view.max = 1.0
    if b is not None:
        view.b = b
    return view
