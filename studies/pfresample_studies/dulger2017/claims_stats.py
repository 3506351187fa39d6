"""Statistics docs/dulger2017.md quotes that no committed table carries, derived from the
committed evidence (no new measurement):

* ``methods_paired.csv``: the ``methods`` ablation (Table 6.3's methods and C1-128 on 128
  growth or 64 radar trajectories, 10 runs each, the same seeds for every method): per N and
  variant, the paired difference of RMSE against Systematic (C1-128 also against
  Metropolis, Table 5.2's pair) in units of 1e-3, its 99 % half-width with the trajectories
  fixed (``runs_hw``, as the tables) and drawn (``traj_hw``), the latter Bonferroni-corrected
  over the file's comparisons (``traj_hw_corrected``), and over disjoint sets of 16
  trajectories (as many as the thesis used) the smallest and largest set's difference and
  how many sets fall below 0;
* ``fig6_23_ranges.csv``: Fig 6.23's GPU-over-CPU ratios (the bench's ratios of medians)
  with the range the repeats allow, the CPU side's min over the GPU side's max to the CPU
  side's max over the GPU side's min (5 or 3 repeats, no interval).

    python -m pfresample_studies.dulger2017.claims_stats --out evidence/<folder>/dulger2017
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from pfresample.constants import CONFIDENCE_Z

from .filter_tables import mean_of_means, runs_half_width

REPO = Path(__file__).resolve().parents[3]
ABLATIONS = REPO / "evidence/2026-11-25-h100-e74e5ae/dulger2017_ablations/methods"
BEST_CPU = REPO / "evidence/2026-11-28-h200-45f3754/dulger2017"
SUBSET = 16
LEVEL = 0.99


def _grid(frame: pd.DataFrame) -> np.ndarray:
    """(J, R) RMSEs of one cell, trajectories by runs."""
    return frame.pivot(index="trajectory", columns="run", values="rmse").to_numpy(float)


def methods_paired(folder: Path = ABLATIONS) -> pd.DataFrame:
    rows = []
    for path in sorted(folder.glob("*_runs.csv")):
        runs = pd.read_csv(path)
        family = []
        for log2n, at in runs.groupby("log2n"):
            grids = {v: _grid(c) for v, c in at.groupby("variant")}
            pairs = [(v, "systematic") for v in grids if v != "systematic"]
            if "c1-128" in grids and "metropolis" in grids:
                pairs.append(("c1-128", "metropolis"))
            for variant, against in pairs:
                d = 1e3 * (grids[variant] - grids[against])
                means = d.mean(axis=1)
                sets = means[: means.size // SUBSET * SUBSET].reshape(-1, SUBSET).mean(axis=1)
                family.append({"model": at.model.iloc[0], "log2n": log2n, "variant": variant,
                               "against": against, "trajectories": d.shape[0],
                               "runs": d.shape[1], "rmse": mean_of_means(grids[variant]),
                               "diff": mean_of_means(d), "runs_hw": runs_half_width(d),
                               "traj_hw": CONFIDENCE_Z * means.std(ddof=1) / np.sqrt(means.size),
                               "sets": sets.size, "sets_min": sets.min(),
                               "sets_max": sets.max(),
                               "sets_below_0": int((sets < 0).sum())})  # fmt: skip
        z = stats.norm.ppf(1 - (1 - LEVEL) / (2 * len(family)))
        for r in family:
            r["comparisons"] = len(family)
            r["traj_hw_corrected"] = r["traj_hw"] * z / CONFIDENCE_Z
        rows += family
    return pd.DataFrame(rows)


def fig6_23_ranges(folder: Path = BEST_CPU) -> pd.DataFrame:
    t = pd.read_csv(folder / "timings.csv")
    t = t[t.section == "filter"]
    gpu = t[t.code.str.startswith("run_filter cuda")].set_index("n")
    rows = []
    for r in t[~t.code.str.startswith("run_filter cuda")].itertuples():
        if r.n not in gpu.index:
            continue
        g = gpu.loc[r.n]
        for stage, col in (("filter", "seconds"), ("resampling", "resampling_s")):
            rows.append({"n": r.n, "log2_n": int(np.log2(r.n)), "code": r.code,
                         "method": r.method, "threads": r.threads, "stage": stage,
                         "repeats": r.repeats, "gpu_repeats": g.repeats,
                         "ratio": getattr(r, col) / g[col],
                         "ratio_low": getattr(r, f"{col}_min") / g[f"{col}_max"],
                         "ratio_high": getattr(r, f"{col}_max") / g[f"{col}_min"]})  # fmt: skip
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the CSVs")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, frame in {"methods_paired": methods_paired(),
                        "fig6_23_ranges": fig6_23_ranges()}.items():  # fmt: skip
        frame.to_csv(args.out / f"{name}.csv", index=False, float_format="%.6g")
        print(f"{name}.csv: {len(frame)} rows")


if __name__ == "__main__":
    main()
