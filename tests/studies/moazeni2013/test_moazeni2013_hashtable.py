"""Moazeni (2013) chapter 4 on CPU threads: the lock-free (parallel) hash table and its
checker (pfresample_studies.moazeni2013.hashtable). Concurrent outcomes depend on the
schedule, so there is no bit parity: each batch is built so that its result does not
(key-disjoint operation types: inserts of new keys, deletes of preloaded keys, searches of
keys no operation of the batch touches), and the checker verifies the structure and the
set of keys after it. Each configuration runs on 4 threads (more than this machine's
cores, so that threads interleave) several times; the checker's negative controls
corrupt a table and must be caught."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import hashtable as ht

SEED = 2013
THREADS = 4
CONFIGS = [(1, 64, "dek"), (16, 64, "dek"), (1, 1024, "dek"), (16, 64, "sdbm"),
           (16, 64, "pjw"), (16, 64, "mix")]  # fmt: skip


@pytest.fixture(autouse=True)
def _native_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("PFRESAMPLE_NATIVE_CACHE", str(tmp_path_factory.getbasetemp() / "native"))
    try:
        ht.native.compiler(cxx=True)
    except RuntimeError:
        pytest.skip("no C++ compiler on this host")


def _keys(n, rng, normal=False):
    """n distinct float32 keys in (0, 1): uniform, or normal(0.5, 0.05**0.5) clipped."""
    out = set()
    while len(out) < n:
        x = rng.normal(0.5, 0.05**0.5, n) if normal else rng.random(n)
        x = x.astype(np.float32)
        out.update(x[(x > 0) & (x < 1)].tolist())
    return np.array(sorted(out)[:n], dtype=np.float32)[rng.permutation(n)]


def _preloaded(config, rng, n=4000, capacity=40000, normal=True):
    tables, buckets, hash_ = config
    table = ht.HashTable(tables, buckets, capacity, hash_)
    keys = _keys(n, rng, normal)
    assert (table.batch(np.full(n, ht.INSERT), keys, THREADS).results == ht.TRUE).all()
    return table, keys


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("normal", [False, True])
def test_an_insert_only_batch_leaves_exactly_its_keys(config, normal):
    rng = np.random.default_rng([SEED, *config[:2], normal])
    for _ in range(3):
        table, keys = _preloaded(config, rng, normal=normal)
        assert np.array_equal(table.check(), np.sort(keys))


@pytest.mark.parametrize("config", CONFIGS[:2])
def test_one_insert_of_each_key_wins(config):
    """Every key inserted 8 times by different operations: exactly one succeeds."""
    rng = np.random.default_rng(SEED)
    keys = _keys(500, rng)
    batch = np.tile(keys, 8)[rng.permutation(8 * 500)]
    table = ht.HashTable(*config[:2], 8 * 500, config[2])
    res = table.batch(np.full(batch.size, ht.INSERT), batch, THREADS)
    wins = {k: 0 for k in keys.tolist()}
    for key, r in zip(batch.tolist(), res.results.tolist(), strict=True):
        wins[key] += r
    assert set(wins.values()) == {1}
    assert np.array_equal(table.check(), np.sort(keys))
    assert res.stats["wasted"] == 7 * 500  # each losing insert took a node first (Fig 20)


@pytest.mark.parametrize("config", CONFIGS)
def test_a_mixed_batch_gives_the_schedule_free_answer(config):
    rng = np.random.default_rng([SEED, *config[:2]])
    for _ in range(3):
        table, preload = _preloaded(config, rng)
        fresh = np.setdiff1d(_keys(3000, rng, normal=True), preload)[:2000]
        deleted, kept = preload[:1500], preload[1500:]
        absent = np.setdiff1d(_keys(1000, rng), np.concatenate([preload, fresh]))[:500]
        ops = np.concatenate(
            [
                np.full(fresh.size, ht.INSERT),
                np.full(deleted.size, ht.DELETE),
                np.full(kept.size, ht.SEARCH),
                np.full(absent.size, ht.SEARCH),
            ]
        )
        keys = np.concatenate([fresh, deleted, kept, absent])
        want = np.concatenate(
            [np.ones(fresh.size + deleted.size + kept.size), np.zeros(absent.size)]
        )
        order = rng.permutation(ops.size)
        res = table.batch(ops[order], keys[order], THREADS)
        assert np.array_equal(res.results, want[order].astype(np.uint8))
        assert np.array_equal(table.check(), np.sort(np.concatenate([kept, fresh])))
        # deleting again finds nothing; searching the deleted keys finds nothing
        again = table.batch(np.full(deleted.size, ht.DELETE), deleted, THREADS)
        assert (again.results == ht.FALSE).all()


def _overflow_batch(rng, free_after):
    """A table of 1,000 nodes preloaded with 600 keys, and a batch of 300 fresh
    inserts, 100 inserts of preloaded keys (they fail, but take a node each: Fig
    20 allocates before it searches), 50 deletes and 50 searches of other preloaded
    keys; the pool's capacity set so that ``free_after`` nodes stay free after the
    batch (-1: one node short)."""
    keys = _keys(950, rng)
    preload, fresh = keys[:600], keys[600:900]
    capacity = 600 + 400 + free_after
    table = ht.HashTable(4, 32, capacity, "dek")
    assert (table.batch(np.full(600, ht.INSERT), preload, THREADS).results == ht.TRUE).all()
    ops = np.concatenate([np.full(300, ht.INSERT), np.full(100, ht.INSERT),
                          np.full(50, ht.DELETE), np.full(50, ht.SEARCH)])  # fmt: skip
    batch = np.concatenate([fresh, preload[:100], preload[100:150], preload[150:200]])
    want = np.concatenate([np.ones(300), np.zeros(100), np.ones(100)]).astype(np.uint8)
    order = rng.permutation(ops.size)
    return table, preload, fresh, ops[order], batch[order], want[order]


def test_a_batch_that_could_overflow_the_pool_is_refused_before_it_runs():
    """400 inserts against 399 free nodes: PoolFull before any operation runs (the
    table, its keys and its pool counter as they were; the deletes not applied).
    Before, the batch ran: its other operations applied, its results dropped."""
    rng = np.random.default_rng(SEED)
    table, preload, _, ops, keys, _ = _overflow_batch(rng, free_after=-1)
    next_before = table.next.copy()
    with pytest.raises(ht.PoolFull, match="400 insert.*399 free"):
        table.batch(ops, keys, THREADS)
    assert np.array_equal(table.check(), np.sort(preload))
    assert table.used == 600 and np.array_equal(table.next, next_before)


def test_a_batch_that_fills_the_pool_exactly_runs():
    """400 inserts against 400 free nodes: the batch runs, every result as it must
    be, the pool's counter at its capacity, the key set as it must be."""
    rng = np.random.default_rng(SEED)
    table, preload, fresh, ops, keys, want = _overflow_batch(rng, free_after=0)
    res = table.batch(ops, keys, THREADS)
    assert np.array_equal(res.results, want)
    assert table.used == table.capacity == 1000
    kept = np.concatenate([preload[:100], preload[150:], fresh])  # preload[100:150] deleted
    assert np.array_equal(table.check(), np.sort(kept))
    with pytest.raises(ht.PoolFull, match="1 insert.*0 free"):  # and now it is full
        table.batch([ht.SEARCH, ht.INSERT], [0.5, 0.25], THREADS)


def test_the_checker_catches_a_cycle_a_misorder_and_a_wrong_bucket():
    """Negative controls: each corruption of a valid table must be reported."""
    rng = np.random.default_rng(SEED)
    table, keys = _preloaded((1, 8, "dek"), rng, n=200, capacity=400)
    table.check()
    head = int(np.flatnonzero(table.heads != ht.NIL)[0])
    first = int(table.heads[head] & ht.NIL)
    second = int(table.next[first] & ht.NIL)
    broken = ht.HashTable(1, 8, 400, "dek")
    for name in ("heads", "keys", "next", "pool"):
        setattr(broken, name, getattr(table, name).copy())
    broken.next[second] = first  # a cycle
    with pytest.raises(AssertionError, match="reached twice"):
        broken.check()
    broken.next[:] = table.next
    broken.keys[first], broken.keys[second] = table.keys[second], table.keys[first]
    with pytest.raises(AssertionError, match="strictly increasing|does not hash"):
        broken.check()
    broken.keys[:] = table.keys
    other = int(np.flatnonzero(table.heads != ht.NIL)[1])
    broken.heads[other] = table.heads[head]  # a list seen from another bucket's head
    with pytest.raises(AssertionError, match="reached twice|does not hash"):
        broken.check()


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda t: t.batch([3], [0.5]), "ops must be"),
        (lambda t: t.batch([0], [1.5]), r"keys must lie in \(0, 1\)"),
        (lambda t: t.batch([0, 1], [0.5]), "one length"),
        (lambda t: t.batch([0], [0.5], threads=0), "threads must be"),
    ],
)
def test_bad_batches_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call(ht.HashTable(1, 8, 16))


def test_bad_tables_are_named():
    with pytest.raises(ValueError, match="hash must be one of"):
        ht.HashTable(1, 8, 16, "md5")
    with pytest.raises(ValueError, match="tables and buckets"):
        ht.HashTable(0, 8, 16)


def test_heavy_contention_keeps_the_answer():
    """4 buckets, one table: every thread works in the same few lists (long
    chains, many restarts when threads interleave); the answer must not change."""
    rng = np.random.default_rng(SEED + 1)
    table, preload = _preloaded((1, 4, "dek"), rng, n=6000, capacity=20000)
    fresh = np.setdiff1d(_keys(5000, rng), preload)[:4000]
    deleted, kept = preload[:3000], preload[3000:]
    ops = np.concatenate([np.full(fresh.size, ht.INSERT), np.full(deleted.size, ht.DELETE),
                          np.full(kept.size, ht.SEARCH)])  # fmt: skip
    keys = np.concatenate([fresh, deleted, kept])
    order = rng.permutation(ops.size)
    res = table.batch(ops[order], keys[order], 8)
    assert (res.results == ht.TRUE).all()
    assert np.array_equal(table.check(), np.sort(np.concatenate([kept, fresh])))
    assert res.stats["steps"] > ops.size  # lists were walked


def test_the_benchmark_batches_are_schedule_free_and_checked():
    from pfresample_studies.moazeni2013 import hashtable_workloads as w

    rng = np.random.default_rng(SEED)
    preload = w.draw_keys(5000, rng, "normal", 0.05)
    assert preload.size == np.unique(preload).size and ((preload > 0) & (preload < 1)).all()
    for mix, (searches, inserts, _) in w.MIXES.items():
        ops, keys = w.mix_batch(preload, 1000, mix, rng)
        assert abs((ops == ht.SEARCH).mean() - searches) < 0.01
        assert abs((ops == ht.INSERT).mean() - inserts) < 0.01
        r = w.run_cpu(8, 64, preload, ops, keys, THREADS)
        assert r["ok"], mix
    with pytest.raises(ValueError, match="distribution must be"):
        w.draw_keys(10, rng, "cauchy")


def test_the_plan_feeds_every_figure(monkeypatch):
    """Chapter 4's pipeline: the runs ``plan`` lists are the ones every figure's
    table reads (the GPU's made on CPU threads here, so that no GPU is needed:
    the arithmetic, not the speed, is under test), each batch checked."""
    import pandas as pd

    from pfresample_studies.moazeni2013 import catalog, hashtable_figures
    from pfresample_studies.moazeni2013 import hashtable_workloads as wl

    cfg = {"moazeni2013_ch4_tables": [1, 2, 50], "moazeni2013_ch4_top_tables": 2,
           "moazeni2013_ch4_batches": [256, 512], "moazeni2013_ch4_variances": [0.01, 0.05],
           "moazeni2013_ch4_hashes": ["dek", "mix"], "moazeni2013_ch4_cpu_threads": 2,
           "moazeni2013_ch4_thread_sweep": [1, 2], "moazeni2013_ch4_preload": 1024,
           "moazeni2013_ch4_byte_orders": ["lsb", "msb"]}  # fmt: skip
    catalog.check_ch4(cfg)
    runs = wl.plan(cfg)
    assert len(runs) == len(set(runs))
    monkeypatch.setattr(wl, "run_gpu", lambda t, m, pre, ops, keys, h, o: {
        **wl.run_cpu(t, m, pre, ops, keys, 2, h, o), "upload_s": 1e-6})  # fmt: skip
    monkeypatch.setattr(wl, "cuda_device", lambda: "CPU threads standing in for a GPU")
    cells = [wl.run_cell([r for r in runs if r.backend == b], preload=1024, repeats=1, seed=3)
             for b in ("cpu", "gpu")]  # fmt: skip
    assert all(cell[0]["ok"].all() for cell in cells)
    frames = hashtable_figures.tables(hashtable_figures.frame(cells), cfg)
    empty = [name for name in hashtable_figures.TITLES if frames[name].empty]
    assert not empty, f"figures without rows: {empty}"
    assert sorted(frames["cpu_threads"]["threads"]) == [1, 1, 2, 2]  # PH = 1 and the top PH
    # Fig 34 runs DEK in both byte orders and mix (no bytes) once; no other figure has MSB
    assert set(frames["fig34"]["series"]) == {"dek lsb", "dek msb", "mix"}
    assert {r.byte_order for r in runs if r.hash == "dek" and r.mix != 33} == {"lsb"}
    assert len(frames["fig32"]) == len(frames["fig31"])  # the CPU at its configured threads only
    assert set(frames["applications"]["distribution"]) == {"app1", "app2", "normal", "uniform"}
    f31 = frames["fig31"]
    assert set(f31["mix"]) == set(catalog.CH4_MIXES) and set(f31["batch"]) == {256, 512}
    assert (f31["speedup"] == f31["seconds_baseline"] / f31["seconds"]).all()
    t5 = frames["table5"].set_index("tables")
    assert t5.loc[4, "ours_kb"] == 16 and t5.loc[4, "printed_kb"] == 32
    f39 = frames["fig39"]
    assert (f39["total_s"] == f39["seconds"] * (2**20 // f39["batch"])).all()
    assert isinstance(frames["fig40"], pd.DataFrame) and (frames["fig40"]["upload_s"] > 0).all()


def test_bad_chapter4_configurations_are_named():
    from pfresample_studies.moazeni2013 import catalog

    good = {"moazeni2013_ch4_tables": [1, 5], "moazeni2013_ch4_top_tables": 5,
            "moazeni2013_ch4_batches": [512], "moazeni2013_ch4_variances": [0.05],
            "moazeni2013_ch4_hashes": ["dek"], "moazeni2013_ch4_preload": 1024}  # fmt: skip
    catalog.check_ch4(good)
    for change, match in (({"moazeni2013_ch4_top_tables": 7}, "must be one of"),
                          ({"moazeni2013_ch4_tables": [5]}, "must hold 1"),
                          ({"moazeni2013_ch4_batches": [4096]}, "exceed"),
                          ({"moazeni2013_ch4_hashes": ["fnv"]}, "not in"),
                          ({"moazeni2013_ch4_variances": [2.0]}, r"\(0, 1\]")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            catalog.check_ch4({**good, **change})


def test_the_application_keys_follow_their_distributions():
    """§4.6.2.9's keys: the mixture puts half its keys near each mean, the
    wide normal fills (0, 1) nearly uniformly; all distinct, in (0, 1)."""
    from pfresample_studies.moazeni2013 import hashtable_workloads as wl

    rng = np.random.default_rng(9)
    app1 = wl.draw_keys(20000, rng, "app1")
    assert len(np.unique(app1)) == app1.size and ((app1 > 0) & (app1 < 1)).all()
    low = (app1 < 0.5).mean()  # P(N(0.3, 0.05) < 0.5) ~ 1, P(N(0.7, 0.1) < 0.5) = 0.023
    assert abs(low - 0.5 * (1 + 0.0228)) < 4 * np.sqrt(0.25 / app1.size)
    app2 = wl.draw_keys(20000, rng, "app2")
    counts = np.histogram(app2, bins=10, range=(0, 1))[0] / app2.size
    assert counts.min() > 0.08 and counts.max() < 0.12  # sd 0.58 on (0, 1): nearly flat
    with pytest.raises(ValueError, match="distribution must be one of"):
        wl.draw_keys(10, rng, "app3")


def _racing_batch(rng, n_keys=300, size=6000, weights=(0.3, 0.35, 0.35)):
    """A batch whose outcome the schedule decides: ``size`` random operations
    (search, insert, delete in ``weights``) on ``n_keys`` keys, half of them
    preloaded, so that inserts and deletes of one key race, keys are deleted
    twice and searched while they change, and some keys are never present."""
    keys = _keys(n_keys, rng)
    preload = keys[: n_keys // 2]
    ops = rng.choice(3, size, p=weights).astype(np.uint8)
    return preload, ops, keys[rng.integers(0, n_keys, size)]


@pytest.mark.parametrize("config", CONFIGS[:3])
def test_racing_batches_are_explained_key_by_key(config):
    """Random mixes with same-key insert/delete races, double deletes and absent
    keys on 4 threads, several times: the structure checker passes and, key by
    key, some order of the key's operations gives the results and the set left."""
    rng = np.random.default_rng([SEED, *config[:2], 56])
    for _ in range(4):
        preload, ops, keys = _racing_batch(rng)
        table = ht.HashTable(*config[:2], preload.size + ops.size, config[2])
        table.batch(np.full(preload.size, ht.INSERT), preload, THREADS)
        res = table.batch(ops, keys, THREADS)
        ht.check_outcomes(preload, ops, keys, res.results, table.check())
        assert 0 < res.results.mean() < 1  # both outcomes occur


def test_the_outcome_checker_catches_what_no_order_explains():
    """Negative controls, by hand: two successful inserts of an absent key with no
    delete between, two successful deletes of a present key, a failed search of a
    key always present, a key left present after its only insert failed, and a key
    the batch never named removed; and the orders it must accept."""
    a, b, c = np.float32(0.25), np.float32(0.5), np.float32(0.75)
    I, D, S = ht.INSERT, ht.DELETE, ht.SEARCH  # noqa: E741
    accept = [
        ([], [I, I], [a, a], [1, 0], [a]),
        ([a], [D, D], [a, a], [0, 1], []),
        ([], [I, D, S, S], [a, a, a, a], [1, 1, 1, 0], []),  # present, then absent
        ([a], [D, I, S], [a, a, a], [1, 1, 0], [a]),
        ([c], [S, D], [a, b], [0, 0], [c]),  # absent keys
    ]
    for before, ops, keys, results, after in accept:
        ht.check_outcomes(before, ops, keys, results, after)
    reject = [
        ([], [I, I], [a, a], [1, 1], [a], "2 insert"),
        ([a], [D, D], [a, a], [1, 1], [], "2 delete"),
        ([a], [S, S], [a, a], [1, 0], [a], "not: no order"),
        ([], [I], [a], [0], [a], "no order"),
        ([a, c], [S], [a], [1], [a], "never names|no operation"),
    ]
    for before, ops, keys, results, after, match in reject:
        with pytest.raises(AssertionError, match=match):
            ht.check_outcomes(before, ops, keys, results, after)


def test_the_outcome_checker_catches_a_dropped_result():
    """A real racing batch's results with one flipped no longer explain it."""
    rng = np.random.default_rng(SEED)
    preload, ops, keys = _racing_batch(rng, n_keys=50, size=800)
    table = ht.HashTable(1, 16, preload.size + ops.size)
    table.batch(np.full(preload.size, ht.INSERT), preload, THREADS)
    res = table.batch(ops, keys, THREADS)
    after = table.check()
    ht.check_outcomes(preload, ops, keys, res.results, after)
    for i in np.flatnonzero(ops != ht.SEARCH)[:20]:
        flipped = res.results.copy()
        flipped[i] ^= 1
        with pytest.raises(AssertionError, match="no order"):
            ht.check_outcomes(preload, ops, keys, flipped, after)


def _scalar_hash(bits: int, hash_: str, byte_order: str) -> int:
    """The byte-wise hashes one key at a time in plain Python (the tests' own reference)."""
    order = range(4) if byte_order == "lsb" else range(3, -1, -1)
    data = [(bits >> (8 * i)) & 0xFF for i in order]
    h = 4 if hash_ == "dek" else 0
    for byte in data:
        if hash_ == "dek":
            h = (((h << 5) & 0xFFFFFFFF) ^ (h >> 27)) ^ byte
        elif hash_ == "sdbm":
            h = (byte + (h << 6) + (h << 16) - h) & 0xFFFFFFFF
        else:
            h = ((h << 4) & 0xFFFFFFFF) + byte
            g = h & 0xF0000000
            if g:
                h = (h ^ (g >> 24)) & ~g & 0xFFFFFFFF
    return h


@pytest.mark.parametrize("hash_", ht.BYTE_WISE)
def test_the_byte_orders_differ_on_a_planted_key_and_agree_on_a_palindrome(hash_):
    # 0x3F000001 (0.5 and one ulp): bytes 01 00 00 3F fed LSB first, 3F 00 00 01 MSB first
    planted = np.array([0x3F000001], dtype=np.uint32).view(np.float32)
    lsb, msb = (int(ht.hash_keys(planted, hash_, o)[0]) for o in ("lsb", "msb"))
    assert lsb == _scalar_hash(0x3F000001, hash_, "lsb")
    assert msb == _scalar_hash(0x3F000001, hash_, "msb")
    assert lsb != msb
    # the negative control: a key whose bytes read the same either way hashes the same
    palindrome = np.array([0x3F00003F], dtype=np.uint32).view(np.float32)
    assert ht.hash_keys(palindrome, hash_, "lsb") == ht.hash_keys(palindrome, hash_, "msb")


@pytest.mark.parametrize("hash_", list(ht.HASHES))
@pytest.mark.parametrize("byte_order", list(ht.BYTE_ORDERS))
def test_numpy_and_the_cpp_table_hash_alike_in_each_order(hash_, byte_order):
    rng = np.random.default_rng([SEED, 58])
    keys = np.concatenate([_keys(4000, rng, normal=True), _keys(4000, rng)])
    want = ht.hash_keys(keys, hash_, byte_order)
    assert np.array_equal(ht.native_hash_keys(keys, hash_, byte_order), want)
    if hash_ in ht.BYTE_WISE:  # the order reaches the hash: most keys' hashes change
        other = ht.hash_keys(keys, hash_, "msb" if byte_order == "lsb" else "lsb")
        assert (other != want).mean() > 0.9
    else:  # mix reads the word whole
        assert np.array_equal(ht.hash_keys(keys, hash_, "msb"), want)


def test_the_table_uses_its_byte_order_and_its_checker_catches_the_wrong_one():
    rng = np.random.default_rng([SEED, 59])
    keys = _keys(3000, rng, normal=True)
    table = ht.HashTable(4, 64, keys.size, "dek", byte_order="msb")
    res = table.batch(np.full(keys.size, ht.INSERT), keys, THREADS)
    assert (res.results == ht.TRUE).all()
    assert np.array_equal(table.check(), np.sort(keys))
    # each node's list is the one its key hashes to MSB first: read LSB first, it is not
    with pytest.raises(AssertionError, match="does not hash to"):
        ht.check_arrays(table.heads, table.keys, table.next, table.used, 4, 64, "dek", "lsb")
    with pytest.raises(ValueError, match="byte_order"):
        ht.HashTable(1, 8, 16, "dek", byte_order="big")


def test_dek_fed_lsb_first_fills_few_buckets_where_msb_first_fills_them_all():
    rng = np.random.default_rng([SEED, 60])
    keys = _keys(32768, rng, normal=True)
    lsb, msb = (ht.bucket_stats(keys, 1024, "dek", o) for o in ("lsb", "msb"))
    assert lsb["occupied"] < 400 and msb["occupied"] == 1024
    assert lsb["mean_walk"] > 5 * msb["mean_walk"]
    # the walk is what the table's search counts: a search-only batch's steps an operation
    table = ht.HashTable(1, 1024, keys.size, "dek", byte_order="msb")
    table.batch(np.full(keys.size, ht.INSERT), keys, 1)
    stats = table.batch(np.full(keys.size, ht.SEARCH), keys, 1).stats
    assert stats["steps"] / keys.size == pytest.approx(msb["mean_walk"])
    with pytest.raises(ValueError, match="buckets"):
        ht.bucket_stats(keys, 0)


@pytest.mark.parametrize("mix", [33, 90])
def test_a_batch_with_absent_keys_gives_its_expected_results_on_cpu_threads(mix):
    from pfresample_studies.moazeni2013 import hashtable_workloads as wl

    rng = np.random.default_rng([SEED, 61, mix])
    preload = _keys(4000, rng, normal=True)
    ops, keys, expected = wl.absent_batch(preload, 1200, mix, rng, absent=0.5)
    assert np.unique(keys).size == keys.size and 0 < expected.mean() < 1
    present = np.isin(keys, preload)
    assert np.array_equal(expected.astype(bool), np.where(ops == ht.INSERT, ~present, present))
    table = ht.HashTable(8, 64, preload.size + ops.size)
    table.batch(np.full(preload.size, ht.INSERT), preload, THREADS)
    res = table.batch(ops, keys, THREADS)
    assert np.array_equal(res.results, expected)
    assert np.array_equal(table.check(), wl.after_batch(preload, ops, keys))
    # the negative control: the schedule-free batch's all-true answer is not this one's
    assert not (res.results == ht.TRUE).all()
