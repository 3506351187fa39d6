"""Güldaş's resamplers and filters on the GPU against the CPU (``pytest -m gpu``).

* Adaptive butterfly (``resample_adaptive``, Fig 3.7): the device's stage
  decisions, ancestors and output weights equal the CPU reference's, bit
  for bit, for every butterfly draw, both precisions, weights whose ESS
  stops the stages at every depth.
* Filters: the GPU bootstrap and adaptive filters (``filters.guldas_gpu``)
  draw their noise from Philox, the CPU's from NumPy, so a run pairs with
  no CPU run; their AMSEs over M runs agree in distribution: the difference
  of the two means is within 4 standard errors of the difference
  (sqrt(s_cpu^2 / M + s_gpu^2 / M), from the runs' own spread).
* The adaptive GPU filter with tau = 0 never resamples; with tau > 1 it runs
  every stage at every step; the ESS it reports is the ESS of the weights.
* SMC-EM: the GPU E-step's four statistics agree in distribution with the
  CPU's (same rule as the AMSEs, over 24 seeds); a GPU EM run from (0.8,
  0.3) ends where the CPU's does, within the spread of the CPU's last
  iterations.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import pfresample as pr
from pfresample.filters import (
    ADAPTIVE_OPTIONS,
    BOOTSTRAP_OPTIONS,
    amse,
    interaction_level,
    run_filter,
    run_smcem,
)
from pfresample.models.bimodal import BimodalModel
from pfresample.models.volatility import VolatilityModel
from pfresample.radix import default_radix

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


def _guldas(run, radix):
    """A run under the names this file's tests use: ``estimates`` the
    estimate after resampling (§4.2.1), ``level`` the interaction level."""
    if radix is None:
        radix = default_radix(run.n) if run.method.startswith("butterfly") else (run.n,)
    return SimpleNamespace(
        estimates=run.resampled_estimates, ess=run.ess, stages=run.stages,
        level=interaction_level(run.stages, radix), seconds=run.total_seconds,
    )  # fmt: skip


def run_bootstrap(model, y, n, method, seed, *, backend="cpu", radix=None):
    """Güldaş's Fig 1.2 filter through the engine (``BOOTSTRAP_OPTIONS``)."""
    kw = {} if radix is None else {"radix": radix}
    run = run_filter(model, y, n, method, seed=seed, backend=backend, **BOOTSTRAP_OPTIONS, **kw)
    return _guldas(run, radix)


def run_adaptive(model, y, n, method, seed, *, tau, backend="cpu", radix=None):
    """Güldaş's Fig 1.3 filter through the engine (``ADAPTIVE_OPTIONS``)."""
    kw = {} if radix is None else {"radix": radix}
    run = run_filter(model, y, n, method, seed=seed, backend=backend, ess_threshold=tau,
                     **ADAPTIVE_OPTIONS, **kw)  # fmt: skip
    return _guldas(run, radix)


BUTTERFLIES = ["butterfly-multinomial", "butterfly-stratified", "butterfly-systematic"]


def _uneven(n: int, spread: float, seed: int) -> np.ndarray:
    """Weights exp(spread * z): ESS falls from N (spread 0) towards 1."""
    return np.exp(spread * np.random.default_rng(seed).standard_normal(n))


@pytest.mark.parametrize("method", BUTTERFLIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "n, radix", [(1024, None), (2**16, (16, 64, 64)), (105, (3, 5, 7)), (2**14, (2**14,))]
)
def test_adaptive_butterfly_matches_the_cpu(method, dtype, n, radix):
    depths = set()
    for spread in (0.0, 0.3, 1.0, 2.5, 5.0):
        w = _uneven(n, spread, 7).astype(dtype)
        for tau in (0.0, 0.6, 0.95, 1.5):
            cpu = pr.resample_adaptive(w, method, seed=11, tau=tau, radix=radix, backend="cpu")
            gpu = pr.resample_adaptive(
                cupy.asarray(w), method, seed=11, tau=tau, radix=radix, backend="cuda"
            )
            assert gpu.stages == cpu.stages, (spread, tau)
            np.testing.assert_array_equal(cupy.asnumpy(gpu.ancestors), cpu.ancestors)
            np.testing.assert_array_equal(gpu.weights, cpu.weights)
            depths.add(cpu.stages)
    assert len(depths) >= 2  # the cases stop at more than one depth


def test_adaptive_max_stages_on_the_gpu():
    w = _uneven(4096, 3.0, 2).astype(np.float32)
    for cap in (0, 1, 2):
        cpu = pr.resample_adaptive(w, "butterfly-multinomial", seed=5, tau=1.5, max_stages=cap)
        gpu = pr.resample_adaptive(
            cupy.asarray(w), "butterfly-multinomial", seed=5, tau=1.5, max_stages=cap
        )
        assert gpu.stages == cpu.stages == min(cap, len(default_radix(4096)))
        np.testing.assert_array_equal(cupy.asnumpy(gpu.ancestors), cpu.ancestors)


def _amses(run, backend: str, runs: int, **kw) -> np.ndarray:
    model = BimodalModel()
    truth, y = model.simulate(40)
    return np.array(
        [
            amse(run(model, y, seed=1000 + r, backend=backend, **kw).estimates, truth)
            for r in range(runs)
        ]
    )


def _agree(a: np.ndarray, b: np.ndarray) -> None:
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) < 4 * se, (a.mean(), b.mean(), se)


@pytest.mark.parametrize("method", ["multinomial", "systematic", "butterfly-multinomial"])
def test_gpu_bootstrap_agrees_with_the_cpu(method):
    kw = {"n": 2048, "method": method}
    _agree(_amses(run_bootstrap, "cpu", 60, **kw), _amses(run_bootstrap, "cuda", 60, **kw))


@pytest.mark.parametrize("method", ["multinomial", "butterfly-multinomial"])
def test_gpu_adaptive_agrees_with_the_cpu(method):
    kw = {"n": 2048, "method": method, "tau": 0.6}
    _agree(_amses(run_adaptive, "cpu", 60, **kw), _amses(run_adaptive, "cuda", 60, **kw))


def test_gpu_adaptive_filter_gates():
    model = BimodalModel()
    _, y = model.simulate(30)
    n = 4096
    never = run_adaptive(model, y, n, "butterfly-multinomial", seed=3, tau=0.0, backend="cuda")
    assert not never.stages.any() and not never.level.any()
    always = run_adaptive(model, y, n, "butterfly-multinomial", seed=3, tau=1.5, backend="cuda")
    assert (always.stages == len(default_radix(n))).all()
    assert np.allclose(always.level, math.log2(n))
    boot = run_bootstrap(model, y, n, "butterfly-multinomial", seed=3, backend="cuda")
    # the first step: the same particles and weights in both (the common noise key)
    assert always.ess[0] == pytest.approx(boot.ess[0], rel=1e-5)
    assert (boot.ess > 0).all() and (boot.ess <= n * (1 + 1e-9)).all()
    mixed = run_adaptive(model, y, n, "multinomial", seed=3, tau=0.6, backend="cuda")
    assert set(np.unique(mixed.stages)) == {0, 1}
    # resampled exactly where the ESS it reports was below tau N
    np.testing.assert_array_equal(mixed.stages == 1, mixed.ess < 0.6 * n)


def test_gpu_e_step_agrees_with_the_cpu():
    """One EM iteration from the true parameters: eq. 4.10 of the E-step's
    statistics, over 24 seeds on each backend."""
    model = VolatilityModel()
    _, y = model.simulate(100, np.random.default_rng(4))
    start = {"iterations": 1, "alpha0": model.alpha, "sigma0": model.sigma}
    for scheme in ("multinomial", "butterfly"):
        both = []
        for backend in ("cpu", "cuda"):
            runs = [run_smcem(y, 2048, scheme, s, backend=backend, **start) for s in range(24)]
            both.append(np.array([(r.alpha[1], r.sigma[1]) for r in runs]))
        for j in range(2):
            _agree(both[0][:, j], both[1][:, j])


def test_gpu_smcem_ends_where_the_cpu_does():
    model = VolatilityModel()
    _, y = model.simulate(100, np.random.default_rng(9))
    for scheme in ("multinomial", "butterfly"):
        cpu = run_smcem(y, 2048, scheme, 1, iterations=40, backend="cpu")
        gpu = run_smcem(y, 2048, scheme, 1, iterations=40, backend="cuda")
        for a, b in ((cpu.alpha, gpu.alpha), (cpu.sigma, gpu.sigma)):
            tail_a, tail_b = a[-15:], b[-15:]
            spread = max(tail_a.std(ddof=1), tail_b.std(ddof=1), 1e-3)
            assert abs(tail_a.mean() - tail_b.mean()) < 5 * spread, (scheme, tail_a, tail_b)
