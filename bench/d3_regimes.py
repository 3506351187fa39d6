#!/usr/bin/env python3
"""Das et al. (2014) in two regimes of the filter's process noise (issue 39):
the paper's (no process noise in the filter, eqs. 11-12 as printed) and ours
(the truth's sigma = 0.005 m/s a step), every filter of ``--filters`` on
``--trajectories`` simulated trajectories of the d3_2014 model (config/studies/
d3_2014.yaml, its config seed), one run each, paired by trajectory
(pfresample_studies.d3_2014.regimes).

Each cell is kept as ``OUT/cells/{regime}/{filter}/n{N}/t{j}.npz`` (a rerun
skips the cells it has), then ``OUT`` gets:

* ``cells.csv``: one row per run (RMSE, bias, snapshot at t = 200 s, seconds);
* ``summary.csv``: per (regime, filter, N) the means over the trajectories
  with 99 % Student-t intervals, and the paired difference of the RMSE's
  norm against systematic resampling in the same regime;
* ``regime_pairs.csv``: per filter, the paired difference of the RMSE's norm
  between the regimes;
* ``error_vs_time.csv``: the RMSE over the trajectories in bins of 10 s.

    python bench/d3_regimes.py --n 1000 --trajectories 8 --workers 2 \\
        --out results/bench/d3_2014/regimes_n1000

(the committed run: evidence/2026-11-26-xeon2-ba6cc49/d3_2014/regimes_n1000/)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from pfresample_studies.d3_2014 import catalog, experiments, regimes
from pfresample_studies.pipeline import artifacts
from pfresample_studies.pipeline.tables import write_csv

REPO = Path(__file__).resolve().parents[1]
REGIMES = {"paper": 0.0, "ours": None}  # the filter's process noise (None: the truth's)
FILTERS = {
    "systematic": {"method": "systematic"},
    "d3": {"method": "d3", "noise": "eq5", "cdf": "prefix"},
    "d3-each": {"method": "d3", "noise": "eq5", "cdf": "prefix", "components": "each"},
    "d3-fig9": {"method": "d3", "noise": "fig9", "cdf": "prefix"},
    "d3-fig9neg": {"method": "d3", "noise": "fig9neg", "cdf": "prefix"},
    "d3-between": {"method": "d3", "noise": "between", "cdf": "prefix"},
    # the paper's GPU resampler as printed: Figs 8-9's thresholds at 160 threads per
    # block (Table 5's) and Fig 9's noise line
    "d3-paper": {
        "method": "d3",
        "noise": "fig9",
        "cdf": "paper",
        "threads": 160,
        "threads_scope": "step",
    },
}
BIN_SECONDS = 10.0


def config() -> dict:
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return cfg | yaml.safe_load((REPO / "config" / "studies" / "d3_2014.yaml").read_text())


def cell_path(out: Path, regime: str, label: str, n: int, j: int) -> Path:
    return out / "cells" / regime / label / f"n{n}" / f"t{j}.npz"


def run_cell(args) -> str:
    out, regime, label, n, j, duration = args
    path = cell_path(out, regime, label, n, j)
    if path.exists():
        return f"{path} (kept)"
    cfg = config()
    model = catalog.truncated(catalog.model(cfg), duration)
    traj, _ = experiments.trajectory(model, cfg["seed"], j)
    step = min(catalog.snapshot_step(cfg), model.steps)  # t = 200 s, or the end of a short run
    arrays, meta = regimes.regime_cell(
        model, traj, regime, REGIMES[regime], label, FILTERS[label], n, j, seed=cfg["seed"],
        snapshot_step=step, bin_seconds=BIN_SECONDS,
    )  # fmt: skip
    meta |= {"cpu_count": os.cpu_count()}
    artifacts.save_npz(path, arrays, meta)
    return f"{path}: RMSE {arrays['rmse'].round(4)} in {float(arrays['seconds']):.1f} s"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[1000])
    p.add_argument("--trajectories", type=int, default=8)
    p.add_argument("--duration", type=float, default=360.0, help="seconds of each run")
    p.add_argument("--filters", nargs="+", default=list(FILTERS), choices=list(FILTERS))
    p.add_argument("--regimes", nargs="+", default=list(REGIMES), choices=list(REGIMES))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument(
        "--summarize",
        action="store_true",
        help="run nothing: summarise the cells of the grid that exist",
    )
    p.add_argument("--out", type=Path, default=REPO / "results/bench/d3_2014/regimes")
    args = p.parse_args(argv)
    # filter by filter (in the order given), each in every regime on every trajectory: a
    # run stopped early has whole filters, paired across regimes and trajectories
    jobs = [(args.out, r, f, n, j, args.duration) for f in args.filters for n in args.n
            for r in args.regimes for j in range(args.trajectories)]  # fmt: skip
    start = time.perf_counter()
    if not args.summarize:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            for k, line in enumerate(pool.map(run_cell, jobs), 1):
                print(f"[{k}/{len(jobs)} {time.perf_counter() - start:.0f} s] {line}", flush=True)
    paths = [cell_path(args.out, r, f, n, j) for (_, r, f, n, j, _) in jobs]
    cells = artifacts.load_all([path for path in paths if path.exists()])
    write_csv(regimes.cell_frame(cells), args.out / "cells.csv")
    write_csv(regimes.summary(cells, order=args.filters), args.out / "summary.csv")
    write_csv(regimes.regime_pairs(cells), args.out / "regime_pairs.csv")
    errors = regimes.error_vs_time(cells)
    write_csv(errors, args.out / "error_vs_time.csv")
    plot_errors(errors, args.out / "error_vs_time.png")
    print(f"wrote {args.out}", file=sys.stderr)


def plot_errors(errors, path: Path) -> None:
    """The RMSE's norm over the trajectories against time, a panel a regime."""
    from matplotlib.figure import Figure

    regimes_ = list(dict.fromkeys(errors["regime"]))
    fig = Figure(figsize=(6.5 * len(regimes_), 4.2), layout="constrained")
    axes = fig.subplots(1, len(regimes_), squeeze=False)[0]
    for ax, regime in zip(axes, regimes_, strict=True):
        part = errors[errors["regime"] == regime]
        for label, rows in part.groupby("filter", sort=False):
            norm = (rows["rmse_x"] ** 2 + rows["rmse_y"] ** 2) ** 0.5
            ax.plot(rows["t"], norm, lw=1, label=f"{label} ({rows['trajectories'].iloc[0]})")
        ax.set_yscale("log")
        ax.set(xlabel="t (s)", ylabel="RMSE norm over trajectories, 10 s bins (m/s)",
               title=f"regime {regime}")  # fmt: skip
        ax.axvline(200.0, color="gray", lw=0.5, ls=":")
        ax.legend(fontsize=7)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
