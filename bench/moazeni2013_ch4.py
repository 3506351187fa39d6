#!/usr/bin/env python3
"""Moazeni (2013) chapter 4: throughput of the lock-free (parallel) hash table on CPU
threads and, with ``--gpu``, on the GPU, over the thesis's grid (§4.6): PH tables of
1,024 buckets (PH = 1: CPU_BASIC / GPU_BASIC), GPU_BIG (one table of PH x 1,024
buckets), the five search mixes, batch sizes, normal keys (variance 0.05) and uniform
ones, each hash; 262,144 keys preloaded. Every run is checked (every operation true,
the key set as it must be: ``hashtable_workloads``). Writes ``--out``/ch4.csv.

    python bench/moazeni2013_ch4.py --out OUT --gpu --deadline 400
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

import numpy as np

from pfresample_studies.moazeni2013 import hashtable_workloads as w


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tables", type=int, nargs="+", default=[1, 5, 20, 80, 320])
    p.add_argument("--batches", type=int, nargs="+", default=[2**12, 2**14, 2**16, 2**18])
    p.add_argument("--mixes", type=int, nargs="+", default=list(w.MIXES))
    p.add_argument("--distributions", nargs="+", default=["normal", "uniform"])
    p.add_argument("--hashes", nargs="+", default=["dek"])
    p.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    p.add_argument("--big", action="store_true", help="also GPU_BIG / CPU one table of PH m")
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--deadline", type=float, default=400.0)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2013)
    rows, started = [], time.perf_counter()
    for dist in args.distributions:
        preload = w.draw_keys(w.PRELOAD, rng, dist)
        for batch in args.batches:
            for mix in args.mixes:
                ops, keys = w.mix_batch(preload, batch, mix, rng, dist)
                for hash_ in args.hashes:
                    for tables in args.tables:
                        layouts = [("ph", tables, w.BUCKETS)]
                        if args.big and tables > 1:
                            layouts.append(("big", 1, tables * w.BUCKETS))
                        for layout, t, m in layouts:
                            if time.perf_counter() - started > args.deadline:
                                print("deadline", flush=True)
                                return _write(args.out, rows)
                            runs = [("cpu", th) for th in args.threads]
                            runs += [("gpu", 0)] if args.gpu else []
                            for backend, th in runs:
                                if backend == "cpu":
                                    r = w.run_cpu(t, m, preload, ops, keys, th, hash_)
                                else:
                                    r = w.run_gpu(t, m, preload, ops, keys, hash_)
                                rows.append({"backend": backend, "threads": th, "layout": layout,
                                             "tables": t, "buckets": m, "distribution": dist,
                                             "batch": batch, "search_pct": mix, "hash": hash_,
                                             "mops": batch / r["seconds"] / 1e6, **r})  # fmt: skip
                                print(rows[-1], flush=True)
    _write(args.out, rows)


def _write(out: Path, rows) -> None:
    if rows:
        with open(out / "ch4.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
