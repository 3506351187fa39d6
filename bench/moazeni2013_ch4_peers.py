#!/usr/bin/env python3
"""Moazeni (2013) chapter 4 beside a GPU hash table people use today, in one run on one
device: NVIDIA cuCollections' ``cuco::static_map`` (bench/peers/cuco_hash.cu, built by
bench/device/cuco_build.sh from the user's checkout) and, with ``--slab``, SlabHash's
concurrent map (bench/peers/slab_hash.cu, bench/device/slab_build.sh) on the same batches
as GPU_PH.

For each key distribution (normal, variance 0.05; uniform), batch size and mix (insert
only, the five combined mixes, search only), the batch's keys come from
``hashtable_workloads.batch_keys`` (the pipeline's keys for the same seed), and these run
on them, each the mean of ``--repeats`` batches on a freshly preloaded table:

* GPU_PH at ``--tables`` tables with DEK (the thesis's hash) and with ``mix`` (ours),
  and GPU_BASIC (one table) with ``mix``, every batch checked;
* cuco's static_map at load factor ``--load-factor`` after the preload, the batch as
  three bulk calls (find, insert, erase), checked by the driver;
* SlabHash at ``--slab-keys-per-bucket`` keys a bucket (slabs of 15 pairs), the whole
  mixed batch in one launch (its batched_operations), checked by the driver.

Neither has float keys: a key is its float's bits. cuco has no mixed-kind launch: its
three calls stand for the one launch. Writes ``--out``/peers.csv (one row a structure and batch,
with Mops/s).

    python bench/moazeni2013_ch4_peers.py --cuco peers/cuCollections/target/cuco_hash --out OUT
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pfresample_studies.moazeni2013 import hashtable_workloads as w

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_rows  # noqa: E402 -- sibling module

MIXES = (0, 33, 50, 60, 80, 90, 100)


def write_batch(f, preload, ops, keys) -> None:
    """The batch file the peer drivers read (bench/peers/batch_file.cuh), in ``f``."""
    f.seek(0)
    f.truncate()
    f.write(np.array([preload.size, ops.size], dtype=np.uint64).tobytes())
    f.write(preload.astype(np.float32).tobytes())
    f.write(ops.astype(np.uint8).tobytes())
    f.write(keys.astype(np.float32).tobytes())
    f.flush()


def peer(binary: Path, batch_file: str, load: float, repeats: int) -> dict:
    """A peer's driver on one batch file: its mean and minimum seconds and its check."""
    out = subprocess.run([str(binary), batch_file, str(load), str(repeats)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    _, mean, best, ok = out.stdout.strip().split(",")
    return {"seconds": float(mean), "seconds_min": float(best), "ok": ok == "1"}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cuco", type=Path, required=True, help="the built cuco_hash driver")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tables", type=int, default=320)
    p.add_argument("--batches", type=int, nargs="+", default=[2**12, 2**14, 2**16, 2**18])
    p.add_argument("--preload", type=int, default=w.PRELOAD)
    p.add_argument("--load-factor", type=float, default=0.5, help="cuco's, after the preload")
    p.add_argument("--slab", type=Path, help="the built slab_hash driver")
    p.add_argument(
        "--slab-keys-per-bucket",
        type=float,
        default=10.0,
        help="SlabHash's keys a bucket after the batch (15 fill one slab)",
    )
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=2017, help="the pipeline's seed (config.yaml)")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows, cache, started = [], {}, time.perf_counter()
    batch_file = tempfile.NamedTemporaryFile(suffix=".bin")
    for dist in ("normal", "uniform"):
        for batch in args.batches:
            for mix in MIXES:
                run = w.Run("gpu", 0, dist, 0.05 if dist == "normal" else 0.0, "dek", "ph",
                            args.tables, batch, mix)  # fmt: skip
                pre, ops, keys = w.batch_keys(run, preload=args.preload, seed=args.seed,
                                              cache=cache)  # fmt: skip
                ours = (("GPU_PH dek", args.tables, "dek"), ("GPU_PH mix", args.tables, "mix"),
                        ("GPU_BASIC mix", 1, "mix"))  # fmt: skip
                for name, tables, hash_ in ours:
                    runs = [w.run_gpu(tables, w.BUCKETS, pre, ops, keys, hash_)
                            for _ in range(args.repeats)]  # fmt: skip
                    seconds = float(np.mean([r["seconds"] for r in runs]))
                    rows.append({"structure": name, "seconds": seconds,
                                 "seconds_min": min(r["seconds"] for r in runs),
                                 "ok": all(r["ok"] for r in runs)})  # fmt: skip
                first = len(rows) - 3
                write_batch(batch_file, pre, ops, keys)  # one file for every peer
                rows.append({"structure": f"cuco static_map (load {args.load_factor})",
                             **peer(args.cuco, batch_file.name, args.load_factor,
                                    args.repeats)})  # fmt: skip
                if args.slab:
                    rows.append({"structure": f"SlabHash ({args.slab_keys_per_bucket:g} a bucket)",
                                 **peer(args.slab, batch_file.name, args.slab_keys_per_bucket,
                                        args.repeats)})  # fmt: skip
                for row in rows[first:]:
                    row.update(distribution=dist, batch=batch, mix=mix,
                               mops=batch / row["seconds"] / 1e6)  # fmt: skip
                    print(
                        f"{dist} {batch} {mix:3d} {row['structure']:28s} "
                        f"{row['mops']:9.1f} Mops/s ok={row['ok']}",
                        flush=True,
                    )
    batch_file.close()
    write_rows(args.out / "peers.csv", rows)
    print(f"done in {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
