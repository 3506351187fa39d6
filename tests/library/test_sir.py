"""The CPU SIR filter (thesis Algorithm 2.4) on the growth model (eqs. 2.34–2.35).

RMSE band. Thesis Table 6.3 gives 4.47 for Systematic (Table 5.2: 4.66 for
Metropolis), each the mean over 16 trajectories x 100 runs at N >= 2^14. We
measured our filter with Systematic at N = 2^10 on 64 trajectories (seeds
1000..1063, one run each): mean RMSE 4.52, standard deviation 0.74 per
trajectory, so a mean over 8 trajectories has a standard deviation of 0.26;
eight disjoint groups of 8 gave means 4.32 ... 4.71. The band [3.7, 5.3] is
4.5 +- 3 of those standard deviations and holds both thesis values. Broken
filters fall far outside: ignoring the measurement gave 8.8, a one-step shift
of the cosine phase between truth and filter 10.8.
"""

import numpy as np
import pytest

from pfresample.filters import SIR_OPTIONS, STAGES, engine, rmse, run_filter
from pfresample.filters import sir as sir_module
from pfresample.filters.common import NO_B
from pfresample.models import GrowthModel, RadarModel

N = 2**10
STEPS = 100  # T of §5.4 / §6.9
TRAJECTORY_SEEDS = range(1000, 1008)
RMSE_BAND = (3.7, 5.3)

MODEL = GrowthModel()
TRAJECTORIES = [MODEL.simulate(STEPS, np.random.default_rng(s)) for s in TRAJECTORY_SEEDS]
_cache = {}


def run_sir(model, y, n, method, seed, *, normalised=None, **kw):
    """Algorithm 2.4 (``run_filter`` with ``SIR_OPTIONS``), on the CPU unless
    ``backend`` says otherwise; ``normalised`` overrides §6.9's stage 4."""
    kw.setdefault("backend", "cpu")
    if normalised is not None:
        kw["stage4_weights"] = "normalised" if normalised else "unnormalised"
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


def mean_rmse(method: str) -> float:
    """Mean RMSE of one run per fixed trajectory (filter seed = trajectory index)."""
    if method not in _cache:
        errors = [
            rmse(run_sir(MODEL, y, N, method, seed=i).estimates, x[1:])
            for i, (x, y) in enumerate(TRAJECTORIES)
        ]
        _cache[method] = float(np.mean(errors))
    return _cache[method]


@pytest.mark.slow
def test_systematic_rmse_in_the_band():
    low, high = RMSE_BAND
    assert low <= mean_rmse("systematic") <= high


@pytest.mark.parametrize("method", ["metropolis", "uphill"])
@pytest.mark.slow
def test_unnormalised_methods_match_systematic(method):
    # Tables 5.2 and 6.3: all methods' RMSE agree to within 1%; our 8 x 1 runs
    # at N = 2^10 differ from Systematic by a few percent, so allow 10%.
    assert mean_rmse(method) == pytest.approx(mean_rmse("systematic"), rel=0.10)


def test_stage_times_sum_to_the_total():
    x, y = TRAJECTORIES[0]
    r = run_sir(MODEL, y[:20], 256, "systematic", seed=1)
    assert r.stage_seconds.shape == (20, len(STAGES)) == (20, 4)
    assert np.all(r.stage_seconds >= 0)
    assert r.total_seconds == r.stage_seconds.sum()
    assert r.stage_totals.sum() == pytest.approx(r.total_seconds, rel=1e-12)
    assert r.stage_shares.sum() == pytest.approx(100.0)
    # the wall clock measures the same loop plus its bookkeeping
    assert r.total_seconds <= r.wall_seconds


def test_same_seed_same_run():
    x, y = TRAJECTORIES[1]
    a = run_sir(MODEL, y[:30], 256, "metropolis", seed=7)
    b = run_sir(MODEL, y[:30], 256, "metropolis", seed=7)
    c = run_sir(MODEL, y[:30], 256, "metropolis", seed=8)
    np.testing.assert_array_equal(a.estimates, b.estimates)
    np.testing.assert_array_equal(a.B, b.B)
    assert not np.array_equal(a.estimates, c.estimates)


def test_weights_given_to_the_resampler(monkeypatch):
    """§6.9: unnormalised weights for the comparison-based methods, normalised
    ones for the cumulative family; float32 either way; B with epsilon = 1/10."""
    seen = []
    real = engine.resample

    def spy(w, method, **kw):
        name = method.name  # the engine hands down the method's record, looked up once a run
        seen.append((name, w.dtype, float(w.sum(dtype=np.float64)), float(w.max()), kw["B"]))
        return real(w, method, **kw)

    monkeypatch.setattr(engine, "resample", spy)
    x, y = TRAJECTORIES[2]
    for method in ("systematic", "metropolis", "rejection", "uphill"):
        run_sir(MODEL, y[:5], 128, method, seed=3)
    for method, dtype, total, w_max, b in seen:
        assert dtype == np.float32
        if method == "systematic":
            assert total == pytest.approx(1.0, rel=1e-5) and b is None
        else:
            assert w_max == 1.0  # exp(log w - max log w): the largest weight is 1
        if method in ("metropolis", "uphill"):
            assert b >= 1
    r = run_sir(MODEL, y[:5], 128, "metropolis", seed=3)
    r10 = run_sir(MODEL, y[:5], 128, "metropolis", seed=3, epsilon=0.01)
    assert np.all(r.B < r10.B)  # B grows with log(1/epsilon): 1/10 gives the smaller B


def test_fixed_B_and_no_B():
    x, y = TRAJECTORIES[3]
    r = run_sir(MODEL, y[:5], 64, "metropolis", seed=0, B=12)
    np.testing.assert_array_equal(r.B, 12)
    assert np.all(run_sir(MODEL, y[:5], 64, "systematic", seed=0).B == NO_B)
    with pytest.raises(TypeError, match=r"not \['B'\]"):
        run_sir(MODEL, y[:5], 64, "systematic", seed=0, B=12)


def test_unknown_method_raises_the_registry_error():
    with pytest.raises(ValueError, match="unknown method 'no-such-method'"):
        run_sir(MODEL, TRAJECTORIES[0][1], 64, "no-such-method", seed=0)


def test_radar_model_runs_through_the_filter():
    """A vector state: constant-velocity truth, position RMSE of the order of
    Table 7.3's 7.8 m (range noise 10 m)."""
    m = RadarModel()
    truth = np.array([[1000 + 10 * t, 1000 + 5 * t, 10, 5] for t in range(1, 31)], dtype=float)
    y = m.simulate_measurements(truth, np.random.default_rng(0))
    r = run_sir(m, y, 512, "uphill", seed=0)
    assert r.estimates.shape == (30, 4)
    assert rmse(r.estimates[:, :2], truth[:, :2]) < 20.0


def test_rmse_definition():
    # errors 3 and 4 (Euclidean over the columns, 3-4-5 triangle and 4-0): sqrt((9 + 16) / 2)
    est = np.array([[0.0, 0.0], [4.0, 0.0]])
    tru = np.array([[3.0, 0.0], [0.0, 0.0]])
    assert rmse(est, tru) == pytest.approx(np.sqrt(12.5))
    assert rmse([1.0, 2.0], [2.0, 4.0]) == pytest.approx(np.sqrt(2.5))
    with pytest.raises(ValueError):
        rmse([1.0, 2.0], [1.0, 2.0, 3.0])


def test_backend_auto_without_a_gpu_runs_on_the_cpu(monkeypatch):
    from pfresample import backend

    monkeypatch.setattr(backend, "cuda_device", lambda: None)
    x, y = TRAJECTORIES[0]
    r = run_sir(MODEL, y[:5], 64, "systematic", seed=3, backend="auto")
    assert r.backend == "cpu"
    np.testing.assert_array_equal(r.estimates, run_sir(MODEL, y[:5], 64, "systematic", 3).estimates)


def test_backend_cuda_without_a_gpu_says_so(monkeypatch):
    from pfresample import backend

    monkeypatch.setattr(backend, "cuda_device", lambda: None)
    with pytest.raises(RuntimeError, match="no CUDA device is visible"):
        run_sir(MODEL, TRAJECTORIES[0][1][:5], 64, "systematic", seed=3, backend="cuda")


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend must be one of"):
        run_sir(MODEL, TRAJECTORIES[0][1][:5], 64, "systematic", seed=3, backend="gpu")


def test_weights_from_log_follows_the_log_weight_contract():
    lw = np.array([-np.inf, -3.0, 0.5, -np.inf, -800.0])
    w = sir_module.weights_from_log(lw)
    assert w.dtype == np.float32
    # -inf and a log-weight 800 below the top are zero weights; the top is exactly 1.
    np.testing.assert_array_equal(w, np.float32([0.0, np.exp(-3.5), 1.0, 0.0, 0.0]))
    for bad, what in ((np.nan, "NaN"), (np.inf, r"\+inf")):
        lw_bad = lw.copy()
        lw_bad[[1, 3]] = bad
        with pytest.raises(ValueError, match=rf"log-weights\[1\] is {what}"):
            sir_module.weights_from_log(lw_bad)
    with pytest.raises(ValueError, match="all log-weights are -inf"):
        sir_module.weights_from_log(np.full(4, -np.inf))


class _NaNAtStep3(GrowthModel):
    """The growth model whose likelihood of particle 5 is NaN at step 3."""

    def log_likelihood(self, z, x):
        lw = super().log_likelihood(z, x)
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls == 3:
            lw = lw.copy()
            lw[5] = np.nan
        return lw


def test_a_bad_log_likelihood_names_the_step_and_the_particle():
    x, y = TRAJECTORIES[0]
    with pytest.raises(ValueError, match=r"step 3 of the filter: log-weights\[5\] is NaN"):
        run_sir(_NaNAtStep3(), y[:10], 64, "systematic", seed=1)


def test_an_infinite_measurement_is_named():
    # z = +inf: every log-likelihood of that step is -inf, no weight is left.
    x, y = TRAJECTORIES[0]
    y = y[:6].copy()
    y[1] = np.inf
    with pytest.raises(ValueError, match="step 2 of the filter: all log-weights are -inf"):
        run_sir(MODEL, y, 64, "systematic", seed=1)


def test_graph_inputs_lay_out_the_noise_key_the_step_keys_and_the_measurements():
    """The GPU filters' input buffer, word by word, from derive_seeds and
    rng.seed_keys."""
    from pfresample.filters.common import derive_seeds, graph_inputs
    from pfresample.rng import seed_keys

    y = np.array([0.5, -1.25, 3.0])
    for seed in (0, 7, 2**63 + 5):
        rng, draw_seeds = derive_seeds(seed, 3)
        got = graph_inputs(y, seed, 3)
        assert got.dtype == np.uint32 and got.shape == (2 + 2 * 3 + 3,)
        assert list(got[:2]) == list(rng.integers(0, 2**32, size=2, dtype=np.uint64))
        k0, k1 = seed_keys(draw_seeds)
        assert list(got[2:8:2]) == list(k0) and list(got[3:8:2]) == list(k1)
        np.testing.assert_array_equal(got[8:].view(np.float32), y.astype(np.float32))


def test_normalised_overrides_stage_4_weights(monkeypatch):
    """``normalised`` (an ablation of §6.9's choice) hands every method w or w~;
    the GPU filter does not take it."""
    seen = []
    real = engine.resample

    def spy(w, method, **kw):
        seen.append((method.name, float(w.sum(dtype=np.float64)), float(w.max())))  # the record
        return real(w, method, **kw)

    monkeypatch.setattr(engine, "resample", spy)
    x, y = TRAJECTORIES[2]
    run_sir(MODEL, y[:3], 128, "uphill", seed=3, normalised=True)
    run_sir(MODEL, y[:3], 128, "systematic", seed=3, normalised=False)
    for method, total, w_max in seen:
        if method == "uphill":
            assert total == pytest.approx(1.0, rel=1e-5) and w_max < 1.0
        else:
            assert w_max == 1.0 and total > 1.0
    # no GPU filter takes it: "cuda" raises (no device here: the resolver's error)
    with pytest.raises((NotImplementedError, RuntimeError), match="no GPU filter|no CUDA device"):
        run_sir(MODEL, y[:3], 128, "uphill", seed=3, normalised=True, backend="cuda")
