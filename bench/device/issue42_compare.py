#!/usr/bin/env python3
"""Issue 42's speed check, side by side: the rows of
bench/device/issue42_filter_timing.py for the trees ``base`` (before the
engine) and ``head`` (after it), one CSV a tree a round (``<tree>_<round>.csv``
in the folder given; round 0 is the warm-up and is left out). For every
configuration and N: each round's head / base ratio of the medians, device
time and wall time; their median and range over the rounds; "slower" where the
median device ratio is above 1.03 (the issue's 3 %).

    python3 bench/device/issue42_compare.py RUNS_FOLDER > summary.csv
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

LIMIT = 1.03


def main(argv=None) -> int:
    folder = Path((sys.argv[1:] if argv is None else argv)[0])
    rows: dict = {}
    for path in sorted(folder.glob("*_*.csv")):
        tree, rnd = path.stem.rsplit("_", 1)
        if rnd == "0":
            continue
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                rows.setdefault((r["config"], int(r["n"])), {}).setdefault(rnd, {})[tree] = r
    out = csv.writer(sys.stdout)
    out.writerow(["config", "n", "rounds", "device_ratio_median", "device_ratio_min",
                  "device_ratio_max", "wall_ratio_median", "base_device_ms", "head_device_ms",
                  "verdict"])  # fmt: skip
    for (config, n), rounds in sorted(rows.items()):
        pairs = [r for r in rounds.values() if "base" in r and "head" in r]
        if not pairs:
            continue
        dev = [float(p["head"]["device_s"]) / float(p["base"]["device_s"]) for p in pairs]
        wall = [float(p["head"]["wall_s"]) / float(p["base"]["wall_s"]) for p in pairs]
        base_ms = statistics.median(1e3 * float(p["base"]["device_s"]) for p in pairs)
        head_ms = statistics.median(1e3 * float(p["head"]["device_s"]) for p in pairs)
        ratio = statistics.median(dev)
        out.writerow([config, n, len(pairs), f"{ratio:.4f}", f"{min(dev):.4f}", f"{max(dev):.4f}",
                      f"{statistics.median(wall):.4f}", f"{base_ms:.4f}", f"{head_ms:.4f}",
                      "slower" if ratio > LIMIT else "within 3 %"])  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
