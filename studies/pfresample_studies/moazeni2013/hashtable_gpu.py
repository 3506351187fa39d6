"""Moazeni (2013) chapter 4 on the GPU (``kernels/hashtable.cu``):
GPU_BASIC (one table), GPU_PH (n tables) and GPU_BIG (one table of n m buckets),
one thread an operation, THREADS a block (the thesis's 512, §4.6.1). The arrays
are those of ``hashtable.HashTable``, so the same checker reads them (copied back)."""

from __future__ import annotations

import time
from functools import cache

import numpy as np

from . import cuda_source
from . import hashtable as ht

SOURCE = "hashtable.cu"
THREADS = 512  # a block, as the thesis's GPU_BASIC and GPU_PH (§4.6.1)


DELAY_NS = 200_000  # delay_ns before a timed batch: longer than the host's launch latency


@cache
def _module():
    from pfresample.cuda import kernels

    return kernels.Module(cuda_source(SOURCE), (), kernels.COMPILE_OPTIONS)


@cache
def _function(name: str):
    # cached: a lookup costs host time on every batch otherwise
    return _module().get_function(name)


class GpuHashTable:
    """``hashtable.HashTable`` with its arrays on the GPU."""

    def __init__(self, tables: int, buckets: int, capacity: int, hash: str = "dek",
                 byte_order: str = ht.DEFAULT_BYTE_ORDER):  # fmt: skip
        import cupy

        host = ht.HashTable(tables, buckets, capacity, hash, byte_order)  # the same checks
        self.tables, self.buckets, self.capacity, self.hash = tables, buckets, capacity, hash
        self.byte_order = byte_order
        self.heads, self.keys = cupy.asarray(host.heads), cupy.asarray(host.keys)
        self.next, self.pool = cupy.asarray(host.next), cupy.asarray(host.pool)

    @property
    def used(self) -> int:
        return int(min(int(self.pool.get()[0]), self.capacity))

    def batch(self, ops, keys) -> tuple[ht.BatchResult, float]:
        """One batch on the GPU: (results and counters, the kernel's seconds by
        CUDA events, the host's launch latency hidden behind ``delay_ns``; the
        batch's upload before them, as §4.6 excludes it, its host-clock seconds
        kept in ``last_upload_s``). A batch with more inserts than the pool has
        free nodes is refused before it runs (PoolFull: ``hashtable.reserve``)."""
        import cupy

        ops, keys = ht.check_batch(ops, keys)
        ht.reserve(ops, self.used, self.capacity)  # PoolFull before the batch runs
        begin = time.perf_counter()
        d_ops, d_keys = cupy.asarray(ops), cupy.asarray(keys)
        cupy.cuda.get_current_stream().synchronize()
        self.last_upload_s = time.perf_counter() - begin  # Fig 40's transfer time
        results = cupy.zeros(ops.size, dtype=cupy.uint8)
        stats = cupy.zeros(len(ht.STATS), dtype=cupy.uint64)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        # the device waits on delay_ns while the host enqueues the batch: the events
        # time the kernel, not the host's launch latency (tens of microseconds)
        _function("delay_ns")((1,), (1,), (np.int64(DELAY_NS),))
        start.record()
        if ops.size:
            blocks = -(-ops.size // THREADS)
            _function("ht_batch")(
                (blocks,), (THREADS,),
                (self.heads, self.keys, self.next, self.pool, np.uint32(self.capacity),
                 np.int32(self.tables), np.int32(self.buckets), np.int32(ht.HASHES[self.hash]),
                 np.int32(ht.BYTE_ORDERS[self.byte_order]), d_ops, d_keys, np.int64(ops.size),
                 results, stats),
            )  # fmt: skip
        end.record()
        end.synchronize()
        seconds = cupy.cuda.get_elapsed_time(start, end) / 1e3
        host = results.get()
        ht.raise_if_full(host, self.capacity)
        return ht.BatchResult(host, dict(zip(ht.STATS, stats.get().tolist(), strict=True))), seconds

    def check(self) -> np.ndarray:
        return ht.check_arrays(self.heads.get(), self.keys.get(), self.next.get(), self.used,
                               self.tables, self.buckets, self.hash,
                               self.byte_order)  # fmt: skip


def gpu_hash_keys(keys, hash: str = "dek", byte_order: str = ht.DEFAULT_BYTE_ORDER) -> np.ndarray:
    """The hashes as kernels/hashtable.cu computes them (``hashtable.hash_keys``'s twin)."""
    import cupy

    ht.check_hash(hash, byte_order)
    d_keys = cupy.asarray(np.ascontiguousarray(keys, dtype=np.float32))
    out = cupy.empty(d_keys.size, dtype=cupy.uint32)
    if d_keys.size:
        _function("ht_hash_keys")((-(-d_keys.size // THREADS),), (THREADS,),
                                  (d_keys, np.int64(d_keys.size), np.int32(ht.HASHES[hash]),
                                   np.int32(ht.BYTE_ORDERS[byte_order]), out))  # fmt: skip
    return out.get()
