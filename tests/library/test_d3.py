"""D3 resampling, the UUV model and the D3 filter on the CPU (Das et al.
2014; resampling/d3.py, models/uuv.py, filters/d3.py).

Exact checks: the stride j_i is Systematic's ancestor (prefix CDF) or the
paper's per-thread search (local CDF, brute force); l_i and p_i are the
first maxima of their range (brute force, ties included); equal weights
give the input back to the bit; every moved value lies inside the interval
its noise option allows; a shared j takes the last claimer's move, computed
by hand from the Philox draws; the model's step is eqs. 11-12 by hand; a
filter that never resamples gives the same estimates with either method.

Statistical checks, with fixed seeds and tolerances from the variance:
eq. 7's mean of a move (x(p) + |D|/2) over K seeds, as a z-score of the
mean of K uniforms (standard deviation |D| / sqrt(12 K)), and the SIR
filter's estimates against the exact Kalman posterior mean.
"""

from __future__ import annotations

import numpy as np
import pytest

import pfresample as pr
from pfresample.filters import D3_OPTIONS, run_filter, velocity_errors
from pfresample.filters.d3 import prior_log_weights
from pfresample.models import UuvModel, kalman_filter
from pfresample.resampling import d3
from pfresample.rng import DOMAIN_PARTICLE, draws, seed_keys, uniform_float


def run_d3(model, y, n, seed, *, method="d3", **kw):
    """Das et al.'s filter (``run_filter`` with ``D3_OPTIONS``) on the CPU."""
    return run_filter(model, y, n, method, seed=seed, backend="cpu", **D3_OPTIONS, **kw)


def key_of(seed: int) -> tuple[int, int]:
    k0, k1 = seed_keys([seed])
    return int(k0[0]), int(k1[0])


def case(n: int, seed: int = 0, dims: int = 2, power: float = 4.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dims))
    w = rng.random(n) ** power
    pw = -(x**2).sum(axis=1)
    return x, w, pw


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_prefix_stride_is_systematic(dtype):
    for n, seed in [(1, 1), (7, 2), (1000, 3), (4096, 4)]:
        _, w, pw = case(n, seed)
        w = w.astype(dtype)
        j, *_ = d3.plan(w, pw, key_of(seed))
        assert np.array_equal(j, pr.resample(w, "systematic", seed=seed, backend="cpu"))


def test_local_stride_is_the_papers_search():
    """Thread i adds weights from particle 0 until floor(N c_k / S + u) > i."""
    _, w, pw = case(300, 5, power=8.0)
    w[[3, 100, 299]] = 0.0
    key = key_of(11)
    j = d3.local_cdf_strides(w, key)
    u = float(uniform_float(draws(11, 0, 0, 2))[()])
    from pfresample.sums import weight_sums

    total = weight_sums(w)[0]
    for i in range(w.size):
        c, found, last = 0.0, None, None
        for k in range(w.size):
            c += float(w[k])
            if w[k] > 0:
                last = k
            if np.floor(c * w.size / total + u) > i:
                found = k
                break
        assert j[i] == (last if found is None else found), i


def test_local_and_prefix_strides_agree_where_the_sums_are_exact():
    rng = np.random.default_rng(2)
    w = rng.integers(0, 5, size=2000).astype(np.float64)  # integer sums: no rounding
    for seed in range(5):
        a, *_ = d3.plan(w, w, key_of(seed), cdf="prefix", precision="float64")
        b, *_ = d3.plan(w, w, key_of(seed), cdf="local")
        assert np.array_equal(a, b)


def test_range_maxima_are_the_first_maxima():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 6, size=500).astype(np.float64)  # many ties
    lo = rng.integers(0, 500, size=2000)
    hi = np.minimum(lo + rng.integers(0, 80, size=2000), 499)
    got = d3.range_argmax(values, lo, hi)
    want = [a + int(np.argmax(values[a : b + 1])) for a, b in zip(lo, hi, strict=True)]
    assert np.array_equal(got, want)


def test_plan_ranges_run_between_i_and_j():
    _, w, pw = case(2000, 6, power=12.0)
    j, l_, p, last = d3.plan(w, pw, key_of(6))
    assert (np.diff(j) >= 0).all()
    i = np.arange(w.size)  # the peaked weights give strides on both sides of i
    assert (j < i).any() and (j > i).any()
    for a in (l_, p):
        assert ((a >= np.minimum(i, j)) & (a <= np.maximum(i, j))).all()
    assert np.array_equal(last[:-1], j[1:] != j[:-1]) and last[-1]


@pytest.mark.parametrize("noise", d3.NOISES)
@pytest.mark.parametrize("cdf", ["prefix", "local"])  # not "paper": its halved strides move
def test_equal_weights_move_nothing(noise, cdf):
    x, _, _ = case(777, 7)
    for dtype in (np.float32, np.float64):
        xs = x.astype(dtype)
        out = pr.resample_d3(
            xs, np.ones(777), np.zeros(777), seed=3, noise=noise, cdf=cdf, backend="cpu"
        )
        assert out.dtype == dtype and np.array_equal(out, xs)


def bounds(x_to, x_from, noise):
    """The closed interval each noise option keeps a move in (eqs. 5-6, Table 1, Fig 9)."""
    d = x_to - x_from
    ends = {
        "eq5": (x_to, x_to + np.abs(d)),
        "table1": (x_to, x_to + d),
        "fig9": (x_to + d / 2, x_to + d),
        "between": (x_to, x_from),
        "fig9neg": (x_to + (x_from - x_to) / 2, x_from),
    }[noise]
    return np.minimum(*ends), np.maximum(*ends)


@pytest.mark.parametrize("noise", d3.NOISES)
def test_every_move_stays_inside_its_noise_bound(noise):
    x, w, pw = case(3000, 8, power=10.0)
    key = key_of(8)
    out = d3.d3(x, w, pw, key, noise=noise)
    j, l_, p, last = d3.plan(w, pw, key)
    claimed = np.zeros(w.size, dtype=bool)
    claimed[j[last]] = True
    i = np.flatnonzero(~claimed)
    lo, hi = bounds(x[p[i]], x[i], noise)
    assert ((out[i] >= lo) & (out[i] <= hi)).all()
    c = np.flatnonzero(last)
    lo, hi = bounds(x[l_[c]], x[j[c]], noise)
    assert ((out[j[c]] >= lo) & (out[j[c]] <= hi)).all()
    assert not np.array_equal(out, x)


def test_a_shared_j_takes_the_last_claimers_move():
    x = np.array([0.0, 10.0, 20.0, 30.0, 40.0])
    w = np.array([0.0, 1.0, 0.0, 0.0, 0.0])  # every slot's stride is particle 1
    pw = np.array([0.0, 0.0, 0.0, 5.0, 0.0])
    out = d3.d3(x, w, pw, key_of(9), noise="between")
    u = uniform_float(draws(9, np.arange(5), np.array([0, 1])[:, None], DOMAIN_PARTICLE))
    ua, ub = u[0].astype(np.float64), u[1].astype(np.float64)
    # slot 4 claims j = 1 last; its range [1, 4] has l = 1 (w) and p = 3 (pw)
    assert out[1] == x[1] - ub[4] * (x[1] - x[1])
    assert out[0] == x[0] - ua[0] * (x[0] - x[0])  # range [0, 1]: p = 0
    for i in (2, 3, 4):  # range [1, i]: p = 3 once it is inside
        p = 3 if i >= 3 else 1
        assert out[i] == x[p] - ua[i] * (x[p] - x[i])


@pytest.mark.slow
def test_eq7_mean_of_a_move():
    """E[x'(i)] = x(p) + |x(i) - x(p)| / 2 (eq. 7): over K seeds, the moves
    (a) that no claim overwrote, as fractions t = (x'(i) - x(p)) / |D| of
    their interval; their mean is 1/2 with standard deviation 1 / sqrt(12 M)
    for M moves (the uniform's variance 1/12)."""
    x, w, pw = case(500, 10, dims=1, power=6.0)
    x = x[:, 0]
    fractions = []
    for s in range(300):
        out = pr.resample_d3(x, w, pw, seed=s, backend="cpu")
        j, _, p, last = d3.plan(w, pw, key_of(s))
        free = np.ones(w.size, dtype=bool)
        free[j[last]] = False
        i = np.flatnonzero(free & (x != x[p]))
        fractions.append((out[i] - x[p[i]]) / np.abs(x[i] - x[p[i]]))
    t = np.concatenate(fractions)
    assert t.size > 10_000 and t.min() >= 0.0 and t.max() <= 1.0
    assert abs(t.mean() - 0.5) * np.sqrt(12 * t.size) < 5.0


def test_bad_input_is_named():
    x, w, pw = case(10, 1)
    with pytest.raises(ValueError, match="particles"):
        pr.resample_d3(x[:9], w, pw, seed=1, backend="cpu")
    bad = x.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"particles\[4\]"):
        pr.resample_d3(bad, w, pw, seed=1, backend="cpu")
    badp = pw.copy()
    badp[2] = np.nan
    with pytest.raises(ValueError, match=r"prior_weights\[2\]"):
        pr.resample_d3(x, w, badp, seed=1, backend="cpu")
    with pytest.raises(ValueError, match="noise"):
        pr.resample_d3(x, w, pw, seed=1, noise="eq6", backend="cpu")
    with pytest.raises(ValueError, match="cdf"):
        pr.resample_d3(x, w, pw, seed=1, cdf="global", backend="cpu")
    with pytest.raises(TypeError, match="moves particles"):
        pr.resample(w, "d3", seed=1)
    assert pr.methods("particles") == ("d3",) and "d3" not in pr.methods()


def test_log_weights_and_prior_transforms_give_the_same_particles():
    x, w, pw = case(1000, 12)
    a = pr.resample_d3(x, w, pw, seed=4, backend="cpu")
    b = pr.resample_d3(x, np.log(w), np.exp(pw), seed=4, backend="cpu", log=True)
    assert np.array_equal(a, b)


def test_uuv_step_is_eqs_11_12():
    for signs, s in (("printed", -1.0), ("rotation", 1.0)):
        m = UuvModel(signs=signs)
        k = 1234
        fx, fy, r, psi = m.inputs[k]
        x = np.array([1.2, -0.4])
        dt = m.dt
        want = [
            x[0] - r * dt * x[1] + fx * np.cos(psi) * dt - fy * np.sin(psi) * dt,
            x[1] + s * r * dt * x[0] + fx * np.sin(psi) * dt + s * fy * np.cos(psi) * dt,
        ]
        assert np.allclose(m.mean_transition(x, k), want, rtol=0, atol=1e-15)
    m = UuvModel()
    assert m.steps == 36000
    psi = m.inputs[:, 3]
    assert psi.min() >= m.heading0 - 1e-12
    assert psi.max() <= m.heading0 + m.turn_rate * m.zigzag_period / 2 + 1e-9


def test_prior_log_weights_are_eq_4():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(50, 2))
    mu = np.array([0.3, -0.1])
    var = ((x - mu) ** 2).sum(axis=0) / 49
    pdf = np.prod(np.exp(-((x - mu) ** 2) / (2 * var)) / np.sqrt(2 * np.pi * var), axis=1)
    got = prior_log_weights(x, mu)
    assert np.allclose(got - got.max(), np.log(pdf) - np.log(pdf).max())


def test_no_resampling_means_the_same_filter():
    m = UuvModel(duration=2.0)
    truth, y = m.simulate(1)
    a = run_d3(m, y, 200, 5, method="d3", ess_threshold=0.0)
    b = run_d3(m, y, 200, 5, method="systematic", ess_threshold=0.0)
    assert a.resampled.sum() == b.resampled.sum() == 0
    assert np.array_equal(a.estimates, b.estimates)
    c = run_d3(m, y, 200, 5, method="d3", snapshot_step=100)
    assert c.resampled.sum() == 200 and c.snapshot.shape == (200, 2)


@pytest.mark.slow
def test_sir_filter_follows_the_kalman_filter():
    """The KF is the exact posterior mean; with N = 5,000 the SIR filter's
    Monte Carlo error is about (posterior sd 0.045) / sqrt(N_eff): about
    1e-3. A bound of 0.01 on the mean absolute difference after the first
    second fails for a wrong likelihood (bias ignored: 0.0123) or model."""
    m = UuvModel(duration=5.0)
    truth, y = m.simulate(3)
    kf = kalman_filter(m, y)
    run = run_d3(m, y, 5000, 2, method="systematic")
    gap = np.abs(run.estimates - kf)[100:].mean()
    assert gap < 0.01
    rmse, bias = velocity_errors(run.estimates, truth[1:])
    assert rmse.shape == bias.shape == (2,)


# ------------------------------------------------------------------ issue 39


def brute_thresholds(n: int, threads: int, seed: int) -> list[float]:
    """Figs 8-9's thresholds slot by slot, in Python floats (float64), from
    the formulas as d3.paper_thresholds documents them."""
    out = []
    for i in range(n):
        b = i // threads
        first = b * threads
        ub = float(uniform_float(draws(seed, b, 0, 2))[()])  # stream b, counter 0, global
        temp = 1.0 / n
        r = temp / 2.0 + (temp / 2.0) * ub
        u1 = (r / n) / 2.0 + (first / n) / 2.0
        out.append(u1 if i == first else (u1 / n) / 2.0 + (i / n) / 2.0)
    return out


@pytest.mark.parametrize(("n", "threads"), [(1, 1), (10, 4), (1000, 160), (5003, 196)])
@pytest.mark.slow
def test_paper_thresholds_are_figs_8_9_exactly(n, threads):
    got = d3.paper_thresholds(n, threads, key_of(17))
    assert got.dtype == np.float64
    assert got.tolist() == brute_thresholds(n, threads, 17)  # bit for bit
    assert (np.diff(got) > 0).all()  # increasing: the strides stay non-decreasing
    # a halved stride: u_i ~ i / (2N), so the thresholds end near 1/2, not 1
    assert got[0] > 0 and got[-1] < 0.5 + 1.0 / n
    first = np.arange(0, n, threads)
    assert np.allclose(got, np.arange(n) / (2.0 * n), rtol=0, atol=1.0 / n)
    assert (got[first] < first / (2.0 * n) + 1.0 / (2.0 * n * n) + 1e-15).all()


def test_paper_thresholds_depend_on_the_block_size():
    a = d3.paper_thresholds(1000, 160, key_of(3))
    b = d3.paper_thresholds(1000, 196, key_of(3))
    assert not np.array_equal(a, b)
    with pytest.raises(ValueError, match="threads"):
        d3.paper_thresholds(10, 0, key_of(3))
    with pytest.raises(ValueError, match="threads"):
        pr.resample_d3(*case(10, 1), seed=1, cdf="paper", threads=2048, backend="cpu")


def test_paper_strides_are_the_printed_search():
    """j_i is the first k whose normalised cumulative weight reaches u_i
    (Table 1's while (u > CSW[j]) j++), by brute force."""
    _, w, pw = case(400, 21, power=6.0)
    w[[0, 7, 399]] = 0.0
    for threads in (1, 33, 160):
        u = d3.paper_thresholds(w.size, threads, key_of(5))
        j = d3.paper_strides(w, key_of(5), threads)
        c = np.cumsum(w) / w.sum()
        for i in range(w.size):
            k = next(k for k in range(w.size) if c[k] >= u[i])
            assert j[i] == k, (threads, i)
        assert w[j].min() > 0  # a zero weight is never a stride


@pytest.mark.slow
def test_paper_stride_bias_is_measured():
    """The printed thresholds cover only [0, 1/2] of the weights' mass: the
    slots' strides double the first half's expected offspring and give the
    second half none. Offspring of the stride (j's counts) over K = 400
    seeds against N w: the first half's share is 1 exactly, systematic's (the
    negative control, unbiased) within 5 standard errors of 1/2."""
    n = 1000
    rng = np.random.default_rng(9)
    w = rng.gamma(2.0, size=n)
    c = np.cumsum(w) / w.sum()
    half = c <= 0.5
    paper_share, sys_share = [], []
    for s in range(400):
        j = d3.plan(w, w, key_of(s), cdf="paper", threads=160)[0]
        paper_share.append(half[j].mean())
        js = d3.plan(w, w, key_of(s), cdf="prefix")[0]
        sys_share.append(half[js].mean())
    assert min(paper_share) >= 1.0 - 1.0 / n  # (all but at most one slot in the first half)
    expected = c[half][-1]  # the first half's mass
    se = np.std(sys_share, ddof=1) / np.sqrt(len(sys_share))
    assert abs(np.mean(sys_share) - expected) < 5 * se + 1.0 / n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cdf", d3.CDFS)
@pytest.mark.slow
def test_table1_loop_gives_the_sparse_tables_particles(cdf, dtype):
    """impl="loop" (Table 1's sequential loop) and the sparse table: the same
    particles, bit for bit, for every noise; peaked weights give strides on
    both sides of i and shared j."""
    x, w, pw = case(2500, 23, power=12.0)
    x, w = x.astype(dtype), w.astype(dtype)
    for noise in d3.NOISES:
        a = pr.resample_d3(x, w, pw, seed=8, noise=noise, cdf=cdf, threads=160, backend="cpu")
        b = pr.resample_d3(
            x, w, pw, seed=8, noise=noise, cdf=cdf, threads=160, backend="cpu", impl="loop"
        )
        assert a.dtype == b.dtype == dtype and np.array_equal(a, b), noise
    with pytest.raises(ValueError, match="impl"):
        pr.resample_d3(x, w, pw, seed=8, backend="cpu", impl="fast")


def test_fig9neg_is_fig9_with_the_other_sign():
    """Fig 9's (x(p) + diffi/2) + (diffi/2) U with diffi = x(i) - x(p):
    uniform on the half of the segment from its midpoint to x(i)."""
    x, w, pw = case(3000, 24, power=10.0)
    key = key_of(24)
    j, l_, p, last = d3.plan(w, pw, key)
    out = d3.d3(x, w, pw, key, noise="fig9neg")
    claimed = np.zeros(w.size, dtype=bool)
    claimed[j[last]] = True
    i = np.flatnonzero(~claimed & (p != np.arange(w.size)))
    t = (out[i] - x[p[i]]) / (x[i] - x[p[i]])  # position along x(p) -> x(i)
    assert (t >= 0.5).all() and (t <= 1.0).all()
    assert abs(t.mean() - 0.75) < 0.01  # the middle of [1/2, 1]


def test_per_component_d3_is_one_d3_a_component():
    x, w, pw = case(1500, 25, power=8.0)
    w2 = np.stack([w, w[::-1]], axis=1)
    pw2 = np.stack([pw, -pw], axis=1)
    out = pr.resample_d3(x, w2, pw2, seed=6, components="each", backend="cpu")
    for d in range(2):
        want = pr.resample_d3(
            x[:, d], w2[:, d], pw2[:, d], seed=d3.component_seed(6, d), backend="cpu"
        )
        assert np.array_equal(out[:, d], want)
    shared = pr.resample_d3(x, w, pw2, seed=6, components="each", backend="cpu")
    assert np.array_equal(
        shared[:, 1], pr.resample_d3(x[:, 1], w, pw2[:, 1], seed=d3.component_seed(6, 1))
    )
    assert d3.component_seed(6, 0) != d3.component_seed(6, 1)
    with pytest.raises(ValueError, match="prior_weights of shape"):
        pr.resample_d3(x, w, pw, seed=6, components="each", backend="cpu")
    with pytest.raises(ValueError, match=r"\(N, D\) particles"):
        pr.resample_d3(x[:, 0], w, pw2, seed=6, components="each", backend="cpu")
    with pytest.raises(ValueError, match="components"):
        pr.resample_d3(x, w, pw, seed=6, components="both", backend="cpu")


def test_the_filters_process_noise_is_its_own():
    """filter_process_sd moves the particles, process_sd the truth; zero
    noise propagates through the noise-free eqs. 11-12 and draws nothing."""
    m = UuvModel(duration=3.0, filter_process_sd=0.0)
    x = np.random.default_rng(1).normal(size=(50, 2))
    rng = np.random.default_rng(2)
    state = rng.bit_generator.state
    assert np.array_equal(m.transition(x, 7, rng), m.mean_transition(x, 7))
    assert rng.bit_generator.state == state
    truth_a, y_a = m.simulate(4)
    truth_b, y_b = UuvModel(duration=3.0).simulate(4)
    assert np.array_equal(truth_a, truth_b) and np.array_equal(y_a, y_b)  # the truth's noise
    assert np.array_equal(kalman_filter(m, y_a), kalman_filter(UuvModel(duration=3.0), y_a))
    assert UuvModel().particle_sd == 0.005 and m.particle_sd == 0.0
    big = UuvModel(duration=3.0, filter_process_sd=0.05)
    spread = big.transition(np.zeros((20000, 2)), 0, np.random.default_rng(3)).std(axis=0)
    assert np.allclose(spread, 0.05, rtol=0.03)  # sd 0.05, its estimate's rel. se 0.5 %
    with pytest.raises(ValueError, match="filter_process_sd"):
        UuvModel(filter_process_sd=-1.0)


@pytest.mark.slow
def test_zero_process_noise_keeps_copies_identical():
    """The regime switch: with no process noise in the filter, systematic
    resampling's copies stay identical, so the distinct particles never
    increase from one step to the next; D3's moves make new ones."""
    m = UuvModel(duration=1.5, filter_process_sd=0.0)
    _, y = m.simulate(5)
    counts = []
    for step in (10, 40, 80, 150):
        r = run_d3(m, y, 500, 3, method="systematic", snapshot_step=step)
        counts.append(np.unique(r.snapshot, axis=0).shape[0])
    assert counts == sorted(counts, reverse=True) and counts[-1] < counts[0] < 500
    # with the truth's process noise every copy moves apart at the next prediction, so
    # right after a resampling the distinct particles are those of one step's copying
    ours = UuvModel(duration=1.5)
    r = run_d3(ours, y, 500, 3, method="systematic", snapshot_step=150)
    assert np.unique(r.snapshot, axis=0).shape[0] > 2 * counts[-1]
    r = run_d3(m, y, 500, 3, method="d3", snapshot_step=150)
    assert np.unique(r.snapshot, axis=0).shape[0] > counts[-1]


@pytest.mark.slow
def test_filter_options_of_the_paper():
    m = UuvModel(duration=1.0)
    truth, y = m.simulate(6)
    table = run_d3(m, y, 300, 4, method="d3", cdf="paper", threads=160, noise="fig9")
    loop = run_d3(m, y, 300, 4, method="d3", cdf="paper", threads=160, noise="fig9", impl="loop")
    assert np.array_equal(table.estimates, loop.estimates)
    other = run_d3(m, y, 300, 4, method="d3", cdf="paper", threads=196, noise="fig9")
    assert not np.array_equal(table.estimates, other.estimates)  # the blocks' u1 differ
    each = run_d3(m, y, 300, 4, method="d3", components="each")
    assert np.isfinite(each.estimates).all()
    with pytest.raises(TypeError, match="not \\['components'\\]"):
        run_d3(m, y, 300, 4, method="systematic", components="each")
    with pytest.raises(ValueError, match="every step"):
        run_d3(m, y, 300, 4, method="d3", components="each", ess_threshold=0.5)
