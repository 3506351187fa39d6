"""Moazeni (2013) chapter 7 on the GPU (pfresample_studies.moazeni2013.mddtw_gpu): the
kernel's DTW distances equal, bit for bit, to the NumPy reference's (the same float64
operations in the same order), for several bands and query lengths, and the same
single-dimensional tuples; a negative control (another band) differs. The timing
cells' path (``fast_stats=True``: running-sum statistics) equals the reference to
1e-9, constant windows (whose mean does not round to their value) exactly; where
dtaidistance is installed, the distances equal its banded DTW's."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import mddtw

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu
if not cupy.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from pfresample_studies.moazeni2013 import mddtw_gpu  # noqa: E402

SEED = 2013


@pytest.mark.parametrize("m,band", [(16, 0), (32, 3), (64, 6), (100, 99), (257, 25)])
def test_the_kernel_equals_the_reference_bit_for_bit(m, band):
    rng = np.random.default_rng([SEED, m, band])
    db = np.cumsum(rng.normal(size=(3, 2000)), axis=1)
    db[1, 500:700] = 3.0  # constant windows: zeros on both sides (mddtw.deviations)
    db[2, 1200:1400] = 0.1  # constant, but the computed deviation is ~1e-17, not 0
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


def _recording_with_constant_windows(seed):
    """3 dimensions of 3,000 samples, random walks far from zero, with constant
    stretches of 0.1, 1/3 and 3.0 (the windows inside them normalise to zeros)."""
    rng = np.random.default_rng([SEED, seed])
    db = np.cumsum(rng.normal(size=(3, 3000)), axis=1) + 1e3
    db[0, 400:700] = 0.1
    db[1, 1000:1300] = 1 / 3
    db[2, 2000:2300] = 3.0
    return db, rng


@pytest.mark.parametrize("m,band", [(3, 1), (10, 2), (64, 6), (128, 12)])
def test_the_timed_path_equals_the_reference(m, band):
    """Recording(fast_stats=True), which the timing cells run: its distances equal
    dtw_windows's to 1e-9 relative (running sums against two passes), those of the
    constant windows exactly (both zeros: the query's distance to a zero window);
    a negative control (half the band) differs."""
    db, rng = _recording_with_constant_windows(m)
    query = rng.normal(size=(3, m))
    pair_list = mddtw_gpu.pairs(3, 3, 2)
    rec = mddtw_gpu.Recording(db, m, fast_stats=True)
    got = rec.distances(query, pair_list, band).get()
    for row, (j, i) in zip(got, pair_list, strict=True):
        want = mddtw.dtw_windows(query[j], db[i], band)
        assert np.allclose(row, want, rtol=1e-9, atol=0), (j, i)
        constant = np.isinf(mddtw.window_stats(db[i], m)[1])
        assert constant.sum() == 300 - m + 1
        zero = mddtw.dtw_pair(mddtw.znorm(query[j]), np.zeros(m), band)
        assert np.array_equal(row[constant], np.full(constant.sum(), zero)), (j, i)
    other = rec.distances(query, pair_list, band // 2).get()  # a narrower band: farther
    assert not np.allclose(other, got, rtol=1e-9, atol=0)


@pytest.mark.parametrize("m,band", [(16, 0), (32, 3), (64, 6)])
def test_the_distances_equal_dtaidistance(m, band):
    """dtaidistance's banded DTW (``window`` = band + 1: |i - j| <= band; the square
    root of the summed squared differences, as ours) of the z-normalised query and
    each z-normalised window, on the exact and the timed path."""
    dtw = pytest.importorskip("dtaidistance.dtw")
    db, rng = _recording_with_constant_windows(m)
    query = rng.normal(size=(1, m))
    windows = mddtw.znorm_windows(db[1], m)
    q = mddtw.znorm(query[0])
    want = np.array([dtw.distance(q, w, window=band + 1, use_c=False) for w in windows])
    for fast in (False, True):
        got = mddtw_gpu.Recording(db, m, fast_stats=fast).distances(query, [(0, 1)], band)
        assert np.allclose(got.get()[0], want, rtol=1e-9, atol=1e-12), fast


def test_the_raw_distances_equal_the_reference_without_normalisation():
    rng = np.random.default_rng([SEED, 5])
    db, query = 2.0 + np.cumsum(rng.normal(size=(2, 600)), axis=1), rng.normal(size=(2, 24))
    got = mddtw_gpu.GpuDistances(db, raw=True)(query, mddtw.pairs(2, 2, 2), 3)
    want = mddtw.NumpyDistances(db, raw=True)(query, mddtw.pairs(2, 2, 2), 3)
    assert np.array_equal(got, want)


def test_fig63_end_to_end_equals_the_best_cpu_code():
    """``search_stages`` (the GPU's distances, the device's top-p, the host's matching)
    gives the ranked list of the best CPU code's selection and the same matching, bit
    for bit, on the timing cell's statistics; its stages add up to at most its total."""
    from pfresample_studies.moazeni2013 import mddtw_experiments, native

    k, n, m = 9, 4096, 32
    db, query = mddtw_experiments.timing_inputs(k, n, m, (32, 64), 2017)
    pair_list = mddtw.pairs(k, k, 2)
    data = mddtw_experiments._search_input(db, query, m, pair_list)[0]
    top, _ = native.dtw_best_search(data, 2, 10, m // 2, 2)
    want = mddtw.combine(mddtw.tuples_from_top(top, pair_list), m, 1.0)
    rec = mddtw_gpu.Recording(db, m, fast_stats=True)
    got, times = mddtw_gpu.search_stages(rec, query, pair_list, mddtw.Search(2, 10, 2, 1.0))
    assert got == want and len(got) > 0
    parts = times["distances_s"] + times["top_p_s"] + times["matching_s"]
    assert parts == pytest.approx(times["total_s"], rel=1e-9)
    assert mddtw_gpu.top_p(rec, query, pair_list, 2, 10, m // 2) == top
    # the negative control: another band selects other windows
    assert mddtw_gpu.top_p(rec, query, pair_list, 0, 10, m // 2) != top
