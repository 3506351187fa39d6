#!/usr/bin/env python3
"""Moazeni (2013) chapter 4: the GPU hash table against the document's kind of CPU
baseline, the best CPU code we can write on every core, and the strongest public peer,
in one run on one host.

For each key distribution (normal of variance 0.05, uniform), batch size (2^18 first)
and mix (insert only, the thesis's five combined mixes, search only), on the same keys
(``hashtable_workloads.batch_keys``, the pipeline's and the peers' keys for ``--seed``),
262,144 keys preloaded (untimed):

* **the bounds** (``hashtable_best.bound``, on the preloaded best table's slots, the
  batch's keys, all threads): one read at each key's home slot (GATHER) and a read plus
  a CAS there (CAS); the batch's bound is its searches at GATHER's time an operation and
  its inserts and deletes at CAS's;
* **the best CPU code** (``hashtable_best.BestHashSet``, native/hashset_best.c: lock-free
  linear probing a cache line at a time, murmur3's finaliser, OpenMP threads that exist
  before the clock starts), on ``--threads`` (all CPUs), at load <= ``--load`` after the
  batch: seconds, Mops/s and % of the bound;
* **the document's kind of baseline**: the thesis's CPU_PH (``hashtable.HashTable``,
  native/hashtable.cpp: ``--tables`` tables of 1,024 buckets, Michael's lists, DEK,
  std::threads started inside the batch, timed around the call), on each of
  ``--doc-threads`` (the thesis's 8 first, the ratio's; then all CPUs);
* **the GPU** (with CuPy and a device): the pipeline's GPU_PH (``hashtable_gpu``,
  ``--tables`` tables) with DEK (the thesis's hash) and with ``mix``, the kernel between
  CUDA events as the pipeline times it;
* **the peer**: cuCollections' static_map and SlabHash are not run here (they need
  their own builds: bench/device/cuco_build.sh, slab_build.sh and
  bench/moazeni2013_ch4_peers.py); their committed run on the same keys (``--peers``,
  evidence/2026-11-27-h100-7a41810/ch4_peers/peers.csv: means of 5 batches, beside that
  run's own GPU_PH) gives ratio 3 within that run.

Every time is the median of ``--repeats`` (>= 5) runs after a warm-up, with min and max;
every run's results are checked (every operation true, the key set as it must be: the
batches are schedule-free). Writes ``--out``/timings.csv (a row a measurement, written as
it is measured) and ``--out``/ratios.csv (the GPU over the document's baseline, over the
best CPU code, over the fastest peer): without a GPU, the ratios' GPU side comes from the
peers' committed run, and its rows say so (not one host). ``--deadline`` stops starting
cells after that many seconds (the most important cells come first).

    python bench/moazeni2013_ch4_best_cpu.py --out OUT            # ~3 min on 16 cores + H100
    python bench/moazeni2013_ch4_best_cpu.py --out OUT --quick    # 2^12 and 2^16, 3 mixes
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "evidence/2026-11-27-h100-7a41810/ch4_peers/peers.csv"
MIXES = (0, 33, 50, 60, 80, 90, 100)
TIMING_FIELDS = ("section", "code", "threads", "distribution", "batch", "mix", "seconds",
                 "seconds_min", "seconds_max", "repeats", "mops", "bound_s", "pct_of_bound",
                 "lines_per_op", "cas_failures", "slots", "ok", "device", "cpu", "cores",
                 "commit", "date", "omp_wait_policy")  # fmt: skip
RATIO_FIELDS = ("distribution", "batch", "mix", "gpu_code", "gpu_source", "gpu_s", "over",
                "cpu_s", "speedup", "device", "cpu", "cores", "commit", "date")  # fmt: skip


def summary(times) -> dict:
    times = [float(t) for t in times]
    return {"seconds": statistics.median(times), "seconds_min": min(times),
            "seconds_max": max(times), "repeats": len(times)}  # fmt: skip


def peer_rows(path: Path) -> dict:
    """(distribution, batch, mix) -> {structure: seconds} of a peers run (bench/
    moazeni2013_ch4_peers.py): the thesis's working set, every operation succeeding (a run
    with ``set`` and ``absent`` columns: those rows alone); our DEK fed LSB first is
    "GPU_PH dek", as this bench names it."""
    out = {}
    if not path.exists():
        return out
    with open(path) as f:
        for r in csv.DictReader(f):
            if r.get("set", "thesis") != "thesis" or float(r.get("absent") or 0) != 0:
                continue
            key = (r["distribution"], int(r["batch"]), int(r["mix"]))
            name = "GPU_PH dek" if r["structure"] == "GPU_PH dek lsb" else r["structure"]
            out.setdefault(key, {})[name] = float(r["seconds"])
    return out


def gpu_code(spec: str) -> tuple[str, str, str]:
    """``--gpu-hashes`` entry (``dek``, ``mix``, ``dek-msb``) -> (hash, byte order, code)."""
    hash_, _, order = spec.partition("-")
    order = order or "lsb"
    return hash_, order, f"GPU_PH {hash_}" + (f" {order}" if order != "lsb" else "")


def fastest_peer(cell: dict) -> tuple[str, float] | None:
    peers = {k: v for k, v in cell.items() if not k.startswith("GPU_")}
    if not peers:
        return None
    name = min(peers, key=peers.get)
    return name, peers[name]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--quick", action="store_true", help="batches 2^12 and 2^16; mixes 0, 33, 90")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="all cores")
    p.add_argument(
        "--doc-threads",
        type=int,
        nargs="+",
        default=None,
        help="the baseline's threads (default: 8, the thesis's, and all CPUs)",
    )
    p.add_argument("--tables", type=int, default=320, help="PH of CPU_PH and GPU_PH")
    p.add_argument("--distributions", nargs="+", default=["normal", "uniform"])
    p.add_argument("--batches", type=int, nargs="+", default=[2**18, 2**16, 2**14, 2**12])
    p.add_argument("--mixes", type=int, nargs="+", default=list(MIXES))
    p.add_argument(
        "--gpu-hashes",
        nargs="+",
        default=["dek", "mix"],
        help="GPU_PH's hashes; dek-msb: DEK fed the key's bytes MSB first",
    )
    p.add_argument("--load", type=float, default=0.5, help="the best table's, after the batch")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=2017, help="the pipeline's (config.yaml)")
    p.add_argument("--peers", type=Path, default=PEERS)
    p.add_argument("--no-gpu", action="store_true")
    p.add_argument("--deadline", type=float, default=200.0, help="seconds; no cell starts later")
    p.add_argument(
        "--wait-policy",
        default="default",
        choices=["default", "ACTIVE", "PASSIVE"],
        help="OMP_WAIT_POLICY: 'default' unsets it (libgomp spins a while at a "
        "barrier, then sleeps: no spinning thread steals the baseline's cores)",
    )
    args = p.parse_args(argv)
    if args.repeats < 5:
        p.error("--repeats must be at least 5")
    # before the first OpenMP library loads (libgomp reads it once)
    os.environ.pop("OMP_WAIT_POLICY", None)
    if args.wait_policy != "default":
        os.environ["OMP_WAIT_POLICY"] = args.wait_policy
    if args.quick:
        args.batches = [b for b in args.batches if b in (2**12, 2**16)] or [2**12]
        args.mixes = [m for m in args.mixes if m in (0, 33, 90)] or [33]
    # the thesis's 8 first (ratio 1's), then every CPU
    doc_threads = args.doc_threads or list(dict.fromkeys([min(8, args.threads), args.threads]))

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import Rows, gpu, host  # noqa: E402 -- sibling module

    from pfresample_studies.moazeni2013 import hashtable as ht
    from pfresample_studies.moazeni2013 import hashtable_best as hb
    from pfresample_studies.moazeni2013 import hashtable_workloads as w

    h = {**host(), "omp_wait_policy": args.wait_policy}
    cupy, device = (None, None) if args.no_gpu else gpu()
    peers = peer_rows(args.peers)
    print(f"# {h['cpu']}, {h['cores']} CPUs; best CPU code on {args.threads} threads, the "
          f"thesis's CPU_PH on {doc_threads}; commit {h['commit']}, {h['date']}; GPU: "
          f"{device or 'none'}; peers: {args.peers if peers else 'none'}", flush=True)  # fmt: skip
    timings = Rows(args.out / "timings.csv", TIMING_FIELDS)
    ratios = Rows(args.out / "ratios.csv", RATIO_FIELDS)
    started, cache, warmed, table_rows = time.perf_counter(), {}, set(), []
    runs = args.repeats + 1  # the first, a warm-up, dropped

    def record(section, code, threads, cell, t, **more):
        row = {"section": section, "code": code, "threads": threads, "distribution": cell[0],
               "batch": cell[1], "mix": cell[2], **t, "mops": cell[1] / t["seconds"] / 1e6,
               **more, **h}  # fmt: skip
        timings.add(row)
        return row

    for dist in args.distributions:
        for batch in args.batches:
            for mix in args.mixes:
                if time.perf_counter() - started > args.deadline:
                    print(f"# deadline ({args.deadline:.0f} s): no more cells", flush=True)
                    return _finish(table_rows, started)
                cell = (dist, batch, mix)
                run = w.Run("cpu", 0, dist, 0.05 if dist == "normal" else 0.0, "dek", "ph",
                            args.tables, batch, mix)  # fmt: skip
                pre, ops, keys = w.batch_keys(run, preload=w.PRELOAD, seed=args.seed,
                                              cache=cache)  # fmt: skip
                expected = np.union1d(np.setdiff1d(pre, keys[ops == ht.DELETE]),
                                      keys[ops == ht.INSERT])  # fmt: skip
                out = {"cell": cell}

                # the best CPU code, and the bounds on its preloaded slots
                table = hb.BestHashSet.sized(pre.size + int((ops == ht.INSERT).sum()), args.load)
                table.batch(np.full(pre.size, ht.INSERT), pre, args.threads)
                bounds = {}
                for kind in hb.BOUNDS:
                    seconds, _ = hb.bound(kind, keys, table.log2, args.threads, runs, table.slots)
                    bounds[kind] = summary(seconds[1:])
                    record("bound", f"hashset_best.c {kind}", args.threads, cell, bounds[kind],
                           slots=table.capacity, ok=True)  # fmt: skip
                bound_s = hb.mix_bound_seconds(ops, bounds["gather"]["seconds"],
                                               bounds["cas"]["seconds"])  # fmt: skip
                res, seconds = table.timed_batch(ops, keys, args.threads, runs=runs)
                ok = bool((res.results == ht.TRUE).all() and
                          np.array_equal(table.check(), expected))  # fmt: skip
                t = summary(seconds[1:])
                record("best", "hashset_best.c", args.threads, cell, t, bound_s=bound_s,
                       pct_of_bound=100 * bound_s / t["seconds"],
                       lines_per_op=res.stats["lines"] / batch,
                       cas_failures=res.stats["cas_failures"], slots=table.capacity,
                       ok=ok)  # fmt: skip
                if not ok:
                    raise AssertionError(f"{cell}: the best CPU code's results are wrong")
                out["best"] = t["seconds"]
                out["pct"] = 100 * bound_s / t["seconds"]

                # the document's kind of baseline: the thesis's CPU_PH
                for th in doc_threads:
                    if ("cpu", th) not in warmed:
                        warmed.add(("cpu", th))
                        w.run_cpu(args.tables, w.BUCKETS, pre, ops, keys, th, "dek")
                    measured = [w.run_cpu(args.tables, w.BUCKETS, pre, ops, keys, th, "dek")
                                for _ in range(args.repeats)]  # fmt: skip
                    t = summary([m["seconds"] for m in measured])
                    ok = all(m["ok"] for m in measured)
                    record("document", f"hashtable.cpp CPU_PH {args.tables} dek", th, cell, t,
                           ok=ok)  # fmt: skip
                    if not ok:
                        raise AssertionError(f"{cell}: CPU_PH's results are wrong")
                    out[f"doc{th}"] = t["seconds"]

                # the GPU, through the pipeline's code
                gpu_s = {}
                if cupy is not None:
                    for spec in args.gpu_hashes:
                        hash_, order, code = gpu_code(spec)
                        if ("gpu", spec) not in warmed:
                            warmed.add(("gpu", spec))
                            w.run_gpu(args.tables, w.BUCKETS, pre, ops, keys, hash_, order)
                        measured = [w.run_gpu(args.tables, w.BUCKETS, pre, ops, keys, hash_, order)
                                    for _ in range(args.repeats)]  # fmt: skip
                        t = summary([m["seconds"] for m in measured])
                        ok = all(m["ok"] for m in measured)
                        record("gpu", code, 0, cell, t, ok=ok, device=device)
                        if not ok:
                            raise AssertionError(f"{cell}: {code}'s results are wrong")
                        gpu_s[code] = (t["seconds"], "this run")
                evidence = peers.get(cell, {})
                if not gpu_s:  # no GPU here: the peers run's GPU_PH, said so
                    for name in (gpu_code(x)[2] for x in args.gpu_hashes):
                        if name in evidence:
                            gpu_s[name] = (evidence[name], f"{args.peers} (the peers' run; "
                                           "not this host)")  # fmt: skip
                peer = fastest_peer(evidence)
                for code, (g, source) in gpu_s.items():
                    overs = [(f"document's CPU_PH ({th} threads, dek)", out[f"doc{th}"])
                             for th in doc_threads]  # fmt: skip
                    overs.append((f"best CPU (hashset_best.c, {args.threads} threads)",
                                  out["best"]))  # fmt: skip
                    for over, cpu_s in overs:
                        ratios.add({"distribution": dist, "batch": batch, "mix": mix,
                                    "gpu_code": code, "gpu_source": source, "gpu_s": g,
                                    "over": over, "cpu_s": cpu_s, "speedup": cpu_s / g,
                                    "device": device, **h})  # fmt: skip
                    if peer and code in evidence:  # ratio 3 within the peers' own run
                        ratios.add({"distribution": dist, "batch": batch, "mix": mix,
                                    "gpu_code": code,
                                    "gpu_source": f"{args.peers} (the peers' run)",
                                    "gpu_s": evidence[code], "over": f"fastest peer: {peer[0]}",
                                    "cpu_s": peer[1], "speedup": peer[1] / evidence[code],
                                    "device": "the peers' run", **h})  # fmt: skip
                    out[code] = (g, source, peer[1] / evidence[code] if peer and code in evidence
                                 else None)  # fmt: skip
                table_rows.append(out)
                _print_cell(out, doc_threads, args.threads)
    _finish(table_rows, started)


def _print_cell(out: dict, doc_threads, threads) -> None:
    dist, batch, mix = out["cell"]
    docs = "  ".join(f"CPU_PH({th}) {out[f'doc{th}'] * 1e3:8.3f} ms" for th in doc_threads)
    line = (f"{dist:7s} 2^{batch.bit_length() - 1:<2d} {mix:3d}% search | best({threads}) "
            f"{out['best'] * 1e6:9.1f} us {batch / out['best'] / 1e6:7.0f} Mops/s "
            f"({out['pct']:4.0f} % of bound) | {docs}")  # fmt: skip
    print(line, flush=True)
    for code in ("GPU_PH dek", "GPU_PH dek msb", "GPU_PH mix"):
        if code in out:
            g, source, peer = out[code]
            doc = out[f"doc{doc_threads[0]}"]
            tail = f" / peer {peer:5.2f}x" if peer else " / peer -"
            print(f"    {code} {g * 1e6:8.1f} us ({source}): over CPU_PH({doc_threads[0]}) "
                  f"{doc / g:7.1f}x / best CPU {out['best'] / g:6.2f}x{tail}",
                  flush=True)  # fmt: skip


def _finish(rows, started) -> None:
    print(f"# {len(rows)} cells in {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
