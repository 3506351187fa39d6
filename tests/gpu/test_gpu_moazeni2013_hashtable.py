"""Moazeni (2013) chapter 4 on the GPU (pfresample_studies.moazeni2013.hashtable_gpu):
the CPU tests' schedule-free batches on GPU_BASIC, GPU_PH and GPU_BIG (searches of
absent keys among them), checked by the same checker on the arrays copied back; batches
whose outcome the schedule decides (same-key insert/delete races, double deletes,
random mixes) checked key by key (``hashtable.check_outcomes``); a batch that could
overflow the pool refused before it runs, one that fills it exactly run; the source
compiles with nvcc where present."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from pfresample.cuda import kernels
from pfresample_studies.moazeni2013 import cuda_source, hashtable_gpu
from pfresample_studies.moazeni2013 import hashtable as ht

NVCC = shutil.which("nvcc")
SEED = 2013


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH: cannot compile the kernels")
def test_the_source_compiles_to_ptx(tmp_path):
    (tmp_path / "ht.cu").write_text(cuda_source(hashtable_gpu.SOURCE))
    out = subprocess.run([NVCC, "-ptx", "-arch=sm_90", *kernels.COMPILE_OPTIONS,
                          str(tmp_path / "ht.cu"), "-o", str(tmp_path / "ht.ptx")],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "ht_batch" in (tmp_path / "ht.ptx").read_text()


def _keys(n, rng):
    x = np.unique(rng.normal(0.5, 0.05**0.5, 3 * n).astype(np.float32))
    x = x[(x > 0) & (x < 1)]
    return x[rng.permutation(x.size)[:n]]


@pytest.mark.gpu
@pytest.mark.parametrize("tables,buckets", [(1, 1024), (64, 1024), (1, 64 * 1024)])
@pytest.mark.parametrize("hash_", ["dek", "mix"])
def test_a_mixed_batch_on_the_gpu_gives_the_schedule_free_answer(tables, buckets, hash_):
    pytest.importorskip("cupy")
    rng = np.random.default_rng([SEED, tables, buckets])
    keys = _keys(60000, rng)
    preload, fresh = keys[:40000], keys[40000:]
    table = hashtable_gpu.GpuHashTable(tables, buckets, 80000, hash_)
    res, _ = table.batch(np.full(preload.size, ht.INSERT), preload)
    assert (res.results == ht.TRUE).all()
    assert np.array_equal(table.check(), np.sort(preload))
    deleted, kept = preload[:15000], preload[15000:]
    absent = np.setdiff1d(_keys(8000, rng), keys)[:5000]  # never inserted: searches fail
    sizes = (fresh.size, deleted.size, kept.size, absent.size)
    ops = np.repeat([ht.INSERT, ht.DELETE, ht.SEARCH, ht.SEARCH], sizes).astype(np.uint8)
    want = np.concatenate([np.ones(ops.size - absent.size), np.zeros(absent.size)])
    order = rng.permutation(ops.size)
    res, seconds = table.batch(ops[order], np.concatenate([fresh, deleted, kept, absent])[order])
    assert np.array_equal(res.results, want[order].astype(np.uint8)) and seconds > 0
    assert np.array_equal(table.check(), np.sort(np.concatenate([kept, fresh])))
    # deleting the deleted keys again finds none of them
    again, _ = table.batch(np.full(deleted.size, ht.DELETE), deleted)
    assert (again.results == ht.FALSE).all()
    assert np.array_equal(table.check(), np.sort(np.concatenate([kept, fresh])))


@pytest.mark.gpu
def test_one_insert_of_each_key_wins_on_the_gpu():
    pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED)
    keys = _keys(2000, rng)
    batch = np.tile(keys, 16)[rng.permutation(16 * keys.size)]
    table = hashtable_gpu.GpuHashTable(1, 64, batch.size, "dek")
    res, _ = table.batch(np.full(batch.size, ht.INSERT), batch)
    wins = np.zeros(keys.size, dtype=np.int64)
    np.add.at(wins, np.searchsorted(np.sort(keys), batch), res.results.astype(np.int64))
    assert (wins == 1).all()
    assert np.array_equal(table.check(), np.sort(keys))


@pytest.mark.gpu
@pytest.mark.parametrize("free_after", [-1, 0])
def test_a_batch_that_could_overflow_the_pool_is_refused_on_the_gpu(free_after):
    """600 keys preloaded; a batch of 300 fresh inserts, 100 inserts of preloaded
    keys (failing, each taking a node), 50 deletes and 50 searches: one node short,
    PoolFull before it runs (the table and its pool counter unchanged, the deletes
    not applied); with exactly enough, it runs and fills the pool."""
    pytest.importorskip("cupy")
    rng = np.random.default_rng([SEED, free_after + 1])
    keys = _keys(900, rng)
    preload, fresh = keys[:600], keys[600:]
    table = hashtable_gpu.GpuHashTable(4, 32, 1000 + free_after, "dek")
    res, _ = table.batch(np.full(600, ht.INSERT), preload)
    assert (res.results == ht.TRUE).all()
    ops = np.concatenate([np.full(300, ht.INSERT), np.full(100, ht.INSERT),
                          np.full(50, ht.DELETE), np.full(50, ht.SEARCH)])  # fmt: skip
    batch = np.concatenate([fresh, preload[:100], preload[100:150], preload[150:200]])
    want = np.concatenate([np.ones(300), np.zeros(100), np.ones(100)]).astype(np.uint8)
    order = rng.permutation(ops.size)
    if free_after < 0:
        with pytest.raises(ht.PoolFull, match="400 insert.*399 free"):
            table.batch(ops[order], batch[order])
        assert table.used == 600 and np.array_equal(table.check(), np.sort(preload))
        return
    res, _ = table.batch(ops[order], batch[order])
    assert np.array_equal(res.results, want[order])
    assert table.used == table.capacity == 1000
    kept = np.concatenate([preload[:100], preload[150:], fresh])
    assert np.array_equal(table.check(), np.sort(kept))
    with pytest.raises(ht.PoolFull, match="1 insert.*0 free"):
        table.batch([ht.SEARCH, ht.INSERT], [0.5, 0.25])


def _racing_batch(rng, n_keys, size, weights=(0.3, 0.35, 0.35)):
    """``size`` random operations (search, insert, delete in ``weights``) on
    ``n_keys`` keys, half of them preloaded: inserts and deletes of one key race,
    keys are deleted twice and searched while they change, some are never present."""
    keys = _keys(n_keys, rng)
    preload = keys[: n_keys // 2]
    ops = rng.choice(3, size, p=weights).astype(np.uint8)
    return preload, ops, keys[rng.integers(0, n_keys, size)]


@pytest.mark.gpu
@pytest.mark.parametrize("tables,buckets", [(1, 64), (16, 64), (1, 1024)])
@pytest.mark.parametrize("n_keys", [64, 2000])
def test_racing_batches_on_the_gpu_are_explained_key_by_key(tables, buckets, n_keys):
    """Random mixes of 50,000 operations on 64 keys (hundreds of operations a key in
    one launch: same-key insert/delete races, double deletes) or on 2,000, five
    times each: the structure checker passes, and key by key some order of the
    key's operations gives the results and the set left."""
    pytest.importorskip("cupy")
    rng = np.random.default_rng([SEED, tables, buckets, n_keys])
    for _ in range(5):
        preload, ops, keys = _racing_batch(rng, n_keys, 50_000)
        table = hashtable_gpu.GpuHashTable(tables, buckets, preload.size + ops.size, "dek")
        table.batch(np.full(preload.size, ht.INSERT), preload)
        res, _ = table.batch(ops, keys)
        ht.check_outcomes(preload, ops, keys, res.results, table.check())
        assert 0 < res.results.mean() < 1


@pytest.mark.gpu
def test_double_deletes_and_insert_delete_pairs_on_the_gpu():
    """Each preloaded key deleted 8 times in one batch: exactly one delete wins;
    each fresh key inserted and deleted 4 times each: the successes alternate
    (checked key by key), and searches of absent keys all fail."""
    pytest.importorskip("cupy")
    rng = np.random.default_rng([SEED, 8])
    keys = _keys(6000, rng)
    preload, fresh, absent = keys[:2000], keys[2000:4000], keys[4000:]
    table = hashtable_gpu.GpuHashTable(16, 64, 2000 + 4 * 2000, "dek")
    table.batch(np.full(preload.size, ht.INSERT), preload)
    sizes = (8 * 2000, 4 * 2000, 4 * 2000, absent.size)
    ops = np.repeat([ht.DELETE, ht.INSERT, ht.DELETE, ht.SEARCH], sizes).astype(np.uint8)
    batch = np.concatenate([np.tile(preload, 8), np.tile(fresh, 4), np.tile(fresh, 4), absent])
    order = rng.permutation(ops.size)
    res, _ = table.batch(ops[order], batch[order])
    results = np.empty_like(res.results)
    results[order] = res.results
    wins = results[: 8 * 2000].reshape(8, 2000).sum(axis=0)
    assert (wins == 1).all()
    assert (results[-absent.size :] == ht.FALSE).all()
    after = table.check()
    assert not np.isin(preload, after).any() and not np.isin(absent, after).any()
    ht.check_outcomes(preload, ops[order], batch[order], res.results, after)


@pytest.mark.gpu
def test_the_chapter4_gpu_cell_checks_every_run():
    """The pipeline's GPU cell on a small plan: every run checked, the upload kept."""
    pytest.importorskip("cupy")
    from pfresample_studies.moazeni2013 import hashtable_workloads as wl

    cfg = {"moazeni2013_ch4_tables": [1, 4], "moazeni2013_ch4_top_tables": 4,
           "moazeni2013_ch4_batches": [512], "moazeni2013_ch4_variances": [0.05],
           "moazeni2013_ch4_hashes": ["dek"], "moazeni2013_ch4_cpu_threads": 2,
           "moazeni2013_ch4_thread_sweep": [2], "moazeni2013_ch4_preload": 1024}  # fmt: skip
    runs = [r for r in wl.plan(cfg) if r.backend == "gpu"]
    arrays, meta = wl.run_cell(runs, preload=1024, repeats=2, seed=5)
    assert arrays["ok"].all() and len(arrays["ok"]) == len(runs)
    assert (arrays["upload_s"] > 0).all() and meta["backend"] == "cuda"


@pytest.mark.gpu
@pytest.mark.parametrize("hash_", list(ht.HASHES))
@pytest.mark.parametrize("byte_order", list(ht.BYTE_ORDERS))
def test_the_cuda_hash_equals_the_cpus_in_each_byte_order(hash_, byte_order):
    pytest.importorskip("cupy")
    rng = np.random.default_rng([SEED, 58])
    keys = np.unique(np.concatenate([_keys(20000, rng), rng.random(20000).astype(np.float32)]))
    keys = keys[(keys > 0) & (keys < 1)]  # distinct: every insert must succeed
    want = ht.native_hash_keys(keys, hash_, byte_order)
    assert np.array_equal(hashtable_gpu.gpu_hash_keys(keys, hash_, byte_order), want)
    assert np.array_equal(ht.hash_keys(keys, hash_, byte_order), want)
    # a GPU table built in this order passes the CPU's checker in this order
    table = hashtable_gpu.GpuHashTable(4, 256, keys.size, hash_, byte_order)
    res, _ = table.batch(np.full(keys.size, ht.INSERT), keys)
    assert (res.results == ht.TRUE).all()
    assert np.array_equal(table.check(), np.sort(keys))
