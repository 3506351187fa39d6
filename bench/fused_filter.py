#!/usr/bin/env python3
"""The fused GPU filter run (filters/sir_fused.py) against the graph
(filters/sir_gpu.py), and its grid: the growth model, Systematic, T = 100
steps, float32, for each N the graph's run and the fused run at several grid
sizes (fractions of ``geometry.fused_blocks``'s default, and the most the
device holds) and on grids that are one thread block cluster
(``geometry.FUSED_CLUSTERS``; "spread": one block an SM). Medians of
``--repeats`` runs after one untimed run, device time (CUDA events) and
wall time (the host's clock around the run); each fused run is checked to
equal the graph's estimates bit for bit. This is what
``geometry.FUSED_MAX_N`` and ``geometry.fused_blocks`` are chosen from.

    python bench/fused_filter.py --csv results/bench/fused_filter.csv
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
from pathlib import Path

import numpy as np

from pfresample.cuda import geometry
from pfresample.filters import sir_fused
from pfresample.filters.sir_gpu import run_sir_gpu
from pfresample.models import GrowthModel
from pfresample.resampling.registry import get_method

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parse_size, write_rows  # noqa: E402 -- sibling module

FIELDS = ["date", "device", "commit", "n", "path", "blocks", "device_ms", "wall_ms",
          "phase_us", "repeats"]  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=parse_size, nargs="+", default=[2**k for k in range(10, 25, 2)])
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--fractions", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    clusters = list(getattr(geometry, "FUSED_CLUSTERS", ()))  # none in a tree from before them
    p.add_argument("--clusters", type=int, nargs="*", default=clusters)
    p.add_argument("--commit", default="")
    p.add_argument("--csv", type=Path, default=Path("results/bench/fused_filter.csv"))
    args = p.parse_args(argv)
    import cupy

    model, steps = GrowthModel(), 100
    truth, y = model.simulate(steps, np.random.default_rng(2026))
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    info = {"date": datetime.date.today().isoformat(), "commit": args.commit,
            "device": name.decode() if isinstance(name, bytes) else str(name),
            "repeats": args.repeats}  # fmt: skip
    m = get_method("systematic")
    resident = sir_fused.resident_blocks()
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    print(f"resident blocks of the fused kernel: {resident}", flush=True)
    rows = []
    for n in args.n:
        graph = [run_sir_gpu(model, y, n, m, s, stage_times=False, fused=False)
                 for s in range(args.repeats + 1)][1:]  # fmt: skip
        default = sir_fused.default_blocks(n)
        grids = sorted(
            {max(1, int(f * default)) for f in args.fractions} | {default, sms, resident}
        )
        runs = [("graph", "", graph)]
        for blocks in grids:
            if blocks > resident or n > geometry.FUSED_MAX_N:
                continue
            fused = sir_fused.FusedRun(model, n, steps, blocks)
            out = [fused.run(y, s) for s in range(args.repeats + 1)][1:]
            for a, b in zip(out, graph, strict=True):
                if not np.array_equal(a.estimates, b.estimates):
                    raise SystemExit(f"N={n} blocks={blocks}: the fused run differs from the graph")
            runs.append(("fused", blocks, out))
            del fused
        for cluster, spread in [(c, sp) for c in args.clusters for sp in (False, True)]:
            try:
                fused = sir_fused.FusedRun(model, n, steps, cluster=cluster, spread=spread)
                out = [fused.run(y, s) for s in range(args.repeats + 1)][1:]
            except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as e:
                print(f"N={n:>9,} cluster {cluster} spread {spread}: not launched ({e})")
                continue
            for a, b in zip(out, graph, strict=True):
                if not np.array_equal(a.estimates, b.estimates):
                    raise SystemExit(f"N={n} cluster={cluster}: the run differs from the graph")
            runs.append(("cluster-spread" if spread else "cluster", cluster, out))
            del fused
        for path, blocks, out in runs:
            dev = statistics.median(1e3 * r.total_seconds for r in out)
            wall = statistics.median(1e3 * r.wall_seconds for r in out)
            tag = (
                ""
                if path == "graph"
                else f" blocks {blocks:>4}"
                + (" (default)" if path == "fused" and blocks == default else "")
            )
            # The fused kernel's four phases, microseconds a step (medians over the runs).
            phases = "" if path == "graph" else "/".join(
                f"{np.median([r.stage_totals[s] for r in out]) / steps * 1e6:.2f}"
                for s in range(4))  # fmt: skip
            print(f"N={n:>9,} {path:<14}{tag:<20} device {dev:8.3f} ms  wall {wall:8.3f} ms"
                  f"  {phases}", flush=True)  # fmt: skip
            rows.append({**info, "n": n, "path": path, "blocks": blocks, "phase_us": phases,
                         "device_ms": f"{dev:.4g}", "wall_ms": f"{wall:.4g}"})  # fmt: skip
    write_rows(args.csv, rows, FIELDS)


if __name__ == "__main__":
    main()
