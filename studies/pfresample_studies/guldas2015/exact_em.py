"""Güldaş (2015) §4.3, EM's convergence on the study's sequences (issue 40;
docs/guldas2015.md, "SMC-EM: convergence, and whose error it is").

Fig 4.12's M sequences are solved on a grid (``filters.volatility_grid``): the
ML point of each is the reference cell's (``filter_experiments.smcem_reference_cell``,
``ml``). Here exact EM (the M-step eq. 4.10 of the exact E-step) runs from
each of the given starts (names of ``filter_experiments.SMCEM_STARTS`` other
than ``ml``) for up to ``iterations`` iterations or until an iteration moves
(alpha, sigma) by less than ``settled`` or sigma heads below the grid's floor
(:func:`exact_em_cell`, one sequence a cell); :func:`tables` writes

* ``ml_points``: each sequence's ML (alpha, sigma) and log-likelihood beside the truth;
* ``exact_em``: the traces, every iteration up to 200 and every 10th after;
* ``exact_em_convergence``: per start and sequence the iterations EM needs to come
  within 1e-2 and 1e-3 of the ML point (-1: not within the run), the distance
  after 100 iterations and at the end, and where the stopping rule
  (``stop_iteration``, window w, tolerance tol) stops, with the distance there.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from pfresample.filters import volatility_grid
from pfresample.filters.common import stop_iteration
from pfresample.models.volatility import ALPHA, SIGMA
from pfresample.timing import cpu_name

from .filter_experiments import SMCEM_STARTS, smcem_sequences

EVERY_ITERATION_UP_TO = 200  # the traces keep every iteration up to here, every 10th after


def exact_em_cell(reference, sequence: int, *, starts, iterations: int, settled: float,
                  log=None):  # fmt: skip
    """Exact EM on one of the reference's sequences from each of ``starts``:
    ``{start}_alpha``, ``_sigma``, ``_loglik`` (each its run's length: iterations + 1, or
    less where it settled), ``seconds``."""
    _, ref_meta = reference
    bad = [s for s in starts if SMCEM_STARTS.get(s, 0) in (None, 0)]
    if bad:
        raise ValueError(f"starts {bad}: exact EM starts from {sorted(SMCEM_STARTS)} but ml")
    y = smcem_sequences(ref_meta["seed"], ref_meta["sequences"], ref_meta["length"])[sequence]
    arrays = {}
    started = time.perf_counter()
    for start in starts:
        a0, s0 = SMCEM_STARTS[start]
        a, s, ll = volatility_grid.exact_em(y, a0, s0, iterations, settled=settled)
        arrays |= {f"{start}_alpha": a, f"{start}_sigma": s, f"{start}_loglik": ll}
        if log is not None:
            log.info("sequence %d from %s: %d iterations, (%.4f, %.4f)", sequence, start,
                     a.size - 1, a[-1], s[-1])  # fmt: skip
    arrays["seconds"] = time.perf_counter() - started
    metadata = {
        "experiment": "exact EM", "study": "guldas2015", "sequence": int(sequence),
        "sequences": int(ref_meta["sequences"]), "length": int(ref_meta["length"]),
        "seed": int(ref_meta["seed"]), "starts": list(starts), "iterations": int(iterations),
        "settled": float(settled), "backend": "cpu", "device": cpu_name(),
    }  # fmt: skip
    return arrays, metadata


def _within(distance: np.ndarray, eps: float) -> int:
    """The iterations after which the trace stays within ``eps`` (-1: not within the run)."""
    far = np.flatnonzero(distance >= eps)
    if far.size == 0:
        return 0
    return int(far[-1]) + 1 if far[-1] + 1 < distance.size else -1


def tables(reference, cells, *, window: int, tolerance: float) -> dict[str, pd.DataFrame]:
    """The three tables from the reference cell (its ML points) and the exact
    EM cells (in sequence order)."""
    ref, _ = reference
    points, rows, summary = [], [], []
    for arrays, meta in cells:
        m = meta["sequence"]
        alpha_ml, sigma_ml, loglik_ml = (float(v) for v in ref["ml"][m])
        points.append({"sequence": m, "alpha_ml": alpha_ml, "sigma_ml": sigma_ml,
                       "loglik_ml": loglik_ml, "alpha_true": ALPHA,
                       "sigma_true": SIGMA})  # fmt: skip
        for start in meta["starts"]:
            a, sg, ll = (arrays[f"{start}_{k}"] for k in ("alpha", "sigma", "loglik"))
            keep = np.r_[0 : min(EVERY_ITERATION_UP_TO + 1, a.size),
                         EVERY_ITERATION_UP_TO + 10 : a.size : 10]  # fmt: skip
            for i in keep:
                rows.append({"start": start, "sequence": m, "iteration": int(i),
                             "alpha": a[i], "sigma": sg[i], "loglik": ll[i]})  # fmt: skip
            distance = np.maximum(np.abs(a - alpha_ml), np.abs(sg - sigma_ml))
            stop = stop_iteration(a, sg, window, tolerance)
            summary.append({
                "start": start, "sequence": m, "iterations_run": a.size - 1,
                "settled": a.size - 1 < meta["iterations"],
                "iterations_to_1e-2": _within(distance, 1e-2),
                "iterations_to_1e-3": _within(distance, 1e-3),
                "distance_at_100": distance[min(100, a.size - 1)],
                "distance_at_end": distance[-1], "loglik_gap_at_end": loglik_ml - ll[-1],
                "stop_iteration": -1 if stop is None else stop,
                "distance_at_stop": np.nan if stop is None else distance[stop],
                "stop_window": window, "stop_tolerance": tolerance,
            })  # fmt: skip
    return {
        "ml_points": pd.DataFrame(points),
        "exact_em": pd.DataFrame(rows),
        "exact_em_convergence": pd.DataFrame(summary),
    }
