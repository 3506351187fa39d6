"""Moazeni (2013) chapter 7 on the CPU (pfresample_studies.moazeni2013.mddtw): the
vectorised DTW against the textbook loop, the band's limit (band 0 is the Euclidean
distance), the matching phase's enumeration against known counts, nDCG by hand, and
a planted-motif recording (Fig 58's scenarios, fixed seed) where MD-DTW must find the
occurrence whose dimensions lag and EDT must not (the thesis's claim on time lag)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import mddtw as M

SEED = 2013


@pytest.mark.parametrize("band", [0, 1, 5, 31])
def test_dtw_over_every_window_equals_the_textbook_loop(band):
    rng = np.random.default_rng([SEED, band])
    series, query = rng.normal(size=300), rng.normal(size=32)
    got = M.dtw_windows(query, series, band)
    windows = M.znorm_windows(series, 32)
    want = np.array([M.dtw_pair(M.znorm(query), w, band) for w in windows])
    assert np.allclose(got, want, rtol=1e-12, atol=0)


def test_a_zero_band_is_the_euclidean_distance():
    rng = np.random.default_rng(SEED)
    series, query = rng.normal(size=200), rng.normal(size=20)
    euclid = np.sqrt(((M.znorm_windows(series, 20) - M.znorm(query)) ** 2).sum(axis=1))
    assert np.allclose(M.dtw_windows(query, series, 0), euclid, rtol=1e-12)
    # warping can only help: a wider band is never farther
    assert (M.dtw_windows(query, series, 4) <= euclid + 1e-12).all()


def test_best_windows_keep_their_distance():
    dist = np.array([5.0, 1.0, 1.1, 9.0, 0.5, 0.6, 7.0, 2.0])
    assert M.best_windows(dist, 3, 2) == [(4, 0.5), (1, 1.0), (7, 2.0)]


def test_the_maximal_matchings_of_small_graphs():
    """A complete 3 x 3 bipartite graph has 3! maximal matchings; a path
    q0-d0, q1-d0, q1-d1 has two: {q0-d0, q1-d1} and {q1-d0}."""
    edges = [M.Match1D(q, d, 0, 1.0) for q in range(3) for d in range(3)]
    sets = M._maximal_matchings(edges)
    assert len(sets) == math.factorial(3) and all(len(s) == 3 for s in sets)
    a, b, c = M.Match1D(0, 0, 0, 1.0), M.Match1D(1, 0, 0, 1.0), M.Match1D(1, 1, 0, 1.0)
    sets = {frozenset(s) for s in M._maximal_matchings([a, b, c])}
    assert sets == {frozenset({a, c}), frozenset({b})}


def test_ranking_prefers_more_dimensions_then_less_distance():
    one = (M.Match1D(0, 0, 10, 0.1),)
    two = (M.Match1D(0, 0, 50, 2.0), M.Match1D(1, 2, 52, 1.0))
    assert [r[0] for r in M.rank([one, two], alpha=1.0)] == [50, 10]
    assert M.distance(two, alpha=3.0) == pytest.approx(2.0 + 3.0)


def _ndcg_resorted(relevant, k):
    """The definition §7.5.2 does not give (the returned list re-sorted as the ideal),
    the negative control: one relevant item at rank 1 scores 1.0 with it."""
    rel = np.asarray(relevant[:k], dtype=float)
    disc = 1 / np.log2(np.arange(2, rel.size + 2))
    best = (np.sort(rel)[::-1] * disc).sum()
    return float((rel * disc).sum() / best) if best > 0 else 0.0


def test_ndcg_by_hand():
    """§7.5.2: nDCG_k = DCG_k / DCG_IDEAL, gain 2^rel - 1 at rank i over log2(i + 1),
    DCG_IDEAL the DCG of the perfect ranking of all relevant items.

    * [rel, -, -], k = 3, 3 relevant items exist: DCG = 1/log2(2) = 1; the perfect
      ranking puts all 3 first: 1/log2(2) + 1/log2(3) + 1/log2(4) = 1 + 0.6309298 + 0.5
      = 2.1309298; nDCG = 1 / 2.1309298 = 0.4692787 (re-sorting the returned list
      would say 1.0).
    * [-, rel, rel, -], k = 4, 2 relevant items exist (both returned): DCG = 0.6309298
      + 0.5 = 1.1309298; ideal 1 + 0.6309298 = 1.6309298; nDCG = 0.6934264 (here the
      two definitions agree).
    * [rel, rel, -, -], k = 4, 10 relevant items exist: DCG = 1.6309298; the ideal has
      4 gains: 1.6309298 + 0.5 + 1/log2(5) = 2.5616063; nDCG = 0.6366824."""
    assert M.ndcg([True, False, False], 3, total=3) == pytest.approx(0.4692787, abs=5e-8)
    assert M.ndcg([False, True, True, False], 4, total=2) == pytest.approx(0.6934264, abs=5e-8)
    assert M.ndcg([True, True, False, False], 4, total=10) == pytest.approx(0.6366824, abs=5e-8)
    assert M.ndcg([True, True, False], 3, total=2) == 1.0  # every relevant item, first
    assert M.ndcg([False, False], 2, total=5) == 0.0
    assert M.ndcg([False, False], 2, total=0) == 0.0  # nothing to find: no ideal gain
    # the negative control: the returned list re-sorted as the ideal fails the first case
    assert _ndcg_resorted([True, False, False], 3) == 1.0
    assert _ndcg_resorted([True, False, False], 3) != pytest.approx(0.4692787, abs=5e-8)
    assert _ndcg_resorted([False, True, True, False], 4) == pytest.approx(0.6934264, abs=5e-8)


def test_ndcg_refuses_more_relevant_results_than_items():
    with pytest.raises(ValueError, match="only 1 relevant items exist"):
        M.ndcg([True, True], 2, total=1)
    with pytest.raises(ValueError, match="k >= 1"):
        M.ndcg([True], 0, total=1)


def test_mddtw_finds_the_lagged_occurrence_that_edt_misses():
    rng = np.random.default_rng(7)
    m, positions = 64, [300, 1100, 1900, 2700, 3500]
    db, motif = M.planted(
        3, 4000, m, positions, rng, shifts=[[0, 0, 0], [0, 8, -8], [0, 0, 0], [5, 0, 0], [0, 0, 0]],
        scales=[1, 1, 2.5, 1, 0.6], swaps=[None, None, None, (0, 1), None],
        missing=[None, None, None, None, (2,)],
    )  # fmt: skip
    ours = [r[0] for r in M.md_dtw(motif, db, nr=2, p=8, band=6)[:5]]
    theirs = [t for t, _ in M.edt(motif, db, p=8)[:5]]

    def found(starts, p):
        return any(abs(s - p) <= m // 4 for s in starts)

    assert found(ours, 1100) and not found(theirs, 1100)  # dimensions lag by +-8
    assert sum(found(ours, p) for p in positions) >= 4


def test_bad_searches_are_named():
    with pytest.raises(ValueError, match="band"):
        M.dtw_windows(np.ones(4), np.ones(10), -1)
    with pytest.raises(ValueError, match="within the series"):
        M.dtw_windows(np.ones(12), np.ones(10), 1)


@pytest.mark.parametrize("m,band", [(16, 0), (40, 4), (64, 63)])
def test_the_compiled_dtw_equals_the_reference_bit_for_bit(m, band):
    from pfresample_studies.moazeni2013 import native

    rng = np.random.default_rng([SEED, m])
    x, q = np.cumsum(rng.normal(size=1500)), rng.normal(size=m)
    x[300:400] = 1.0  # zero-deviation windows
    mu, sd = M.window_stats(x, m)
    got = native.dtw_windows(M.znorm(q), x, mu, sd, band)
    assert np.array_equal(got, M.dtw_windows(q, x, band))
    other = band // 2 if band > 1 else band + 1  # a wide band's last steps rarely matter
    assert not np.array_equal(native.dtw_windows(M.znorm(q), x, mu, sd, other), got)


@pytest.mark.parametrize("seed", range(6))
def test_the_assignment_finds_what_the_enumeration_ranks_first(seed):
    """best_sets (a min-cost maximum matching a segment) against ranking every
    maximal matching (feasible_sets): the same best set overall, every set a
    matching (distinct query and recording dimensions), and no set of more tuples
    or less distance at any location the enumeration's first result holds."""
    rng = np.random.default_rng([SEED, seed])
    matches = list({M.Match1D(int(rng.integers(0, 4)), int(rng.integers(0, 4)),
                              int(rng.integers(0, 300)), float(rng.uniform(0.5, 5)))
                    for _ in range(40)})  # fmt: skip
    m, alpha = 50, 1.5
    want = M.rank(M.feasible_sets(matches, m), alpha)
    got = M.rank(M.best_sets(matches, m, alpha), alpha)
    assert (len(got[0][2]), got[0][1]) == (len(want[0][2]), want[0][1])
    for _, _, ms in got:
        assert len({e.q for e in ms}) == len(ms) == len({e.db for e in ms})
    # negative control: dropping the distances' weights changes the best set's distance
    other = M.rank(M.best_sets(matches, m, 1.0), 1.0)
    assert other[0][1] != got[0][1] or alpha == 1.0


def test_segmentation_and_exhausting_find_what_a_narrow_band_misses():
    """An occurrence whose dimensions lag each other: the search finds it, and
    exhausting never drops a location the plain search found."""
    rng = np.random.default_rng(SEED)
    db, motif = M.planted(3, 1200, 40, [200, 700], rng,
                          shifts=[[0, 0, 0], [0, 6, -6]])  # fmt: skip
    plain = M.search(motif, db, M.Search(nr=1, p=5, band=2))
    both = M.search(motif, db, M.Search(nr=1, p=5, band=2, segments=2, exhaust_band=8))
    starts = [r[0] for r in plain[:4]]
    assert any(abs(t - 200) <= 20 for t in starts) and any(abs(t - 700) <= 20 for t in starts)
    for t in starts:
        assert any(abs(t - u) < 40 for u in [r[0] for r in both])


@pytest.mark.parametrize("seed", range(4))
def test_the_pruned_search_selects_what_the_full_one_does(seed):
    """Lower bounds and early abandoning change the work, not the p windows: the
    same (t, d) as best_windows over every exact distance, bit for bit."""
    from pfresample_studies.moazeni2013 import native

    rng = np.random.default_rng([SEED, seed])
    m, band, p = 48, 5, 6
    x = np.cumsum(rng.normal(size=4000))
    q = x[1000 : 1000 + m] + rng.normal(0, 0.3, m)  # a near match, so bounds prune
    mu, sd = M.window_stats(x, m)
    full = M.best_windows(native.dtw_windows(M.znorm(q), x, mu, sd, band), p, m // 2)
    got, computed = native.dtw_top_pruned(M.znorm(q), x, mu, sd, band, p, m // 2)
    assert got == full
    assert computed < x.size - m + 1  # it pruned
    # negative control: another band selects other windows or distances
    other, _ = native.dtw_top_pruned(M.znorm(q), x, mu, sd, band + 3, p, m // 2)
    assert other != got


# constant windows whose mean does not round to their value: np.std gives ~1e-17, not 0
CONSTANT_CASES = [(0.1, 3), (0.1, 7), (0.3, 10), (1 / 3, 10), (3.0, 16), (-2.7e8, 12)]


def _with_constant_stretch(value, m, rng):
    """A random walk with a stretch of 3 m samples equal to ``value``: the windows
    inside it are constant (start at 1000 ... 1000 + 2 m)."""
    x = np.cumsum(rng.normal(size=1500)) + value
    x[1000 : 1000 + 3 * m] = value
    return x, np.arange(1000, 1000 + 2 * m + 1)


@pytest.mark.parametrize("value,m", CONSTANT_CASES)
def test_constant_windows_normalise_to_zeros_in_every_backend(value, m):
    """A window whose values are all equal normalises to zeros, so its DTW distance
    to a z-normalised query is the query's to a zero window (sqrt(m) for band 0):
    in NumPy and in the compiled code, both from window_stats (the GPU's test is in
    tests/gpu). Before, np.std's ~1e-17 made such windows +-1 values (2.449 where
    1.732 is right at m = 3). A query that is constant normalises to zeros too."""
    rng = np.random.default_rng([SEED, m])
    x, inside = _with_constant_stretch(value, m, rng)
    q = rng.normal(size=m)
    assert np.count_nonzero(M.znorm_windows(x, m)[inside]) == 0
    for band in (0, 2):
        want = M.dtw_pair(M.znorm(q), np.zeros(m), band)
        got = M.dtw_windows(q, x, band)
        assert np.array_equal(got[inside], np.full(inside.size, want)), band
    assert M.dtw_windows(q, x, 0)[inside[0]] == pytest.approx(np.sqrt(m), rel=1e-12)
    assert np.count_nonzero(M.znorm(np.full(m, value))) == 0
    from pfresample_studies.moazeni2013 import native

    try:
        native.dtw_library()
    except RuntimeError:
        pytest.skip("no C compiler on this host")
    mu, sd = M.window_stats(x, m)
    assert np.array_equal(native.dtw_windows(M.znorm(q), x, mu, sd, 2), M.dtw_windows(q, x, 2))


def test_windows_that_vary_are_not_taken_for_constant():
    """Negative control: a window varying by 1e-9 of its level (far above rounding)
    keeps its shape; one varying by one unit in the last place does not."""
    m = 8
    level = 0.1
    shape = np.sin(np.arange(m))
    small = level + 1e-9 * shape
    z = M.znorm_windows(small, m)[0]
    assert np.allclose(z, (shape - shape.mean()) / shape.std(), atol=1e-6)
    ulp = np.full(m, level)
    ulp[3] = np.nextafter(level, 1.0)
    assert np.count_nonzero(M.znorm_windows(ulp, m)) == 0


@pytest.mark.parametrize("m", [3, 10, 64])
def test_running_stats_equal_the_two_pass_ones_and_agree_on_constant_windows(m):
    """The GPU timing cells' running sums (``running_stats``) against window_stats
    on a long random walk far from zero, with constant stretches of 0.1 and 1/3 and
    a nearly constant one (ulps apart) late in the series: the same constant windows
    (+inf at the same places), means and deviations equal to 1e-12."""
    rng = np.random.default_rng([SEED, m, 7])
    x = np.cumsum(rng.normal(size=200_000)) + 1e4
    x[5000 : 5000 + 3 * m] = 0.1
    x[90_000 : 90_000 + 3 * m] = 1 / 3
    x[190_000 : 190_000 + 3 * m] = 1e4 + np.arange(3 * m) % 2 * np.spacing(1e4)
    x[150_000 : 150_000 + 3 * m] = 7.0 + 1e-9 * rng.normal(size=3 * m)  # varies: kept
    mu, sd = M.window_stats(x, m)
    fmu, fsd = M.running_stats(x, m)
    constant = np.isinf(sd)
    assert np.array_equal(constant, np.isinf(fsd))
    assert constant[[5000, 90_000, 190_000]].all() and not constant[150_000]
    assert constant.sum() == 3 * (2 * m + 1)
    assert np.allclose(fmu, mu, rtol=1e-12, atol=0)
    assert np.allclose(fsd[~constant], sd[~constant], rtol=1e-12, atol=0)


def test_the_window_range_is_each_windows_min_and_max():
    x = np.random.default_rng(SEED).normal(size=300)
    for m in (1, 2, 5, 64):
        w = np.lib.stride_tricks.sliding_window_view(x, m)
        lo, hi = M.window_range(x, m)
        assert np.array_equal(lo, w.min(axis=1)) and np.array_equal(hi, w.max(axis=1))


@pytest.mark.parametrize("m,band", [(16, 0), (32, 3), (64, 6), (40, 39)])
def test_the_distances_equal_dtaidistance(m, band):
    """dtaidistance's banded DTW (``window`` = band + 1 is |i - j| <= band; the square
    root of the summed squared differences, as ours) of the z-normalised query and
    each z-normalised window, constant windows (zeros) among them."""
    dtw = pytest.importorskip("dtaidistance.dtw")
    rng = np.random.default_rng([SEED, m, band])
    x, _ = _with_constant_stretch(0.1, m, rng)
    q = rng.normal(size=m)
    want = [dtw.distance(M.znorm(q), w, window=band + 1, use_c=False)
            for w in M.znorm_windows(x, m)]  # fmt: skip
    assert np.allclose(M.dtw_windows(q, x, band), want, rtol=1e-12, atol=1e-12)


def test_without_normalisation_the_distances_are_the_raw_windows():
    rng = np.random.default_rng([SEED, 11])
    series, query = 3.0 + rng.normal(size=120), rng.normal(size=16)
    raw = np.lib.stride_tricks.sliding_window_view(series, 16)
    want = np.array([M.dtw_pair(query, w, 2) for w in raw])
    assert np.allclose(M.dtw_windows(query, series, 2, normalise=False), want, rtol=1e-12)
    # the negative control: the normalised distances are not these (the level 3 is gone)
    assert not np.allclose(M.dtw_windows(query, series, 2), want, rtol=1e-3)


def test_cached_distances_compute_each_request_once():
    rng = np.random.default_rng([SEED, 12])
    db, query = rng.normal(size=(2, 200)), rng.normal(size=(2, 16))
    calls = []

    def counted(rows, pair_list, band):
        calls.append(band)
        return M.NumpyDistances(db)(rows, pair_list, band)

    cached = M.CachedDistances(counted)
    pairs = M.pairs(2, 2, 2)
    a, b = cached(query, pairs, 2), cached(query.copy(), pairs, 2)
    assert a is b and calls == [2]
    cached(query, pairs, 3)
    cached(query[:, :8], pairs, 2)
    assert calls == [2, 3, 2]


def test_a_second_result_in_a_found_episode_gains_nothing():
    """Four episodes of 100 (labels a, a, b, a); the query is episode 0's interior at 18,
    m = 64: relevant items are episodes 1 and 3. Results at 118 (episode 1), 160
    (episode 1 again: its window's middle, 192, lies in it) and 300 (episode 3): gains
    1, 0, 1 over the ideal 1 + 1/log2(3) -> (1 + 1/log2(4)) / (1 + 1/log2(3))."""
    from pfresample_studies.moazeni2013 import mddtw_experiments as E

    labels = np.array(["a", "a", "b", "a"])
    got = E._score([118, 160, 300], 18, 64, labels, 100, 0)
    assert got["ndcg"] == pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3)))
    assert got["recall"] == 1.0 and got["precision_at_10"] == 1.0


def test_the_orientations_are_rotations():
    from pfresample_studies.moazeni2013 import mddtw_experiments as E

    rng = np.random.default_rng(SEED)
    for how in E.ORIENTATIONS:
        r = E._orientation(how, rng)
        assert np.allclose(r @ r.T, np.eye(3)) and np.linalg.det(r) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="orientation is one of"):
        E._orientation("mirrored", rng)


def test_combine_on_the_selected_windows_is_the_search():
    """The end-to-end path's pieces (Fig 63 timed end to end): each pair's p best
    windows as tuples, then ``combine``, give ``search``'s ranked list (no segmentation
    or exhausting), and the best CPU code's selection gives the same windows."""
    from pfresample_studies.moazeni2013 import mddtw_experiments as E
    from pfresample_studies.moazeni2013 import native

    k, n, m = 4, 1500, 32
    db, query = E.timing_inputs(k, n, m, (32,), SEED)
    pair_list = M.pairs(k, k, 2)
    s = M.Search(nr=2, p=6, band=2, alpha=1.0)
    dist = M.NumpyDistances(db)(query, pair_list, 2)
    top = [M.best_windows(row, 6, m // 2) for row in dist]
    assert M.combine(M.tuples_from_top(top, pair_list), m, 1.0) == M.search(query, db, s)
    stats = [M.window_stats(row, m) for row in db]
    data = native.DtwSearchInput(np.stack([M.znorm(r) for r in query]), db,
                                 np.stack([a for a, _ in stats]),
                                 np.stack([b for _, b in stats]), pair_list)  # fmt: skip
    assert native.dtw_best_search(data, 2, 6, m // 2, 1)[0] == top
    # the negative control: the tuples of another band rank differently
    other = [M.best_windows(row, 6, m // 2) for row in M.NumpyDistances(db)(query, pair_list, 0)]
    assert M.combine(M.tuples_from_top(other, pair_list), m, 1.0) != M.search(query, db, s)
