"""Moazeni (2013) chapter 4 beside the GPU hash tables people use today, in one run on
one device, on the same batches at the same load factor: NVIDIA cuCollections'
``static_set``, ``static_map`` and ``dynamic_map`` (bench/peers/cuco_hash.cu, built by
bench/device/cuco_build.sh from the user's checkout) and, with ``--slab``, SlabHash's
concurrent map (bench/peers/slab_hash.cu, bench/device/slab_build.sh).

Cells: for each working set (``--sets``: ``thesis``, the thesis's 262,144 preloaded keys,
normal of variance 0.05 and uniform, batches ``--batches``; ``large``, ``--large-preload``
uniform keys, batches ``--large-batches``, a table larger than the H100's 50 MB of L2),
each mix (``--mixes``: insert only, 33 and 90 % search, search only, all operations
succeeding; ``--absent-mixes``: 33 and 90 % search with half the searches and deletes on
absent keys and half the inserts on present ones, ``hashtable_workloads.absent_batch``).
The keys come from ``hashtable_workloads.batch_keys`` (the pipeline's seed) or, with
absent keys, from a generator seeded by (seed, set, distribution, batch, mix).

Every structure is sized by one rule, the load factor ``--load-factor`` (keys / key
slots with the preload and every insert in): our GPU_PH gets ceil(keys / (load x 1,024))
tables of 1,024 buckets (a chained table's load: keys a bucket head), cuco keys / load
slots, SlabHash keys / (load x 15) buckets (a slab holds 15 pairs). Ours is a set; so is
cuco's ``static_set``, the like-for-like peer; ``static_map``, ``dynamic_map`` and
SlabHash store a 4-byte value a key beside it (SlabHash has no set with deletes).

Timing: each structure's batch is timed whole between CUDA events, the batch already on
the device (as §4.6 times ours), behind a delay kernel; cuco's includes its device
partition of the batch by kind and the read of the parts' counts (bench/peers/cuco_hash.cu).
Each is ``--repeats`` (>= 10) batches, each on a freshly built and preloaded table: the
median, min, max and a distribution-free 95 % interval of the median (order statistics).
Every batch's results are checked against the expected ones; our table's key set is
checked whole once a cell, the peers' by their drivers.

Ours: GPU_PH with DEK fed the key's bytes least significant first (``lsb``, the
pipeline's default) and most significant first (``msb``), and with ``mix``.

Writes ``peers.csv`` (a row a structure and cell: seconds = the median). The pipeline's
rule ``moazeni2013_ch4_peers_runs`` runs :func:`run` where the cells have a GPU and the
cuCollections driver is built (``moazeni2013_ch4_peers_*`` of
config/studies/moazeni2013.yaml); otherwise it draws ``peers.csv`` from the committed run
(``pipeline.gpu_runs``), and ``moazeni2013_ch4_peers_tables`` derives ``peers_cells.csv``
from it (``peers_tables.cells``). By hand:

    python -m pfresample_studies.moazeni2013.fair_peers \\
        --cuco peers/cuCollections/target/cuco_hash --slab peers/SlabHash/target/slab_hash --out OUT
"""

from __future__ import annotations

import argparse
import math
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from pfresample_studies.moazeni2013 import hashtable as ht
from pfresample_studies.moazeni2013 import hashtable_workloads as w
from pfresample_studies.moazeni2013.runs_io import host, write_rows

OURS = (("GPU_PH dek lsb", "dek", "lsb"), ("GPU_PH dek msb", "dek", "msb"),
        ("GPU_PH mix", "mix", "lsb"))  # fmt: skip
CUCO = ("static_set", "static_map", "dynamic_map")
SLAB_PAIRS = 15  # key-value pairs a SlabHash slab holds
MIN_REPEATS = 10


def median_interval(times, level: float = 0.95) -> tuple[float, float]:
    """The distribution-free interval of the median: order statistics (k, n + 1 - k), k the
    largest with P(Binomial(n, 1/2) < k) <= (1 - level) / 2 (the whole range where n is
    too small for the level)."""
    x = np.sort(np.asarray(times, dtype=float))
    n = x.size

    def below(k):  # P(Binomial(n, 1/2) < k)
        return sum(math.comb(n, i) for i in range(k)) / 2**n

    k = 1
    while k + 1 <= n // 2 and below(k + 1) <= (1 - level) / 2:
        k += 1
    return float(x[k - 1]), float(x[n - k])


def summary(times) -> dict:
    lo, hi = median_interval(times)
    t = np.asarray(times, dtype=float)
    return {"seconds": float(np.median(t)), "seconds_lo": lo, "seconds_hi": hi,
            "seconds_min": float(t.min()), "seconds_max": float(t.max()),
            "repeats": int(t.size)}  # fmt: skip


def write_batch(f, preload, ops, keys, expected, size_after: int) -> None:
    """The batch file the peer drivers read (bench/peers/batch_file.cuh), in ``f``."""
    f.seek(0)
    f.truncate()
    f.write(np.array([preload.size, ops.size], dtype=np.uint64).tobytes())
    f.write(preload.astype(np.float32).tobytes())
    f.write(ops.astype(np.uint8).tobytes())
    f.write(keys.astype(np.float32).tobytes())
    f.write(np.asarray(expected, dtype=np.uint8).tobytes())
    f.write(np.array([size_after], dtype=np.uint64).tobytes())
    f.flush()


def peer(command: list[str]) -> list[dict]:
    """A peer driver's lines: name, check, every repeat's seconds."""
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    rows = []
    for line in out.stdout.strip().splitlines():
        name, ok, *times = line.split(",")
        rows.append({"name": name, "ok": ok == "1", "times": [float(t) for t in times]})
    return rows


def ours(pre, ops, keys, expected, after, load: float, repeats: int, hash_: str, order: str):
    """GPU_PH at the load factor on one batch, ``repeats`` times, each checked."""
    from pfresample_studies.moazeni2013.hashtable_gpu import GpuHashTable

    n_keys = pre.size + int((ops == ht.INSERT).sum())
    tables = math.ceil(n_keys / (load * w.BUCKETS))
    times, ok = [], True
    inserts = np.full(pre.size, ht.INSERT, dtype=np.uint8)
    for r in range(repeats + 1):  # the first, a warm-up, untimed
        table = GpuHashTable(tables, w.BUCKETS, n_keys, hash_, order)
        table.batch(inserts, pre)
        res, seconds = table.batch(ops, keys)
        ok &= bool(np.array_equal(res.results, expected))
        if r == 1:  # the key set whole, once a cell
            ok &= bool(np.array_equal(table.check(), after))
        if r:
            times.append(seconds)
    return times, ok, tables


def cells(args):
    """(set, distribution, preload size, batch, mix, absent share), the most telling first:
    the thesis's set at its largest batch, then the large set (largest batch first), then
    the rest (a deadline cuts from the end)."""
    out = []
    for name in args.sets:
        if name not in ("thesis", "large"):
            raise ValueError(f"unknown set {name!r}: thesis or large")
        dists = ("normal", "uniform") if name == "thesis" else ("uniform",)
        n_pre = args.preload if name == "thesis" else args.large_preload
        for batch in args.batches if name == "thesis" else args.large_batches:
            for dist in dists:
                out += [(name, dist, n_pre, batch, m, 0.0) for m in args.mixes]
                out += [(name, dist, n_pre, batch, m, 0.5) for m in args.absent_mixes]

    def rank(cell):
        name, _, _, batch, _, _ = cell
        if name == "thesis":
            return 0 if batch == max(args.batches) else 3
        return 1 if batch == max(args.large_batches) else 2

    return sorted(out, key=rank)


FILE = "peers.csv"
NAMES = (FILE,)
# The committed run the rule draws from: its folder's marker and the folder inside it.
BASE = "ch4_fair"
MARKER = f"{BASE}/{FILE}"
# The derived tables and the run's files each reads.
TABLES = {"peers_cells": ("peers.csv",)}
SETS = ("thesis", "large")


def run(args, out, log=print) -> set[str]:
    """The cells of :func:`cells` until ``args.deadline`` into ``out/peers.csv``; returns
    the files (NAMES) written with at least one row."""
    if args.repeats < MIN_REPEATS:
        raise ValueError(f"repeats must be at least {MIN_REPEATS}")
    if not 0 < args.load_factor < 1:
        raise ValueError("the load factor must lie in (0, 1)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    from pfresample.backend import cuda_device

    machine, device = host(), cuda_device()
    rows, cache, started = [], {}, time.perf_counter()
    batch_file = tempfile.NamedTemporaryFile(suffix=".bin")
    for wset, dist, n_pre, batch, mix, absent in cells(args):
        if time.perf_counter() - started > args.deadline:
            log("deadline: no more cells")
            break
        var = 0.05 if dist == "normal" else 0.0
        spec = w.Run("gpu", 0, dist, var, "dek", "ph", 0, batch, mix)
        if absent:
            pre = w.batch_keys(spec, preload=n_pre, seed=args.seed, cache=cache)[0]
            rng = np.random.default_rng([args.seed, n_pre, batch, mix, int(absent * 100)])
            ops, keys, expected = w.absent_batch(pre, batch, mix, rng, absent, dist, var or 0.05)
        else:
            pre, ops, keys = w.batch_keys(spec, preload=n_pre, seed=args.seed, cache=cache)
            expected = np.ones(ops.size, dtype=np.uint8)
        after = w.after_batch(pre, ops, keys)
        cell = {"set": wset, "distribution": dist, "preload": n_pre, "batch": batch, "mix": mix,
                "absent": absent, "load_factor": args.load_factor}  # fmt: skip
        found = []
        for name, hash_, order in OURS:
            times, ok, n_tables = ours(pre, ops, keys, expected, after, args.load_factor,
                                     args.repeats, hash_, order)  # fmt: skip
            found.append({"structure": name, "kind": "set", "ok": ok, **summary(times),
                          "sizing": f"{n_tables} tables x {w.BUCKETS} buckets"})  # fmt: skip
        write_batch(batch_file, pre, ops, keys, expected, after.size)
        n_keys = pre.size + int((ops == ht.INSERT).sum())
        for r in peer([str(args.cuco), batch_file.name, str(args.load_factor), str(args.repeats),
                       *CUCO]):  # fmt: skip
            found.append({"structure": f"cuco {r['name']}", "ok": r["ok"], **summary(r["times"]),
                          "kind": "set" if r["name"] == "static_set" else "map",
                          "sizing": f"{int(n_keys / args.load_factor) + 1} slots"})  # fmt: skip
        if args.slab:
            per_bucket = args.load_factor * SLAB_PAIRS
            for r in peer([str(args.slab), batch_file.name, str(per_bucket), str(args.repeats)]):
                found.append({"structure": "SlabHash", "kind": "map", "ok": r["ok"],
                              **summary(r["times"]),
                              "sizing": f"{int(n_keys / per_bucket) + 1} buckets"})  # fmt: skip
        for row in found:
            row.update(cell, mops=batch / row["seconds"] / 1e6, device=device,
                       cpu=machine["cpu"], commit=machine["commit"], seed=args.seed)  # fmt: skip
            rows.append(row)
            log(
                f"{wset} {dist} {batch} {mix:3d}% absent {absent:.1f} {row['structure']:16s} "
                f"{row['seconds'] * 1e6:9.1f} us [{row['seconds_lo'] * 1e6:.1f}, "
                f"{row['seconds_hi'] * 1e6:.1f}] ok={row['ok']}"
            )
        write_rows(out / FILE, rows)  # as it goes
    batch_file.close()
    log(f"done in {time.perf_counter() - started:.0f} s")
    return {FILE} if rows else set()


def settings(cfg) -> argparse.Namespace:
    """The run's parameters from the configuration's ``moazeni2013_ch4_peers_*`` keys (the
    drivers' paths from the working directory, Snakemake's; SlabHash's left out where it
    is not built)."""
    deadline = cfg["moazeni2013_ch4_peers_deadline_s"]
    slab = Path(cfg["moazeni2013_ch4_peers_slab"])
    return argparse.Namespace(
        cuco=Path(cfg["moazeni2013_ch4_peers_cuco"]), slab=slab if slab.is_file() else None,
        sets=list(SETS), batches=[2**12, 2**18], preload=w.PRELOAD, large_preload=2**23,
        large_batches=[2**18, 2**20], mixes=[0, 33, 90, 100], absent_mixes=[33, 90],
        load_factor=cfg["moazeni2013_ch4_peers_load_factor"],
        repeats=cfg["moazeni2013_ch4_peers_repeats"], seed=cfg["seed"],
        deadline=float("inf") if deadline is None else float(deadline),
    )  # fmt: skip


def tables(runs) -> dict:
    """The derived tables (TABLES) of the run's ``peers.csv`` under ``runs``."""
    import pandas as pd

    from pfresample_studies.moazeni2013 import peers_tables

    return {"peers_cells": peers_tables.cells(pd.read_csv(Path(runs) / FILE))}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cuco", type=Path, required=True, help="the built cuco_hash driver")
    p.add_argument("--slab", type=Path, help="the built slab_hash driver")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--sets", nargs="+", default=["thesis", "large"])
    p.add_argument("--batches", type=int, nargs="+", default=[2**12, 2**18])
    p.add_argument("--preload", type=int, default=w.PRELOAD)
    p.add_argument("--large-preload", type=int, default=2**23)
    p.add_argument("--large-batches", type=int, nargs="+", default=[2**18, 2**20])
    p.add_argument("--mixes", type=int, nargs="+", default=[0, 33, 90, 100])
    p.add_argument("--absent-mixes", type=int, nargs="+", default=[33, 90])
    p.add_argument("--load-factor", type=float, default=0.5, help="every structure's")
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--seed", type=int, default=2017, help="the pipeline's seed (config.yaml)")
    p.add_argument("--deadline", type=float, default=330.0, help="seconds; no cell starts later")
    args = p.parse_args(argv)
    if args.repeats < MIN_REPEATS:
        p.error(f"--repeats must be at least {MIN_REPEATS}")
    if not 0 < args.load_factor < 1:
        p.error("--load-factor must lie in (0, 1)")
    run(args, args.out, log=lambda m: print(m, flush=True))


if __name__ == "__main__":
    main()
