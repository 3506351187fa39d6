"""Moazeni (2013), chapter 4: the best CPU code we can write for the chapter's concurrent
set (``native/hashset_best.c``), on every core, with the bounds it is held to, and a
checker of its own.

* **Structure**: open addressing with linear probing over 2^b 32-bit slots, a key's home
  murmur3's finaliser (fmix32) of its float32 bits mod 2^b; a slot is empty (0), a key's
  bits, or the key's bits with the sign bit set (deleted: the slot still names the key,
  and an insert of that key takes it back). Lock-free by one CAS a change; a key owns at
  most one slot for the table's life and slots are never freed (as the thesis's node pool
  frees none), so a table is sized for its preload plus every insert (``sized``: load
  1/2 by default) and a batch that could fill it is refused before it runs (PoolFull).
* **Threads**: OpenMP; the warm-up run and every timed run of a batch in one parallel
  region, each run after a barrier (no thread created inside the clock), timed in C
  from the first thread's start to the barrier after the last one's end; the table is
  restored from a snapshot before each run (outside the clock). Each thread prefetches
  the home line of the operation 16 places ahead.
* **The bounds** (``bound``): one 4-byte read at every key's home slot (GATHER, what a
  search needs at least) and a read plus a CAS there (CAS, what an insert or a delete
  needs at least), on an array of the table's size, with the same keys, threads, shares,
  prefetching and timing: a mix's bound is its searches at GATHER's rate and its inserts
  and deletes at CAS's (``mix_bound_seconds``).
* **The checker** (``check``, NumPy, independent of the C code): no key in two slots,
  every slot a key in (0, 1) or empty, no empty slot between a key's home (NumPy's
  fmix32) and its slot (else a search cannot reach it), the slots in use as counted;
  returns the keys present.
"""

from __future__ import annotations

import ctypes
import math
import os
from functools import cache

import numpy as np

from . import hashtable as ht
from . import native

MARK = np.uint32(0x80000000)
STATS = ("lines", "cas_failures", "claimed", "full")
LINE = 16  # slots a 64-byte cache line: a key's walk starts at its home line's first slot
# the deliberate flaws of hashset_best.c, the tests' negative controls (0: none)
FLAWS = {"none": 0, "search_stops_at_tombstone": 1, "delete_empties_slot": 2}
BOUNDS = {"gather": 0, "cas": 1}
MIN_LOG2, MAX_LOG2 = 4, 31

_P = ctypes.c_void_p


@cache
def library() -> ctypes.CDLL:
    """native/hashset_best.c built with BEST_FLAGS, loaded once a process."""
    lib = ctypes.CDLL(str(native.build(native.NATIVE / "hashset_best.c", flags=native.BEST_FLAGS)))
    i32, i64 = ctypes.c_int, ctypes.c_int64
    lib.hb_batch.restype = i32
    lib.hb_batch.argtypes = (_P, i32, _P, _P, _P, i64, _P, i32, i32, _P, _P, i32)
    lib.hb_bound.restype = i32
    lib.hb_bound.argtypes = (_P, i32, _P, i64, i32, i32, i32, _P, _P)
    lib.hb_homes.restype = None
    lib.hb_homes.argtypes = (_P, i64, i32, _P)
    return lib


def fmix32(x: np.ndarray) -> np.ndarray:
    """murmur3's 32-bit finaliser on uint32 words (NumPy: the checker's own hash)."""
    x = np.asarray(x, dtype=np.uint32).copy()
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x85EBCA6B)
    x ^= x >> np.uint32(13)
    x *= np.uint32(0xC2B2AE35)
    x ^= x >> np.uint32(16)
    return x


def homes(keys, log2: int) -> np.ndarray:
    """Each float32 key's home slot in a table of 2^log2 slots (NumPy): fmix32 of its
    bits mod 2^log2 (the bounds read it); its walk starts at that slot's line's first
    slot (``homes(...) & -LINE``)."""
    bits = np.ascontiguousarray(keys, dtype=np.float32).view(np.uint32)
    return fmix32(bits) & np.uint32((1 << log2) - 1)


def aligned_zeros(n: int) -> np.ndarray:
    """n zero uint32 words starting on a 64-byte boundary (a line of 16 slots is one
    cache line, read by one aligned vector load)."""
    buf = np.zeros(n + LINE, dtype=np.uint32)
    skip = (-buf.ctypes.data % 64) // 4
    return buf[skip : skip + n]


def _threads(threads: int | None) -> int:
    threads = (os.cpu_count() or 1) if threads is None else int(threads)
    if not 1 <= threads <= 1024:
        raise ValueError(f"threads must be in 1 ... 1024, got {threads}")
    return threads


def _runs(runs: int) -> int:
    if int(runs) < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    return int(runs)


def _status(status: int, threads: int) -> None:
    if status == -1:
        raise RuntimeError(f"OpenMP gave fewer than the {threads} threads asked for")
    if status < 0:
        raise ValueError("hashset_best.c refused its arguments")


class BestHashSet:
    """A set of float32 keys in (0, 1) in 2^``log2`` slots (module docstring)."""

    def __init__(self, log2: int):
        if not MIN_LOG2 <= int(log2) <= MAX_LOG2:
            raise ValueError(f"log2 must be in {MIN_LOG2} ... {MAX_LOG2}, got {log2}")
        self.log2 = int(log2)
        self.slots = aligned_zeros(1 << self.log2)
        self.used = 0  # slots that hold a key or a deleted key's mark (claimed, never freed)

    @classmethod
    def sized(cls, keys: int, load: float = 0.5) -> BestHashSet:
        """The smallest table that holds ``keys`` keys at load factor <= ``load``."""
        if not 0 < load < 1:
            raise ValueError(f"load must lie in (0, 1), got {load}")
        if keys < 0:
            raise ValueError(f"keys must be >= 0, got {keys}")
        return cls(max(MIN_LOG2, math.ceil(math.log2(max(keys, 1) / load))))

    @property
    def capacity(self) -> int:
        return self.slots.size

    def reserve(self, ops: np.ndarray, keys: np.ndarray) -> None:
        """Refuse, before it runs, a batch that could fill the table: PoolFull where the
        keys it inserts that own no slot yet (each may claim one; a key owns at most one
        for good) outnumber the free slots less one (one empty slot ends every walk)."""
        inserted = np.unique(keys[ops == ht.INSERT].view(np.uint32))
        owners = self.slots[self.slots != 0] & ~MARK
        claims = int(inserted.size - np.isin(inserted, owners).sum())
        free = self.capacity - 1 - self.used
        if claims > free:
            raise ht.PoolFull(
                f"the batch inserts {claims} key(s) that hold no slot and the table of "
                f"{self.capacity} slots has {free} free (one kept empty): refused before it "
                "ran, the table unchanged (size it with BestHashSet.sized for the preload "
                "plus every insert)"
            )

    def batch(self, ops, keys, threads: int | None = None, *, flaw: str = "none"
              ) -> ht.BatchResult:  # fmt: skip
        """One batch (0 search, 1 insert, 2 delete on float32 keys in (0, 1)) on
        ``threads`` threads (default: every CPU), untimed; ``flaw`` (tests only) runs a
        deliberately wrong variant (FLAWS)."""
        result, _ = self.timed_batch(ops, keys, threads, runs=1, restore=False, flaw=flaw)
        return result

    def timed_batch(self, ops, keys, threads: int | None = None, *, runs: int = 1,
                    restore: bool = True, flaw: str = "none"
                    ) -> tuple[ht.BatchResult, np.ndarray]:  # fmt: skip
        """Run a batch ``runs`` times in one parallel region, each run from the table as
        it was before the batch (``restore``; the copy is outside the clock): (the last
        run's results and counters, every run's seconds). The table is left as the last
        run left it."""
        ops, keys = ht.check_batch(ops, keys)
        if ops.size >= 2**31:
            raise ValueError(f"a batch holds fewer than 2^31 operations, got {ops.size}")
        threads, runs = _threads(threads), _runs(runs)
        if flaw not in FLAWS:
            raise ValueError(f"flaw must be one of {tuple(FLAWS)}, got {flaw!r}")
        if runs > 1 and not restore:
            raise ValueError("more than one run needs restore=True (each from the same table)")
        self.reserve(ops, keys)
        bits = keys.view(np.uint32)
        results = np.zeros(ops.size, dtype=np.uint8)
        seconds = np.zeros(runs)
        stats = np.zeros((threads, len(STATS)), dtype=np.uint64)
        snapshot = self.slots.copy() if restore else None
        status = library().hb_batch(
            self.slots.ctypes.data, self.log2,
            None if snapshot is None else snapshot.ctypes.data, ops.ctypes.data,
            bits.ctypes.data, ops.size, results.ctypes.data, threads, runs,
            seconds.ctypes.data, stats.ctypes.data, FLAWS[flaw],
        )  # fmt: skip
        _status(status, threads)
        totals = dict(zip(STATS, stats.sum(axis=0).tolist(), strict=True))
        self.used += totals["claimed"]
        ht.raise_if_full(results, self.capacity)
        return ht.BatchResult(results, totals), seconds

    def present(self) -> np.ndarray:
        """The keys present, sorted (float32)."""
        s = self.slots
        return np.sort(s[(s != 0) & (s < MARK)].view(np.float32))

    def check(self) -> np.ndarray:
        """The checker (module docstring): the sorted keys present, or an
        AssertionError naming the broken invariant."""
        return check_slots(self.slots, self.used)


def check_slots(slots: np.ndarray, used: int) -> np.ndarray:
    """The checker on a table's slots (NumPy alone)."""
    slots = np.asarray(slots, dtype=np.uint32)
    size = slots.size
    if size & (size - 1) or size < LINE:
        raise AssertionError(f"the table's size {size} is not a power of two")
    occupied = slots != 0
    if int(occupied.sum()) != used:
        raise AssertionError(f"{int(occupied.sum())} slots in use where {used} were claimed "
                             "(a slot was emptied, or claimed twice)")  # fmt: skip
    position = np.flatnonzero(occupied)
    bits = slots[position] & ~MARK
    key = bits.view(np.float32)
    if not ((key > 0) & (key < 1)).all():
        raise AssertionError("a slot holds no key in (0, 1)")
    if np.unique(bits).size != bits.size:
        raise AssertionError("a key sits in two slots")
    home = (fmix32(bits) & np.uint32((size - 1) & -LINE)).astype(np.int64)
    # empties before index x: a key at p with home h needs none in [h, p) (cyclic)
    empties = np.concatenate([[0], np.cumsum(~occupied)])
    between = np.where(home <= position, empties[position] - empties[home],
                       empties[size] - empties[home] + empties[position])  # fmt: skip
    if (between > 0).any():
        k = int(np.flatnonzero(between > 0)[0])
        raise AssertionError(
            f"key {key[k]!r} sits at slot {position[k]} past an empty slot on its probe "
            f"path from {home[k]}: no search reaches it"
        )
    return np.sort(key[slots[position] < MARK])


def bound(kind: str, keys, log2: int, threads: int | None = None, runs: int = 1,
          table: np.ndarray | None = None) -> tuple[np.ndarray, int]:  # fmt: skip
    """A bound (BOUNDS: ``gather``, one read at each key's home slot; ``cas``, a read and
    a CAS there) timed as ``timed_batch``, ``runs`` times: (every run's seconds, the
    last run's sum of the words read). ``table`` (2^log2 words, copied: CAS changes
    it) is the array read, else zeros."""
    if kind not in BOUNDS:
        raise ValueError(f"kind must be one of {tuple(BOUNDS)}, got {kind!r}")
    threads, runs = _threads(threads), _runs(runs)
    bits = np.ascontiguousarray(keys, dtype=np.float32).view(np.uint32)
    if not MIN_LOG2 <= log2 <= MAX_LOG2:
        raise ValueError(f"log2 must be in {MIN_LOG2} ... {MAX_LOG2}, got {log2}")
    arr = aligned_zeros(1 << log2)
    if table is not None:
        if np.size(table) != arr.size:
            raise ValueError(f"table must have 2^{log2} words, got {np.size(table)}")
        arr[:] = table
    seconds, sums = np.zeros(runs), np.zeros(threads, np.uint64)
    status = library().hb_bound(arr.ctypes.data, log2, bits.ctypes.data, bits.size,
                                BOUNDS[kind], threads, runs, seconds.ctypes.data,
                                sums.ctypes.data)  # fmt: skip
    _status(status, threads)
    return seconds, int(sums.sum())


def mix_bound_seconds(ops, gather_s: float, cas_s: float) -> float:
    """A batch's bound: its searches at GATHER's time an operation, its inserts and
    deletes at CAS's (both measured on the whole batch's keys)."""
    ops = np.asarray(ops)
    share = np.count_nonzero(ops == ht.SEARCH) / max(ops.size, 1)
    return share * gather_s + (1 - share) * cas_s
