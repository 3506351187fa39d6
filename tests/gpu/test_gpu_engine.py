"""run_filter on the GPU: every registry method through the engine, CPU against GPU.

A GPU run is another draw of the same filter (CuPy's noise, float32 states
in the fused graphs), so parity is statistical: over S seeds on each
backend, the mean of a run's statistic (the log-likelihood estimate, the
error against the Kalman mean) agrees within 4 standard errors of the
difference of two independent means, sqrt(var_cpu / S + var_gpu / S) -- a
two-sided test at about 6e-5, so 20 methods x 2 statistics leave a false
alarm below 0.3 %. The negative control, a GPU run of the wrong model
(measurement noise 2 where the data have 1), must fail the same test.

* Every method of ``pr.methods()`` and ``d3`` on ``LinearGaussianModel``
  (written against the array module it is handed: the engine's CuPy loop,
  ``filters.device``), N = 1024, T = 25, S = 24.
* ``backend="auto"`` takes the GPU for such a model; the documentation's own
  model (docs/library.md, "Your own model") runs on CuPy unchanged.
* The fused GPU filters the engine chooses (``filters.gpu``): Dülger's SIR
  graph on the growth model -- its log-likelihood estimate (from each step's
  kept maximum and sum) against the CPU's, and the fused one-kernel run the
  same estimates and log Z_k as the graph; the cellular, D3 and Güldaş
  filters run through ``run_filter`` and report ``backend="cuda"``, and the
  D3 graph's and the Güldaş graphs' log-likelihood estimates agree with the
  CPU's in mean (no GPU filter gives NaN).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pfresample as pr
from pfresample.filters import (
    ADAPTIVE_OPTIONS,
    BOOTSTRAP_OPTIONS,
    CPF_OPTIONS,
    D3_OPTIONS,
    SIR_OPTIONS,
    run_filter,
)
from pfresample.models import (
    BearingsOnlyModel,
    BimodalModel,
    GrowthModel,
    LinearGaussianModel,
    UuvModel,
)

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

N, STEPS, SEEDS = 1024, 25, 24
MODEL = LinearGaussianModel()
TRUTH, Y = MODEL.simulate(STEPS, seed=3)
KALMAN_MEANS, _, KALMAN_LOG_Z = MODEL.kalman(Y)
PARAMS = {"cellular": {"radius": 32}}
METHODS = [*pr.methods(), "d3"]


def _stats(backend: str, method: str, model=MODEL, seeds=range(SEEDS)) -> np.ndarray:
    """(S, 2): each run's log-likelihood estimate and its RMSE against the Kalman means."""
    out = []
    for s in seeds:
        run = run_filter(model, Y, N, method, seed=1000 + s, backend=backend,
                         **PARAMS.get(method, {}))  # fmt: skip
        assert run.backend == backend
        err = np.sqrt(np.mean((run.estimates - KALMAN_MEANS) ** 2))
        out.append((run.log_likelihood, err))
    return np.array(out)


def _z(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The difference of the column means over its standard error (independent runs)."""
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    return (a.mean(axis=0) - b.mean(axis=0)) / se


@pytest.mark.parametrize("method", METHODS)
def test_every_method_runs_on_the_gpu_as_on_the_cpu(method):
    cpu, gpu = _stats("cpu", method), _stats("cuda", method)
    assert np.isfinite(gpu).all()
    z = _z(cpu, gpu)
    assert np.all(np.abs(z) < 4), (method, z, cpu.mean(axis=0), gpu.mean(axis=0))


def test_a_wrong_model_fails_the_parity_test():
    """The negative control: the same test tells r = 2 from r = 1."""
    cpu = _stats("cpu", "systematic")
    wrong = _stats("cuda", "systematic", model=LinearGaussianModel(r=2.0))
    assert np.abs(_z(cpu, wrong)[0]) > 4


def test_the_gpu_log_likelihood_is_unbiased_against_kalman():
    """exp of the estimate is unbiased for p(z_1:T) (Systematic): the mean of
    Z^/Z over S seeds within 4 standard errors of 1."""
    ratio = np.exp(_stats("cuda", "systematic", seeds=range(64))[:, 0] - KALMAN_LOG_Z)
    assert abs(ratio.mean() - 1) < 4 * ratio.std(ddof=1) / math.sqrt(ratio.size)


def test_auto_takes_the_gpu_for_an_array_generic_model():
    run = run_filter(MODEL, Y, N, "systematic", seed=1, backend="auto")
    assert run.backend == "cuda" and run.estimates.shape == (STEPS,)
    again = run_filter(MODEL, Y, N, "systematic", seed=1, backend="auto")
    np.testing.assert_array_equal(run.estimates, again.estimates)  # the seed fixes the run


class RandomWalk:
    """docs/library.md's own model, as printed there: NumPy calls only."""

    def init_particles(self, n, rng):
        return rng.standard_normal(n)

    def transition(self, x, k, rng):
        return x + rng.standard_normal(x.shape)

    def log_likelihood(self, y, x):
        return -0.5 * ((y - x) / 0.5) ** 2 - np.log(0.5 * np.sqrt(2 * np.pi))


def test_a_users_numpy_model_runs_on_cupy():
    """The random walk is the linear-Gaussian model a = 1, q = 1, r = 0.5:
    its GPU log-likelihood estimates average to Kalman's within 4 standard errors."""
    exact = LinearGaussianModel(a=1.0, q=1.0, r=0.5)
    _, y = exact.simulate(STEPS, seed=5)
    log_z = exact.kalman(y)[2]
    runs = [run_filter(RandomWalk(), y, 4096, "systematic", seed=s, backend="cuda")
            for s in range(32)]  # fmt: skip
    assert all(r.backend == "cuda" for r in runs)
    ratio = np.exp(np.array([r.log_likelihood for r in runs]) - log_z)
    assert abs(ratio.mean() - 1) < 4 * ratio.std(ddof=1) / math.sqrt(ratio.size)


def _assert_same_mean_log_z(model, y, method, seeds=32, **kw):
    """The log-likelihood estimates of ``seeds`` runs a backend (N = 4096): their
    means agree within 4 standard errors of the difference of two independent means."""

    def log_z(backend):
        return np.array([
            run_filter(model, y, 4096, method, seed=s, backend=backend, **kw).log_likelihood
            for s in range(seeds)
        ])  # fmt: skip

    cpu, gpu = log_z("cpu"), log_z("cuda")
    assert np.isfinite(gpu).all()
    se = math.sqrt(cpu.var(ddof=1) / cpu.size + gpu.var(ddof=1) / gpu.size)
    assert abs(cpu.mean() - gpu.mean()) < 4 * se, (cpu.mean(), gpu.mean(), se)


def test_the_sir_graph_log_likelihood_agrees_with_the_cpu():
    """Dülger's filter on the growth model: the engine picks the SIR graph,
    whose log Z_k comes from each step's kept maximum and sum of w~; its
    mean over seeds agrees with the CPU filter's (4 standard errors), and the
    fused one-kernel run (stage_times=False) gives the graph's estimates."""
    model = GrowthModel()
    _, y = model.simulate(50, np.random.default_rng(8))
    _assert_same_mean_log_z(model, y, "systematic", **SIR_OPTIONS)
    graph = run_filter(model, y, 4096, "systematic", seed=3, backend="cuda", **SIR_OPTIONS)
    fused = run_filter(model, y, 4096, "systematic", seed=3, backend="cuda", stage_times=False,
                       **SIR_OPTIONS)  # fmt: skip
    np.testing.assert_array_equal(graph.estimates, fused.estimates)
    # the fused run keeps each step's maximum and sum of w~ as the graph does
    assert np.isfinite(fused.log_likelihood_steps).all()
    np.testing.assert_allclose(fused.log_likelihood_steps, graph.log_likelihood_steps, rtol=1e-9)


@pytest.mark.parametrize("method", ["d3", "systematic"])
def test_the_d3_graph_log_likelihood_agrees_with_the_cpu(method):
    """Das et al.'s filter on the UUV model (200 steps: two eager steps, one
    replayed chunk of 100 and eager steps after it): log Z_k from the
    step's record that step_advance copies (its maximum's key and the sum of
    w~); its mean over 32 seeds agrees with the CPU filter's."""
    model = UuvModel(duration=2.0)
    _, y = model.simulate(1)
    _assert_same_mean_log_z(model, y, method, **D3_OPTIONS)


def test_the_guldas_graphs_log_likelihood_agrees_with_the_cpu():
    """Güldaş's bootstrap filter (every step) and adaptive filter (the
    weights carried, the stages the device decides): the mean of the
    log-likelihood estimate over 32 seeds agrees with the CPU filter's."""
    model = BimodalModel()
    _, y = model.simulate(30)
    _assert_same_mean_log_z(model, y, "multinomial", **BOOTSTRAP_OPTIONS)
    _assert_same_mean_log_z(model, y, "butterfly-multinomial", ess_threshold=0.5,
                            **ADAPTIVE_OPTIONS)  # fmt: skip
    _assert_same_mean_log_z(model, y, "stratified", ess_threshold=0.5, **ADAPTIVE_OPTIONS)


@pytest.mark.parametrize("model", [GrowthModel(), BearingsOnlyModel()], ids=["growth", "bot"])
def test_the_cpf_graph_log_likelihood_agrees_with_the_cpu(model):
    """The cellular filter (r = 32, the CPF's choice: ``neighbourhood`` given,
    ``engine.cpf_choice``) on the growth and bearings-only models: the engine
    picks the CPF graph, whose log Z_k comes from the sum of w~ its last block
    adds; its mean over 32 seeds agrees with the CPU filter's (4 standard
    errors). A wrong constant (the kernels drop -1/2 log(2 pi s^2) from log g)
    would shift every run by T times it, far outside."""
    _, y = model.simulate(30, np.random.default_rng(9))
    _assert_same_mean_log_z(model, y, "cellular", radius=32, neighbourhood="search")


def test_the_engine_runs_the_documents_gpu_filters():
    """Each fused filter through run_filter: the CPF, Das et al.'s D3
    filter, Güldaş's bootstrap filter; finite estimates, backend "cuda"."""
    growth = GrowthModel()
    _, y = growth.simulate(20, np.random.default_rng(2))
    cpf = run_filter(growth, y, 4096, "cellular", seed=1, backend="cuda", radius=64,
                     **CPF_OPTIONS)  # fmt: skip
    assert cpf.backend == "cuda" and np.isfinite(cpf.resampled_estimates).all()
    uuv = UuvModel(duration=2.0)
    _, yu = uuv.simulate(1)
    d3 = run_filter(uuv, yu, 2048, "d3", seed=1, backend="cuda", **D3_OPTIONS)
    assert d3.backend == "cuda" and d3.device_seconds > 0 and np.isfinite(d3.estimates).all()
    bimodal = BimodalModel()
    _, yb = bimodal.simulate(20)
    boot = run_filter(bimodal, yb, 2048, "multinomial", seed=1, backend="cuda",
                      **BOOTSTRAP_OPTIONS)  # fmt: skip
    assert boot.backend == "cuda" and np.isfinite(boot.resampled_estimates).all()
