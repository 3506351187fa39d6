#!/usr/bin/env python3
"""Sum an Nsight Compute CSV (``ncu --csv --page raw --metrics
gpu__time_duration.sum``) by kernel name: launches, total and median
microseconds. The device-side share of a call, ours or the Megopolis
repository's, without the host's clock (bench/device/bound_check.sh).

    python bench/device/kernel_summary.py ncu.csv [--calls K]

With ``--calls K`` each kernel's total is also divided by K (the calls the
profiled program made), which is its time per call."""

import argparse
import csv
import statistics
from collections import defaultdict

from pfresample.studies.dulger2017.profiler import UNITS


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv")
    p.add_argument("--calls", type=int, default=0)
    args = p.parse_args()
    with open(args.csv, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own lines first
    units, *rows = csv.DictReader(lines)  # the first row gives each column's unit
    unit = units["gpu__time_duration.sum"]
    if unit not in UNITS:
        raise SystemExit(f"{args.csv}: gpu__time_duration.sum in {unit!r}, a unit not known")
    to_us = UNITS[unit] * 1e6
    times = defaultdict(list)
    for r in rows:
        name = r["Kernel Name"].split("(")[0]
        times[name].append(float(r["gpu__time_duration.sum"].replace(",", "")) * to_us)
    total = 0.0
    print(f"{'kernel':<60} {'launches':>8} {'total us':>10} {'median us':>10} {'per call':>10}")
    for name, t in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        per = sum(t) / args.calls if args.calls else float("nan")
        total += sum(t)
        med = statistics.median(t)
        print(f"{name[:60]:<60} {len(t):>8} {sum(t):>10.1f} {med:>10.2f} {per:>10.2f}")
    if args.calls:
        print(
            f"{'all kernels, per call':<60} {'':>8} {'':>10} {'':>10} {total / args.calls:>10.2f}"
        )


if __name__ == "__main__":
    main()
