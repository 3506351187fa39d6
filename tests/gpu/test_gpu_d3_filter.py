"""The D3 and SIR filters of Das et al. 2014 on the GPU (filters/d3_gpu.py)
against the CPU filter (filters/d3.py) and the exact Kalman filter.

The two backends draw different model noise (Philox on the device, NumPy
on the host), so they agree in distribution, not bit for bit:

* SIR with Systematic, Metropolis (B chosen on the device every step) and
  Multinomial follows the Kalman posterior mean as the CPU filter does
  (mean absolute gap below 0.01 m/s; the CPU filter's is 0.002-0.005 at N =
  5,000);
* D3's error over a run (its bias: eq. 5's steps go up) has the same mean
  on both backends: a two-sample z-score of the per-run mean errors of R
  runs each, below 4.

Exact: a run is the same bit for bit whatever the threads per block of
the D3 kernels (the paper's Table 7 varies with them through its races;
ours must not), and whether its steps run from the replayed graph or
one by one; the same seed gives the same run.

The paper's GPU filter (cdf="paper", threads_scope="step": every kernel of
the step at the threads per block): its any-block-size kernels give the
particles and log-weights of ours bit for bit and the same sums to
rounding; its mean error is the CPU filter's with the same thresholds
(two-sample z < 4); zero process noise in the filter keeps copies
identical on the device too.
"""

from __future__ import annotations

import numpy as np
import pytest

cupy = pytest.importorskip("cupy")

from pfresample.backend import cuda_device  # noqa: E402
from pfresample.filters import D3_OPTIONS, clear_graphs, d3_gpu, run_filter  # noqa: E402
from pfresample.models import UuvModel, kalman_filter  # noqa: E402


def run_d3(model, y, n, seed, *, method="d3", **kw):
    """Das et al.'s filter through the engine (``run_filter`` with ``D3_OPTIONS``)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **D3_OPTIONS, **kw)


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(cuda_device() is None, reason="no CUDA device"),
]

MODEL = UuvModel(duration=2.55)  # 255 steps: two graph replays of 100 and 53 eager steps


@pytest.fixture(scope="module")
def data():
    truth, y = MODEL.simulate(11)
    return truth, y


@pytest.mark.parametrize("method", ["systematic", "metropolis", "multinomial"])
def test_sir_on_the_gpu_follows_the_kalman_filter(data, method):
    """On the CPU the gap is 0.002-0.005 m/s for these methods (seed 3); a
    filter that does not resample (Metropolis with B = 0) is off by far more."""
    truth, y = data
    kf = kalman_filter(MODEL, y)
    run = run_d3(MODEL, y, 5000, 3, method=method, backend="cuda")
    assert run.backend == "cuda" and run.device_seconds > 0
    assert np.abs(run.estimates - kf)[100:].mean() < 0.01


def test_d3_error_has_the_same_mean_on_both_backends(data):
    truth, y = data
    runs = 6

    def mean_errors(backend):
        out = []
        for seed in range(runs):
            r = run_d3(MODEL, y, 1000, seed, method="d3", backend=backend)
            out.append((r.estimates - truth[1:])[50:].mean(axis=0))
        return np.array(out)

    cpu, gpu = mean_errors("cpu"), mean_errors("cuda")
    se = np.sqrt(cpu.var(axis=0, ddof=1) / runs + gpu.var(axis=0, ddof=1) / runs)
    z = np.abs(cpu.mean(axis=0) - gpu.mean(axis=0)) / se
    assert (z < 4.0).all(), (cpu.mean(axis=0), gpu.mean(axis=0), se)


@pytest.mark.parametrize("noise", ["eq5", "between"])
@pytest.mark.parametrize("cdf", ["prefix", "local"])
def test_threads_per_block_change_nothing(data, noise, cdf):
    _, y = data
    runs = [
        run_d3(MODEL, y, 3000, 5, noise=noise, cdf=cdf, backend="cuda", threads=t)
        for t in (160, 556, 736)
    ]
    for r in runs[1:]:
        assert np.array_equal(r.estimates, runs[0].estimates)


def test_graph_replays_equal_the_eager_steps(data, monkeypatch):
    _, y = data
    chunked = run_d3(MODEL, y, 2000, 7, backend="cuda", snapshot_step=150)
    again = run_d3(MODEL, y, 2000, 7, backend="cuda", snapshot_step=150)
    monkeypatch.setattr(d3_gpu, "CHUNK", 10**9)  # every step eager
    clear_graphs("d3")
    eager = run_d3(MODEL, y, 2000, 7, backend="cuda", snapshot_step=150)
    assert np.array_equal(chunked.estimates, again.estimates)
    assert np.array_equal(chunked.estimates, eager.estimates)
    assert np.array_equal(chunked.snapshot, eager.snapshot)
    assert chunked.snapshot.shape == (2000, 2)
    clear_graphs("d3")


def test_the_gpu_filter_refuses_what_it_does_not_run(data):
    _, y = data
    with pytest.raises(NotImplementedError, match="every step"):
        run_d3(MODEL, y, 100, 1, backend="cuda", ess_threshold=0.5)


def _zeros_u32(k):
    return cupy.zeros(k, dtype=np.uint32)


@pytest.mark.parametrize("threads", [32, 160, 196, 1024])
def test_any_block_size_kernels_equal_ours(data, threads):
    """uuv_predict_any, exp_total_any, normalise_estimate_any and
    uuv_prior_any against uuv_predict, exp_total, normalise_estimate<2> and
    uuv_prior on the same inputs: the same particles, log-weights, maximum
    and weights bit for bit; the float64 sums to 1e-12 (their order differs)."""
    from pfresample.cuda import geometry, kernels
    from pfresample.cuda.kernels import NULL
    from pfresample.filters.common import graph_inputs
    from pfresample.filters.sir_gpu import THREADS
    from pfresample.resampling.registry import get_method

    _, y = data
    n = 20011
    g = d3_gpu.D3FilterGraph(MODEL, get_method("d3"), n, 10, "eq5", "prefix", 160)
    g.inputs.set(graph_inputs(y[:10], 5, 10))  # the noise key, the readings
    x0 = cupy.asarray(np.random.default_rng(1).normal(1.0, 0.5, size=(2, n)).astype(np.float32))
    step = cupy.asarray(np.array([3], dtype=np.uint32))
    f = np.float32
    out = {}
    for name, tpb in (("ours", THREADS), ("any", threads)):
        x, log_w, top = x0.copy(), cupy.empty(n, np.float32), _zeros_u32(1)
        args = (x, log_w, np.uint32(n), g.noise_key, step, g.table, g.z, f(MODEL.obs_mean),
                f(0.005), f(1.0 / MODEL.obs_var), top)  # fmt: skip
        kernel = "uuv_predict" if name == "ours" else "uuv_predict_any"
        kernels.kernel("models.cu", kernel)((geometry.blocks(n, tpb),), (tpb,), args)
        w_t, total = cupy.empty(n, np.float32), cupy.zeros(1, np.float64)
        parts = cupy.zeros(4 * max(geometry.sum_parts(n), geometry.blocks(n, threads)))
        est, prior, prev = cupy.zeros(2), cupy.zeros(4), cupy.asarray([1.2, -0.1])
        weights = (log_w, top, w_t, np.int64(n), parts, _zeros_u32(1), total)
        estimate = (w_t, x, np.int64(n), total)
        pri = (x, np.int64(n), prev, step, g.table, parts, _zeros_u32(1), prior)
        if name == "ours":
            grid = (geometry.sum_parts(n),)
            kernels.kernel("filter.cu", "exp_total")(grid, (THREADS,), weights)
            kernels.kernel("filter.cu", "normalise_estimate<2>")(
                grid, (THREADS,), (*estimate, NULL, parts, _zeros_u32(1), est)
            )
            kernels.kernel("filter.cu", "uuv_prior")(grid, (THREADS,), pri)
        else:
            grid = (geometry.blocks(n, threads),)
            kernels.kernel("filter.cu", "exp_total_any")(grid, (threads,), weights)
            kernels.kernel("filter.cu", "normalise_estimate_any<2>")(
                grid, (threads,), (*estimate, parts, _zeros_u32(1), est)
            )
            kernels.kernel("filter.cu", "uuv_prior_any")(grid, (threads,), pri)
        out[name] = [a.get() for a in (x, log_w, top, w_t, total, est, prior)]
    a, b = out["ours"], out["any"]
    for k in range(4):
        assert np.array_equal(a[k], b[k]), k
    for k in range(4, 7):
        np.testing.assert_allclose(b[k], a[k], rtol=1e-12, atol=0)


def test_the_papers_filter_agrees_with_the_cpu_in_distribution(data):
    """cdf="paper" with every kernel at 160 threads per block on the device
    against the CPU filter with the same thresholds (threads=160): the
    per-run mean errors of R runs each, two-sample z < 4; the run repeats
    itself and equals its eager steps."""
    truth, y = data
    runs = 6

    def mean_errors(backend):
        out = []
        for seed in range(runs):
            kw = {"threads_scope": "step"} if backend == "cuda" else {}
            r = run_d3(MODEL, y, 1000, seed, method="d3", cdf="paper", noise="fig9",
                       threads=160, backend=backend, **kw)  # fmt: skip
            out.append((r.estimates - truth[1:])[50:].mean(axis=0))
        return np.array(out)

    cpu, gpu = mean_errors("cpu"), mean_errors("cuda")
    se = np.sqrt(cpu.var(axis=0, ddof=1) / runs + gpu.var(axis=0, ddof=1) / runs)
    z = np.abs(cpu.mean(axis=0) - gpu.mean(axis=0)) / se
    assert (z < 4.0).all(), (cpu.mean(axis=0), gpu.mean(axis=0), se)
    kw = dict(method="d3", cdf="paper", threads=196, threads_scope="step", backend="cuda")
    a = run_d3(MODEL, y, 3000, 9, **kw)
    b = run_d3(MODEL, y, 3000, 9, **kw)
    assert np.array_equal(a.estimates, b.estimates)


def test_the_papers_step_replays_its_eager_steps(data, monkeypatch):
    _, y = data
    kw = dict(method="d3", cdf="paper", threads=736, threads_scope="step", backend="cuda")
    chunked = run_d3(MODEL, y, 2000, 7, snapshot_step=150, **kw)
    monkeypatch.setattr(d3_gpu, "CHUNK", 10**9)
    clear_graphs("d3")
    eager = run_d3(MODEL, y, 2000, 7, snapshot_step=150, **kw)
    assert np.array_equal(chunked.estimates, eager.estimates)
    assert np.array_equal(chunked.snapshot, eager.snapshot)
    clear_graphs("d3")


def test_zero_process_noise_keeps_copies_identical_on_the_gpu(data):
    from dataclasses import replace

    _, y = data
    m = replace(MODEL, filter_process_sd=0.0)
    counts = [
        np.unique(run_d3(m, y, 2000, 3, method="systematic", backend="cuda",
                         snapshot_step=s).snapshot, axis=0).shape[0]
        for s in (20, 100, 200)
    ]  # fmt: skip
    assert counts == sorted(counts, reverse=True) and counts[-1] < counts[0] < 2000
    ours = run_d3(MODEL, y, 2000, 3, method="systematic", backend="cuda", snapshot_step=200)
    assert np.unique(ours.snapshot, axis=0).shape[0] > 2 * counts[-1]


def test_bad_threads_scope(data):
    _, y = data
    with pytest.raises(ValueError, match="threads_scope"):
        run_d3(MODEL, y, 100, 1, backend="cuda", threads_scope="grid")
    with pytest.raises(ValueError, match="32"):
        run_d3(MODEL, y, 100, 1, backend="cuda", threads=16, threads_scope="step")
    with pytest.raises(NotImplementedError, match="joint"):
        run_d3(MODEL, y, 100, 1, backend="cuda", components="each")
