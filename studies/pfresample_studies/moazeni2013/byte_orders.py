"""Moazeni (2013) chapter 4: how each hash spreads the thesis's keys over one table of
1,024 buckets in each byte order, on the CPU (target ``moazeni2013_ch4_byte_order_spread``;
docs/moazeni2013.md, "Byte order").

For the pipeline's preload (``hashtable_workloads.PRELOAD`` keys, normal of variance 0.05
and uniform: ``hashtable_workloads.batch_keys``) and each hash (DEK, SDBM, PJW, ``mix``)
and byte order (``lsb``: the key's float bytes least significant first, the default;
``msb``: most significant first; ``mix`` reads the word whole, so its two rows are one
hash):

* from the NumPy reference (``hashtable.bucket_stats``): the buckets holding a key, the
  largest chain, and the mean walk of a search for a present key (the nodes it visits in
  its sorted chain, averaged over the keys);
* from the C++ table itself (``hashtable.HashTable``, one table, the keys preloaded): a
  search-only batch of every key, its ``steps`` counter (the nodes Find visits) an
  operation, which must equal the NumPy walk.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import hashtable as ht
from . import hashtable_workloads as w

DISTRIBUTIONS = {"normal": 0.05, "uniform": 0.0}  # distribution -> the keys' variance


def keys(distribution: str, *, preload: int, seed: int) -> np.ndarray:
    """The preload of the pipeline's chapter 4 cells for ``distribution``."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution {distribution!r}: expected one of {list(DISTRIBUTIONS)}")
    run = w.Run("cpu", 0, distribution, DISTRIBUTIONS[distribution], "dek", "ph", 1, 1, 100)
    return w.batch_keys(run, preload=preload, seed=seed)[0]


def spread(keys_: np.ndarray, buckets: int, hash_: str, order: str, threads: int) -> dict:
    """One (hash, byte order) row: NumPy's bucket statistics and the C++ table's walk;
    a ``ValueError`` where the table loses a key or walks otherwise than NumPy."""
    stats = ht.bucket_stats(keys_, buckets, hash_, order)
    table = ht.HashTable(1, buckets, keys_.size, hash_, order)
    table.batch(np.full(keys_.size, ht.INSERT), keys_, threads)
    found = table.batch(np.full(keys_.size, ht.SEARCH), keys_, threads)
    if not (found.results == ht.TRUE).all():
        raise ValueError(f"{hash_} {order}: a preloaded key was not found")
    steps = found.stats["steps"] / keys_.size
    # a restart (a search that met a concurrent insert) walks again, so only a batch
    # without one must walk NumPy's nodes exactly
    if found.stats["restarts"] == 0 and not np.isclose(steps, stats["mean_walk"]):
        raise ValueError(f"{hash_} {order}: the table walked {steps:.3f} nodes a search "
                         f"where NumPy says {stats['mean_walk']:.3f}")  # fmt: skip
    return {**stats, "occupied_share": stats["occupied"] / buckets,
            "table_steps_per_search": steps}  # fmt: skip


def byte_order_table(*, preload: int = w.PRELOAD, buckets: int = w.BUCKETS, seed: int,
                     threads: int = 1, log=None) -> pd.DataFrame:  # fmt: skip
    """A row a (distribution, hash, byte order): see the module's docstring."""
    rows = []
    for distribution, variance in DISTRIBUTIONS.items():
        keys_ = keys(distribution, preload=preload, seed=seed)
        for hash_ in ht.HASHES:
            for order in ht.BYTE_ORDERS:
                row = spread(keys_, buckets, hash_, order, threads)
                rows.append({"distribution": distribution, "variance": variance,
                             "keys": keys_.size, "buckets": buckets, "hash": hash_,
                             "byte_order": order, "byte_wise": hash_ in ht.BYTE_WISE,
                             **row, "seed": seed})  # fmt: skip
                if log is not None:
                    log.info("%s %s %s: %d buckets, largest %d, mean walk %.1f (table %.1f)",
                             distribution, hash_, order, row["occupied"], row["largest"],
                             row["mean_walk"], row["table_steps_per_search"])  # fmt: skip
    return pd.DataFrame(rows)
