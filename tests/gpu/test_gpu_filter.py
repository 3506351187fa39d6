"""The GPU SIR filter (filters/sir_gpu.py, gpu_kernels/models.cu) against the CPU one.

Run on a GPU: ``pytest -m gpu``.

* Stage 1 arithmetic: with the model noise switched off (sigma_v = 0, Q = 0)
  one prediction on the device equals eq. 2.34 / 7.1 and the log-weights
  eq. 2.35 / 7.2 on the host, to float32 rounding.
* Noise: the device's initial particles have the mean and variance of the
  model's prior (tolerances from the sampling spread, below).
* RMSE: on the same trajectories the GPU filter's run RMSEs agree with the
  CPU filter's -- a paired comparison, trajectory by trajectory, so the
  trajectories' own spread cancels (tolerance below).
* Every method of Tables 5.1, 6.2 and 7.2 runs on both models; B is chosen
  on the device, a B a step, the CPU's B of that step's weights; stage
  times are positive and add up to the total.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pfresample as pr
from pfresample.constants import EPSILON_FILTER
from pfresample.cuda.kernels import NULL
from pfresample.filters import SIR_OPTIONS, STAGES, rmse, run_filter, sir_gpu
from pfresample.filters.graph import GRAPHS
from pfresample.models import SCENARIOS, GrowthModel, RadarModel, truth_trajectory
from pfresample.models.growth import GrowthTwin
from pfresample.resampling.registry import get_method

cupy = pytest.importorskip("cupy")


def run_sir(model, y, n, method, seed, **kw):
    """Dülger's Algorithm 2.4 through the engine (``run_filter`` with
    ``SIR_OPTIONS``), on the CPU unless told."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


pytestmark = pytest.mark.gpu

GROWTH = GrowthModel()
RADAR = RadarModel()
TABLE_METHODS = [  # Tables 5.1, 6.2, 7.2: (method, segment_bytes)
    ("systematic", None),
    ("metropolis", None),
    ("metropolis-c1", 128),
    ("metropolis-c2", 2048),
    ("rejection", None),
    ("uphill", None),
    ("uphill-ca", 128),
    ("uphill-c1", 128),
]


def _key():
    return cupy.asarray([12345, 678], dtype=np.uint32)


def _from_ordered(top) -> float:
    """The float of reduce.cuh's to_ordered encoding."""
    k = int(top)
    bits = k & 0x7FFFFFFF if k & 0x80000000 else ~k & 0xFFFFFFFF
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


def _top_of(log_w):
    """The device word models.cu leaves in `top` for these log-weights: their
    maximum in reduce.cuh's to_ordered encoding."""
    best = np.float32(np.max(log_w))
    bits = int(np.array([best], dtype=np.float32).view(np.uint32)[0])
    word = bits | 0x80000000 if best >= 0 else ~bits & 0xFFFFFFFF
    return cupy.asarray([word], dtype=np.uint32)


def test_growth_prediction_matches_eq_2_34_without_noise():
    model = GrowthModel(sigma_v2=0.0)
    twin = sir_gpu.device_twin(model)
    x0 = np.linspace(-20, 20, 1001).astype(np.float32)
    x = cupy.asarray(x0)
    log_w = cupy.empty_like(x)
    k, z = 7, 3.25
    top = cupy.zeros(1, dtype=np.uint32)
    twin.predict(x, log_w, k, cupy.asarray([z], dtype=np.float32), _key(), top)
    want = model.mean_transition(x0.astype(np.float64), k)
    np.testing.assert_allclose(x.get(), want, rtol=2e-6, atol=2e-5)
    want_log_w = model.log_likelihood(z, x.get().astype(np.float64))
    want_log_w -= -0.5 * math.log(2 * math.pi * model.sigma_n2)  # the kernel drops the constant
    np.testing.assert_allclose(log_w.get(), want_log_w, rtol=1e-5, atol=1e-3)
    assert _from_ordered(top.get()[0]) == log_w.get().max()  # the kernel's maximum, exactly


def test_radar_prediction_matches_eq_7_1_without_noise():
    model = RadarModel(q_diag=(0.0, 0.0))
    twin = sir_gpu.device_twin(model)
    rng = np.random.default_rng(5)
    host = (np.array(model.x0) + rng.normal(size=(257, 4)) * [300, 300, 20, 20]).astype(np.float32)
    x = cupy.asarray(np.ascontiguousarray(host.T))
    log_w = cupy.empty(257, dtype=np.float32)
    y = np.array([1500.0, 0.8])
    top = cupy.zeros(1, dtype=np.uint32)
    twin.predict(x, log_w, 3, cupy.asarray(y, dtype=np.float32), _key(), top)
    want = model.mean_transition(host.astype(np.float64))
    np.testing.assert_allclose(x.get().T, want, rtol=1e-6, atol=1e-3)
    r = model.residual(y, want)
    want_log_w = -0.5 * (r * r / np.asarray(model.r_diag)).sum(axis=1)
    # float32 bearing residuals: atan2 to ~1e-7 rad against a sigma of 1.7e-3 rad
    np.testing.assert_allclose(log_w.get(), want_log_w, rtol=1e-3, atol=1e-2)
    assert _from_ordered(top.get()[0]) == log_w.get().max()


@pytest.mark.parametrize("model", [GROWTH, RADAR], ids=["growth", "radar"])
def test_initial_particles_follow_the_prior(model):
    n = 2**20
    twin = sir_gpu.device_twin(model)
    x = cupy.empty((twin.rows, n), dtype=np.float32)
    twin.init(x, _key())
    rows = x.get().reshape(-1, n).astype(np.float64)
    means = np.atleast_1d(model.init_mean if model is GROWTH else model.x0)
    variances = np.atleast_1d(model.init_var if model is GROWTH else model.p0_diag)
    for row, mean, var in zip(rows, means, variances, strict=True):
        # 6 standard errors: sd of the sample mean sqrt(var/n); of s^2/var sqrt(2/(n-1))
        assert abs(row.mean() - mean) < 6 * math.sqrt(var / n)
        assert abs(row.var(ddof=1) / var - 1) < 6 * math.sqrt(2 / (n - 1))


def _paired_rmse(model, trajectories, n, method, columns=None, runs=2):
    """Run RMSEs of both backends, one row per (trajectory, run)."""
    pairs = []
    for j, (truth, y) in enumerate(trajectories):
        for r in range(runs):
            seed = 1000 * j + r
            row = []
            for backend in ("cpu", "cuda"):
                est = run_sir(model, y, n, method, seed, backend=backend).estimates
                tru = truth[1:]
                if columns is not None:
                    est, tru = est[:, columns], tru[:, columns]
                row.append(rmse(est, tru))
            pairs.append(row)
    return np.array(pairs)


def _assert_same_mean(pairs):
    # Paired: d = RMSE_gpu - RMSE_cpu on the same trajectory. Both are runs of
    # the same filter, so E[d] = 0; |mean d| < 4 standard errors of mean d
    # fails a correct filter with probability ~6e-5.
    d = pairs[:, 1] - pairs[:, 0]
    assert np.all(np.isfinite(pairs))
    assert abs(d.mean()) < 4 * d.std(ddof=1) / math.sqrt(d.size), (pairs.mean(axis=0), d.std())


@pytest.mark.parametrize("method", ["systematic", "metropolis", "uphill"])
def test_growth_rmse_agrees_with_the_cpu_filter(method):
    trajectories = [GROWTH.simulate(100, np.random.default_rng(2000 + j)) for j in range(16)]
    _assert_same_mean(_paired_rmse(GROWTH, trajectories, 2**10, method))


def test_radar_rmse_agrees_with_the_cpu_filter():
    truth = truth_trajectory(SCENARIOS["scenario1"], RADAR)
    trajectories = [
        (truth, RADAR.simulate_measurements(truth[1:], np.random.default_rng(3000 + j)))
        for j in range(8)
    ]
    _assert_same_mean(_paired_rmse(RADAR, trajectories, 2**12, "systematic", columns=[0, 1]))


@pytest.mark.parametrize("method,segment_bytes", TABLE_METHODS)
@pytest.mark.parametrize("model", [GROWTH, RADAR], ids=["growth", "radar"])
def test_every_table_method_runs_on_the_device(model, method, segment_bytes):
    if model is GROWTH:
        truth, y = GROWTH.simulate(30, np.random.default_rng(1))
    else:
        truth = truth_trajectory(SCENARIOS["scenario2"], RADAR)[:31]
        y = RADAR.simulate_measurements(truth[1:], np.random.default_rng(1))
    segments = {} if segment_bytes is None else {"segment_bytes": segment_bytes}
    r = run_sir(model, y, 2**12, method, 7, backend="cuda", **segments)
    assert r.backend == "cuda" and r.method == method
    assert r.estimates.shape == truth[1:].shape
    assert np.all(np.isfinite(r.estimates))
    assert r.stage_seconds.shape == (30, len(STAGES))
    assert np.all(r.stage_seconds > 0)
    assert r.total_seconds == pytest.approx(r.stage_seconds.sum(), rel=1e-12)
    assert r.wall_seconds >= r.total_seconds * 0.99
    if method.startswith(("metropolis", "uphill")):
        assert np.all(r.B >= 0)  # chosen on the device at every step
    else:
        assert np.all(r.B == -1)


def test_fixed_B_is_used_at_every_step():
    x, y = GROWTH.simulate(20, np.random.default_rng(3))
    r = run_sir(GROWTH, y, 2**10, "metropolis", 1, B=17, backend="cuda")
    assert np.all(r.B == 17)


@pytest.mark.parametrize("method", ["metropolis", "uphill"])
def test_device_B_of_a_step_is_the_B_of_its_weights(method):
    # The B a step chose on the device (written by the statistics or SSD
    # kernel straight into the run's record of Bs) is the CPU's B of that
    # step's weights; the last step's w~ are still in the graph's buffer.
    x, y = GROWTH.simulate(20, np.random.default_rng(5))
    r = run_sir(GROWTH, y, 2**12, method, 3, backend="cuda")
    graph = next(reversed(GRAPHS.entries("sir")))
    assert graph.m.name == method and graph.n == 2**12
    params = {"epsilon": EPSILON_FILTER} if method == "metropolis" else {}
    assert r.B[-1] == pr.choose_B(graph.w_tilde.get(), method, **params)
    assert len(set(r.B.tolist())) > 1  # a B a step, not one B for the run


def test_same_seed_same_run():
    x, y = GROWTH.simulate(40, np.random.default_rng(4))
    a = run_sir(GROWTH, y, 2**12, "metropolis", 11, backend="cuda")
    b = run_sir(GROWTH, y, 2**12, "metropolis", 11, backend="cuda")
    c = run_sir(GROWTH, y, 2**12, "metropolis", 12, backend="cuda")
    d = run_sir(GROWTH, y, 2**12, "metropolis", 11, backend="cuda")  # after another run
    np.testing.assert_array_equal(a.estimates, b.estimates)
    np.testing.assert_array_equal(a.B, b.B)
    np.testing.assert_array_equal(a.estimates, d.estimates)
    assert not np.array_equal(a.estimates, c.estimates)
    # A replay reads the run's measurements: other measurements, another run.
    e = run_sir(GROWTH, y + 1.0, 2**12, "metropolis", 11, backend="cuda")
    assert not np.array_equal(a.estimates, e.estimates)


@pytest.mark.parametrize("n", [1, 7, 1001, 4096])  # the float4 paths and the partial quads
def test_exp_and_gather_kernels_match_numpy(n):
    from pfresample.cuda import geometry

    rng = np.random.default_rng(n)
    log_w = rng.normal(-5.0, 3.0, n).astype(np.float32)
    top = _top_of(log_w)
    w = cupy.empty(n, dtype=np.float32)
    args = (cupy.asarray(log_w), top, np.uint32(n), w)
    sir_gpu._launch("filter.cu", "exp_shifted", geometry.blocks(n, 4), args)
    np.testing.assert_allclose(w.get(), np.exp(log_w - log_w.max()), rtol=2e-6)

    x = rng.normal(size=(4, n)).astype(np.float32)
    ancestors = rng.integers(0, n, size=(1, n)).astype(np.int32)
    out = cupy.empty_like(cupy.asarray(x))
    args = (cupy.asarray(x), cupy.asarray(ancestors), np.uint32(n), np.int32(4), out)
    sir_gpu._launch("filter.cu", "gather_rows", geometry.blocks(n, 4), (*args, NULL))
    np.testing.assert_array_equal(out.get(), x[:, ancestors[0]])
    closed = cupy.zeros(1, dtype=np.int32)  # the adaptive filter's gate, shut: a plain copy
    sir_gpu._launch("filter.cu", "gather_rows", geometry.blocks(n, 4), (*args, closed))
    np.testing.assert_array_equal(out.get(), x)


@pytest.mark.parametrize("n", [1, 1001, 2**20 + 3])  # 2^20 + 3: several weights a thread
def test_exp_total_is_exp_shifted_then_weight_total_bit_for_bit(n):
    # The untimed filters fold stage 1's exponentials into stage 2's sum.
    from pfresample.cuda import geometry

    rng = np.random.default_rng(n)
    log_w = cupy.asarray(rng.normal(-5.0, 3.0, n).astype(np.float32))
    top = _top_of(log_w.get())
    parts = geometry.sum_parts(n)
    results = []
    for fold in (False, True):
        w = cupy.full(n, np.nan, dtype=np.float32)
        sums, ticket = cupy.empty(parts, np.float64), cupy.zeros(1, np.uint32)
        total = cupy.empty(1, np.float64)
        if fold:
            args = (log_w, top, w, np.int64(n), sums, ticket, total)
            sir_gpu._launch("filter.cu", "exp_total", n, args, grid=parts)
        else:
            args = (log_w, top, np.uint32(n), w)
            sir_gpu._launch("filter.cu", "exp_shifted", geometry.blocks(n, 4), args)
            args = (w, np.int64(n), sums, ticket, total)
            sir_gpu._launch("filter.cu", "weight_total", n, args, grid=parts)
        results.append((w.get(), total.get()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
    exact = np.exp(log_w.get().astype(np.float64) - float(log_w.max())).sum()
    assert results[1][1][0] == pytest.approx(exact, rel=1e-5)  # float32 exponentials


@pytest.mark.parametrize("rows", [1, 2, 4])
# 2^20 + 3: two or three weights a thread; 5 * 2^20 + 7: ten or eleven, across
# three of the kernel's batches of loads, the last one partial
@pytest.mark.parametrize("n", [1, 1001, 2**20 + 3, 5 * 2**20 + 7])
def test_exp_total_estimate_is_exp_total_then_normalise_estimate_bit_for_bit(n, rows):
    # The untimed graph runs stages 1-3 as one pass: the same w~, s and
    # estimate as the two kernels, to the bit; w is left unwritten.
    from pfresample.cuda import geometry

    rng = np.random.default_rng(n + rows)
    log_w = cupy.asarray(rng.normal(-5.0, 3.0, n).astype(np.float32))
    x = cupy.asarray(rng.normal(0.0, 10.0, (rows, n)).astype(np.float32))  # signs mixed
    top, parts = _top_of(log_w.get()), geometry.sum_parts(n)
    results = []
    for merged in (False, True):
        w_tilde = cupy.full(n, np.nan, dtype=np.float32)
        sums, tickets = cupy.empty((rows + 1) * parts, np.float64), cupy.zeros(2, np.uint32)
        total, estimate = cupy.empty(1, np.float64), cupy.full(rows, np.nan, np.float64)
        if merged:
            args = (log_w, top, w_tilde, x, np.int64(n), sums, tickets[0:1], total, estimate)
            sir_gpu._launch("filter.cu", f"exp_total_estimate<{rows}>", n, args, grid=parts)
        else:
            args = (log_w, top, w_tilde, np.int64(n), sums, tickets[0:1], total)
            sir_gpu._launch("filter.cu", "exp_total", n, args, grid=parts)
            args = (w_tilde, x, np.int64(n), total, NULL, sums, tickets[1:2], estimate)
            sir_gpu._launch("filter.cu", f"normalise_estimate<{rows}>", n, args, grid=parts)
        results.append((w_tilde.get(), total.get(), estimate.get()))
        assert int(tickets.get().sum()) == 0  # the last block reset its ticket: a replay works
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(b, a)
    w64 = np.exp(log_w.get().astype(np.float64) - float(log_w.max()))
    exact = (x.get().astype(np.float64) * w64).sum(axis=1) / w64.sum()
    np.testing.assert_allclose(results[1][2], exact, rtol=1e-4, atol=1e-4 * np.abs(x.get()).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("method", ["systematic", "stratified", "multinomial"])
def test_a_scan_that_divides_as_it_loads_is_the_scan_of_w_bit_for_bit(method, dtype):
    # A filter hands w~ and its sum s (Call.divisor) where a pass wrote w = w~ / s
    # (float32: w~ times the rounded 1/s; float64: a division). The ancestors
    # and the scan's C_N (in the scan's scaled units) are those of the scan
    # of w; the negative control, w~ undivided, gives another C_N.
    from dataclasses import replace

    from pfresample.cuda.workspace import make_call

    m = get_method(method)
    n = 3 * 4096 + 17  # several tiles and a ragged end
    rng = np.random.default_rng(11)
    w_tilde = np.exp(rng.normal(0.0, 2.0, n)).astype(dtype)
    w_tilde[rng.integers(0, n, 50)] = 0.0  # zeros inside the run
    w_tilde[w_tilde.argmax()] = 1.0
    s = float(w_tilde.astype(np.float64).sum())
    if dtype == np.float32:
        w = w_tilde * np.float32(1.0 / s)
    else:
        w = w_tilde / np.float64(s)
    outs, totals = [], []
    for weights, divisor in ((w, None), (w_tilde, s), (w_tilde, None)):
        call = make_call(cupy.asarray(weights), [5])
        if divisor is not None:
            call = replace(call, divisor=cupy.asarray([divisor], dtype=np.float64))
        m.gpu(call)
        outs.append(call.out.get())
        totals.append(float(call.ws.scan(np.dtype(dtype)).total.get()[0]))
    np.testing.assert_array_equal(outs[1], outs[0])
    assert totals[1] == totals[0]
    assert totals[2] != totals[0]  # the control: w~ as it is is another scan


def test_a_divisor_is_refused_where_the_weights_are_read_outside_the_scan():
    from dataclasses import replace

    from pfresample.cuda.workspace import make_call

    call = make_call(cupy.ones(100, dtype=np.float32), [1])
    call = replace(call, divisor=cupy.ones(1, dtype=np.float64))
    with pytest.raises(NotImplementedError, match="Residual reads the weights as they are"):
        get_method("residual").gpu(call)


@pytest.mark.parametrize("n", [1, 5, 4099, 2**20 + 3])
def test_predict_through_the_ancestors_is_gather_then_predict_bit_for_bit(n):
    # The untimed graph fuses the gather into the growth model's prediction.
    from pfresample.cuda import geometry

    rng = np.random.default_rng(n)
    src = cupy.asarray(rng.normal(0.0, 10.0, n).astype(np.float32))
    ancestors = cupy.asarray(np.sort(rng.integers(0, n, n)).astype(np.int32))
    key, z = cupy.asarray([7, 9], dtype=np.uint32), cupy.asarray([3.5], dtype=np.float32)
    twin, k = GrowthTwin(GROWTH), 6
    outs = []
    for through in (False, True):
        x = cupy.full(n, np.nan, np.float32)
        log_w, top = cupy.full(n, np.nan, np.float32), cupy.zeros(1, np.uint32)
        if through:
            twin.predict_through(src, ancestors, x, log_w, k, z, key, top)
        else:
            args = (src[None, :], ancestors, np.uint32(n), np.int32(1), x[None, :], NULL)
            sir_gpu._launch("filter.cu", "gather_rows", geometry.blocks(n, 4), args)
            twin.predict(x, log_w, k, z, key, top)
        outs.append((x.get(), log_w.get(), top.get()))
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.all(np.isfinite(outs[1][0])) and outs[1][2][0] == _top_of(outs[1][1]).get()[0]
    x = src.copy()  # no ancestors: in place, as growth_predict
    log_w, top = cupy.empty(n, np.float32), cupy.zeros(1, np.uint32)
    twin.predict_through(x, None, x, log_w, k, z, key, top)
    y = src.copy()
    twin.predict(y, cupy.empty(n, np.float32), k, z, key, cupy.zeros(1, np.uint32))
    np.testing.assert_array_equal(x.get(), y.get())


@pytest.mark.parametrize("n", [3000, 2**20 + 3])
def test_untimed_graph_equals_the_timed_one(n):
    # Without stage marks the graph runs stages 1-3 as one pass
    # (exp_total_estimate), a linear-scan cumulative method divides w~ by s
    # as it loads it, Residual gets w from normalise_estimate, and the growth
    # model predicts through the ancestors; with them, exp_shifted,
    # weight_total, normalise_estimate writing w, and gather_rows: the same
    # run, bit for bit (the graph, not the fused run: fused=False).
    _, y = GROWTH.simulate(20, np.random.default_rng(8))
    methods = ["metropolis", "uphill", "systematic", "stratified", "multinomial", "residual"]
    for method in methods if n < 2**20 else ["systematic", "metropolis"]:
        m = get_method(method)
        timed = sir_gpu.run_sir_gpu(GROWTH, y, n, m, 5)
        fast = sir_gpu.run_sir_gpu(GROWTH, y, n, m, 5, stage_times=False, fused=False)
        np.testing.assert_array_equal(fast.estimates, timed.estimates, err_msg=method)
        np.testing.assert_array_equal(fast.log_likelihood_steps, timed.log_likelihood_steps)
        # the untimed graph took the one-pass path it claims (the cached graph of that call)
        kw, params = sir_gpu.sir_arguments(m, n)
        graph = sir_gpu.filter_graph(GROWTH, m, n, y.shape[0], kw, params, False)
        divides = method in ("systematic", "stratified", "multinomial")
        assert graph.divides is divides and graph.merged is (divides or m.comparison_based)
        assert (graph.w is None) is (divides or m.comparison_based)


@pytest.mark.parametrize("method", ["systematic", "metropolis"])
def test_a_nan_measurement_stops_the_run_at_its_step(method):
    # z_4 = NaN makes every log-likelihood of step 4 NaN: the CPU filter
    # raises there, the GPU filter after its graph, both naming step 4.
    _, y = GROWTH.simulate(10, np.random.default_rng(3))
    y = y.copy()
    y[3] = np.nan
    with pytest.raises(ValueError, match=r"step 4 of the filter: log-weights\[0\] is NaN"):
        run_sir(GROWTH, y, 256, method, seed=1, backend="cpu")
    with pytest.raises(FloatingPointError, match="from step 4 on"):
        run_sir(GROWTH, y, 256, method, seed=1, backend="cuda")
