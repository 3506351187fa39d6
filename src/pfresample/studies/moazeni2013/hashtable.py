"""Moazeni (2013), chapter 4: the lock-free chained hash table and the parallel
hash table PH[n] on CPU threads (``native/hashtable.cpp``), and the checker that
replaces bit parity where concurrent outcomes depend on scheduling.

* **Structure** (§4.3-4.5): n tables of m buckets, each bucket a sorted lock-free
  list (Michael's Find/Insert/Delete, Figs 21-22), nodes from a preallocated pool
  linked by index with the mark in the index word's left-most bit (Fig 23). A key
  goes to table TA(k) = floor(k 10^6) mod n (§4.6.1) and bucket h(k) mod m. CPU_BASIC
  is n = 1; CPU_PH n > 1; "BIG" is n = 1 with n m buckets (the same memory as PH[n]).
* **Hashes**: the thesis names DEK, SDBM and PJW (string hashes) but not how a float
  key in (0, 1) is hashed: we hash the 4 bytes of its float32 bit pattern, least
  significant first; ``mix`` (murmur3's finaliser) is a well-mixing control.
* **Bulk execution** (§4.4.2): a batch of operations, each thread a contiguous share.
* **The checker** (``check``): walks every list once no thread runs: no node reached
  twice (no cycle, no node in two lists), every index below the pool's counter (the
  pool hands out each node once: a fetch-and-add, never a reuse), unmarked keys
  strictly increasing in each list, every node in the list its key hashes to; and
  returns the set of keys present, which the tests compare with the set the batch
  must leave (key-disjoint operation types make it schedule-independent).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from . import native

SEARCH, INSERT, DELETE = 0, 1, 2
FALSE, TRUE, POOL_FULL = 0, 1, 2
HASHES = {"dek": 0, "sdbm": 1, "pjw": 2, "mix": 3}
STATS = ("restarts", "cas_failures", "steps", "wasted")
NIL = 0x7FFFFFFF
CHECK_ERRORS = {
    -1: "a node is reached twice (a cycle, or a node in two lists)",
    -2: "a list's unmarked keys are not strictly increasing",
    -3: "a node sits in a list its key does not hash to",
    -4: "a list holds an index past the pool's counter",
    -5: "more keys than the pool holds",
}

_P = ctypes.c_void_p


@cache
def library() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(native.build(native.NATIVE / "hashtable.cpp", cxx=True)))
    lib.ht_batch.restype = ctypes.c_int
    integer = ctypes.c_int
    lib.ht_batch.argtypes = (_P, _P, _P, _P, ctypes.c_uint32, integer, integer, integer, _P, _P,
                             ctypes.c_int64, _P, integer, _P)  # fmt: skip
    lib.ht_collect.restype = ctypes.c_int64
    lib.ht_collect.argtypes = (_P, _P, _P, ctypes.c_uint32, ctypes.c_int, ctypes.c_int,
                               ctypes.c_int, _P, ctypes.c_int64, _P)  # fmt: skip
    return lib


class PoolFull(RuntimeError):
    """An insert found the node pool exhausted: the table is left as it was
    before that insert (the node is not linked), and the batch says which."""


@dataclass
class BatchResult:
    results: np.ndarray  # uint8 per operation: 0 false, 1 true
    stats: dict = field(default_factory=dict)  # summed over threads


def check_batch(ops, keys) -> tuple[np.ndarray, np.ndarray]:
    """A batch's operations and keys as uint8 and float32 arrays, or a
    ValueError naming what is wrong."""
    ops = np.ascontiguousarray(ops, dtype=np.uint8)
    keys = np.ascontiguousarray(keys, dtype=np.float32)
    if ops.shape != keys.shape or ops.ndim != 1:
        raise ValueError(f"ops and keys must be 1-D of one length, got {ops.shape}, {keys.shape}")
    if ops.size and (ops.max() > DELETE):
        raise ValueError("ops must be 0 (search), 1 (insert) or 2 (delete)")
    if keys.size and not ((keys > 0) & (keys < 1)).all():
        raise ValueError("keys must lie in (0, 1)")
    return ops, keys


def raise_if_full(results: np.ndarray, capacity: int) -> None:
    full = int((np.asarray(results) == POOL_FULL).sum())
    if full:
        raise PoolFull(
            f"the node pool of {capacity} is full: {full} insert(s) found no node "
            "(make the pool larger: at least the preloaded keys plus every insert)"
        )


class HashTable:
    """n tables x m buckets with a pool of ``capacity`` nodes, on CPU threads."""

    def __init__(self, tables: int, buckets: int, capacity: int, hash: str = "dek"):
        if tables < 1 or buckets < 1:
            raise ValueError(f"tables and buckets must be >= 1, got {tables}, {buckets}")
        if not 1 <= capacity < NIL:
            raise ValueError(f"capacity must be in 1 ... {NIL - 1}, got {capacity}")
        if hash not in HASHES:
            raise ValueError(f"hash must be one of {tuple(HASHES)}, got {hash!r}")
        self.tables, self.buckets, self.capacity, self.hash = tables, buckets, capacity, hash
        self.heads = np.full(tables * buckets, NIL, dtype=np.uint32)
        self.keys = np.zeros(capacity, dtype=np.float32)
        self.next = np.full(capacity, NIL, dtype=np.uint32)
        self.pool = np.zeros(1, dtype=np.uint32)

    @property
    def used(self) -> int:
        """Nodes handed out by the pool (an insert takes one before it searches)."""
        return int(min(self.pool[0], self.capacity))

    def batch(self, ops, keys, threads: int = 1) -> BatchResult:
        """Run one batch: ``ops`` (0 search, 1 insert, 2 delete) on float32 keys
        in (0, 1), shared among ``threads`` threads. Raises PoolFull (naming how
        many inserts found no node) if the pool ran out."""
        ops = np.ascontiguousarray(ops, dtype=np.uint8)
        keys = np.ascontiguousarray(keys, dtype=np.float32)
        if ops.shape != keys.shape or ops.ndim != 1:
            raise ValueError(
                f"ops and keys must be 1-D of one length, got {ops.shape}, {keys.shape}"
            )
        if ops.size and (ops.max() > DELETE):
            raise ValueError("ops must be 0 (search), 1 (insert) or 2 (delete)")
        if keys.size and not ((keys > 0) & (keys < 1)).all():
            raise ValueError("keys must lie in (0, 1)")
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        results = np.zeros(ops.size, dtype=np.uint8)
        stats = np.zeros((threads, len(STATS)), dtype=np.uint64)
        library().ht_batch(
            self.heads.ctypes.data, self.keys.ctypes.data, self.next.ctypes.data,
            self.pool.ctypes.data, self.capacity, self.tables, self.buckets, HASHES[self.hash],
            ops.ctypes.data, keys.ctypes.data, ops.size, results.ctypes.data, threads,
            stats.ctypes.data,
        )  # fmt: skip
        raise_if_full(results, self.capacity)
        return BatchResult(results, dict(zip(STATS, stats.sum(axis=0).tolist(), strict=True)))

    def check(self) -> np.ndarray:
        """The checker (module docstring): the sorted keys present, or an
        AssertionError naming the broken invariant."""
        return check_arrays(self.heads, self.keys, self.next, self.used, self.tables,
                            self.buckets, self.hash)  # fmt: skip


def check_arrays(heads, keys, next_, used: int, tables: int, buckets: int, hash: str):
    """The checker on a table's host arrays (the GPU table's, copied back, too)."""
    heads, keys, next_ = (np.ascontiguousarray(a) for a in (heads, keys, next_))
    out = np.empty(used, dtype=np.float32)
    seen = np.empty(max(used, 1), dtype=np.uint8)
    n = library().ht_collect(heads.ctypes.data, keys.ctypes.data, next_.ctypes.data, used,
                             tables, buckets, HASHES[hash], out.ctypes.data, out.size,
                             seen.ctypes.data)  # fmt: skip
    if n < 0:
        raise AssertionError(f"hash table broken: {CHECK_ERRORS[int(n)]}")
    return np.sort(out[:n])
