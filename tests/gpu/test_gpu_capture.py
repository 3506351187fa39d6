"""The CuPy loop captured as one CUDA graph (filters/capture.py,
``run_filter(..., capture=...)``) on the linear-Gaussian model.

* The generator's kernel draws the NumPy reference's normals (rng.py's Philox).
* A captured run equals the loop's run of the same seed when the loop draws
  from the same generator (``device.run(noise="philox")``): the same
  kernels on the same numbers, so the estimates, ESS and log Z_k agree to
  rounding (CUDA's log against the host's in log Z_k) -- and for other
  measurements of the same shape, which the graph reads from its inputs.
* The capture allocates only in its arena, at the eager pass's offsets.
* A replay is a function of the seed; the captured run agrees in
  distribution with the loop on CuPy's generator (the mean log-likelihood
  and the error against the Kalman mean, within 4 standard errors).
* A model that reads a value back to the host (float(y)) cannot be
  captured: "auto" warns and runs the loop, True raises.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfresample.filters import capture, clear_graphs, device, run_filter
from pfresample.filters.graph import GRAPHS
from pfresample.models import LinearGaussianModel
from pfresample.resampling.registry import get_method

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

N, STEPS, SEEDS = 4096, 25, 24
MODEL = LinearGaussianModel()
TRUTH, Y = MODEL.simulate(STEPS, seed=3)
KALMAN_MEANS, _, KALMAN_LOG_Z = MODEL.kalman(Y)
OPTIONS = {"ess_threshold": None, "resampled_estimates": None, "snapshot_step": None,
           "stage4_weights": None, "keep_particles": False}  # fmt: skip


def captured(y, seed, n=N, method="systematic"):
    return run_filter(MODEL, y, n, method, seed=seed, backend="cuda", capture=True)


def loop(y, seed, n=N, method="systematic", noise="philox"):
    return device.run(MODEL, np.asarray(y, dtype=np.float64), n, get_method(method), seed,
                      {}, {}, OPTIONS, noise=noise)  # fmt: skip


def test_the_generator_draws_the_reference_normals():
    key = np.array([123456789, 987654321], dtype=np.uint32)
    rng = capture.CaptureRng(cupy.asarray(key))
    rng.standard_normal(8)  # call 0
    got = rng.standard_normal(10_000).get()  # call 1
    np.testing.assert_allclose(got, capture.reference_normals(key, 1, 10_000), rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    odd = rng.standard_normal((3, 5)).get().ravel()  # call 2: 15 normals, the last pair cut
    np.testing.assert_allclose(odd, capture.reference_normals(key, 2, 15), rtol=1e-12, atol=1e-12)
    assert not np.allclose(odd, capture.reference_normals(key, 1, 15))  # another call's draws


@pytest.mark.parametrize("n", [1, 1000, 2**20 + 7])  # 2^20 + 7: many blocks, several a thread
def test_the_steps_maximum_is_one_kernel_with_a_nan_winning(n):
    # pfr_capture_top: the blocks' maxima, then the last block's; a NaN
    # anywhere makes the maximum NaN (as CuPy's max), so the run raises.
    from pfresample.cuda import geometry

    top_of = capture._statistics()[0]
    blocks, threads = geometry.capture_blocks(n), geometry.CAPTURE_THREADS
    rng = np.random.default_rng(n)
    for case in ("values", "all -inf", "a NaN"):
        lw = rng.normal(-50.0, 20.0, n)
        if case == "all -inf":
            lw[:] = -np.inf
        elif case == "a NaN":
            lw[rng.integers(0, n)] = np.nan
        ticket, top = cupy.zeros(1, dtype=np.uint32), cupy.full(1, 7.0)
        args = (cupy.asarray(lw), np.int64(n), cupy.empty(blocks), ticket, top)
        top_of((blocks,), (threads,), args)
        got = float(top.get()[0])
        assert np.isnan(got) if case == "a NaN" else got == lw.max(), case
        assert int(ticket.get()[0]) == 0  # reset by the last block: a replay works


@pytest.mark.parametrize("seed", [1, 2])
def test_a_captured_run_is_the_loops_run_on_the_same_draws(seed):
    clear_graphs()
    a, b = captured(Y, seed), loop(Y, seed)
    assert a.backend == "cuda" and GRAPHS.entries("capture")
    np.testing.assert_allclose(a.estimates, b.estimates, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.ess, b.ess, rtol=1e-12)
    np.testing.assert_allclose(a.log_likelihood_steps, b.log_likelihood_steps, rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    # other measurements through the same graph: still the loop's run
    y2 = Y[::-1].copy()
    np.testing.assert_allclose(captured(y2, seed).estimates, loop(y2, seed).estimates,
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    assert len(GRAPHS.entries("capture")) == 1  # one graph for both
    # negative control: another seed's loop is not this run
    assert not np.allclose(a.estimates, loop(Y, seed + 10).estimates)


class Pair:
    """Two independent copies of MODEL, a state of two numbers a particle: the
    captured step's statistics kernels over d = 2 columns of x (a dropped
    or swapped column changes the estimates)."""

    def init_particles(self, n, rng):
        return MODEL.m0 + MODEL.p0 * rng.standard_normal((n, 2))

    def transition(self, x, k, rng):
        # the second number drifts by 1 a step; made on the device (cupy.arange),
        # since a capture refuses a host-to-device copy (cupy.asarray of a list)
        drift = cupy.arange(2, dtype=np.float64)
        return MODEL.a * x + MODEL.q * rng.standard_normal(x.shape) + drift

    def log_likelihood(self, y, x):
        e = (cupy.asarray(y) - x) / MODEL.r  # the loop hands y as NumPy, the graph on the device
        return -0.5 * (e * e).sum(axis=1)


def test_a_captured_run_of_a_state_of_two_numbers_is_the_loops():
    clear_graphs()
    pair, y = Pair(), np.column_stack([Y, Y + np.arange(STEPS)])
    a = run_filter(pair, y, N, "systematic", seed=5, backend="cuda", capture=True)
    b = device.run(pair, y, N, get_method("systematic"), 5, {}, {}, OPTIONS, noise="philox")
    assert a.estimates.shape == (STEPS, 2) and GRAPHS.entries("capture")
    np.testing.assert_allclose(a.estimates, b.estimates, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.ess, b.ess, rtol=1e-12)
    np.testing.assert_allclose(a.log_likelihood_steps, b.log_likelihood_steps, rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    assert not np.allclose(a.estimates[:, 0], a.estimates[:, 1], atol=0.5)  # two columns


def test_a_replay_is_a_function_of_the_seed():
    a, b, c = captured(Y, 5), captured(Y, 5), captured(Y, 6)
    np.testing.assert_array_equal(a.estimates, b.estimates)
    assert a.log_likelihood == b.log_likelihood
    assert not np.array_equal(a.estimates, c.estimates)


def test_the_capture_allocates_only_in_its_arena():
    """The capture puts its blocks where the eager pass put them (the same
    peak and count), inside the arena; a replay allocates nothing in it."""
    clear_graphs()
    captured(Y, 1)
    (f,) = GRAPHS.entries("capture")
    assert f.served.peak == f.planned.peak and f.served.blocks == f.planned.blocks
    assert 0 < f.served.peak <= f.served.capacity == capture.arena_bytes(f.planned.peak)
    assert f.arena.ptr <= f.x.data.ptr < f.arena.ptr + f.served.capacity
    live = dict(f.served.live)
    captured(Y, 2)
    assert f.served.live == live


def _z(a, b):
    return abs(a.mean() - b.mean()) / math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)


def test_captured_and_cupy_loop_agree_in_distribution():
    runs = [(captured(Y, s), loop(Y, s, noise="cupy")) for s in range(SEEDS)]
    ll = np.array([[r.log_likelihood for r in pair] for pair in runs])
    err = np.array([[np.sqrt(np.mean((r.estimates - KALMAN_MEANS) ** 2)) for r in pair]
                    for pair in runs])  # fmt: skip
    assert _z(ll[:, 0], ll[:, 1]) < 4
    assert _z(err[:, 0], err[:, 1]) < 4
    assert abs(ll[:, 0].mean() - KALMAN_LOG_Z) < 1.0


class HostReading(LinearGaussianModel):
    """The linear-Gaussian model with a float(y): a read back to the host."""

    def log_likelihood(self, y, x):
        e = (float(y) - x) / self.r
        return -0.5 * e * e - math.log(self.r) - 0.5 * math.log(2 * math.pi)


def test_a_model_that_reads_back_falls_back_to_the_loop():
    model = HostReading()
    clear_graphs()
    with pytest.warns(RuntimeWarning, match="could not be captured"):
        a = run_filter(model, Y, 1024, "systematic", seed=1, backend="cuda", capture="auto")
    b = run_filter(model, Y, 1024, "systematic", seed=1, backend="cuda")
    np.testing.assert_array_equal(a.estimates, b.estimates)  # the loop, CuPy's draws
    with pytest.raises(RuntimeError, match="could not be captured"):
        run_filter(model, Y, 2048, "systematic", seed=1, backend="cuda", capture=True)
    clear_graphs()
    assert GRAPHS.entries("capture") == []
