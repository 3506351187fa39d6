#!/usr/bin/env python3
"""Moazeni (2013) chapter 4: how each hash spreads the thesis's keys over one table of
1,024 buckets in each byte order, on the CPU.

For 262,144 keys (``--keys``; the pipeline's preload for ``--seed``, normal of variance
0.05 and uniform: ``hashtable_workloads.batch_keys``) and each hash (DEK, SDBM, PJW,
``mix``) and byte order (``lsb``: the key's float bytes least significant first, the
default; ``msb``: most significant first; ``mix`` reads the word whole, so its two rows
are one hash):

* from the NumPy reference (``hashtable.bucket_stats``): the buckets holding a key, the
  largest chain, and the mean walk of a search for a present key (the nodes it visits
  in its sorted chain, averaged over the keys);
* from the C++ table itself (``hashtable.HashTable``, one table of 1,024 buckets, the
  keys preloaded): a search-only batch of every key, its ``steps`` counter (the nodes
  Find visits) an operation, which must equal the NumPy walk.

Writes ``--out``/byte_order.csv, a row a (distribution, hash, byte order).

    python bench/moazeni2013_ch4_byte_order.py --out OUT     # ~1 min on 2 cores
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from pfresample_studies.moazeni2013 import hashtable as ht
from pfresample_studies.moazeni2013 import hashtable_workloads as w

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import host, write_rows  # noqa: E402 -- sibling module


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--keys", type=int, default=w.PRELOAD)
    p.add_argument("--buckets", type=int, default=w.BUCKETS)
    p.add_argument("--seed", type=int, default=2017, help="the pipeline's seed (config.yaml)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    rows, machine = [], host()
    for dist in ("normal", "uniform"):
        run = w.Run("cpu", 0, dist, 0.05 if dist == "normal" else 0.0, "dek", "ph", 1, 1, 100)
        keys = w.batch_keys(run, preload=args.keys, seed=args.seed)[0]
        for hash_ in ht.HASHES:
            for order in ht.BYTE_ORDERS:
                started = time.perf_counter()
                stats = ht.bucket_stats(keys, args.buckets, hash_, order)
                table = ht.HashTable(1, args.buckets, keys.size, hash_, order)
                table.batch(np.full(keys.size, ht.INSERT), keys, args.threads)
                res = table.batch(np.full(keys.size, ht.SEARCH), keys, args.threads)
                if not (res.results == ht.TRUE).all():
                    raise AssertionError(f"{hash_} {order}: a preloaded key was not found")
                steps = res.stats["steps"] / keys.size
                if res.stats["restarts"] == 0 and not np.isclose(steps, stats["mean_walk"]):
                    raise AssertionError(
                        f"{hash_} {order}: the table walked {steps:.3f} nodes "
                        f"a search where NumPy says {stats['mean_walk']:.3f}"
                    )
                rows.append({"distribution": dist, "variance": run.variance, "keys": keys.size,
                             "buckets": args.buckets, "hash": hash_, "byte_order": order,
                             "byte_wise": hash_ in ht.BYTE_WISE, **stats,
                             "occupied_share": stats["occupied"] / args.buckets,
                             "table_steps_per_search": steps, "seed": args.seed,
                             "cpu": machine["cpu"], "cores": machine["cores"],
                             "commit": machine["commit"]})  # fmt: skip
                print(
                    f"{dist} {hash_} {order}: {stats['occupied']} buckets, largest "
                    f"{stats['largest']}, mean walk {stats['mean_walk']:.1f} (table "
                    f"{steps:.1f}) [{time.perf_counter() - started:.1f} s]",
                    flush=True,
                )
    write_rows(args.out / "byte_order.csv", rows)


if __name__ == "__main__":
    main()
