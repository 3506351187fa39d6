"""Moazeni (2013) chapter 4's byte-order table as a pipeline target
(`moazeni2013_ch4_byte_order_spread`, outside `all`): its dry run, a run on a small preload
against the study's function called directly (pfresample_studies.moazeni2013.byte_orders),
and the check that the C++ table walks as NumPy says."""

from __future__ import annotations

import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import byte_orders
from pfresample_studies.moazeni2013 import hashtable as ht
from snake_tools import job_counts, snakemake

# a preload of 4,096 keys (the batches at most that many: catalog's check)
SMALL = ["scale=quick", "moazeni2013_ch4_preload=4096", "moazeni2013_ch4_batches=[4096]"]
JOBS = {"moazeni2013_ch4_byte_order_spread_table": 1, "moazeni2013_ch4_byte_order_spread": 1}


def test_the_target_runs_one_cpu_job_and_is_not_in_all(tmp_path):
    proc = snakemake(tmp_path, "-n", "moazeni2013_ch4_byte_order_spread", config=["scale=quick"])
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output) == JOBS
    proc = snakemake(tmp_path, "-n", "all", config=["scale=quick"])
    assert proc.returncode == 0, proc.output
    assert not set(JOBS) & set(job_counts(proc.output))


def test_the_target_writes_the_study_s_table(tmp_path):
    proc = snakemake(tmp_path, "moazeni2013_ch4_byte_order_spread", config=SMALL)
    assert proc.returncode == 0, proc.output
    got = pd.read_csv(tmp_path / "results" / "tables" / "moazeni2013" / "ch4_byte_orders.csv")
    want = byte_orders.byte_order_table(preload=4096, seed=got["seed"].iloc[0])
    assert len(got) == len(byte_orders.DISTRIBUTIONS) * len(ht.HASHES) * len(ht.BYTE_ORDERS)
    assert set(got["scale"]) == {"quick"}
    pd.testing.assert_frame_equal(got.drop(columns="scale"), want, check_dtype=False)
    # the orders differ for a byte-wise hash and not for mix, which reads the word whole
    walk = got.set_index(["distribution", "hash", "byte_order"])["mean_walk"]
    assert walk["normal", "dek", "lsb"] != walk["normal", "dek", "msb"]
    assert walk["normal", "mix", "lsb"] == walk["normal", "mix", "msb"]


def test_a_table_that_walks_otherwise_than_numpy_is_an_error(monkeypatch):
    keys = byte_orders.keys("normal", preload=1024, seed=1)
    assert byte_orders.spread(keys, 64, "dek", "lsb", 1)["table_steps_per_search"] > 1
    real = ht.bucket_stats

    def one_node_more(*args):
        stats = real(*args)
        return {**stats, "mean_walk": stats["mean_walk"] + 1}

    monkeypatch.setattr(ht, "bucket_stats", one_node_more)
    with pytest.raises(ValueError, match="dek lsb: the table walked"):
        byte_orders.spread(keys, 64, "dek", "lsb", 1)


def test_an_unknown_distribution_is_refused():
    with pytest.raises(ValueError, match="distribution 'gamma'"):
        byte_orders.keys("gamma", preload=16, seed=1)
