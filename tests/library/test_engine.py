"""``pfresample.run_filter`` (filters/engine.py): its log-likelihood estimate
against the Kalman filter's exact value, every registry method through it,
the backend it reports and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pfresample as pr
from pfresample.backend import cuda_device
from pfresample.filters import D3_OPTIONS
from pfresample.models import LinearGaussianModel, UuvModel
from pfresample.resampling.registry import REGISTRY

MODEL = LinearGaussianModel()  # a = 0.9, q = r = p0 = 1
STEPS = 25
_, Y = MODEL.simulate(STEPS, seed=7)
MEANS, VARIANCES, EXACT = MODEL.kalman(Y)


def test_kalman_log_likelihood_by_hand_for_one_step():
    """One step from x_0 ~ N(0, 1): z_1 ~ N(0, a^2 + q^2 + r^2)."""
    model = LinearGaussianModel(a=0.5, q=2.0, r=3.0, m0=0.0, p0=1.0)
    s = 0.25 + 4.0 + 9.0
    means, variances, log_z = model.kalman([1.5])
    assert log_z == pytest.approx(-0.5 * (1.5**2 / s + math.log(2 * math.pi * s)), rel=1e-14)
    assert means[0] == pytest.approx(4.25 / s * 1.5, rel=1e-14)
    assert variances[0] == pytest.approx(4.25 * 9.0 / s, rel=1e-14)


def ratio_z(model, method: str, runs: int = 300, n: int = 512) -> float:
    """z of the mean of Z^/Z over ``runs`` seeds: (mean - 1) / (sd / sqrt(runs))."""
    ll = np.array([pr.run_filter(model, Y, n, method, seed=s).log_likelihood for s in range(runs)])
    ratio = np.exp(ll - EXACT)
    return (ratio.mean() - 1.0) / (ratio.std(ddof=1) / math.sqrt(runs))


@pytest.mark.parametrize("method", ["systematic", "multinomial"])
@pytest.mark.slow
def test_the_likelihood_estimate_is_unbiased(method):
    """E[Z^] = p(z_1:T) for an unbiased resampler (Del Moral 2004, Prop.
    7.4.1): the mean of Z^ / Z over 300 seeds lies within 4 standard errors
    of 1. At N = 512, T = 25 the log-estimate's sd is about 0.37, so Z^ / Z is
    near log-normal with a finite, well-estimated variance; 4 standard
    errors leave a false alarm below 1e-4 under the normal approximation."""
    assert abs(ratio_z(MODEL, method)) < 4


@pytest.mark.slow
def test_negative_control_a_wrong_model_fails_the_same_test():
    """The filter of a model with r = 1.3 (the data's r is 1): its Z^ estimates
    another likelihood, and the test above must reject it."""
    assert abs(ratio_z(LinearGaussianModel(r=1.3), "systematic", runs=100)) > 4


def test_a_constant_likelihood_gives_its_exact_sum():
    """g = e^c for every particle: each log Z_k is exactly c, no weight moves
    the ESS from N and the adaptive filter never resamples."""

    class Flat(LinearGaussianModel):
        def log_likelihood(self, y, x):
            return np.full(np.shape(x), -1.25)

    for method, threshold in (("systematic", None), ("rejection", 0.5)):
        run = pr.run_filter(Flat(), Y, 100, method, seed=1, ess_threshold=threshold)
        np.testing.assert_allclose(run.log_likelihood_steps, -1.25, rtol=0, atol=1e-12)
        np.testing.assert_allclose(run.ess, 100.0, rtol=1e-12)
        assert run.resampled.all() == (threshold is None)


METHOD_PARAMS = {"cellular": {"radius": 16}}


@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_every_registry_method_filters(method):
    """Every method through run_filter at N = 256 on the linear-Gaussian
    model: the posterior means within 0.35 RMSE of the Kalman filter's (one
    step's Monte Carlo sd is about 0.77 / sqrt(N_eff) = 0.07 at N_eff ~ N/2;
    the resamplers measured at 0.11-0.19 over five seeds), D3, which moves
    the particles, within the posterior sd (0.77; measured 0.48); a finite
    likelihood estimate; and the record's shapes."""
    run = pr.run_filter(MODEL, Y, 256, method, seed=3, **METHOD_PARAMS.get(method, {}))
    err = np.sqrt(np.mean((run.estimates - MEANS) ** 2))
    assert err < (0.77 if method == "d3" else 0.35), err
    assert np.isfinite(run.log_likelihood)
    assert run.log_likelihood == pytest.approx(run.log_likelihood_steps.sum())
    assert run.estimates.shape == run.ess.shape == run.resampled.shape == (STEPS,)
    assert run.stage_seconds.shape == (STEPS, 4) and run.resampled.all()
    assert run.method == method and run.backend == "cpu"


def test_vector_states_and_the_adaptive_filter():
    """A (N, 2) model (the UUV's) gives (T, 2) estimates; with ess_threshold
    the filter resamples exactly at the steps whose ESS fell below tau N."""
    model = UuvModel(duration=0.5, filter_process_sd=0.01)
    _, y = model.simulate(2)
    run = pr.run_filter(model, y, 200, "systematic", seed=1, ess_threshold=0.5)
    assert run.estimates.shape == (50, 2)
    np.testing.assert_array_equal(run.resampled, run.ess < 0.5 * 200)
    assert 0 < run.resampled.sum() < 50


def test_same_seed_same_run():
    a, b = (pr.run_filter(MODEL, Y, 64, "metropolis", seed=5) for _ in range(2))
    np.testing.assert_array_equal(a.estimates, b.estimates)
    assert a.log_likelihood == b.log_likelihood


def test_auto_backend_without_a_gpu_runs_on_the_cpu_and_cuda_says_why_not(monkeypatch):
    from pfresample import backend

    monkeypatch.setattr(backend, "cuda_device", lambda: None)
    assert pr.run_filter(MODEL, Y, 32, "systematic", seed=1, backend="auto").backend == "cpu"
    with pytest.raises(RuntimeError, match="no CUDA device"):
        pr.run_filter(MODEL, Y, 32, "systematic", seed=1, backend="cuda")
    with pytest.raises(ValueError, match="backend must be one of"):
        pr.run_filter(MODEL, Y, 32, "systematic", seed=1, backend="gpu")


@pytest.mark.skipif(cuda_device() is not None, reason="a GPU is visible: auto takes it")
def test_d3_auto_falls_back_to_the_cpu_without_a_gpu():
    model = UuvModel(duration=0.2)
    _, y = model.simulate(1)
    run = pr.run_filter(model, y, 32, "d3", seed=1, backend="auto", **D3_OPTIONS)
    assert run.backend == "cpu" and run.estimates.shape == (20, 2)
    with pytest.raises(RuntimeError, match="no CUDA device"):
        pr.run_filter(model, y, 32, "d3", seed=1, backend="cuda", **D3_OPTIONS)


def test_bad_input_names_the_problem():
    class NoLikelihood:
        def init_particles(self, n, rng):
            return rng.standard_normal(n)

        def transition(self, x, k, rng):
            return x

    with pytest.raises(TypeError, match="lacks log_likelihood"):
        pr.run_filter(NoLikelihood(), Y, 8, "systematic", seed=1)
    with pytest.raises(TypeError, match="takes"):
        pr.run_filter(MODEL, Y, 8, "systematic", seed=1, radius=3)
    with pytest.raises(ValueError, match="unknown|method"):
        pr.run_filter(MODEL, Y, 8, "no-such-method", seed=1)
    for bad in (-0.5, float("nan")):  # above 1 is every step (ESS <= N); below 0 is no tau
        with pytest.raises(ValueError, match="ess_threshold"):
            pr.run_filter(MODEL, Y, 8, "systematic", seed=1, ess_threshold=bad)

    class NanAtStep3(LinearGaussianModel):
        def log_likelihood(self, y, x):
            out = super().log_likelihood(y, x)
            return out * np.nan if y == Y[2] else out

    with pytest.raises(ValueError, match="step 3 of the filter"):
        pr.run_filter(NanAtStep3(), Y, 8, "systematic", seed=1)

    class NoMean:
        init_particles = LinearGaussianModel.init_particles
        transition = LinearGaussianModel.transition
        log_likelihood = LinearGaussianModel.log_likelihood
        a = q = r = p0 = 1.0
        m0 = 0.0

    with pytest.raises(TypeError, match="mean_transition"):
        pr.run_filter(NoMean(), Y, 8, "d3", seed=1)


def test_the_method_is_looked_up_once_a_call(monkeypatch):
    """run_filter enters ``registry.get_method`` once a call, whatever the
    method and the conventions: the record is handed down to every step's
    resampling, B rule and staged gate (per step it would be T lookups or more)."""
    from pfresample import api
    from pfresample.filters import engine
    from pfresample.resampling import registry

    calls = []
    real = registry.get_method

    def counting(name):
        calls.append(name)
        return real(name)

    for module in (registry, api, engine):
        monkeypatch.setattr(module, "get_method", counting)
    cases = [
        ("systematic", {}),
        ("metropolis", {}),  # B chosen every step
        ("uphill", {"arithmetic": "float32"}),
        ("butterfly-multinomial", {"gate": "stages", "ess_threshold": 0.5}),
        ("multinomial", {"gate": "stages", "ess_threshold": 0.5}),
        ("cellular", {"radius": 2}),
        ("d3", {}),
    ]
    for method, options in cases:
        calls.clear()
        pr.run_filter(MODEL, Y, 64, method, seed=1, backend="cpu", **options)
        assert calls == [method], (method, calls)
    # negative control: a resampling by name from the outside looks it up itself
    calls.clear()
    pr.resample(np.ones(8), "systematic", seed=1, backend="cpu")
    assert calls == ["systematic"]


class _FakeFilter:
    """A GPU filter that counts what it builds and what it runs."""

    def __init__(self):
        self.built, self.runs = 0, 0

    def factory(self, model, m, n, kw, own, options):
        fake = self

        def runner(model, y, n, m, seed, kw, own):  # pragma: no cover - prepare is used
            raise AssertionError("the engine binds the runner once (prepare)")

        def prepare(model, steps, n, m, kw, own):
            fake.built += 1

            def run(y, seed):
                fake.runs += 1
                return ("ran", m.name, n, len(y), seed)

            return run

        runner.prepare = prepare
        return runner


def test_a_repeated_gpu_call_replays_its_plan(monkeypatch):
    """The second run_filter call with the same arguments (another seed, other
    measurements of the same shape) builds nothing: no method lookup, no GPU
    filter chosen or made, only the bound run; clear_graphs() forgets it;
    another N, method or option is a plan of its own."""
    from pfresample.filters import clear_graphs, engine, gpu
    from pfresample.filters.graph import GRAPHS, PLAN

    fake = _FakeFilter()
    chosen = []

    def fused_filter(*args):
        chosen.append(args[1].name)
        return fake.factory(*args)

    monkeypatch.setattr(gpu, "fused_filter", fused_filter)
    monkeypatch.setattr(engine, "resolve_backend", lambda backend, has_code: "cuda")
    monkeypatch.setattr(engine, "_device_id", lambda: 0)
    lookups = []
    real = engine.get_method
    monkeypatch.setattr(engine, "get_method", lambda name: lookups.append(name) or real(name))
    clear_graphs()
    try:
        first = pr.run_filter(MODEL, Y, 256, "systematic", seed=1, backend="cuda")
        second = pr.run_filter(MODEL, Y + 1.0, 256, "systematic", seed=2, backend="cuda")
        assert first == ("ran", "systematic", 256, STEPS, 1)
        assert second == ("ran", "systematic", 256, STEPS, 2)
        assert (fake.built, fake.runs, chosen, lookups) == (1, 2, ["systematic"], ["systematic"])
        assert len(GRAPHS.entries(PLAN)) == 1
        # other arguments: plans of their own
        pr.run_filter(MODEL, Y, 512, "systematic", seed=1, backend="cuda")
        pr.run_filter(MODEL, Y, 256, "multinomial", seed=1, backend="cuda")
        pr.run_filter(MODEL, Y, 256, "systematic", seed=1, backend="cuda", stage_times=False)
        pr.run_filter(MODEL, Y[:10], 256, "systematic", seed=1, backend="cuda")
        assert fake.built == 5 and len(GRAPHS.entries(PLAN)) == 5
        # the public clear forgets the plans: the next call builds again
        clear_graphs()
        assert GRAPHS.entries(PLAN) == []
        pr.run_filter(MODEL, Y, 256, "systematic", seed=3, backend="cuda")
        assert fake.built == 6
        # clearing one kind of graph forgets the plans too (a plan holds its graph)
        clear_graphs("sir")
        pr.run_filter(MODEL, Y, 256, "systematic", seed=3, backend="cuda")
        assert fake.built == 7
        # another device: the plan is not reused
        monkeypatch.setattr(engine, "_device_id", lambda: 1)
        pr.run_filter(MODEL, Y, 256, "systematic", seed=3, backend="cuda")
        assert fake.built == 8
    finally:
        clear_graphs()


def test_plan_keys_tell_arrays_apart():
    """Array options (resample_at, ssd_table) key a plan by their contents;
    an unhashable model has no key (resolved afresh each call)."""
    from pfresample.filters.engine import _plan_key

    a = np.array([True, False, True])
    k1 = _plan_key(MODEL, (3,), 8, "systematic", "cuda", {}, a)
    k2 = _plan_key(MODEL, (3,), 8, "systematic", "cuda", {}, a.copy())
    k3 = _plan_key(MODEL, (3,), 8, "systematic", "cuda", {}, ~a)
    assert k1 == k2 and k1 != k3
    assert _plan_key([MODEL], (3,), 8, "systematic", "cuda", {}) is None


def _loop_on(backend, arithmetic: str, method: str = "systematic"):
    """run_loop over ``backend`` with the CPU's stage 4, as ``filters.device``
    runs it over CuPy (its ArrayBackend's parts, NumPy standing in for CuPy)."""
    from pfresample.filters import engine, loop
    from pfresample.resampling.registry import get_method

    m = get_method(method)
    options = dict(loop.LOOP_OPTIONS)
    options.update(arithmetic=arithmetic, keep_particles=True, resampled_estimates="mean")
    plan = engine.cpu_plan(MODEL, m, 64, {}, {}, arithmetic, None, "filter")
    return loop.run_loop(MODEL, Y, 64, m, 3, plan, backend, **options)


def test_the_loops_options_are_run_filters():
    """The loop's defaults (what ``filters.device`` fills in) are run_filter's."""
    from pfresample.filters import engine, loop

    assert loop.LOOP_OPTIONS == {k: engine._OPTION_DEFAULTS[k] for k in loop.LOOP_OPTIONS}
    assert set(engine._OPTION_DEFAULTS) - set(loop.LOOP_OPTIONS) == {
        "stage_times", "capture"}  # the GPU filters' own  # fmt: skip


def test_the_loop_over_the_devices_parts_is_the_cpus_run():
    """The one loop (``loop.run_loop``) with the device's way of reading
    the sum of w~ back (a Python float) and of copying arrays to the host
    gives the CPU run bit for bit in the float64 arithmetic the device runs;
    the CPU's own ArrayBackend is what run_filter uses."""
    from pfresample.filters import loop

    device_like = loop.ArrayBackend(np, "cuda", lambda: "stand-in", np.array, float,
                                    lambda rng: rng)  # fmt: skip
    cpu = pr.run_filter(MODEL, Y, 64, "systematic", seed=3, backend="cpu",
                        keep_particles=True, resampled_estimates="mean")  # fmt: skip
    for backend in (loop.NUMPY, device_like):
        run = _loop_on(backend, "float64")
        for name in ("estimates", "ess", "log_likelihood_steps", "particles", "log_weights",
                     "resampled_estimates"):  # fmt: skip
            np.testing.assert_array_equal(getattr(run, name), getattr(cpu, name))
    assert _loop_on(device_like, "float64").backend == "cuda"


def test_negative_control_a_python_float_sum_changes_float32_weights():
    """Why the CPU's ArrayBackend keeps the sum a NumPy float64: with float32
    w~ a Python float divides to float32 W (NumPy's promotion), another run."""
    from pfresample.filters import loop

    python_sum = loop.ArrayBackend(np, "cpu", lambda: "cpu", np.asarray, float,
                                   lambda rng: rng)  # fmt: skip
    same = _loop_on(loop.NUMPY, "float32-w64")
    other = _loop_on(python_sum, "float32-w64")
    assert not np.array_equal(same.estimates, other.estimates)
