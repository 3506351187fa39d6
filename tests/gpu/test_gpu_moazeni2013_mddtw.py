"""Moazeni (2013) chapter 7 on the GPU (pfresample.studies.moazeni2013.mddtw_gpu): the
kernel's DTW distances equal, bit for bit, to the NumPy reference's (the same float64
operations in the same order), for several bands and query lengths, and the same
single-dimensional tuples; a negative control (another band) differs."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample.studies.moazeni2013 import mddtw

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu
if not cupy.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from pfresample.studies.moazeni2013 import mddtw_gpu  # noqa: E402

SEED = 2013


@pytest.mark.parametrize("m,band", [(16, 0), (32, 3), (64, 6), (100, 99), (257, 25)])
def test_the_kernel_equals_the_reference_bit_for_bit(m, band):
    rng = np.random.default_rng([SEED, m, band])
    db = np.cumsum(rng.normal(size=(3, 2000)), axis=1)
    db[1, 500:700] = 3.0  # constant windows: a zero deviation, replaced by 1 on both sides
    query = rng.normal(size=(3, m))
    rec = mddtw_gpu.Recording(db, m)
    pair_list = mddtw_gpu.pairs(3, 3, 2)
    got = rec.distances(query, pair_list, band).get()
    for row, (j, i) in zip(got, pair_list, strict=True):
        want = mddtw.dtw_windows(query[j], db[i], band)
        assert np.array_equal(row, want), (j, i)
    other_band = band // 2 if band > 1 else band + 1  # a wide band's last steps rarely matter
    other = rec.distances(query, pair_list, other_band).get()
    assert not np.array_equal(other, got)


def test_the_same_single_dimensional_tuples():
    rng = np.random.default_rng(SEED)
    db, motif = mddtw.planted(4, 1500, 48, [200, 900], rng)
    want = mddtw.single_dim_search(motif, db, nr=2, p=5, band=4)
    got = mddtw_gpu.single_dim_search(motif, db, nr=2, p=5, band=4)
    assert got == want


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="n >= m"):
        mddtw_gpu.Recording(np.zeros((2, 10)), 20)
    rec = mddtw_gpu.Recording(np.random.default_rng(0).normal(size=(2, 100)), 10)
    with pytest.raises(ValueError, match="query must be"):
        rec.distances(np.zeros((2, 11)), [(0, 0)], 1)


def test_the_same_ranked_list_end_to_end():
    """The whole search (segmentation and exhausting on) ranks the same results
    from the GPU's distances as from NumPy's."""
    rng = np.random.default_rng([SEED, 7])
    db, motif = mddtw.planted(4, 2000, 40, [300, 1200], rng, shifts=[[0, 0, 0, 0], [0, 5, -5, 3]])
    s = mddtw.Search(nr=2, p=6, band=2, segments=2, exhaust_band=8)
    want = mddtw.search(motif, db, s, mddtw.NumpyDistances(db))
    got = mddtw.search(motif, db, s, mddtw_gpu.GpuDistances(db))
    assert got == want
