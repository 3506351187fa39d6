"""Cellular resampling and the cellular particle filter on the GPU (``pytest -m gpu``).

* The resampling kernel (cellular.cu) returns the CPU reference's ancestors
  bit for bit: both precisions, N below, at and off multiples of the block,
  r from 0 to N - 1 (the shared-memory tile and the global-memory path),
  several replicas, zero weights and neighbourhoods without weight, float64
  weights that need scaling.
* The GPU filter draws its noise from Philox, the CPU's from NumPy, so no
  run pairs with a CPU run: over M runs on one trajectory their mean errors
  agree within 4 standard errors of the difference (from the runs' own
  spread), for the growth and the bearings-only models; the fast-math build
  too. A replay with the same seed gives the same estimates.
* The paper's kernel (float32 weights and sums, the running quotients, with
  and without fast math) and the float32 scan against the CPU's float32
  reference in the same way; against the GPU's own float64 kernel on the same
  seeds (the same Philox noise), paired: the mean of the per-run differences
  within 4 standard errors of them.
* The weighted mean before resampling, exactly: after a one-step run the
  graph's state buffer holds the predicted particles, and the kernel's
  estimate is sum w x / sum w of them (blocks with their own shifts,
  combined by the last block), its log-likelihood estimate log SUM L - log N
  of them, and at r = 0 its plain estimate their mean.
* The paper's start of the growth model on the GPU: the first predicted
  particles are N(0, 10) draws; the CPF and the SIR filter (graph and fused
  run, bit for bit with each other) agree with the CPU filters.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import pfresample as pr
from pfresample.filters import CPF_OPTIONS, SIR_OPTIONS, run_filter
from pfresample.models import BearingsOnlyModel, GrowthModel

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


def run_cpf(model, y, n, radius, seed, *, weighted=False, **kw):
    """The CPF through the engine (``run_filter`` with resampler "cellular" and
    ``CPF_OPTIONS``), on the CPU unless told, under the names this file's
    tests use: ``estimates`` its own estimate (the mean of the resampled
    particles), ``weighted_estimates`` the weighted mean before resampling,
    ``step_seconds`` the time of a step (the device's on the GPU)."""
    kw.setdefault("backend", "cpu")
    run = run_filter(model, y, n, "cellular", seed=seed, radius=radius, weighted=weighted,
                     **CPF_OPTIONS, **kw)  # fmt: skip
    steps = len(run.estimates)
    clock = run.total_seconds if run.backend == "cuda" else run.wall_seconds
    return SimpleNamespace(
        estimates=run.resampled_estimates, weighted_estimates=run.estimates,
        backend=run.backend, wall_seconds=run.wall_seconds, step_seconds=clock / steps,
        log_likelihood=run.log_likelihood,
    )  # fmt: skip


def run_sir(model, y, n, method, seed, **kw):
    """Dülger's Algorithm 2.4 through the engine (``run_filter`` with ``SIR_OPTIONS``)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


def assert_parity(w: np.ndarray, radius: int, seeds) -> None:
    cpu = pr.resample_many(w, "cellular", seeds=seeds, radius=radius, backend="cpu")
    dev = pr.resample_many(cupy.asarray(w), "cellular", seeds=seeds, radius=radius).get()
    differ = np.flatnonzero(cpu.ravel() != dev.ravel())
    assert differ.size == 0, f"{differ.size} ancestors differ, first at {differ[:5]}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "n,radius",
    [
        (1, 0),
        (100, 7),
        (256, 255),
        (1000, 32),
        (4096, 256),
        (16384, 256),
        (5000, 4999),
        (3000, 4000 - 256),
    ],
)
def test_ancestors_equal_the_cpu_reference(n, radius, dtype):
    if radius > n - 1:
        pytest.skip("radius above N - 1")
    w = np.random.default_rng(n + radius).gamma(0.3, size=n).astype(dtype)
    assert_parity(w, radius, [1, 2, 3])


def test_parity_with_zero_weights_and_dead_neighbourhoods():
    rng = np.random.default_rng(7)
    for n, radius in [(2000, 16), (700, 3), (5000, 300)]:
        w = rng.random(n).astype(np.float32)
        w[rng.random(n) < 0.97] = 0.0
        assert_parity(w, radius, [11, 12])


def test_parity_of_float64_weights_that_need_scaling():
    rng = np.random.default_rng(8)
    for scale in (1.7e308 / 2.0, 1e-310):
        w = rng.random(3000) * scale
        assert_parity(w, 200, [5])


def _mean_errors(model, x, y, n, radius, m, backend, fast_math=False, weighted=False, **kernel):
    truth = x[1:] if x.ndim == 1 else x[1:, [0, 2]]
    errors = []
    for s in range(m):
        run = run_cpf(model, y, n, radius, seed=s, backend=backend, fast_math=fast_math,
                      weighted=weighted, **kernel)  # fmt: skip
        est = run.weighted_estimates if weighted else run.estimates
        e = est - truth if est.ndim == 1 else est[:, [0, 2]] - truth
        errors.append(float(np.mean(e**2 if e.ndim == 1 else (e**2).sum(axis=1))))
    return np.array(errors)


@pytest.mark.parametrize(
    "name,n,radius", [("growth", 1024, 64), ("growth", 4096, 256), ("bot", 2048, 32)]
)
def test_gpu_filter_agrees_with_the_cpu_filter(name, n, radius):
    model = GrowthModel() if name == "growth" else BearingsOnlyModel()
    x, y = model.simulate(100 if name == "growth" else 24, np.random.default_rng(21))
    m = 30
    cpu = _mean_errors(model, x, y, n, radius, m, "cpu")
    gpu = _mean_errors(model, x, y, n, radius, m, "cuda")
    se = math.sqrt(cpu.var(ddof=1) / m + gpu.var(ddof=1) / m)
    assert abs(cpu.mean() - gpu.mean()) < 4 * se, (cpu.mean(), gpu.mean(), se)
    fast = _mean_errors(model, x, y, n, radius, m, "cuda", fast_math=True)
    se = math.sqrt(fast.var(ddof=1) / m + gpu.var(ddof=1) / m)
    assert abs(fast.mean() - gpu.mean()) < 4 * se, (fast.mean(), gpu.mean(), se)


def test_gpu_filter_replays_the_same_run():
    model = GrowthModel()
    _, y = model.simulate(100, np.random.default_rng(3))
    a = run_cpf(model, y, 16384, 256, seed=4, backend="cuda")
    b = run_cpf(model, y, 16384, 256, seed=4, backend="cuda")
    c = run_cpf(model, y, 16384, 256, seed=5, backend="cuda")
    np.testing.assert_array_equal(a.estimates, b.estimates)
    assert not np.array_equal(a.estimates, c.estimates)
    assert a.backend == "cuda" and 0 < a.step_seconds * 100 <= a.wall_seconds


def test_scan_and_search_kernels_agree_and_the_largest_radius_fits():
    """The scan (neighbourhood="scan") and the prefix search draw from the same
    distribution: mean errors within 4 standard errors of the difference; the
    bearings-only step at r = CPF_MAX_RADIUS (its largest shared memory) runs."""
    from pfresample.cuda.geometry import CPF_MAX_RADIUS

    model = BearingsOnlyModel()
    x, y = model.simulate(24, np.random.default_rng(22))
    m = 30
    search = _mean_errors(model, x, y, 2048, 64, m, "cuda")
    scan = np.array(
        [
            float(np.mean(((e.estimates[:, [0, 2]] - x[1:, [0, 2]]) ** 2).sum(axis=1)))
            for e in (
                run_cpf(model, y, 2048, 64, s, backend="cuda", neighbourhood="scan")
                for s in range(m)
            )
        ]
    )
    se = math.sqrt(search.var(ddof=1) / m + scan.var(ddof=1) / m)
    assert abs(search.mean() - scan.mean()) < 4 * se, (search.mean(), scan.mean(), se)
    big = run_cpf(model, y, 4096, CPF_MAX_RADIUS, seed=1, backend="cuda")
    assert np.isfinite(big.estimates).all()


def test_sir_filter_runs_the_bearings_only_model_on_the_gpu():
    """The baselines' SIR filter has the bearings-only model on the device
    too (models.cu, rows4_init / bot_predict): its position errors agree with
    the CPU filter's within 4 standard errors of the difference."""

    model = BearingsOnlyModel()
    x, y = model.simulate(24, np.random.default_rng(23))
    m = 30

    def errors(backend):
        out = []
        for s in range(m):
            est = run_sir(model, y, 2048, "systematic", s, backend=backend).estimates
            out.append(float(np.mean(((est[:, [0, 2]] - x[1:, [0, 2]]) ** 2).sum(axis=1))))
        return np.array(out)

    cpu, gpu = errors("cpu"), errors("cuda")
    se = math.sqrt(cpu.var(ddof=1) / m + gpu.var(ddof=1) / m)
    assert abs(cpu.mean() - gpu.mean()) < 4 * se, (cpu.mean(), gpu.mean(), se)


def _agree(a: np.ndarray, b: np.ndarray) -> None:
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) < 4 * se, (a.mean(), b.mean(), se)


def _model(name: str):
    return GrowthModel() if name == "growth" else BearingsOnlyModel()


@pytest.mark.parametrize(
    "name,n,radius,neighbourhood,fast",
    [
        ("growth", 1024, 64, "divide", False),
        ("growth", 1024, 64, "divide", True),
        ("growth", 1024, 64, "scan", False),
        ("bot", 2048, 32, "divide", False),
        ("bot", 2048, 32, "divide", True),
    ],
)
def test_float32_kernels_agree_with_the_cpu_float32_reference(name, n, radius, neighbourhood, fast):
    model = _model(name)
    x, y = model.simulate(100 if name == "growth" else 24, np.random.default_rng(41))
    m, kernel = 30, {"precision": "float32", "neighbourhood": neighbourhood}
    cpu = _mean_errors(model, x, y, n, radius, m, "cpu", **kernel)
    gpu = _mean_errors(model, x, y, n, radius, m, "cuda", fast_math=fast, **kernel)
    _agree(cpu, gpu)
    run = run_cpf(model, y, n, radius, 0, backend="cuda", fast_math=fast, **kernel)
    assert run.backend == "cuda"


@pytest.mark.parametrize("name,n,radius", [("growth", 4096, 256), ("bot", 4096, 128)])
def test_float32_kernel_runs_as_the_float64_kernel_on_the_same_seeds(name, n, radius):
    """The same seeds give the same Philox noise and uniforms to both
    precisions, so their runs differ only where a choice rounds differently."""
    model = _model(name)
    x, y = model.simulate(100 if name == "growth" else 24, np.random.default_rng(42))
    m = 40
    f64 = _mean_errors(model, x, y, n, radius, m, "cuda")
    f32 = _mean_errors(model, x, y, n, radius, m, "cuda", precision="float32",
                       neighbourhood="divide")  # fmt: skip
    d = f32 - f64
    assert abs(d.mean()) <= 4 * d.std(ddof=1) / math.sqrt(m), (d.mean(), d.std(ddof=1))


@pytest.mark.parametrize("name", ["growth", "bot"])
@pytest.mark.parametrize("kernel", [("float64", "search"), ("float32", "divide")])
def test_weighted_estimate_is_the_weighted_mean_of_the_predicted_particles(name, kernel):
    from pfresample.filters.cellular_gpu import cpf_graph

    model = _model(name)
    _, y = model.simulate(1, np.random.default_rng(43))
    n = 5000  # 20 blocks, the last one partial: per-block shifts, combined by the last block
    precision, neighbourhood = kernel
    for radius in (0, 64):
        run = run_cpf(model, y, n, radius, 7, backend="cuda", weighted=True,
                      precision=precision, neighbourhood=neighbourhood)  # fmt: skip
        graph = cpf_graph(model, n, radius, 1, False, neighbourhood, precision, True)
        states = graph.x[0].get().astype(np.float64)  # (rows, N): the predicted x_1
        particles = states[0] if name == "growth" else states.T
        log_l = model.log_likelihood(y[0], particles)
        w = np.exp(log_l - log_l.max())
        want = (w @ particles) / w.sum()
        # float32 log-likelihoods on the device: about 1e-5 nats off each weight's
        atol = 1e-4 if name == "growth" else 1e-6  # growth states ~10, BOT velocities ~0.01
        got = np.reshape(run.weighted_estimates, -1)
        np.testing.assert_allclose(got, np.reshape(want, -1), rtol=1e-4, atol=atol)
        # log Z_1 = log SUM L - log N, the model's constant included, to the float32 rounding
        # of log L (~1e-7 relative, |log L| < 1e3 here)
        top = log_l.max()
        log_z = top + np.log(np.exp(log_l - top).sum()) - np.log(n)
        assert run.log_likelihood == pytest.approx(log_z, abs=1e-3)
        if radius == 0:  # no resampling: the plain estimate is the particles' mean
            mean = np.reshape(particles.mean(axis=0), -1)
            np.testing.assert_allclose(np.reshape(run.estimates, -1), mean, rtol=1e-12)


@pytest.mark.parametrize("name,n,radius", [("growth", 2048, 64), ("bot", 2048, 32)])
def test_weighted_estimate_agrees_with_the_cpu_filter(name, n, radius):
    model = _model(name)
    x, y = model.simulate(100 if name == "growth" else 24, np.random.default_rng(44))
    m = 30
    _agree(_mean_errors(model, x, y, n, radius, m, "cpu", weighted=True),
           _mean_errors(model, x, y, n, radius, m, "cuda", weighted=True))  # fmt: skip


def test_the_papers_start_on_the_gpu():
    """particles_from_noise: the first predicted particles are N(0, 10) (the
    former start's are near 8); the CPF and the SIR filter (its graph and its
    fused run, equal bit for bit) agree with the CPU filters."""
    from pfresample.filters.cellular_gpu import cpf_graph
    from pfresample.filters.sir_gpu import run_sir_gpu
    from pfresample.resampling.registry import get_method

    paper = GrowthModel(particles_from_noise=True)
    x, y = paper.simulate(100, np.random.default_rng(45))
    n = 16384
    run_cpf(paper, y[:1], n, 0, 3, backend="cuda")
    first = cpf_graph(paper, n, 0, 1).x[0].get()[0].astype(np.float64)
    assert abs(first.mean()) < 4 * math.sqrt(10.0 / n) and abs(first.var() / 10.0 - 1) < 0.05
    run_cpf(GrowthModel(), y[:1], n, 0, 3, backend="cuda")
    assert cpf_graph(GrowthModel(), n, 0, 1).x[0].get()[0].mean() > 6.0
    m = 30
    _agree(_mean_errors(paper, x, y, 2048, 64, m, "cpu"),
           _mean_errors(paper, x, y, 2048, 64, m, "cuda"))  # fmt: skip
    systematic = get_method("systematic")
    for seed in (0, 1):
        fused = run_sir_gpu(paper, y, 3000, systematic, seed, stage_times=False, fused=True)
        graph = run_sir_gpu(paper, y, 3000, systematic, seed, stage_times=False, fused=False)
        np.testing.assert_array_equal(fused.estimates, graph.estimates)

    def sir_errors(backend, method):
        return np.array([np.mean((run_sir(paper, y, 2048, method, s, backend=backend,
                                          stage_times=False).estimates - x[1:]) ** 2)
                         for s in range(m)])  # fmt: skip

    for method in ("systematic", "multinomial"):
        _agree(sir_errors("cpu", method), sir_errors("cuda", method))
