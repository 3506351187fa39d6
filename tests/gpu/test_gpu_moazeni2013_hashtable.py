"""Moazeni (2013) chapter 4 on the GPU (pfresample.studies.moazeni2013.hashtable_gpu):
the CPU tests' schedule-free batches on GPU_BASIC, GPU_PH and GPU_BIG, checked by the
same checker on the arrays copied back; the source compiles with nvcc where present."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from pfresample.cuda import kernels
from pfresample.studies.moazeni2013 import hashtable as ht
from pfresample.studies.moazeni2013 import hashtable_gpu

NVCC = shutil.which("nvcc")
SEED = 2013


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH: cannot compile the kernels")
def test_the_source_compiles_to_ptx(tmp_path):
    (tmp_path / "ht.cu").write_text(kernels.source(hashtable_gpu.SOURCE))
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
    ops = np.concatenate([np.full(fresh.size, ht.INSERT), np.full(deleted.size, ht.DELETE),
                          np.full(kept.size, ht.SEARCH)])  # fmt: skip
    order = rng.permutation(ops.size)
    res, seconds = table.batch(ops[order], np.concatenate([fresh, deleted, kept])[order])
    assert (res.results == ht.TRUE).all() and seconds > 0
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
def test_a_full_pool_raises_on_the_gpu():
    pytest.importorskip("cupy")
    rng = np.random.default_rng(SEED)
    table = hashtable_gpu.GpuHashTable(4, 32, 1000, "dek")
    with pytest.raises(ht.PoolFull, match="pool of 1000 is full"):
        table.batch(np.full(1500, ht.INSERT), _keys(1500, rng))
    assert table.check().size == 1000


@pytest.mark.gpu
def test_the_chapter4_gpu_cell_checks_every_run():
    """The pipeline's GPU cell on a small plan: every run checked, the upload kept."""
    pytest.importorskip("cupy")
    from pfresample.studies.moazeni2013 import hashtable_workloads as wl

    cfg = {"moazeni2013_ch4_tables": [1, 4], "moazeni2013_ch4_top_tables": 4,
           "moazeni2013_ch4_batches": [512], "moazeni2013_ch4_variances": [0.05],
           "moazeni2013_ch4_hashes": ["dek"], "moazeni2013_ch4_cpu_threads": 2,
           "moazeni2013_ch4_thread_sweep": [2], "moazeni2013_ch4_preload": 1024}  # fmt: skip
    runs = [r for r in wl.plan(cfg) if r.backend == "gpu"]
    arrays, meta = wl.run_cell(runs, preload=1024, repeats=2, seed=5)
    assert arrays["ok"].all() and len(arrays["ok"]) == len(runs)
    assert (arrays["upload_s"] > 0).all() and meta["backend"] == "cuda"
