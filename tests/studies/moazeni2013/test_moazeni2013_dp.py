"""Moazeni (2013) chapter 3 on the CPU: the recurrence of eqs. 1-2 and its two
blocked decompositions (pfresample_studies.moazeni2013.dp).

Exact checks, no tolerances: every candidate is one addition of two stored
values and the rest are minima, so every order of evaluation gives the same
matrix bit for bit (float32 and int32). The references: eq. 1's three loops
(``solve_direct``), a brute force over the partitions of [i, j] into
intervals (what eq. 1 computes: each interval costs its initial value), and
the sum of a when every other entry starts at +inf. Table 1's kernel-call
counts are reproduced exactly for both orders. The negative control: the
bottom-up order without eq. 5 (the triangular part) must differ."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import dp, dp_gpu

SEED = 2013


def _random(n, dtype, rng):
    """a (n weights) and an init matrix (n + 1 a side) of ``dtype``; float32
    values are integers below 2**10 so that every sum is exact (the brute
    force adds in its own order), int32 the same integers."""
    a = rng.integers(0, 2**10, n)
    init = rng.integers(0, 2**12, (n + 1, n + 1))
    return a.astype(dtype), init.astype(dtype)


def _partitions(i, j):
    """Every partition of [i, j] into consecutive intervals, as lists of (p, q)."""
    inner = range(i + 1, j + 1)
    for r in range(len(inner) + 1):
        for cuts in itertools.combinations(inner, r):
            bounds = (i, *cuts, j + 1)
            yield [(bounds[t], bounds[t + 1] - 1) for t in range(len(bounds) - 1)]


@pytest.mark.parametrize("dtype", dp.DTYPES)
def test_every_entry_is_the_best_partition_of_its_interval(dtype):
    rng = np.random.default_rng(SEED)
    n = 9
    a, init = _random(n, dtype, rng)
    o = dp.solve_direct(a, init, dtype)

    def cost(p, q):  # an interval's initial value in the original domain
        return int(a[p]) if p == q else int(init[p, q + 1])

    for i in range(n):
        for j in range(i, n):
            best = min(sum(cost(p, q) for p, q in part) for part in _partitions(i, j))
            assert int(o[i, j]) == best, (i, j)


@pytest.mark.parametrize("dtype", dp.DTYPES)
def test_with_no_initial_values_the_answer_is_the_sum(dtype):
    a = np.random.default_rng(SEED).integers(0, 2**10, 200).astype(dtype)
    m = dp.solve_diagonals(dp.transformed(a, dtype=dtype))
    assert dp.answer(m) == a.astype(np.int64).sum()


def _orders(m, s):
    return {
        "diagonals": dp.solve_diagonals(m.copy()),
        "bottom_up": dp.solve_bottom_up(m.copy(), s)[0],
        "divide_and_conquer": dp.solve_divide_and_conquer(m.copy(), s)[0],
        # eq. 5 as min-plus products down to a base of s / 4 (or s where s < 4)
        "recursive": dp.solve_recursive(m.copy(), s, s // 4 if s % 4 == 0 else s)[0],
    }


@pytest.mark.parametrize("dtype", dp.DTYPES)
@pytest.mark.parametrize("n,s", [(20, 1), (20, 3), (47, 8), (64, 16), (100, 16), (130, 32)])
def test_every_order_gives_the_same_matrix_bit_for_bit(dtype, n, s):
    rng = np.random.default_rng([SEED, n, s])
    if dtype == "float32":  # any floats: rounding is the same in every order
        a = rng.gamma(2.0, 1.0, n).astype(np.float32)
        init = rng.gamma(2.0, 5.0, (n + 1, n + 1)).astype(np.float32)
    else:
        a, init = _random(n, dtype, rng)
    m = dp.transformed(a, init, dtype)
    results = _orders(m, s)
    direct = dp.solve_direct(a, init, dtype)
    for name, r in results.items():
        assert r.dtype == np.dtype(dtype) and r.shape == m.shape
        for i in range(n):  # the original domain: o[i, j] = m'[i, j + 1]
            assert np.array_equal(r[i, i + 1 :], direct[i, i:]), (name, i)


def test_leaving_out_the_triangular_part_changes_the_answer():
    """Negative control: eq. 4 alone misses the splits inside a block's own
    row and column, so the check above must be able to fail."""
    rng = np.random.default_rng(SEED)
    a = rng.gamma(2.0, 1.0, 63).astype(np.float32)
    init = rng.gamma(2.0, 5.0, (64, 64)).astype(np.float32)
    m = dp.transformed(a, init)
    g = dp.Blocked(m, 16)
    for i in range(g.blocks):
        g.diagonal(i)
    for d in range(1, g.blocks):
        for i in range(g.blocks - d):
            for k in range(i + 1, i + d):
                g.rectangular(g.block(i, i + d), g.block(i, k), g.block(k, i + d))
    assert not np.array_equal(g.result(), dp.solve_diagonals(m.copy()))


# Table 1 of the thesis: (triangular calls, rectangular calls) at n = 1,024 ... 8,192
TABLE1 = {
    "bottom_up": {1024: (6, 4), 2048: (28, 56), 4096: (120, 560), 8192: (496, 4960)},
    "divide_and_conquer": {1024: (6, 4), 2048: (36, 28), 4096: (216, 172), 8192: (1296, 1036)},
}


@pytest.mark.parametrize("n", [1024, 2048, 4096, 8192])
def test_table1_call_counts_are_reproduced(n):
    """n is the matrix's side (Table 1's problem size); s = M = 256."""
    _, up = dp.solve_bottom_up(dp.shaped(n), 256, dry=True)
    _, dc = dp.solve_divide_and_conquer(dp.shaped(n), 256, dry=True)
    assert (up.triangular, up.rectangular) == TABLE1["bottom_up"][n]
    assert (up.triangular, up.rectangular) == dp.bottom_up_counts(n // 256)
    assert (dc.triangular, dc.rectangular) == TABLE1["divide_and_conquer"][n]


def test_a_dry_run_counts_what_the_run_calls():
    m = dp.transformed(np.arange(1, 128, dtype=np.float32))
    for solve in (dp.solve_bottom_up, dp.solve_divide_and_conquer):
        _, wet = solve(m.copy(), 16)
        _, dry = solve(dp.shaped(m.shape[0]), 16, dry=True)
        assert (wet.triangular, wet.rectangular, wet.diagonal) == (
            dry.triangular, dry.rectangular, dry.diagonal)  # fmt: skip


def test_operation_count():
    """(n^3 - n) / 6 candidates: count them on a small n."""
    n = 17
    count = sum(j - i for i in range(n) for j in range(i + 1, n))
    assert dp.operations(n) == count


@pytest.mark.parametrize(
    "a,dtype,match",
    [
        ([1, -2, 3], "int32", "must be >= 0"),
        ([1.5, 2.0], "int32", "must be integers"),
        ([1.0, np.inf], "float32", "finite"),
        ([[1.0]], "float32", "1-D"),
        ([1.0], "float64", "dtype must be one of"),
    ],
)
def test_bad_weights_are_named(a, dtype, match):
    with pytest.raises(ValueError, match=match):
        dp.check_weights(np.asarray(a), dtype)


@pytest.mark.parametrize("dtype", dp.DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_the_compiled_cpu_code_equals_the_reference_bit_for_bit(dtype, threads, tmp_path,
                                                                monkeypatch):  # fmt: skip
    from pfresample_studies.moazeni2013 import native

    monkeypatch.setenv("PFRESAMPLE_NATIVE_CACHE", str(tmp_path))
    try:
        native.compiler()
    except RuntimeError:
        pytest.skip("no C compiler on this host")
    rng = np.random.default_rng([SEED, threads])
    n = 150  # not a multiple of the code's 16 lanes
    if dtype == "float32":
        a = rng.gamma(2.0, 1.0, n).astype(np.float32)
        init = rng.gamma(2.0, 5.0, (n + 1, n + 1)).astype(np.float32)
    else:
        a, init = _random(n, dtype, rng)
    m = dp.transformed(a, init, dtype)
    assert np.array_equal(native.solve(m.copy(), threads), dp.solve_diagonals(m.copy()))


def test_the_compiled_code_refuses_what_it_cannot_take():
    from pfresample_studies.moazeni2013 import native

    with pytest.raises(ValueError, match="dtype"):
        native.solve(np.zeros((4, 4)), 1)
    with pytest.raises(ValueError, match="square"):
        native.solve(np.zeros((4, 5), np.float32), 1)


def test_the_recursive_split_finishes_each_element_once():
    """4**L base sweeps a block: at s = 256, base 16 (L = 4), 256 sweeps of
    16 x 16 a block, and 4 (4**L - 1) / 3 = 340 products a block."""
    _, calls = dp.solve_recursive(dp.shaped(1024), 256, 16, dry=True)
    blocks = 4 * 3 // 2  # the 6 off-diagonal blocks of a 4 x 4 grid
    assert calls.triangular == blocks * 4**4
    assert calls.rectangular == dp.bottom_up_counts(4)[1] + blocks * 4 * (4**4 - 1) // 3
    with pytest.raises(ValueError, match="power of 2"):
        dp.solve_recursive(dp.shaped(64), 48, 16, dry=True)


def test_the_gpu_strip_jobs_solve_the_matrix_when_run_as_the_kernels_do():
    """dp_gpu.strip_jobs (the bottom-up launches' job lists), applied on the CPU
    with the kernels' semantics (each min-plus job: C = min(C, every term's
    product); each triangular job: eq. 5 on its corners), gives the reference."""

    rng = np.random.default_rng(SEED)
    s, n = 8, 70
    m = dp.transformed(rng.gamma(2.0, 1.0, n - 1).astype(np.float32))
    g = dp.Blocked(m, s)
    for i in range(g.blocks):
        g.diagonal(i)
    for d in range(1, g.blocks):
        minplus, tri = dp_gpu.strip_jobs(g.blocks, s, d)
        for job in [] if minplus is None else minplus:
            c = (slice(job[0], job[0] + s), slice(job[1], job[1] + s))
            for t in range(d - 1):
                ar, ac, br, bc = job[2 + 4 * t : 6 + 4 * t]
                g.rectangular(c, (slice(ar, ar + s), slice(ac, ac + s)),
                              (slice(br, br + s), slice(bc, bc + s)))  # fmt: skip
        for cr, cc, ar, ac, br, bc in tri:
            g.triangular(*[(slice(r, r + s), slice(c, c + s))
                           for r, c in ((cr, cc), (ar, ac), (br, bc))])  # fmt: skip
    assert np.array_equal(g.result(), dp.solve_diagonals(m.copy()))


@pytest.mark.parametrize("p", [16, 32, 64, 128, 256])
@pytest.mark.parametrize("jobs,terms", [(1, 1), (1, 126), (64, 63), (2000, 5), (7, 300)])
def test_min_plus_launches_split_the_terms_of_few_jobs(p, jobs, terms):
    """Each job's terms go to ``split`` thread blocks (1 <= split <= terms) only
    where the jobs alone give fewer than SPLIT_TARGET blocks, and never beyond it."""
    name, grid, block, split = dp_gpu.minplus_launch(p, jobs, terms)
    tiles = grid[0]
    assert grid == (tiles, tiles, jobs * split) and 1 <= split <= terms
    assert name == ("dp_minplus_rb" if p % dp_gpu.RB == 0 else "dp_minplus")
    whole = jobs * tiles * tiles
    if whole >= dp_gpu.SPLIT_TARGET:
        assert split == 1
    else:
        assert whole * split <= dp_gpu.SPLIT_TARGET
        assert split == terms or whole * (split + 1) > dp_gpu.SPLIT_TARGET


@pytest.mark.parametrize(
    "value,dtype,match",
    [
        (2**31 - 1, "int32", "2147483647"),
        (int(dp.INT_INF) + 1, "int32", "1073741824"),
        (-5, "int32", "-5"),
        (np.nan, "float32", "nan"),
        (-np.inf, "float32", "-inf"),
        (1e39, "float32", "1e\\+39"),  # finite, but +inf ("no value") in float32
    ],
)
def test_bad_initial_values_are_named_with_their_index(value, dtype, match):
    """``init`` is checked as ``a`` is: int32 values in [0, INT_INF] (INT_INF, like
    float32's +inf, is "no value"), so that no sum of two stored values overflows;
    float32 values finite or +inf. The error names the value and its (i, j)."""
    n = 40
    init = np.zeros((n + 1, n + 1), dtype=np.float64 if dtype == "float32" else np.int64)
    init[7, 23] = value
    init[30, 2] = value  # below the diagonal: not read, not checked
    with pytest.raises(ValueError, match=rf"init\[7, 23\].*{match}"):
        dp.transformed(np.ones(n, dtype=dtype), init, dtype)


def test_int32_initial_values_that_would_wrap_around_are_refused():
    """The case of the issue: n = 40, 30 % of the initial values at 2**31 - 1; the
    blocked solver wrapped around where these were accepted. INT_INF itself is "no
    value": accepted, and the same matrix as init=None where every entry is INT_INF."""
    n = 40
    rng = np.random.default_rng(SEED)
    a = rng.integers(0, 2**10, n)
    init = rng.integers(0, 2**12, (n + 1, n + 1))
    init[rng.random(init.shape) < 0.3] = 2**31 - 1
    with pytest.raises(ValueError, match="init"):
        dp.transformed(a, init, "int32")
    none = dp.transformed(a, np.full((n + 1, n + 1), dp.INT_INF), "int32")
    assert np.array_equal(none, dp.transformed(a, None, "int32"))
    init[init == 2**31 - 1] = dp.INT_INF
    m = dp.transformed(a, init, "int32")
    assert np.array_equal(dp.solve_bottom_up(m.copy(), 8)[0], dp.solve_diagonals(m.copy()))


def test_int32_initial_values_must_be_integers():
    with pytest.raises(ValueError, match="integers"):
        dp.transformed(np.ones(4, np.int32), np.full((5, 5), 1.5), "int32")


def test_every_order_agrees_on_negative_values_and_signed_zeros():
    """Weights and initial values mixing -0.0, +0.0 and negatives (the GPU's
    atomic case, tests/gpu): every CPU order equals eq. 1's loops as values (a
    zero's sign where -0.0 and +0.0 tie is left to the order of the minima)."""
    rng = np.random.default_rng([SEED, 56])
    n = 80
    a = np.where(rng.random(n) < 0.1, np.float32(0.0), np.float32(-0.0))
    a[[3, 60]] = -1.0
    values = np.array([np.inf, -0.0, 0.0, 1.0, -1.0, -0.5], np.float32)
    init = values[rng.choice(6, (n + 1, n + 1), p=[0.9, 0.05, 0.02, 0.02, 0.005, 0.005])]
    m = dp.transformed(a, init, "float32")
    direct = dp.solve_direct(a, init, "float32")
    assert (direct < 0).any() and (np.signbit(direct) & (direct == 0)).any()
    for name, r in _orders(m, 16).items():
        for i in range(n):
            assert np.array_equal(r[i, i + 1 :], direct[i, i:]), (name, i)


class _DroppingOneProduct(dp.Blocked):
    """dp.Blocked that skips one min-plus product (a dropped term): the first of a
    target block with other products beside it (3 or more blocks from the diagonal),
    so that no entry is left without a candidate (which "no value" would show)."""

    def rectangular(self, c, a, b):
        far = (c[1].start - c[0].start) // self.s >= 3
        if far and not getattr(self, "dropped", False):
            self.dropped = True
            return
        super().rectangular(c, a, b)


@pytest.mark.parametrize("dtype", dp.DTYPES)
def test_a_dropped_product_shows_on_the_checked_matrix(dtype):
    """The GPU cell's second matrix (experiments.checked_matrix: initial values
    everywhere, float32 weights negative too) catches an order that drops one
    product; the thesis's matrix (no initial values: every split costs sum(a))
    does not, in int32, where its sums are exact."""
    from pfresample_studies.moazeni2013 import experiments

    n, s = 130, 16
    hard = experiments.checked_matrix(n, dtype, seed=1)
    upper = np.triu(np.ones(hard.shape, dtype=bool), k=2)
    assert np.isfinite(hard[upper].astype(np.float64)).all() and hard[upper].min() >= 0
    if dtype == "float32":
        assert (np.diagonal(hard, 1) < 0).sum() > n // 10
    reference = dp.solve_diagonals(hard.copy())
    assert np.array_equal(dp.solve_bottom_up(hard.copy(), s)[0], reference)
    dropped = dp.solve_bottom_up(hard.copy(), s, engine=_DroppingOneProduct)[0]
    assert not np.array_equal(dropped, reference)
    if dtype == "int32":
        thesis = dp.transformed(experiments.weights(n, dtype, 1), dtype=dtype)
        unseen = dp.solve_bottom_up(thesis.copy(), s, engine=_DroppingOneProduct)[0]
        assert np.array_equal(unseen, dp.solve_diagonals(thesis.copy()))
