"""Cellular resampling and the cellular particle filter on the CPU
(Gelencsér-Horváth et al. 2013; resampling/cellular.py, filters/cellular.py).

Exact checks: every ancestor lies in its neighbourhood; a hand-computed
choice from the contract's uniform; a zero weight is never chosen; scaling
float64 weights by a power of two changes nothing. Statistical checks, with
fixed seeds and tolerances from the variance (stat_tools.excess, whose
docstring derives its bound; chi-square p-values):

* r = N - 1: every particle draws independently from all N with
  probability w_j / sum w, so the pooled ancestors are categorical(w /
  sum w) (a chi-square test on K N draws), and one particle's offspring
  count is Binomial(N, p) -- its variance N p (1 - p), the multinomial's;
* small r: unbiasedness does not hold, but the exact expected offspring
  E o_j = sum_{i : j in N_i} w_j / W_i does (computed from the weights);
* the filter at large r against the SIR filter on the growth model.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pfresample as pr
from pfresample.filters import CPF_OPTIONS, SIR_OPTIONS, run_filter
from pfresample.models import GrowthModel
from pfresample.resampling.cellular import cellular, cellular_log, scaled_weights
from pfresample.rng import DOMAIN_PARTICLE, draws, uniform_float
from stat_tools import Z_MAX, excess


def run_cpf(model, y, n, radius, seed, *, diversity=False, **kw):
    """The CPF (``run_filter`` with resampler "cellular" and ``CPF_OPTIONS``)
    on the CPU: ``resampled_estimates`` is its estimate (the mean of the
    resampled particles), ``estimates`` the weighted mean before resampling."""
    return run_filter(model, y, n, "cellular", seed=seed, backend="cpu", radius=radius,
                      diagnostics=diversity, **CPF_OPTIONS, **kw)  # fmt: skip


def run_sir(model, y, n, method, seed, **kw):
    """Algorithm 2.4 (``run_filter`` with ``SIR_OPTIONS``) on the CPU unless told."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


def neighbourhood_matrix(w: np.ndarray, radius: int) -> np.ndarray:
    """P[i, j]: the probability that particle i draws j (the paper's
    w_j / W_i over N_i = {i, ..., i - r} mod N), in float64."""
    n = w.size
    p = np.zeros((n, n))
    for i in range(n):
        js = [(i - d) % n for d in range(radius + 1)]
        total = sum(float(w[j]) for j in js)
        for j in js:
            p[i, j] = float(w[j]) / total
    return p


def chi_square_z(statistic: float, df: int) -> float:
    """The Wilson-Hilferty normal score of a chi-square(df) statistic; above
    3.5 has probability 2e-4 under the hypothesis."""
    v = 2.0 / (9.0 * df)
    return ((statistic / df) ** (1.0 / 3.0) - (1.0 - v)) / math.sqrt(v)


def offspring(anc: np.ndarray, n: int) -> np.ndarray:
    return np.stack([np.bincount(row, minlength=n) for row in anc])


def test_every_ancestor_is_in_its_neighbourhood():
    rng = np.random.default_rng(1)
    for n, radius in [(1000, 7), (256, 0), (300, 299), (5, 2)]:
        w = rng.random(n).astype(np.float32)
        anc = pr.resample_many(w, "cellular", seeds=range(20), radius=radius)
        back = (np.arange(n) - anc) % n
        assert back.max() <= radius, (n, radius, back.max())
        if radius == 0:
            np.testing.assert_array_equal(anc, np.broadcast_to(np.arange(n), anc.shape))


def test_choice_follows_the_contract_by_hand():
    """Particle i's uniform is its particle stream's counter 0; the ancestor
    is neighbour d* = #{d : w_i + ... + w_{i-d} <= u W_i}."""
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=np.float32)
    n, radius, seed = w.size, 3, 12345
    u = uniform_float(draws(seed, np.arange(n), 0, DOMAIN_PARTICLE)).astype(np.float64)
    expected = []
    for i in range(n):
        neighbours = [(i - d) % n for d in range(radius + 1)]
        running = np.cumsum([float(w[j]) for j in neighbours])
        expected.append(neighbours[int(np.sum(running <= u[i] * running[-1]))])
    got = pr.resample(w, "cellular", seed=seed, radius=radius)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.slow
def test_full_neighbourhood_draws_are_categorical():
    """r = N - 1: the K N pooled ancestors follow w / sum w (chi-square)."""
    n, k = 64, 3000
    w = np.random.default_rng(2).gamma(2.0, size=n).astype(np.float32)
    anc = pr.resample_many(w, "cellular", seeds=range(k), radius=n - 1)
    counts = np.bincount(anc.ravel(), minlength=n)
    expected = counts.sum() * w.astype(np.float64) / w.sum(dtype=np.float64)
    assert chi_square_z(np.sum((counts - expected) ** 2 / expected), n - 1) < 3.5


@pytest.mark.slow
def test_full_neighbourhood_offspring_have_the_multinomial_variance():
    """r = N - 1: the heaviest particle's offspring count is Binomial(N, p):
    its sample variance over K draws is within 5 standard errors of N p (1 - p)
    (the standard error of a sample variance: sqrt((mu4 - s^4 (K-3)/(K-1)) / K),
    with the binomial's fourth central moment). Systematic resampling, whose
    count varies by at most one, fails the same test (the negative control)."""
    n, k = 64, 4000
    w = np.random.default_rng(3).gamma(2.0, size=n)
    j = int(np.argmax(w))
    p = w[j] / w.sum()
    var = n * p * (1 - p)
    mu4 = n * p * (1 - p) * (1 + 3 * (n - 2) * p * (1 - p))
    se = math.sqrt((mu4 - var * var * (k - 3) / (k - 1)) / k)
    for method, kw, close in [("cellular", {"radius": n - 1}, True), ("systematic", {}, False)]:
        anc = pr.resample_many(w, method, seeds=range(k), **kw)
        got = offspring(anc, n)[:, j].var(ddof=1)
        assert (abs(got - var) < 5 * se) == close, (method, got, var, se)


@pytest.mark.parametrize("radius", [1, 4, 16])
def test_expected_offspring_is_the_neighbourhood_formula(radius):
    """E o_j = sum_{i : j in N_i} w_j / W_i exactly; not N w_j / sum w
    (the unbiased target, rejected as the negative control)."""
    n, k = 48, 4000
    w = np.random.default_rng(radius).gamma(1.0, size=n).astype(np.float32)
    anc = pr.resample_many(w, "cellular", seeds=range(100, 100 + k), radius=radius)
    o = offspring(anc, n)
    expected = neighbourhood_matrix(w, radius).sum(axis=0)
    assert excess(o, expected) < Z_MAX
    assert excess(o, n * w / w.sum(dtype=np.float64)) > Z_MAX


def test_zero_weights_are_never_chosen_and_dead_neighbourhoods_reach_beyond():
    """A neighbourhood without weight takes the nearest positive weight
    beyond it (i - r - 1, i - r - 2, ... around the ring)."""
    n, radius = 40, 3
    w = np.zeros(n, dtype=np.float32)
    w[[5, 30]] = [1.0, 2.0]
    anc = pr.resample_many(w, "cellular", seeds=range(5), radius=radius)
    assert set(np.unique(anc)) <= {5, 30}
    for i in range(n):
        live = [(i - d) % n for d in range(radius + 1) if w[(i - d) % n] > 0]
        if not live:  # the first positive one going back from i - r - 1
            j = next((i - d) % n for d in range(radius + 1, n + radius + 1) if w[(i - d) % n] > 0)
            assert (anc[:, i] == j).all(), i
        else:
            assert set(anc[:, i]) <= set(live), i


def test_float64_weights_are_scaled_exactly():
    """Weights near the float64 maximum (whose sums would overflow) choose as
    the same weights times 2^-1000: the sums are over scaled weights."""
    w = np.random.default_rng(4).random(500) * 1.7e308
    assert float(scaled_weights(w).max()) < 1.0
    a = pr.resample_many(w, "cellular", seeds=range(3), radius=200)
    b = pr.resample_many(w * 2.0**-1000, "cellular", seeds=range(3), radius=200)
    np.testing.assert_array_equal(a, b)


def test_radius_is_checked():
    w = np.ones(10, dtype=np.float32)
    with pytest.raises(ValueError, match="radius must be at most N - 1 = 9"):
        pr.resample(w, "cellular", seed=0, radius=10)
    with pytest.raises(ValueError, match="radius must be >= 0"):
        pr.resample(w, "cellular", seed=0, radius=-1)
    with pytest.raises(TypeError, match="radius must be an integer"):
        pr.resample(w, "cellular", seed=0, radius=2.5)
    assert (pr.resample(np.ones(3), "cellular", seed=0) >= 0).all()  # default r capped at N - 1


# ------------------------------------------------------------------ the filter


def test_cpf_estimates_are_means_of_resampled_particles_within_the_ring():
    model = GrowthModel()
    x, y = model.simulate(20, np.random.default_rng(5))
    run = run_cpf(model, y, 512, 32, seed=9)
    est = run.resampled_estimates
    assert est.shape == (20,) and np.isfinite(est).all()
    again = run_cpf(model, y, 512, 32, seed=9)
    np.testing.assert_array_equal(est, again.resampled_estimates)
    assert run.backend == "cpu" and run.wall_seconds > 0
    with pytest.raises(ValueError, match="radius must be at most"):
        run_cpf(model, y, 64, 64, seed=0)
    with pytest.raises(ValueError, match="fast_math is an option of the GPU kernels"):
        run_cpf(model, y, 64, 8, seed=0, fast_math=True)
    with pytest.raises(ValueError, match="neighbourhood='search' is float64 only"):
        run_cpf(model, y, 64, 8, seed=0, precision="float32")
    with pytest.raises(ValueError, match="precision must be one of"):
        run_cpf(model, y, 64, 8, seed=0, precision="float16", neighbourhood="scan")
    with pytest.raises(ValueError, match="neighbourhood must be one of"):
        run_cpf(model, y, 64, 8, seed=0, neighbourhood="sort")


@pytest.mark.slow
def test_cpf_at_full_radius_matches_the_sir_filter():
    """r = N - 1 makes cellular resampling multinomial; the CPF's estimate is
    then the mean of the resampled particles, the SIR filter's the weighted
    mean before resampling -- the same expectation. Their mean MSEs over M
    runs on one trajectory agree within 4 standard errors of the difference
    (the runs' own spread, independent runs)."""
    model = GrowthModel()
    x, y = model.simulate(40, np.random.default_rng(6))
    n, m = 256, 40
    cpf = [
        np.mean((run_cpf(model, y, n, n - 1, seed=s).resampled_estimates - x[1:]) ** 2)
        for s in range(m)
    ]
    sir = [
        np.mean((run_sir(model, y, n, "multinomial", seed=1000 + s).estimates - x[1:]) ** 2)
        for s in range(m)
    ]
    diff = np.mean(cpf) - np.mean(sir)
    se = math.sqrt(np.var(cpf, ddof=1) / m + np.var(sir, ddof=1) / m)
    assert abs(diff) < 4 * se, (np.mean(cpf), np.mean(sir), se)


def test_log_weights_choose_as_their_exponential_and_underflow_draws_locally():
    """cellular_log (the filter's resampling) equals the resampler on
    exp(log w - max) where nothing underflows; a neighbourhood 2000 nats below
    the maximum draws by its own ratios (its one particle 10 nats above the
    rest wins with probability 1 - r e^-10); one of -inf takes the nearest
    finite log-weight beyond it."""
    rng = np.random.default_rng(10)
    n, radius = 300, 8
    lw = rng.normal(0.0, 2.0, n)
    key = (np.uint64(77), np.uint64(5))
    keys = (np.array([77], dtype=np.uint64), np.array([5], dtype=np.uint64))
    np.testing.assert_array_equal(
        cellular_log(lw, key, radius), cellular(np.exp(lw - lw.max()), keys, radius=radius)[0]
    )
    lw[100:140] = -2000.0
    lw[120] = -1990.0
    lw[200:240] = -np.inf
    anc = cellular_log(lw, key, radius)
    assert (anc[120:129] == 120).all()
    np.testing.assert_array_equal(anc[200 + radius : 240], 199)


# ------------------------------------------------ the paper's precision and rule


def _choices(lw: np.ndarray, radius: int, u: np.ndarray, dtype, divide: bool) -> np.ndarray:
    """d* of every particle of the ring (the contract's scan, or the quotients) in ``dtype``."""
    from pfresample.resampling.cellular import neighbourhood_choice

    n = lw.size
    a = np.exp((lw - lw.max()).astype(dtype))
    ext = np.concatenate([a[n - radius :], a])
    return neighbourhood_choice(ext, radius, 0, n, u.astype(dtype), divide)[0]


def test_the_papers_quotients_choose_by_hand():
    """Fig 6, III.5: add L_j / W_i for j = i, i-1, ..., i-r and stop where the
    sum passes u; in float64 the same choice as the contract's s_d <= u W."""
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    n, radius = w.size, 3
    u = np.array([0.01, 0.3, 0.45, 0.77, 0.9, 0.999])  # none at a boundary (rounding decides there)
    expected = []
    for i in range(n):
        q = [w[(i - d) % n] for d in range(radius + 1)]
        running = np.cumsum(np.array(q) / sum(q))
        expected.append(int(np.sum(running <= u[i])))
    got = _choices(np.log(w), radius, u, np.float64, divide=True)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(_choices(np.log(w), radius, u, np.float64, divide=False), got)


@pytest.mark.parametrize("divide", [False, True])
@pytest.mark.parametrize("radius", [8, 64, 256])
def test_float32_choices_differ_from_float64_within_the_rounding_bound(radius, divide):
    """The paper's precision against the float64 reference. A particle's
    float32 choice can differ only where u lies within the float32 rounding
    of the comparisons of some boundary s_d / W: the weights exp(x) carry a
    relative error E 2^-24 (the argument's rounding, |x| <= 8 here, and the
    float32 exp's ulp: E = 10), a running sum of d + 1 of them d 2^-24 more,
    u W or the quotients w / W (r + E + 1) 2^-24; so each boundary is off by
    at most delta = (2r + 2E + 1) 2^-24 and u (a multiple of 2^-24) falls
    within it with probability <= 2 delta + 2^-24: over the r + 1 boundaries
    P(differ) <= B = (r + 1)(4r + 4E + 3) 2^-24 (1.6 % at r = 256; first-order
    bounds). The observed fraction over K N particles may exceed B only by
    its sampling error (4 sqrt(B / (K N)) allowed). Negative control: the
    float64 choice with u cut to 10 bits differs far more often than B."""
    n, keys, e = 4096, 8, 10
    bound = (radius + 1) * (4 * radius + 4 * e + 3) * 2.0**-24
    rng = np.random.default_rng(radius)
    differ = cut = total = 0
    for k in range(keys):
        lw = rng.normal(0.0, 2.0, n).clip(-8.0, 8.0)  # |x| = |lw - max| <= 16: E counts it
        lw = lw / 2.0
        u = uniform_float(draws(100 + k, np.arange(n), 0, DOMAIN_PARTICLE)).astype(np.float64)
        ref = _choices(lw, radius, u, np.float64, divide)
        differ += np.count_nonzero(_choices(lw, radius, u, np.float32, divide) != ref)
        coarse = np.floor(u * 2.0**10) / 2.0**10
        cut += np.count_nonzero(_choices(lw, radius, coarse, np.float64, divide) != ref)
        total += n
    allowed = bound + 4.0 * math.sqrt(bound / total)
    assert differ / total <= allowed, (differ / total, bound)
    assert cut / total > allowed, (cut / total, bound)


@pytest.mark.slow
def test_cpf_in_float32_runs_as_the_float64_filter():
    """The filter in the paper's precision and rule (float32, quotients)
    against the float64 reference on the same seeds (the same noise and
    uniforms): its per-run MSEs differ only where a choice did, and their
    mean difference is within 4 standard errors of the paired differences
    (0 when no choice differed)."""
    model = GrowthModel()
    x, y = model.simulate(50, np.random.default_rng(11))
    diffs, same = [], 0
    for s in range(12):
        ref = run_cpf(model, y, 1024, 64, seed=s)
        f32 = run_cpf(model, y, 1024, 64, seed=s, precision="float32", neighbourhood="divide")
        ref, f32 = ref.resampled_estimates, f32.resampled_estimates
        same += np.array_equal(ref, f32)
        diffs.append(np.mean((f32 - x[1:]) ** 2) - np.mean((ref - x[1:]) ** 2))
    diffs = np.array(diffs)
    assert abs(diffs.mean()) <= 4 * diffs.std(ddof=1) / math.sqrt(diffs.size), diffs
    assert same >= 1  # most runs never meet a choice that rounds differently


def test_weighted_estimate_and_distinct_ancestors_by_hand():
    """r = 0: every particle keeps itself, so the run is the prediction chain
    alone: the weighted estimate is sum w x / sum w of the predicted
    particles, w = exp(log L - max), the plain estimate their mean, and every
    step keeps N distinct ancestors -- recomputed here from the run's seeds."""
    from pfresample.filters.common import derive_seeds

    model = GrowthModel()
    _, y = model.simulate(6, np.random.default_rng(12))
    n = 300
    run = run_cpf(model, y, n, 0, seed=21, diversity=True)
    rng, _ = derive_seeds(21, y.size)
    particles = model.init_particles(n, rng)
    for k in range(y.size):
        particles = model.transition(particles, k, rng)
        log_l = model.log_likelihood(y[k], particles)
        w = np.exp(log_l - log_l.max())
        assert run.estimates[k] == pytest.approx(np.sum(w * particles) / w.sum(), rel=1e-12)
        assert run.resampled_estimates[k] == pytest.approx(particles.mean(), rel=1e-12)
    np.testing.assert_array_equal(run.distinct, np.full(y.size, n))
    np.testing.assert_array_equal(run.lineages, np.full(y.size, n))
    np.testing.assert_allclose(run.resampled_cov[-1, 0, 0], particles.var(ddof=1), rtol=1e-12)
    wide = run_cpf(model, y, n, n - 1, seed=21, diversity=True)
    assert (wide.distinct < n).all()
    # Lineages only die out: non-increasing, and never above the distinct ancestors.
    assert (np.diff(wide.lineages) <= 0).all() and (wide.lineages <= wide.distinct).all()


def test_sir_diagnostics_leave_the_run_unchanged():
    """The SIR filter with diagnostics=True records the mean of the resampled particles
    and the distinct ancestors outside the run: the estimates are the same."""
    model = GrowthModel()
    _, y = model.simulate(10, np.random.default_rng(13))
    plain = run_sir(model, y, 256, "multinomial", 3)
    more = run_sir(model, y, 256, "multinomial", 3, diagnostics=True)
    np.testing.assert_array_equal(plain.estimates, more.estimates)
    assert plain.resampled_estimates is None and more.resampled_estimates.shape == (10,)
    assert ((more.distinct >= 1) & (more.distinct <= 256)).all()
    assert (np.diff(more.lineages) <= 0).all() and (more.lineages <= more.distinct).all()
    assert more.resampled_cov.shape == (10, 1, 1) and (more.resampled_cov > 0).all()
    # no GPU filter records them: "cuda" raises (no device here: the resolver's error)
    with pytest.raises((NotImplementedError, RuntimeError), match="no GPU filter|no CUDA device"):
        run_sir(model, y, 256, "multinomial", 3, diagnostics=True, backend="cuda")


@pytest.mark.slow
def test_cpf_at_full_radius_is_the_multinomial_sir_filter_on_bot():
    """r = N - 1 on the bearings-only model: cellular resampling is
    multinomial, so the CPF is the SIR filter with multinomial resampling
    (their estimates compared with the same estimator, the mean of the
    resampled particles, and with the weighted mean before resampling). With
    the same seeds (the same prior draws and noise) the mean paired
    difference of their position RMSEs lies within 4 standard errors of
    the paired differences; the CPF at r = 4 (the negative control) differs
    by more."""
    from pfresample.models import BearingsOnlyModel

    model = BearingsOnlyModel()
    x, y = model.simulate(24, np.random.default_rng(31))
    truth = x[1:, [0, 2]]

    def rmse(est):
        return float(np.sqrt(np.mean(((est[:, [0, 2]] - truth) ** 2).sum(axis=1))))

    n, m = 256, 50
    sir = [run_sir(model, y, n, "multinomial", s, diagnostics=True) for s in range(m)]
    sir_resampled = np.array([rmse(r.resampled_estimates) for r in sir])
    sir_weighted = np.array([rmse(r.estimates) for r in sir])

    def z(radius, weighted):
        runs = [run_cpf(model, y, n, radius, s) for s in range(m)]
        cpf = np.array([rmse(r.estimates if weighted else r.resampled_estimates) for r in runs])
        d = cpf - (sir_weighted if weighted else sir_resampled)
        return d.mean() / (d.std(ddof=1) / math.sqrt(m))

    assert abs(z(n - 1, weighted=False)) < 4 and abs(z(n - 1, weighted=True)) < 4
    assert abs(z(4, weighted=False)) > 4


def test_the_engine_draws_the_cpfs_way_where_the_gpu_graph_does():
    """``engine.cpf_choice``: the CPF's own choice (each neighbourhood shifted by its
    own maximum) with CPF_OPTIONS or any cellular parameter beyond the radius, the
    registry's choice on W otherwise; the GPU's CPF graph runs only where it holds.
    On the bearings-only model's first steps whole neighbourhoods underflow in W, so
    the two choices give different filters from the same seed."""
    from pfresample.filters.engine import cpf_choice
    from pfresample.models import BearingsOnlyModel

    assert not cpf_choice("float64", {"radius": 3})
    assert not cpf_choice("float64", {"radius": 3, "weighted": False})
    assert cpf_choice("float64", {"radius": 3, "neighbourhood": "search"})
    assert cpf_choice("float64-raw", {"radius": 3})
    model = BearingsOnlyModel()
    _, y = model.simulate(6, np.random.default_rng(4))
    runs = [run_filter(model, y, 1024, "cellular", seed=1, backend="cpu", radius=8, **kw)
            for kw in ({}, {"neighbourhood": "search"}, {"neighbourhood": "search"})]  # fmt: skip
    np.testing.assert_array_equal(runs[1].estimates, runs[2].estimates)  # the seed fixes a run
    assert not np.array_equal(runs[0].estimates, runs[1].estimates)
