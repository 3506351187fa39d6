#!/usr/bin/env python3
"""After/before ratio of resampler timings from CSVs of bench/gpu_resamplers.py.

Each side may have several runs (rounds of bench/device/compare_trees.sh); a
method's time on a side is the median of its runs' medians. Prints one row
per (method, distribution, N) of the library pfresample, and the largest
ratio.

    python3 bench/compare_timings.py before_1.csv before_2.csv --after after_1.csv after_2.csv
"""

from __future__ import annotations

import argparse
import statistics

import pandas as pd

KEY = ["method", "distribution", "n"]


def side(paths) -> pd.Series:
    runs = pd.concat([pd.read_csv(p) for p in paths])
    ours = runs[runs["library"] == "pfresample"]
    return ours.groupby(KEY)["median_ms"].agg(statistics.median)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("before", nargs="+")
    p.add_argument("--after", nargs="+", required=True)
    args = p.parse_args()
    table = pd.DataFrame({"before_ms": side(args.before), "after_ms": side(args.after)})
    table["ratio"] = table["after_ms"] / table["before_ms"]
    with pd.option_context("display.width", 120, "display.max_rows", 200):
        print(table.round(4).to_string())
    worst = table["ratio"].idxmax()
    print(f"largest after/before: {table['ratio'].max():.3f} at {worst}")


if __name__ == "__main__":
    main()
