"""Moazeni (2013) chapter 4: the best CPU code (native/hashset_best.c through
hashtable_best) against references. On one thread a batch runs in index order, so a
Python set run in that order gives every result and the key set exactly; on several
threads a schedule-free batch (hashtable_workloads.mix_batch) must succeed everywhere and
leave the expected set, and a racing batch must be explained by some order
(hashtable.check_outcomes). The NumPy checker (no empty slot on a key's probe path, no
key twice) reads every table. Negative controls: two deliberate flaws of the C code and
a corrupted table, each caught."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import hashtable as ht
from pfresample_studies.moazeni2013 import hashtable_best as hb
from pfresample_studies.moazeni2013 import hashtable_workloads as w

SEED = 2013


pytestmark = pytest.mark.usefixtures("native_build")


def reference(present: set, ops, keys) -> list[int]:
    """The batch run one operation at a time in index order on ``present`` (changed)."""
    out = []
    for op, k in zip(ops.tolist(), keys.tolist(), strict=True):
        if op == ht.SEARCH:
            out.append(int(k in present))
        elif op == ht.INSERT:
            out.append(int(k not in present))
            present.add(k)
        else:
            out.append(int(k in present))
            present.discard(k)
    return out


def racing_batch(pool, size, rng):
    """Random kinds on keys drawn with repeats from ``pool``: the same key inserted,
    deleted and searched many times in one batch."""
    ops = rng.integers(0, 3, size).astype(np.uint8)
    return ops, pool[rng.integers(0, pool.size, size)]


def test_hash_is_numpys_fmix32():
    keys = w.draw_keys(5000, np.random.default_rng(SEED), "uniform")
    out = np.empty(keys.size, np.uint32)
    hb.library().hb_homes(keys.view(np.uint32).ctypes.data, keys.size, 12, out.ctypes.data)
    assert np.array_equal(out, hb.homes(keys, 12))
    # fmix32(1) computed by hand: pins the constants
    assert int(hb.fmix32(np.array([1], np.uint32))[0]) == 0x514E28B7


@pytest.mark.parametrize("flaw", ["none", "search_stops_at_tombstone"])
def test_one_thread_equals_the_sequential_reference(flaw):
    """Batches of repeated keys (inserts of present keys, deletes of absent ones,
    re-inserts of deleted ones, searches past tombstones) on one thread: every result
    and the key set equal the reference's; the flaw must be caught."""
    rng = np.random.default_rng(SEED)
    pool = w.draw_keys(3000, rng, "normal")  # clustered keys: long runs of full lines
    table, present = hb.BestHashSet.sized(3000, load=0.6), set()
    mismatches = 0
    for _ in range(6):
        ops, keys = racing_batch(pool, 4000, rng)
        res = table.batch(ops, keys, threads=1, flaw=flaw).results
        mismatches += int((res != np.array(reference(present, ops, keys))).sum())
        if flaw == "none":
            assert np.array_equal(table.check(), np.sort(np.array(sorted(present), np.float32)))
    assert (mismatches == 0) == (flaw == "none"), mismatches


def test_delete_that_empties_its_slot_is_caught():
    rng = np.random.default_rng(SEED)
    pool = w.draw_keys(3000, rng, "normal")
    table = hb.BestHashSet.sized(3000, load=0.6)
    table.batch(np.full(pool.size, ht.INSERT), pool, threads=1)
    table.batch(np.full(500, ht.DELETE), pool[:500], threads=1, flaw="delete_empties_slot")
    with pytest.raises(AssertionError, match="slots in use"):
        table.check()
    table.used = int(np.count_nonzero(table.slots))  # past the count: the probe paths
    with pytest.raises(AssertionError, match="past an empty slot"):
        table.check()


@pytest.mark.parametrize("mix", [0, 33, 90, 100])
def test_schedule_free_batches_on_threads(mix):
    """The benchmark's batches (hashtable_workloads), on 3 threads (more than this
    machine's cores: they interleave), 3 runs from one snapshot: every operation true
    every run, the set as it must be."""
    run = w.Run("cpu", 0, "normal", 0.05, "dek", "ph", 320, 2**13, mix)
    pre, ops, keys = w.batch_keys(run, preload=2**14, seed=SEED)
    table = hb.BestHashSet.sized(pre.size + int((ops == ht.INSERT).sum()))
    assert (table.batch(np.full(pre.size, ht.INSERT), pre, threads=3).results == ht.TRUE).all()
    assert np.array_equal(table.check(), np.sort(pre))
    result, seconds = table.timed_batch(ops, keys, threads=3, runs=3)
    assert seconds.shape == (3,) and (seconds > 0).all()
    assert (result.results == ht.TRUE).all()
    expected = np.union1d(np.setdiff1d(pre, keys[ops == ht.DELETE]), keys[ops == ht.INSERT])
    assert np.array_equal(table.check(), expected)


def test_racing_batches_have_an_order():
    rng = np.random.default_rng(SEED + 1)
    pool = w.draw_keys(500, rng, "normal")
    table = hb.BestHashSet.sized(500, load=0.5)
    for _ in range(4):
        before = table.check()
        ops, keys = racing_batch(pool, 20000, rng)
        res = table.batch(ops, keys, threads=4).results
        ht.check_outcomes(before, ops, keys, res, table.check())


def test_checker_catches_a_key_in_two_slots():
    table = hb.BestHashSet(6)
    keys = np.array([0.25, 0.5], np.float32)
    table.batch(np.full(2, ht.INSERT), keys, threads=1)
    empty = int(np.flatnonzero(table.slots == 0)[0])
    table.slots[empty] = keys[:1].view(np.uint32)[0]
    table.used += 1
    with pytest.raises(AssertionError, match="two slots"):
        table.check()


def test_refusals():
    table = hb.BestHashSet(4)  # 16 slots: 15 may be claimed
    keys = np.linspace(0.01, 0.99, 16, dtype=np.float32)
    with pytest.raises(ht.PoolFull, match="refused before it ran"):
        table.batch(np.full(16, ht.INSERT), keys, threads=1)
    assert table.used == 0 and not table.slots.any()
    assert (table.batch(np.full(15, ht.INSERT), keys[:15], threads=1).results == ht.TRUE).all()
    with pytest.raises(ValueError, match="keys must lie in"):
        table.batch([ht.SEARCH], [1.0], threads=1)
    with pytest.raises(ValueError, match="ops must be"):
        table.batch([3], [0.5], threads=1)
    with pytest.raises(ValueError, match="threads"):
        table.batch([0], [0.5], threads=0)
    with pytest.raises(ValueError, match="restore"):
        table.timed_batch([0], [0.5], threads=1, runs=2, restore=False)
    with pytest.raises(ValueError, match="log2"):
        hb.BestHashSet(3)


@pytest.mark.parametrize("kind", ["gather", "cas"])
def test_bounds_read_every_home_slot(kind):
    """The bounds do their reads: GATHER's checksum is the sum of the words at the
    keys' home slots; CAS adds one to a slot each key (the table passed is copied)."""
    keys = w.draw_keys(4096, np.random.default_rng(SEED), "uniform")
    table = np.arange(1 << 12, dtype=np.uint32)
    seconds, total = hb.bound(kind, keys, 12, threads=2, runs=2, table=table)
    assert seconds.shape == (2,) and (seconds > 0).all()
    assert np.array_equal(table, np.arange(1 << 12, dtype=np.uint32))
    if kind == "gather":
        assert total == int(table[hb.homes(keys, 12)].astype(np.uint64).sum())
    assert hb.mix_bound_seconds(np.array([0, 1, 2, 0]), 1.0, 3.0) == pytest.approx(2.0)


def test_one_cache_serves_two_working_sets_of_one_distribution():
    """The peers bench draws the thesis's set and a larger one of the same distribution
    through one cache: each gets a preload of its own size (a cache keyed by the
    distribution alone handed the larger set the smaller's keys)."""
    cache: dict = {}
    small = w.Run("cpu", 0, "uniform", 0.05, "dek", "ph", 320, 2**10, 33)
    large = w.Run("cpu", 0, "uniform", 0.05, "dek", "ph", 320, 2**13, 33)
    pre_small, _, _ = w.batch_keys(small, preload=2**11, seed=SEED, cache=cache)
    pre_large, ops, _ = w.batch_keys(large, preload=2**14, seed=SEED, cache=cache)
    assert pre_small.size == 2**11 and pre_large.size == 2**14 and ops.size == 2**13
    again, _, _ = w.batch_keys(small, preload=2**11, seed=SEED, cache={})
    assert np.array_equal(pre_small, again)  # the draw is the cache's, not the order's
