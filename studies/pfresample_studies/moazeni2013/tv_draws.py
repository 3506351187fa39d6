"""Moazeni (2013), chapter 6: our TV solver and scikit-image's ``denoise_tv_chambolle``
over many noise draws, each tuned by the same rule at the same size.

The rule: each method has a grid of its free parameters (ours: lambda, eps and the step at
the thesis's 100 iterations; the peer: its weight, at its default 200 iterations); the
grid point with the least mean tensor RMSE over the *tuning* draws is that method's
choice, and both choices are then scored on *evaluation* draws that neither tuning saw.
A draw is the phantom's noisy signals and gradient directions from one seed
(``tv_experiments.make_case``; the phantom's truth is the same for every draw). The
evaluation is paired: both methods denoise the same draws, so the difference of their
RMSEs is taken draw by draw, and each mean is given with its 95 % t interval.

``python -m pfresample_studies.moazeni2013.tv_draws --out DIR`` writes ``tuning.csv``
(every grid point's RMSE on every tuning draw), ``draws.csv`` (both choices on every
evaluation draw) and ``summary.csv`` (each method's mean RMSE and FA error with their
intervals, and the paired difference)."""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from . import tv
from .tv_experiments import make_case

LOG = logging.getLogger(__name__)
OURS = "ours (tv.c, GlobalSync, 100 iterations)"
PEER = "scikit-image denoise_tv_chambolle (200 iterations)"
# The grids: ours is the pipeline's sweep (config moazeni2013_ch6_sweep_*); the peer's
# weights bracket its best at 64^3 (ch6_peer.csv: 0.1 among 0.02 ... 0.4) more finely.
OUR_GRID = {"lam": (1.0, 2.0, 3.0, 5.0, 10.0), "eps": (0.001, 0.01, 0.1),
            "step": (0.003, 0.01)}  # fmt: skip
PEER_WEIGHTS = (0.03, 0.05, 0.07, 0.085, 0.1, 0.12, 0.14, 0.2, 0.3)
ITERATIONS = 100


def _ours(case, lam: float, eps: float, step: float, iterations: int) -> np.ndarray:
    from . import native

    L = native.tv_solve(case.L0.astype(np.float32), case.d_hat.astype(np.float32),
                        iterations=iterations, lam=lam, eps=eps, step=step)  # fmt: skip
    return tv.tensor(L.astype(np.float64))


def _peer(case, weight: float) -> np.ndarray:
    from skimage.restoration import denoise_tv_chambolle

    return denoise_tv_chambolle(case.d_hat, weight=weight, channel_axis=-1)


def _score(d, case) -> dict:
    return {"tensor_rmse": tv.tensor_rmse(d, case.truth), "fa_error": tv.fa_error(d, case.truth)}


def _draw_task(task: tuple) -> list[dict]:
    """Every parameter set of ``task`` on one draw (one process: the draw is made once)."""
    size, seed, phantom, points, iterations = task
    case = make_case(size, seed, **phantom)
    rows = []
    for method, params in points:
        if method == OURS:
            d = _ours(case, **params, iterations=iterations)
        else:
            d = _peer(case, **params)
        rows.append({"size": size, "seed": seed, "method": method, **params, **_score(d, case)})
    return rows


def _grid_points() -> list[tuple[str, dict]]:
    ours = [(OURS, {"lam": lam, "eps": eps, "step": step}) for lam in OUR_GRID["lam"]
            for eps in OUR_GRID["eps"] for step in OUR_GRID["step"]]  # fmt: skip
    return ours + [(PEER, {"weight": w}) for w in PEER_WEIGHTS]


def _run(tasks: list[tuple], workers: int) -> pd.DataFrame:
    if workers <= 1:
        rows = [r for t in tasks for r in _draw_task(t)]
    else:
        with ProcessPoolExecutor(workers) as pool:
            rows = [r for part in pool.map(_draw_task, tasks) for r in part]
    return pd.DataFrame(rows)


PARAMS = {OURS: ["lam", "eps", "step"], PEER: ["weight"]}


def choose(tuning: pd.DataFrame) -> dict[str, dict]:
    """Each method's grid point with the least mean tensor RMSE over the tuning draws."""
    out = {}
    for method, keys in PARAMS.items():
        part = tuning[tuning["method"] == method]
        if part.empty:
            raise ValueError(f"no tuning rows for {method!r}")
        means = part.groupby(keys)["tensor_rmse"].mean()
        best = means.idxmin()
        best = best if isinstance(best, tuple) else (best,)
        out[method] = {k: float(v) for k, v in zip(keys, best, strict=True)}
    return out


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """The mean and its two-sided t interval (needs two values at least)."""
    from ..pipeline.multiplicity import t_half

    half = t_half(values, level)  # first: it refuses fewer than two values
    mean = float(np.mean(values))
    return mean, mean - half, mean + half


def summarise(draws: pd.DataFrame) -> pd.DataFrame:
    """Each method's mean tensor RMSE and FA error over the evaluation draws with 95 % t
    intervals, then the paired difference ours - peer (draw by draw)."""
    rows = []
    for method in (OURS, PEER):
        part = draws[draws["method"] == method].sort_values("seed")
        row = {"method": method, "draws": len(part),
               "params": ", ".join(f"{k} {part[k].iloc[0]:g}" for k in PARAMS[method])}  # fmt: skip
        for metric in ("tensor_rmse", "fa_error"):
            row[metric], row[f"{metric}_lo"], row[f"{metric}_hi"] = t_interval(part[metric])
        rows.append(row)
    wide = draws.pivot_table(index="seed", columns="method", values=["tensor_rmse", "fa_error"])
    row = {"method": "ours - peer (paired)", "draws": len(wide), "params": ""}
    for metric in ("tensor_rmse", "fa_error"):
        diff = wide[(metric, OURS)] - wide[(metric, PEER)]
        row[metric], row[f"{metric}_lo"], row[f"{metric}_hi"] = t_interval(diff)
        row[f"{metric}_ours_worse_draws"] = int((diff > 0).sum())
    rows.append(row)
    return pd.DataFrame(rows)


def run(size: int, tuning_seeds: Sequence[int], evaluation_seeds: Sequence[int], *,
        directions: int = 12, noise: float = 0.05, iterations: int = ITERATIONS,
        workers: int = 1, points: list[tuple[str, dict]] | None = None):  # fmt: skip
    """Tune on ``tuning_seeds``, evaluate on ``evaluation_seeds`` (disjoint), at ``size``.
    Returns (tuning rows, evaluation rows, summary)."""
    overlap = set(tuning_seeds) & set(evaluation_seeds)
    if overlap:
        raise ValueError(f"tuning and evaluation draws overlap: {sorted(overlap)}")
    if len(evaluation_seeds) < 2:
        raise ValueError("the evaluation needs two draws at least (an interval)")
    phantom = {"directions": directions, "noise": noise}
    points = points or _grid_points()
    tasks = [(size, s, phantom, points, iterations) for s in tuning_seeds]
    tuning = _run(tasks, workers)
    chosen = choose(tuning)
    LOG.info("chosen: %s", chosen)
    picks = [(m, p) for m, p in chosen.items()]
    evaluation = _run([(size, s, phantom, picks, iterations) for s in evaluation_seeds], workers)
    return tuning, evaluation, summarise(evaluation)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=2017, help="the first draw's seed")
    parser.add_argument("--tuning", type=int, default=4, help="tuning draws")
    parser.add_argument("--evaluation", type=int, default=10, help="evaluation draws")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    tuning_seeds = range(args.seed, args.seed + args.tuning)
    evaluation_seeds = range(args.seed + args.tuning, args.seed + args.tuning + args.evaluation)
    begin = time.perf_counter()
    tuning, evaluation, summary = run(args.size, list(tuning_seeds), list(evaluation_seeds),
                                      workers=args.workers)  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    tuning.to_csv(args.out / "tuning.csv", index=False)
    evaluation.to_csv(args.out / "draws.csv", index=False)
    summary.to_csv(args.out / "summary.csv", index=False)
    LOG.info("%d^3, %d + %d draws, %.0f s\n%s", args.size, args.tuning, args.evaluation,
             time.perf_counter() - begin, summary.to_string())  # fmt: skip


if __name__ == "__main__":
    main()
