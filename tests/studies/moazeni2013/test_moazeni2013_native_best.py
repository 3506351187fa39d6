"""Moazeni (2013): the best CPU code (native/dp_blocked.c, native/tv_best.c) gives the
compiled reference's results bit for bit, on one thread and on two, and deliberate
flaws (a dropped product, a wrong order) are caught by the same comparison."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import dp

SEED = 2013


pytestmark = pytest.mark.usefixtures("native_build")


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal bit for bit (so +0 and -0 differ, unlike ==)."""
    return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()


def instance(n: int, dtype: str, rng, zeros: bool = False) -> np.ndarray:
    """A transformed matrix of n weights with random initial values. float32:
    negative weights and initial values, ties (a few values repeated), +inf
    ("no value") and, with ``zeros``, many +0 and -0 (and sums x + (-x)); int32:
    non-negative (dp.check_initial) with ties and INT_INF."""
    if dtype == "float32":
        pool = np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 1.5, 3.0], np.float32)
        if zeros:
            pool = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 2.0], np.float32)
        a = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.normal(0, 2, n))
        init = np.where(rng.random((n + 1, n + 1)) < 0.5, rng.choice(pool, (n + 1, n + 1)),
                        rng.normal(1, 4, (n + 1, n + 1)))  # fmt: skip
        init[rng.random(init.shape) < 0.2] = np.inf
        return dp.transformed(a.astype(np.float32), init.astype(np.float32), dtype)
    a = rng.integers(0, 6, n)
    init = rng.integers(0, 3 * n, (n + 1, n + 1))
    init[rng.random(init.shape) < 0.2] = int(dp.INT_INF)
    return dp.transformed(a, init, dtype)


def zero_sign_reference(m: np.ndarray) -> np.ndarray:
    """Eq. 2 by diagonals in Python with IEEE 754-2019's minimum (-0 below +0) over
    the initial value and every candidate: the rule of the compiled codes."""
    m = m.copy()
    n1 = m.shape[0]

    def key(x):  # a total order: the value, then -0 before +0
        return (float(x), not np.signbit(x))

    for d in range(2, n1):
        for i in range(n1 - d):
            j = i + d
            best = m[i, j]
            for k in range(i + 1, j):
                v = np.float32(m[i, k] + m[k, j])
                if key(v) < key(best):
                    best = v
            m[i, j] = best
    return m


@pytest.mark.parametrize("dtype", dp.DTYPES)
@pytest.mark.parametrize("n", [100, 257])  # not multiples of the 64 x 64 blocks
@pytest.mark.parametrize("threads", [1, 2])
def test_the_blocked_solver_equals_the_compiled_reference_bit_for_bit(dtype, n, threads):
    from pfresample_studies.moazeni2013 import native

    rng = np.random.default_rng([SEED, n, threads])
    for zeros in (False, True) if dtype == "float32" else (False,):
        m = instance(n, dtype, rng, zeros)
        reference = native.solve(m.copy(), 1)
        assert np.array_equal(reference, dp.solve_diagonals(m.copy()))  # values, as NumPy
        got = native.solve_blocked(m.copy(), threads)
        assert same_bits(got, reference)
        if zeros:  # the test holds what it claims to: signed zeros in the answer
            assert (np.signbit(got) & (got == 0)).any() and (~np.signbit(got) & (got == 0)).any()


@pytest.mark.parametrize("n", [1, 2, 3, 63, 64, 65, 128])
def test_the_blocked_solver_at_the_block_edges(n):
    from pfresample_studies.moazeni2013 import native

    rng = np.random.default_rng([SEED, n])
    for dtype in dp.DTYPES:
        m = instance(n, dtype, rng)
        assert same_bits(native.solve_blocked(m.copy(), 2), native.solve(m.copy(), 1))


def test_the_zeros_signs_follow_the_ieee_minimum_in_both_compiled_codes():
    from pfresample_studies.moazeni2013 import native

    rng = np.random.default_rng(SEED)
    negative = 0
    for n in (12, 30, 70):
        m = instance(n, "float32", rng, zeros=True)
        expected = zero_sign_reference(m)
        negative += int((np.signbit(expected) & (expected == 0)).sum())
        assert same_bits(native.solve(m.copy(), 2), expected)
        assert same_bits(native.solve_blocked(m.copy(), 2), expected)
    assert negative > 0


@pytest.mark.parametrize("flaw", ["drop_last_product", "drop_eq5_down", "drop_eq5_left"])
@pytest.mark.parametrize("dtype", dp.DTYPES)
def test_negative_control_a_flawed_blocked_solver_is_caught(flaw, dtype):
    """The same comparison fails for a solver that drops the last product of every
    block, or eq. 5's terms from the rows below, or from the row's own left part:
    the equality above is not vacuous. (Wrong orders are not used: eq. 2 takes every
    split of an interval, so in exact int32 arithmetic a solver that takes eq. 5
    before eq. 4, or a row's left part right to left, still finds every partition.)"""
    from pfresample_studies.moazeni2013 import native

    rng = np.random.default_rng([SEED, 7])
    m = instance(257, dtype, rng)
    reference = native.solve(m.copy(), 1)
    assert same_bits(native.solve_blocked(m.copy(), 2), reference)
    assert not same_bits(native.solve_blocked(m.copy(), 2, flaw=flaw), reference)


def test_the_blocked_solver_refuses_what_it_cannot_take():
    from pfresample_studies.moazeni2013 import native

    with pytest.raises(ValueError, match="dtype"):
        native.solve_blocked(np.zeros((4, 4)), 1)
    with pytest.raises(ValueError, match="square"):
        native.solve_blocked(np.zeros((4, 5), np.float32), 1)
    with pytest.raises(ValueError, match="threads"):
        native.solve_blocked(np.zeros((4, 4), np.float32), 0)


@pytest.mark.parametrize("dtype", [*dp.DTYPES, "float64"])
def test_the_peak_microkernel_runs_and_counts(dtype):
    from pfresample_studies.moazeni2013 import native

    seconds, ops = native.minplus_peak(1000, 2, dtype)
    lib = native.peak_library()
    rows, cols = lib.minplus_peak_rows(), lib.minplus_peak_cols()
    if dtype == "float64":  # half the columns: the same vectors
        assert lib.minplus_peak_cols_f64() == cols // 2
        cols //= 2
    assert seconds > 0 and ops == 1000 * 2 * (rows * cols + cols // 2)


def test_the_dtw_cell_chain_runs_its_links():
    from pfresample_studies.moazeni2013 import native

    assert native.minplus_chain(10_000) > 0  # checks its own sum: 10,000 links of +1


def _tv_case():
    """The pipeline's phantom at 16^3, cut to 11 x 16 x 13 (no side a multiple of the
    8 lanes of the TV sums or of a vector), float32."""
    from pfresample_studies.moazeni2013 import tv_experiments

    case = tv_experiments.make_case(16, SEED, 12, 0.05)
    cut = (slice(0, 11), slice(None), slice(0, 13))
    return case.L0[cut].astype(np.float32), case.d_hat[cut].astype(np.float32)


# tv_best.c against tv.c: every voxel's float32 arithmetic is the same, only the TV sums
# (double) are added in another order, so a scale can differ by one float32 ulp (6e-8 of
# it) at most, which moves L by about step * |g| * 6e-8 an iteration: far below this.
TV_BOUND = 1e-6
TV_SETTINGS = {"lam": 3.0, "eps": 0.01, "iterations": 10}


def test_the_tv_step_on_every_thread_count_equals_one_thread_and_tv_c():
    from pfresample_studies.moazeni2013 import native

    L0, d_hat = _tv_case()
    reference = native.tv_solve(L0, d_hat, step=0.003, **TV_SETTINGS)
    runs = [native.tv_best_solve(L0, d_hat, step=0.003, threads=t, **TV_SETTINGS)
            for t in (1, 2, 3)]  # fmt: skip
    assert all(same_bits(run, runs[0]) for run in runs)  # the sums' order is fixed
    assert np.abs(runs[0] - reference).max() <= TV_BOUND * max(1.0, np.abs(reference).max())
    assert not np.array_equal(runs[0], L0)  # it moved


def test_negative_control_the_tv_comparison_sees_a_small_change():
    """A step 1e-4 larger (relative) moves L beyond the bound: the bound is not vacuous."""
    from pfresample_studies.moazeni2013 import native

    L0, d_hat = _tv_case()
    reference = native.tv_solve(L0, d_hat, step=0.003, **TV_SETTINGS)
    other = native.tv_best_solve(L0, d_hat, step=0.003 * (1 + 1e-4), threads=2, **TV_SETTINGS)
    assert np.abs(other - reference).max() > TV_BOUND * max(1.0, np.abs(reference).max())


def test_the_copy_copies():
    from pfresample_studies.moazeni2013 import native

    src = np.arange(1000, dtype=np.float32)
    dst = np.zeros_like(src)
    native.stream_copy(dst, src, 2, 2)
    assert np.array_equal(dst, src)
    with pytest.raises(ValueError, match="float32"):
        native.stream_copy(dst, src.astype(np.float64), 1, 1)
