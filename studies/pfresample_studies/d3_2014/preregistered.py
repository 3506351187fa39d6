"""The pre-registered tests of Das et al.'s two open questions (docs/d3_2014.md,
"Pre-registered"), and the same statistics on the committed GPU runs.

* **The TPB effect on the time a step** (at each N of ``spread.csv``: runs of
  the GPU experiment's spread (:mod:`.gpu_runs`), each run its own filter seed, the same seed at
  every TPB): per algorithm and N, the log of each run's median ms a step at TPB t over the same
  run's at 160, for t in ``TPB`` (3 comparisons, one family: Holm, simultaneous 99 %
  intervals, ``pipeline.multiplicity``); reported as the geometric-mean ratio
  ``exp(mean)`` with ``exp`` of the interval's ends.
* **The regime difference at N = 50,000** (``regimes/cells.csv``): the systematic filter's
  RMSE norm in our regime minus the paper's, paired by trajectory (one comparison).

    python -m pfresample_studies.d3_2014.preregistered tables --spread S.csv --cells C.csv --out DIR

writes ``tpb_family.csv`` and ``regime_family.csv``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from ..pipeline.multiplicity import paired_family

N = 50000
BASE_TPB = 160
TPB = (556, 736, 1024)
LEVEL = 0.99


def tpb_family(spread: pd.DataFrame) -> pd.DataFrame:
    """Per (algorithm, N), log(ms at t / ms at 160) per run for t in TPB, one family each."""
    out = []
    for (algorithm, n), rows in spread.groupby(["algorithm", "n"]):
        table = rows.pivot_table(index="run", columns="threads", values="ms_per_step_median")
        missing = [t for t in (BASE_TPB, *TPB) if t not in table.columns]
        if missing:
            raise ValueError(f"tpb family: {algorithm} lacks the TPB {missing}")
        table = table.dropna()
        base = table[BASE_TPB]
        diffs = {f"{algorithm} N={n} {t} / {BASE_TPB}": np.log(table[t] / base).to_numpy()
                 for t in TPB}  # fmt: skip
        family = paired_family(diffs, level=LEVEL)
        family.insert(0, "threads", list(TPB))
        family.insert(0, "n", n)
        family.insert(0, "algorithm", algorithm)
        family["ratio"] = np.exp(family["mean"])
        family["ratio_low"] = np.exp(family["ci_low"])
        family["ratio_high"] = np.exp(family["ci_high"])
        family["ms_160_min"] = table[BASE_TPB].min()
        family["ms_160_max"] = table[BASE_TPB].max()
        out.append(family)
    if not out:
        raise ValueError("tpb family: no runs")
    return pd.concat(out, ignore_index=True)


def regime_family(cells: pd.DataFrame, filters=("systematic",)) -> pd.DataFrame:
    """Per filter, RMSE norm (ours − paper's regime) paired by trajectory, one family."""
    cells = cells[cells["n"] == N]
    diffs = {}
    for name in filters:
        table = cells[cells["filter"] == name].pivot_table(
            index="trajectory", columns="regime", values="rmse_norm"
        )
        if not {"ours", "paper"} <= set(table.columns):
            raise ValueError(f"regime family: {name} lacks a regime")
        table = table.dropna()
        diffs[f"{name} ours - paper"] = (table["ours"] - table["paper"]).to_numpy()
    family = paired_family(diffs, level=LEVEL)
    family.insert(0, "filter", list(filters))
    return family


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    tab = sub.add_parser("tables")
    tab.add_argument("--spread", type=Path, help="spread.csv of the GPU experiment (gpu_runs)")
    tab.add_argument("--cells", type=Path, help="regimes/cells.csv of the same")
    tab.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.spread:
        tpb = tpb_family(pd.read_csv(args.spread))
        tpb.to_csv(args.out / "tpb_family.csv", index=False, float_format="%.6g")
        print(tpb.to_string())
    if args.cells:
        regime = regime_family(pd.read_csv(args.cells))
        regime.to_csv(args.out / "regime_family.csv", index=False, float_format="%.6g")
        print(regime.to_string())


if __name__ == "__main__":
    main()
