"""No NaN log-likelihood estimate from any filter, and the GPU graphs'
host-side arithmetic of it (``filters.graph.log_z_steps``) equal to the
engine's estimator.

* Every registry method and D3 under each of the source documents'
  conventions (the defaults, ``SIR_OPTIONS``, ``CPF_OPTIONS``,
  ``D3_OPTIONS``, ``BOOTSTRAP_OPTIONS``, ``ADAPTIVE_OPTIONS``) on the CPU:
  a finite ``log_likelihood`` and finite ``log_likelihood_steps``.
* ``log_z_steps`` from what a GPU graph keeps of each step -- the largest
  log-weight as ``reduce.cuh``'s to_ordered key and the float64 sum of
  w~ = exp(log w - max) -- against log SUM exp(l) - log SUM W_{k-1} computed
  directly, for a filter that resamples every step (carried weights even)
  and for one that carries its weights on (the adaptive graph); a wrong N
  or a dropped constant must miss (the negative control).
"""

from __future__ import annotations

import math
import warnings

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
from pfresample.filters.graph import from_ordered, log_z_steps
from pfresample.models import BimodalModel, GrowthModel, LinearGaussianModel, UuvModel

N, STEPS = 256, 8


def _to_ordered(values) -> np.ndarray:
    """reduce.cuh's to_ordered on the host: float32 -> uint32 keys whose order is the floats'."""
    u = np.asarray(values, dtype=np.float32).view(np.uint32)
    return np.where(u & np.uint32(0x80000000), ~u, u | np.uint32(0x80000000)).astype(np.uint32)


def _finite(run) -> None:
    assert math.isfinite(run.log_likelihood), run.method
    assert np.isfinite(run.log_likelihood_steps).all(), run.method


@pytest.mark.parametrize("method", [*pr.methods(), "d3"])
def test_every_method_gives_a_finite_log_likelihood(method):
    model = LinearGaussianModel()
    _, y = model.simulate(STEPS, seed=2)
    kw = {"radius": 8} if method == "cellular" else {}
    _finite(run_filter(model, y, N, method, seed=1, backend="cpu", **kw))
    if method != "d3":
        _finite(run_filter(model, y, N, method, seed=1, backend="cpu", ess_threshold=0.5, **kw))


@pytest.mark.parametrize(
    ("name", "model", "method", "options"),
    [
        ("sir", GrowthModel(), "systematic", SIR_OPTIONS),
        ("sir-metropolis", GrowthModel(), "metropolis", SIR_OPTIONS),
        ("cpf", GrowthModel(), "cellular", {**CPF_OPTIONS, "radius": 8}),
        ("d3", UuvModel(duration=1.0), "d3", D3_OPTIONS),
        ("d3-systematic", UuvModel(duration=1.0), "systematic", D3_OPTIONS),
        ("bootstrap", BimodalModel(), "multinomial", BOOTSTRAP_OPTIONS),
        ("adaptive", BimodalModel(), "butterfly-multinomial",
         {**ADAPTIVE_OPTIONS, "ess_threshold": 0.5}),
        ("adaptive-standard", BimodalModel(), "stratified",
         {**ADAPTIVE_OPTIONS, "ess_threshold": 0.5}),
    ],
)  # fmt: skip
def test_every_documents_filter_gives_a_finite_log_likelihood(name, model, method, options):
    if isinstance(model, UuvModel):
        _, y = model.simulate(1)
    elif isinstance(model, BimodalModel):
        _, y = model.simulate(STEPS)
    else:
        _, y = model.simulate(STEPS, np.random.default_rng(3))
    _finite(run_filter(model, y, N, method, seed=4, backend="cpu", **options))


def test_from_ordered_inverts_to_ordered():
    values = np.array([-3.5, -0.0, 0.0, 1e-30, 2.25, -1e30], dtype=np.float32)
    np.testing.assert_array_equal(from_ordered(_to_ordered(values)), values)
    # bit for bit, signed zeros, infinities, subnormals and a NaN included
    edge = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38], np.float32)
    every = np.concatenate([edge, np.random.default_rng(5).normal(0, 1e3, 1000).astype(np.float32)])
    bits = from_ordered(_to_ordered(every)).view(np.uint32)
    np.testing.assert_array_equal(bits, every.view(np.uint32))
    keys = _to_ordered(np.sort(values[values != 0]))  # -0 and 0: equal floats, two keys
    assert np.all(np.diff(keys.astype(np.int64)) >= 0)  # the keys' order is the floats'


def _kept(log_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a graph keeps of each step of (T, N) float32 log-weights: the max's key, SUM w~."""
    top = log_w.max(axis=1)
    w_tilde = np.exp(log_w - top[:, None]).astype(np.float32)
    return _to_ordered(top), w_tilde.sum(axis=1, dtype=np.float64)


def _log_sum(values: np.ndarray) -> np.ndarray:
    top = values.max(axis=-1, keepdims=True)
    return (top + np.log(np.exp(values - top).sum(axis=-1, keepdims=True)))[..., 0]


def test_log_z_steps_of_a_filter_that_resamples_every_step():
    rng = np.random.default_rng(7)
    log_g = (rng.normal(size=(STEPS, N)) * 30 - 400).astype(np.float32)  # far below exp's range
    top, sums = _kept(log_g)
    want = _log_sum(log_g.astype(np.float64)) - math.log(N) + 1.5
    np.testing.assert_allclose(log_z_steps(top, sums, N, 1.5), want, rtol=0, atol=1e-4)
    # the negative controls: a wrong N, a dropped constant
    assert np.abs(log_z_steps(top, sums, 2 * N, 1.5) - want).min() > 0.5
    assert np.abs(log_z_steps(top, sums, N) - want).min() > 1.0


def test_log_z_steps_of_a_filter_that_carries_its_weights():
    """The adaptive graph: step k's log-weights are log c_{k-1} + log g_k
    (c_0 = 1, even), and log Z_k = log SUM exp(l_k) - log SUM c_{k-1}."""
    rng = np.random.default_rng(8)
    log_g = (rng.normal(size=(STEPS, N)) * 2).astype(np.float32)
    carried = rng.uniform(0.1, 5.0, size=(STEPS, N))  # what each step carries on
    log_c = np.vstack([np.zeros((1, N)), np.log(carried[:-1])])
    log_w = (log_c + log_g).astype(np.float32)
    top, sums = _kept(log_w)
    want = _log_sum(log_w.astype(np.float64)) - _log_sum(log_c)
    got = log_z_steps(top, sums, N, carried=carried.sum(axis=1))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
    assert np.abs(log_z_steps(top, sums, N) - want)[1:].min() > 1e-2  # carried ignored: misses


def test_log_z_steps_keeps_a_zero_sum_minus_infinite_and_a_nan_sum_nan():
    # log SUM w~ of a step whose weights all underflowed is -inf, a NaN sum stays NaN
    # (the run then says so), with no warning; every other step the plain log
    top = _to_ordered(np.array([1.0, 2.0, -3.0, 0.5], np.float32))
    sums = np.array([2.0, 0.0, np.nan, 7.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = log_z_steps(top, sums, 4, 0.25)
        assert np.isneginf(got[1]) and np.isnan(got[2])
        want = np.array([1.0, 0.5]) + np.log([2.0, 7.0]) - np.log(4) + 0.25
        np.testing.assert_array_equal(got[[0, 3]], want)
        clean = log_z_steps(top[[0, 3]], sums[[0, 3]], 4, 0.25)  # no zero: the one-call path
        np.testing.assert_array_equal(clean, want)
