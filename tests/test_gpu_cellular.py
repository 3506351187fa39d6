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
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pfresample as pr
from pfresample.filters import run_cpf
from pfresample.models import BearingsOnlyModel, GrowthModel

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


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


def _mean_errors(model, x, y, n, radius, m, backend, fast_math=False):
    truth = x[1:] if x.ndim == 1 else x[1:, [0, 2]]
    errors = []
    for s in range(m):
        est = run_cpf(model, y, n, radius, seed=s, backend=backend, fast_math=fast_math).estimates
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
    """The paper's scan (scan=True) and the prefix search draw from the same
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
            for e in (run_cpf(model, y, 2048, 64, s, backend="cuda", scan=True) for s in range(m))
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
    from pfresample.filters import run_sir

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
