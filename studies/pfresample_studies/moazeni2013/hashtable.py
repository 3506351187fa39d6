"""Moazeni (2013), chapter 4: the lock-free chained hash table and the parallel
hash table PH[n] on CPU threads (``native/hashtable.cpp``), and the checker that
replaces bit parity where concurrent outcomes depend on scheduling.

* **Structure** (§4.3-4.5): n tables of m buckets, each bucket a sorted lock-free
  list (Michael's Find/Insert/Delete, Figs 21-22), nodes from a preallocated pool
  linked by index with the mark in the index word's left-most bit (Fig 23). A key
  goes to table TA(k) = floor(k 10^6) mod n (§4.6.1) and bucket h(k) mod m. CPU_BASIC
  is n = 1; CPU_PH n > 1; "BIG" is n = 1 with n m buckets (the same memory as PH[n]).
* **Hashes**: the thesis names DEK, SDBM and PJW (string hashes) but not how a float
  key in (0, 1) is hashed: we hash the 4 bytes of its float32 bit pattern, in the
  order ``byte_order`` names (BYTE_ORDERS: ``lsb``, least significant first, the
  default; ``msb``, most significant first); ``mix`` (murmur3's finaliser of the whole
  word, no bytes, so no order) is a well-mixing control. The order matters: keys of
  one distribution share their high bytes (sign, exponent, leading mantissa bits), and
  a string hash's last bytes move its low bits most, so fed LSB first DEK's bucket
  (its low bits) depends on little but those shared bytes (``bucket_stats``).
  ``hash_keys`` is the NumPy reference of all four, which the C++ and CUDA codes must
  equal bit for bit.
* **Bulk execution** (§4.4.2): a batch of operations, each thread a contiguous share.
  A batch whose inserts outnumber the pool's free nodes is refused before it runs
  (``reserve``: every insert takes a node, so the count is exact).
* **The checker** (``check``): walks every list once no thread runs: no node reached
  twice (no cycle, no node in two lists), every index below the pool's counter (the
  pool hands out each node once: a fetch-and-add, never a reuse), unmarked keys
  strictly increasing in each list, every node in the list its key hashes to; and
  returns the set of keys present, which the tests compare with the set the batch
  must leave (key-disjoint operation types make it schedule-independent), or, for
  a batch whose outcome the schedule decides, ``check_outcomes`` checks key by key
  that some order of its operations explains the results and the set left.
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
BYTE_WISE = ("dek", "sdbm", "pjw")  # the hashes that read the key a byte at a time
BYTE_ORDERS = {"lsb": 0, "msb": 1}  # the key's bytes least or most significant first
DEFAULT_BYTE_ORDER = "lsb"
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
    lib.ht_batch.argtypes = (_P, _P, _P, _P, ctypes.c_uint32, integer, integer, integer, integer,
                             _P, _P, ctypes.c_int64, _P, integer, _P)  # fmt: skip
    lib.ht_collect.restype = ctypes.c_int64
    lib.ht_collect.argtypes = (_P, _P, _P, ctypes.c_uint32, ctypes.c_int, ctypes.c_int,
                               ctypes.c_int, ctypes.c_int, _P, ctypes.c_int64, _P)  # fmt: skip
    lib.ht_hash_keys.restype = None
    lib.ht_hash_keys.argtypes = (_P, ctypes.c_int64, integer, integer, _P)
    return lib


def check_hash(hash: str, byte_order: str) -> None:
    """A ValueError naming a hash or byte order that is not one of ours."""
    if hash not in HASHES:
        raise ValueError(f"hash must be one of {tuple(HASHES)}, got {hash!r}")
    if byte_order not in BYTE_ORDERS:
        raise ValueError(f"byte_order must be one of {tuple(BYTE_ORDERS)}, got {byte_order!r}")


def hash_keys(keys, hash: str = "dek", byte_order: str = DEFAULT_BYTE_ORDER) -> np.ndarray:
    """The NumPy reference of the table's hashes: each float32 key's 32-bit hash, its 4
    bytes fed in ``byte_order`` (``mix`` reads the word whole and ignores the order).
    native/hashtable.cpp (``native_hash_keys``) and kernels/hashtable.cu must equal it."""
    check_hash(hash, byte_order)
    bits = np.ascontiguousarray(keys, dtype=np.float32).view(np.uint32).astype(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    if hash == "mix":
        h = bits.copy()
        h ^= h >> np.uint64(16)
        h = (h * np.uint64(0x85EBCA6B)) & m32
        h ^= h >> np.uint64(13)
        h = (h * np.uint64(0xC2B2AE35)) & m32
        h ^= h >> np.uint64(16)
        return h.astype(np.uint32)
    shifts = (0, 8, 16, 24) if byte_order == "lsb" else (24, 16, 8, 0)
    h = np.full(bits.shape, 4 if hash == "dek" else 0, dtype=np.uint64)
    for shift in shifts:
        byte = (bits >> np.uint64(shift)) & np.uint64(0xFF)
        if hash == "dek":
            h = (((h << np.uint64(5)) & m32) ^ (h >> np.uint64(27))) ^ byte
        elif hash == "sdbm":
            h = (byte + (h << np.uint64(6)) + (h << np.uint64(16)) - h) & m32
        else:  # pjw
            h = ((h << np.uint64(4)) & m32) + byte
            g = h & np.uint64(0xF0000000)
            h = np.where(g != 0, (h ^ (g >> np.uint64(24))) & ~g & m32, h)
    return h.astype(np.uint32)


def native_hash_keys(keys, hash: str = "dek", byte_order: str = DEFAULT_BYTE_ORDER) -> np.ndarray:
    """The hashes as native/hashtable.cpp computes them (``hash_keys``'s twin)."""
    check_hash(hash, byte_order)
    keys = np.ascontiguousarray(keys, dtype=np.float32)
    out = np.empty(keys.size, dtype=np.uint32)
    library().ht_hash_keys(keys.ctypes.data, keys.size, HASHES[hash], BYTE_ORDERS[byte_order],
                           out.ctypes.data)  # fmt: skip
    return out


def bucket_stats(keys, buckets: int, hash: str = "dek",
                 byte_order: str = DEFAULT_BYTE_ORDER) -> dict:  # fmt: skip
    """How ``keys`` fill one table of ``buckets`` buckets (NumPy, ``hash_keys``): the
    buckets holding a key, the largest chain, and the mean walk of a search for a
    present key, the nodes it visits in its sorted chain ((c + 1) / 2 averaged over
    the c keys of a chain, weighted by keys: sum c (c + 1) / 2 / keys)."""
    if buckets < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets}")
    keys = np.ascontiguousarray(keys, dtype=np.float32)
    counts = np.bincount(hash_keys(keys, hash, byte_order) % np.uint32(buckets),
                         minlength=buckets).astype(np.float64)  # fmt: skip
    return {"occupied": int(np.count_nonzero(counts)), "largest": int(counts.max()),
            "mean_walk": float((counts * (counts + 1) / 2).sum() / max(keys.size, 1))}  # fmt: skip


class PoolFull(RuntimeError):
    """A batch has more inserts than the pool has free nodes: refused before any
    of its operations runs (``reserve``), the table as it was."""


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


def reserve(ops: np.ndarray, used: int, capacity: int) -> None:
    """Refuse, before it runs, a batch that could exhaust the pool: PoolFull where
    its inserts outnumber the free nodes. Every insert takes one node from the pool
    (a fetch-and-add) before it searches, whether it links it, finds its key
    present or loses a race for it (Fig 20's HashInsert), and no node is reused; so
    a batch takes exactly as many nodes as it has inserts, and one that fits never
    finds the pool empty. The choice against running the batch and reporting the
    inserts that found no node: a batch that ran out had its other operations
    applied, the failed inserts' nodes used up and its results dropped with the
    error; refused whole, it leaves the table as it was, for the caller to run with
    a larger pool."""
    inserts = int(np.count_nonzero(ops == INSERT))
    free = capacity - used
    if inserts > free:
        raise PoolFull(
            f"the batch's {inserts} insert(s) need a node each and the pool of {capacity} "
            f"has {free} free: refused before it ran, the table unchanged (make the pool "
            "at least the preloaded keys plus every insert)"
        )


def raise_if_full(results: np.ndarray, capacity: int) -> None:
    """After a batch: an insert that found no node (never, once ``reserve`` passed)."""
    full = int((np.asarray(results) == POOL_FULL).sum())
    if full:
        raise PoolFull(f"the node pool of {capacity} is full: {full} insert(s) found no node")


class HashTable:
    """n tables x m buckets with a pool of ``capacity`` nodes, on CPU threads."""

    def __init__(self, tables: int, buckets: int, capacity: int, hash: str = "dek",
                 byte_order: str = DEFAULT_BYTE_ORDER):  # fmt: skip
        if tables < 1 or buckets < 1:
            raise ValueError(f"tables and buckets must be >= 1, got {tables}, {buckets}")
        if not 1 <= capacity < NIL:
            raise ValueError(f"capacity must be in 1 ... {NIL - 1}, got {capacity}")
        check_hash(hash, byte_order)
        self.tables, self.buckets, self.capacity, self.hash = tables, buckets, capacity, hash
        self.byte_order = byte_order
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
        in (0, 1), shared among ``threads`` threads. A batch with more inserts than
        the pool has free nodes is refused before it runs (PoolFull, ``reserve``)."""
        ops, keys = check_batch(ops, keys)
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        reserve(ops, self.used, self.capacity)
        results = np.zeros(ops.size, dtype=np.uint8)
        stats = np.zeros((threads, len(STATS)), dtype=np.uint64)
        library().ht_batch(
            self.heads.ctypes.data, self.keys.ctypes.data, self.next.ctypes.data,
            self.pool.ctypes.data, self.capacity, self.tables, self.buckets, HASHES[self.hash],
            BYTE_ORDERS[self.byte_order], ops.ctypes.data, keys.ctypes.data, ops.size,
            results.ctypes.data, threads, stats.ctypes.data,
        )  # fmt: skip
        raise_if_full(results, self.capacity)
        return BatchResult(results, dict(zip(STATS, stats.sum(axis=0).tolist(), strict=True)))

    def check(self) -> np.ndarray:
        """The checker (module docstring): the sorted keys present, or an
        AssertionError naming the broken invariant."""
        return check_arrays(self.heads, self.keys, self.next, self.used, self.tables,
                            self.buckets, self.hash, self.byte_order)  # fmt: skip


def check_outcomes(before, ops, keys, results, after) -> None:
    """The checker of a batch whose outcome depends on the schedule (inserts and
    deletes of one key racing, searches of keys being changed): an AssertionError
    naming the first key for which no order of the batch's operations on it, run
    one at a time from the key set ``before``, gives ``results`` and leaves the key
    set ``after`` (``check``'s). Keys are independent in a set, so the check is per
    key, and with no order among a batch's operations any order may be taken: the
    key's successful inserts and deletes must alternate from its state before (so
    their counts differ by at most one, and the last one says whether it stays),
    each failed insert and successful search needs a moment the key is present,
    each failed delete and failed search one where it is absent (the key is both
    at some moment once an insert or delete of it succeeded, else always as it
    was); keys the batch does not touch stay as they were."""
    ops, keys = check_batch(ops, keys)
    results = np.asarray(results)
    if results.shape != ops.shape or not np.isin(results, (FALSE, TRUE)).all():
        raise AssertionError("results must be one 0 or 1 an operation")
    before = np.unique(np.asarray(before, dtype=np.float32))
    after = np.unique(np.asarray(after, dtype=np.float32))
    if not np.array_equal(np.setdiff1d(before, keys), np.setdiff1d(after, keys)):
        raise AssertionError("a key no operation of the batch names was added or removed")
    u, inv = np.unique(keys, return_inverse=True)

    def count(op, result):
        return np.bincount(inv[(ops == op) & (results == result)], minlength=u.size)

    ins, dels = count(INSERT, TRUE), count(DELETE, TRUE)
    was, stays = np.isin(u, before), np.isin(u, after)
    alternate = np.where(was, (dels >= ins) & (dels <= ins + 1), (ins >= dels) & (ins <= dels + 1))
    present_at_end = np.where(was, dels == ins, ins == dels + 1)
    changed = ins + dels > 0
    needs_present = count(INSERT, FALSE) + count(SEARCH, TRUE) > 0
    needs_absent = count(DELETE, FALSE) + count(SEARCH, FALSE) > 0
    bad = (~alternate | (present_at_end != stays) | (needs_present & ~(was | changed))
           | (needs_absent & ~(~was | changed)))  # fmt: skip
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise AssertionError(
            f"key {u[k]!r}: {'present' if was[k] else 'absent'} before, "
            f"{'present' if stays[k] else 'absent'} after, {ins[k]} insert(s) and {dels[k]} "
            f"delete(s) succeeded, {count(INSERT, FALSE)[k]} insert(s) and "
            f"{count(DELETE, FALSE)[k]} delete(s) failed, searches {count(SEARCH, TRUE)[k]} "
            f"found and {count(SEARCH, FALSE)[k]} not: no order of them gives that"
        )


def check_arrays(heads, keys, next_, used: int, tables: int, buckets: int, hash: str,
                 byte_order: str = DEFAULT_BYTE_ORDER):  # fmt: skip
    """The checker on a table's host arrays (the GPU table's, copied back, too)."""
    check_hash(hash, byte_order)
    heads, keys, next_ = (np.ascontiguousarray(a) for a in (heads, keys, next_))
    out = np.empty(used, dtype=np.float32)
    seen = np.empty(max(used, 1), dtype=np.uint8)
    n = library().ht_collect(heads.ctypes.data, keys.ctypes.data, next_.ctypes.data, used,
                             tables, buckets, HASHES[hash], BYTE_ORDERS[byte_order],
                             out.ctypes.data, out.size, seen.ctypes.data)  # fmt: skip
    if n < 0:
        raise AssertionError(f"hash table broken: {CHECK_ERRORS[int(n)]}")
    return np.sort(out[:n])
