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

import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from pfresample.backend import cuda_device

from . import hashtable as ht

MIXES = {
    0: (0.0, 1.0, 0.0),  # insert only (Figs 26-28, 35)
    100: (1.0, 0.0, 0.0),  # search only (Fig 29)
    33: (1 / 3, 1 / 3, 1 / 3),
    50: (0.5, 0.25, 0.25),
    60: (0.6, 0.2, 0.2),
    80: (0.8, 0.1, 0.1),
    90: (0.9, 0.05, 0.05),
}  # fmt: skip  (search %: search, insert, delete)
BUCKETS = 1024  # m (§4.6.1)
PRELOAD = 262_144  # keys preloaded before every batch (§4.6.1)


# §4.6.2.9's two applications (remote health monitoring devices; Fig 41 shows their keys'
# histograms, not their parameters): the first "a combination of two normal distributions
# with standard deviation .05 and .1", the second a normal of standard deviation 0.58. The
# means and the weights are ours: the two normals at 0.3 and 0.7, half the keys each; the
# second at 0.5. Keys outside (0, 1) are drawn again, as for the others.
APPLICATIONS = {"app1": ((0.3, 0.05, 0.5), (0.7, 0.1, 0.5)), "app2": ((0.5, 0.58, 1.0),)}
DISTRIBUTIONS = ("normal", "uniform", *APPLICATIONS)


def draw_keys(n: int, rng, distribution: str = "normal", variance: float = 0.05) -> np.ndarray:
    """n float32 keys in (0, 1), distinct: normal around 1/2 of ``variance``,
    uniform, or an application's (APPLICATIONS)."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
    out = np.empty(0, dtype=np.float32)
    while out.size < n:
        if distribution == "uniform":
            x = rng.random(2 * n)
        elif distribution in APPLICATIONS:
            parts = APPLICATIONS[distribution]
            which = rng.choice(len(parts), 2 * n, p=[w for _, _, w in parts])
            means, sds = np.array([m for m, _, _ in parts]), np.array([d for _, d, _ in parts])
            x = rng.normal(means[which], sds[which])
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


def absent_batch(
    preload: np.ndarray,
    size: int,
    search_pct: int,
    rng,
    absent: float = 0.5,
    distribution="normal",
    variance=0.05,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ops, keys, expected) of a random batch of ``size`` operations in the proportions of
    MIXES[search_pct] where a share ``absent`` of the searches and deletes name keys not in
    the table and that share of the inserts keys already in it (each fails: ``expected``
    0), the rest succeed (1). No key appears twice in the batch, so each operation's result
    is ``expected`` whatever the schedule; the keys are otherwise drawn at random."""
    if not 0 <= absent <= 1:
        raise ValueError(f"absent must lie in [0, 1], got {absent}")
    searches, inserts, _ = MIXES[search_pct]
    n_search, n_insert = int(round(size * searches)), int(round(size * inserts))
    n_delete = size - n_search - n_insert
    miss = [int(round(n * absent)) for n in (n_search, n_insert, n_delete)]
    n_present = (n_search - miss[0]) + miss[1] + (n_delete - miss[2])
    n_fresh = miss[0] + (n_insert - miss[1]) + miss[2]
    if n_present > preload.size:
        raise ValueError(f"a batch of {size} needs {n_present} preloaded keys")
    fresh = np.setdiff1d(draw_keys(2 * n_fresh + 16, rng, distribution, variance), preload)
    fresh = fresh[rng.permutation(fresh.size)[:n_fresh]]
    if fresh.size < n_fresh:
        raise ValueError("could not draw enough fresh keys; widen the distribution")
    present = preload[rng.permutation(preload.size)[:n_present]]
    p, f = np.split(present, np.cumsum([n_search - miss[0], miss[1]])), \
        np.split(fresh, np.cumsum([miss[0], n_insert - miss[1]]))  # fmt: skip
    parts = (p[0], f[0], p[1], f[1], p[2], f[2])  # each kind's present, then absent keys
    keys = np.concatenate(parts)
    sizes = [a.size for a in parts]
    ops = np.repeat(np.array([ht.SEARCH, ht.SEARCH, ht.INSERT, ht.INSERT, ht.DELETE, ht.DELETE],
                             dtype=np.uint8), sizes)  # fmt: skip
    expected = np.repeat(np.array([1, 0, 0, 1, 1, 0], dtype=np.uint8), sizes)
    order = rng.permutation(size)
    return ops[order], keys[order], expected[order]


def after_batch(preload: np.ndarray, ops, keys) -> np.ndarray:
    """The sorted keys a batch of distinct keys leaves: the preload, less its deleted
    keys, with its inserted keys."""
    return np.union1d(np.setdiff1d(preload, keys[ops == ht.DELETE]), keys[ops == ht.INSERT])


def run_cpu(tables: int, buckets: int, preload: np.ndarray, ops, keys, threads: int,
            hash: str = "dek", byte_order: str = ht.DEFAULT_BYTE_ORDER) -> dict:  # fmt: skip
    """One CPU batch on a freshly preloaded table: its seconds, counters and
    the checker's verdict (every operation true, the key set as it must be)."""
    table = ht.HashTable(tables, buckets, preload.size + ops.size, hash, byte_order)
    table.batch(np.full(preload.size, ht.INSERT), preload, threads)
    start = time.perf_counter()
    res = table.batch(ops, keys, threads)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, **res.stats, "ok": _verdict(table, preload, ops, keys, res)}


def run_gpu(tables: int, buckets: int, preload: np.ndarray, ops, keys, hash: str = "dek",
            byte_order: str = ht.DEFAULT_BYTE_ORDER) -> dict:  # fmt: skip
    from .hashtable_gpu import GpuHashTable

    table = GpuHashTable(tables, buckets, preload.size + ops.size, hash, byte_order)
    table.batch(np.full(preload.size, ht.INSERT), preload)
    res, seconds = table.batch(ops, keys)
    return {"seconds": seconds, "upload_s": table.last_upload_s, **res.stats,
            "ok": _verdict(table, preload, ops, keys, res)}  # fmt: skip


def _verdict(table, preload, ops, keys, res) -> bool:
    if not (res.results == ht.TRUE).all():
        return False
    expected = np.union1d(np.setdiff1d(preload, keys[ops == ht.DELETE]), keys[ops == ht.INSERT])
    return bool(np.array_equal(table.check(), expected))


# The pipeline's grid (config/studies/moazeni2013.yaml, the ch4 keys): one Run a
# timed batch; ``plan`` lists what every figure of §4.6 needs, each run once.
@dataclass(frozen=True, order=True)
class Run:
    backend: str  # "cpu" or "gpu"
    threads: int  # CPU threads (0 on the GPU)
    distribution: str  # one of DISTRIBUTIONS
    variance: float  # of the normal keys (0 for uniform)
    hash: str
    layout: str  # "ph": `tables` tables of BUCKETS; "big": one table of tables x BUCKETS
    tables: int
    batch: int
    mix: int  # search % of MIXES (0: insert only, 100: search only)
    byte_order: str = ht.DEFAULT_BYTE_ORDER  # the byte-wise hashes' (mix: always the default)


def plan(cfg, gpu: bool = True) -> list[Run]:
    """Every run the chapter's figures read (``hashtable_figures.tables``), once
    each: GPU_PH over the PH list; PH = 1 is GPU_BASIC / CPU_BASIC; the CPU at
    ``moazeni2013_ch4_cpu_threads`` threads (the thesis's 8) for PH = 1 and 320.
    Without a GPU (``gpu=False``) every GPU run is made on the CPU instead, at those
    threads (its twin: CPU_PH, CPU_BASIC, CPU_BIG), so that the figures comparing the
    structures with each other have this machine's rows."""
    from . import catalog

    ph, batches = catalog.ch4_tables(cfg), catalog.ch4_batches(cfg)
    big_b, variances = max(batches), catalog.ch4_variances(cfg)
    top, threads = catalog.ch4_top_tables(cfg), catalog.ch4_cpu_threads(cfg)
    base = catalog.CH4_VARIANCE
    runs = set()

    def add(backend, tables, batch, mix, dist="normal", var=base, hash="dek", layout="ph",
            th=None, order=ht.DEFAULT_BYTE_ORDER):  # fmt: skip
        var = var if dist == "normal" else 0.0
        backend = backend if gpu else "cpu"
        th = (threads if th is None else th) if backend == "cpu" else 0
        runs.add(Run(backend, th, dist, var, hash, layout, tables, batch, mix, order))

    for b in batches:
        for t in ph:
            add("gpu", t, b, 0)  # Figs 26-27: insert throughput and speed-up
            add("gpu", t, b, 100)  # Fig 29: search
        for mix in (0, 100):
            add("cpu", 1, b, mix)  # CPU_BASIC of Figs 27 and 29
        for mix in catalog.CH4_MIXES:
            for t in (1, top):
                add("gpu", t, b, mix)  # Figs 31, 39-40
            add("cpu", top, b, mix)  # Fig 32: CPU_PH
        for dist in ("normal", "uniform"):
            for t in (1, top):
                add("gpu", t, b, 0, dist)  # Fig 35
    for t in ph:
        for var in variances:
            add("gpu", t, big_b, 0, var=var)  # Fig 28
        for mix in catalog.CH4_MIXES:
            add("gpu", t, big_b, mix)  # Fig 30
        for h in catalog.ch4_hashes(cfg):
            for order in catalog.ch4_byte_orders(cfg) if h in ht.BYTE_WISE else ["lsb"]:
                add("gpu", t, big_b, 33, hash=h, order=order)  # Fig 34
        if t > 1:
            add("gpu", t, big_b, 33, layout="big")  # Figs 36-37
    for th in catalog.ch4_thread_sweep(cfg):
        for t in (1, top):
            add("cpu", t, big_b, 33, th=th)  # CPU_BASIC and CPU_PH against their threads
    for b in batches:
        for app in APPLICATIONS:
            for t in (1, top):
                add("gpu", t, b, 33, app)  # §4.6.2.9's applications
    for var in variances:
        add("gpu", 1, big_b, 33, var=var)  # Fig 19: GPU_BASIC against CPU_BASIC
        add("cpu", 1, big_b, 33, var=var)
        for dist in ("normal", "uniform"):
            for t in (1, top):
                add("gpu", t, big_b, 33, dist, var)  # Fig 33
        for layout in ("ph", "big"):
            add("gpu", catalog.CH4_FIG38_TABLES, big_b, 33, var=var, layout=layout)  # Fig 38
    return sorted(runs)


def _one_batch(run, tables, buckets, keys0, ops, keys) -> dict:
    """One timed, checked batch of ``run`` on its backend (run_cpu or run_gpu)."""
    if run.backend == "cpu":
        return run_cpu(tables, buckets, keys0, ops, keys, run.threads, run.hash, run.byte_order)
    return run_gpu(tables, buckets, keys0, ops, keys, run.hash, run.byte_order)


def run_cell(runs, *, preload: int, repeats: int, seed: int, log=None) -> tuple[dict, dict]:
    """Time ``runs`` (one backend's part of ``plan``): each the median over
    ``repeats`` batches (their mean, which the thesis reports over 10 runs, beside
    it), each on a freshly preloaded table and checked (``ok``), after one untimed
    batch of the first run on each backend and thread count (a first call's costs:
    the library's load, the threads' start, the kernels' compile). The keys depend
    on (seed, the key distribution, batch, mix) only, so every layout, hash and
    backend of one batch sees the same keys (paired comparisons)."""
    rows, drawn, warmed = [], {}, set()
    for run in runs:
        keys0, ops, keys = batch_keys(run, preload=preload, seed=seed, cache=drawn)
        buckets = BUCKETS * (run.tables if run.layout == "big" else 1)
        tables = 1 if run.layout == "big" else run.tables
        batch = (run, tables, buckets, keys0, ops, keys)
        if (run.backend, run.threads) not in warmed:  # the warm-up: checked, not timed
            warmed.add((run.backend, run.threads))
            if not _one_batch(*batch)["ok"]:
                raise AssertionError(f"the checker failed on {run} (warm-up)")
        measured = [_one_batch(*batch) for _ in range(repeats)]
        seconds = np.array([m["seconds"] for m in measured])
        row = {**asdict(run), "buckets": buckets, "seconds": float(np.median(seconds)),
               "seconds_mean": float(seconds.mean()), "seconds_min": float(seconds.min()),
               "mops": run.batch / float(np.median(seconds)) / 1e6,
               "ok": all(m["ok"] for m in measured),
               "upload_s": float(np.mean([m.get("upload_s", 0.0) for m in measured])),
               **{k: float(np.mean([m[k] for m in measured])) for k in ht.STATS}}  # fmt: skip
        if not row["ok"]:
            raise AssertionError(f"the checker failed on {run}")
        rows.append(row)
        if log:
            log.info("%s: %.3f Mops/s", run, row["mops"])
    arrays = {k: np.asarray([r[k] for r in rows]) for k in (rows[0] if rows else {})}
    metadata = {"study": "moazeni2013", "experiment": "ch4", "preload": int(preload),
                "repeats": int(repeats), "seed": int(seed), "buckets": BUCKETS,
                "backend": "cpu", "device": "CPU", **_host()}  # fmt: skip
    if any(run.backend == "gpu" for run in runs):
        metadata.update(backend="cuda", device=cuda_device())
    return arrays, metadata


def _host() -> dict:
    """The machine a cell ran on (``experiments.host``): its name, CPU model and CPUs."""
    from .experiments import host

    return host()


def doc_runs(cfg, gpu: bool = True) -> list[Run]:
    """The runs of ``plan`` that are the thesis's CPU_PH as the speed-up table reads it
    (the document's kind of baseline, ``hashtable_figures.ch4_speedups``): the CPU at
    ``moazeni2013_ch4_cpu_threads`` threads, ``moazeni2013_ch4_top_tables`` tables of
    BUCKETS, DEK, normal keys of the base variance or uniform keys. The best-CPU cell runs
    at their (distribution, batch, mix) on the same keys."""
    from . import catalog

    top, threads = catalog.ch4_top_tables(cfg), catalog.ch4_cpu_threads(cfg)

    def keys(r: Run) -> bool:
        return r.distribution == "uniform" or (
            r.distribution == "normal" and r.variance == catalog.CH4_VARIANCE
        )

    return [r for r in plan(cfg, gpu)
            if r.backend == "cpu" and r.threads == threads and r.tables == top
            and r.layout == "ph" and r.hash == "dek" and r.byte_order == ht.DEFAULT_BYTE_ORDER
            and keys(r)]  # fmt: skip


BEST_CPU_MIN_REPEATS = 5  # a run can stall (~3 ms, docs/moazeni2013.md): the median of >= 5


def best_cpu_cell(runs, *, preload: int, repeats: int, seed: int, threads: int | None = None,
                  load: float = 0.5, log=None) -> tuple[dict, dict]:  # fmt: skip
    """Chapter 4's best CPU code (``hashtable_best.BestHashSet``, native/hashset_best.c) on
    ``threads`` (default every CPU) at each (distribution, variance, batch, mix) of ``runs``
    (``doc_runs``), on the keys ``run_cell`` gives those runs (``batch_keys``: the same
    preload and batch): as bench/moazeni2013_ch4_best_cpu.py times it, the table sized for
    the preload and every insert at load <= ``load`` and preloaded (untimed, which starts
    OpenMP's threads), then one parallel region of a warm-up run and ``repeats`` (>= 5)
    timed runs, each from the preloaded table (restored outside the clock), timed in C
    from the first thread's start to the barrier after the last one's end: the median,
    with min and max (one run can stall about 3 ms: docs/moazeni2013.md, chapter 4). The
    last run is checked: every operation true, the checker's invariants, the key set as
    it must be."""
    from . import hashtable_best as hb

    if int(repeats) < BEST_CPU_MIN_REPEATS:
        raise ValueError(f"repeats must be at least {BEST_CPU_MIN_REPEATS}, got {repeats}")
    threads = int(threads or os.cpu_count() or 1)
    meta = {"study": "moazeni2013", "experiment": "ch4_best_cpu", "backend": "cpu",
            "device": "CPU", **_host(), "threads": threads, "seed": int(seed),
            "preload": int(preload), "repeats": int(repeats), "load": float(load),
            "code": "hashset_best.c"}  # fmt: skip
    rows, cache = [], {}
    cells = sorted({(r.distribution, r.variance, r.batch, r.mix) for r in runs})
    for dist, var, batch, mix in cells:
        run = Run("cpu", threads, dist, var, "dek", "ph", 0, batch, mix)
        pre, ops, keys = batch_keys(run, preload=preload, seed=seed, cache=cache)
        expected = np.union1d(np.setdiff1d(pre, keys[ops == ht.DELETE]), keys[ops == ht.INSERT])
        table = hb.BestHashSet.sized(pre.size + int((ops == ht.INSERT).sum()), load)
        table.batch(np.full(pre.size, ht.INSERT, dtype=np.uint8), pre, threads)
        res, seconds = table.timed_batch(ops, keys, threads, runs=int(repeats) + 1)
        if not (res.results == ht.TRUE).all():
            raise AssertionError(f"ch4 best CPU code, {run}: an operation failed")
        if not np.array_equal(table.check(), expected):
            raise AssertionError(f"ch4 best CPU code, {run}: the key set is wrong")
        times = seconds[1:]  # the first run of the region, the warm-up, dropped
        best = float(np.median(times))
        rows.append({"distribution": dist, "variance": var, "batch": batch, "mix": mix,
                     "threads": threads, "repeats": int(repeats), "best_cpu_s": best,
                     "best_cpu_s_min": float(times.min()), "best_cpu_s_max": float(times.max()),
                     "mops": batch / best / 1e6, "lines_per_op": res.stats["lines"] / batch,
                     "cas_failures": int(res.stats["cas_failures"]), "slots": table.capacity,
                     "ok": True})  # fmt: skip
        if log:
            log.info("ch4 best CPU code, %s %d %d%% search on %d threads: %.1f us "
                     "[%.1f, %.1f], %.0f Mops/s", dist, batch, mix, threads, best * 1e6,
                     times.min() * 1e6, times.max() * 1e6, batch / best / 1e6)  # fmt: skip
    arrays = {k: np.asarray([r[k] for r in rows]) for k in (rows[0] if rows else {})}
    return arrays, meta


def batch_keys(run: Run, *, preload: int, seed: int, cache: dict | None = None):
    """(preloaded keys, ops, keys) of a run: drawn from (seed, the key
    distribution) and (seed, distribution, batch, mix) alone, so that every
    layout, hash, backend and peer of one batch gets the same keys; ``cache``
    keeps each draw for the next run that needs it."""
    cache = {} if cache is None else cache
    kid = _key_id(run.distribution, run.variance)
    var = run.variance or 0.05
    # keyed by the preload's size too: two working sets of one distribution share a cache
    pid, bid = (kid, preload), (kid, preload, run.batch, run.mix)
    if pid not in cache:
        cache[pid] = draw_keys(preload, np.random.default_rng([seed, kid]), run.distribution, var)
    if bid not in cache:
        rng = np.random.default_rng([seed, kid, run.batch, run.mix])
        cache[bid] = mix_batch(cache[pid], run.batch, run.mix, rng, run.distribution, var)
    return (cache[pid], *cache[bid])


def _key_id(distribution: str, variance: float) -> int:
    """A seed word for a key distribution (the same keys for the same one)."""
    if distribution == "normal":
        return 1 + int(round(variance * 1e6))
    return {"uniform": 0, **{a: 2_000_000 + i for i, a in enumerate(APPLICATIONS)}}[distribution]
