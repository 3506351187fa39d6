"""Moazeni (2013) chapter 4: the benchmark workloads of §4.6 and their timed runs.

* Keys in (0, 1), float32: uniform, or normal with mean 1/2 and variance ``variance``
  (the thesis's 0.05, swept 0.5 ... 0.01; it draws by the polar Box-Muller method, we by
  NumPy's normal: the same distribution), values outside (0, 1) drawn again.
* The table is preloaded with ``preload`` keys (the thesis's 262,144), m = 1,024
  buckets a table; a batch mixes searches, inserts and deletes in the thesis's five
  proportions (33/33/33 ... 90/5/5). To make a batch's outcome independent of the
  schedule (so the checker can verify it), its inserts are fresh keys, its deletes
  preloaded keys, and its searches preloaded keys that no delete of the batch touches:
  every operation of such a batch succeeds, whatever the order.
* Throughput: operations of a batch over its time (Mops/s); the table is rebuilt for
  each repeat and the preload is not timed; the batch's upload is not timed on the GPU
  (§4.6: "the time for transferring the data to GPU is not considered").
"""

from __future__ import annotations

import time

import numpy as np

from . import hashtable as ht

MIXES = {
    33: (1 / 3, 1 / 3, 1 / 3),
    50: (0.5, 0.25, 0.25),
    60: (0.6, 0.2, 0.2),
    80: (0.8, 0.1, 0.1),
    90: (0.9, 0.05, 0.05),
}  # fmt: skip  (search %: search, insert, delete)
BUCKETS = 1024  # m (§4.6.1)
PRELOAD = 262_144  # keys preloaded before every batch (§4.6.1)


def draw_keys(n: int, rng, distribution: str = "normal", variance: float = 0.05) -> np.ndarray:
    """n float32 keys in (0, 1), distinct."""
    if distribution not in ("normal", "uniform"):
        raise ValueError(f"distribution must be 'normal' or 'uniform', got {distribution!r}")
    out = np.empty(0, dtype=np.float32)
    while out.size < n:
        if distribution == "uniform":
            x = rng.random(2 * n)
        else:
            x = rng.normal(0.5, np.sqrt(variance), 2 * n)
        x = x.astype(np.float32)
        out = np.unique(np.concatenate([out, x[(x > 0) & (x < 1)]]))
    return out[rng.permutation(out.size)[:n]]


def mix_batch(preload: np.ndarray, size: int, search_pct: int, rng, distribution="normal",
              variance=0.05) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(ops, keys) of a schedule-free batch of ``size`` operations in the
    proportions of MIXES[search_pct]; every operation of it succeeds."""
    searches, inserts, _ = MIXES[search_pct]
    n_search, n_insert = int(round(size * searches)), int(round(size * inserts))
    n_delete = size - n_search - n_insert
    if n_search + n_delete > preload.size:
        raise ValueError(f"a batch of {size} needs {n_search + n_delete} preloaded keys")
    fresh = np.setdiff1d(draw_keys(2 * n_insert + 16, rng, distribution, variance), preload)
    fresh = fresh[rng.permutation(fresh.size)[:n_insert]]
    if fresh.size < n_insert:
        raise ValueError("could not draw enough fresh keys; widen the distribution")
    chosen = preload[rng.permutation(preload.size)[: n_search + n_delete]]
    ops = np.concatenate([np.full(n_search, ht.SEARCH), np.full(n_insert, ht.INSERT),
                          np.full(n_delete, ht.DELETE)]).astype(np.uint8)  # fmt: skip
    keys = np.concatenate([chosen[:n_search], fresh, chosen[n_search:]])
    order = rng.permutation(size)
    return ops[order], keys[order]


def run_cpu(tables: int, buckets: int, preload: np.ndarray, ops, keys, threads: int,
            hash: str = "dek") -> dict:  # fmt: skip
    """One CPU batch on a freshly preloaded table: its seconds, counters and
    the checker's verdict (every operation true, the key set as it must be)."""
    table = ht.HashTable(tables, buckets, preload.size + ops.size, hash)
    table.batch(np.full(preload.size, ht.INSERT), preload, threads)
    start = time.perf_counter()
    res = table.batch(ops, keys, threads)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, **res.stats, "ok": _verdict(table, preload, ops, keys, res)}


def run_gpu(tables: int, buckets: int, preload: np.ndarray, ops, keys, hash: str = "dek") -> dict:
    from .hashtable_gpu import GpuHashTable

    table = GpuHashTable(tables, buckets, preload.size + ops.size, hash)
    table.batch(np.full(preload.size, ht.INSERT), preload)
    res, seconds = table.batch(ops, keys)
    return {"seconds": seconds, **res.stats, "ok": _verdict(table, preload, ops, keys, res)}


def _verdict(table, preload, ops, keys, res) -> bool:
    if not (res.results == ht.TRUE).all():
        return False
    expected = np.union1d(np.setdiff1d(preload, keys[ops == ht.DELETE]), keys[ops == ht.INSERT])
    return bool(np.array_equal(table.check(), expected))
