"""D3 resampling on the GPU (``pytest -m gpu``): d3.cu against the CPU
reference ``pfresample.resampling.d3``.

* Particles: ``pr.resample_d3`` on the device returns the CPU's particles bit
  for bit, for every noise, both CDFs, float32 and float64 states, D = 1 and
  2, N in {1, 2, 33, 1000, 50000}, uniform, random, peaked and zero-laden
  weights in float32 and float64, log-weights, float64 weights that need
  scaling, NumPy and CuPy inputs.
* Strides: the launcher's j equals ``d3.plan``'s, and with cdf="prefix"
  Systematic's ancestors (``pr.resample(w, "systematic")``); its l equals
  the plan's l. The local search's iteration counts are j_i + 1 where slot
  i's threshold is passed and N where not.
* Launch: 160, 736 (the ends of the paper's Table 6 sweep) and other
  threads per block give the same particles; the (D, N) rows layout and
  strided arrays give those of (N, D); a captured CUDA graph replays the
  eager call.
* The paper's GPU search (cdf="paper", Figs 8-9), whose thresholds depend
  on the block: at 1 ... 1024 threads per block the device's strides,
  iteration counts and particles are the CPU reference's at the same
  block size; per-component D3 (components="each") is the CPU's.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import pfresample as pr
from pfresample.resampling import d3 as cpu_d3
from pfresample.resampling.cellular import scaled_weights
from pfresample.rng import DOMAIN_GLOBAL, philox_block, seed_keys, uniform_float
from pfresample.sums import weight_sums

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

SEED = 2**40 + 12345  # both key words non-zero
SIZES = [1, 2, 33, 1000, 50000]
KINDS = ["uniform", "random", "peaked", "zeros"]


def weights_of(kind: str, n: int, dtype, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng([n, seed, KINDS.index(kind) if kind in KINDS else 9])
    if kind == "uniform":
        w = np.ones(n)
    elif kind == "random":
        w = rng.gamma(0.5, size=n)
    elif kind == "peaked":  # one heavy particle in the middle, the rest light
        w = rng.random(n) * 1e-3
        w[n // 2] = 1e3
    elif kind == "zeros":  # half zero, the first and the last ones included
        w = rng.gamma(0.5, size=n)
        w[rng.random(n) < 0.5] = 0.0
        if n > 2:
            w[0] = w[-1] = 0.0
        if not (w > 0).any():
            w[n // 2] = 1.0
    else:
        raise ValueError(kind)
    return w.astype(dtype)


def inputs(n: int, dims: int, state_dtype, seed: int = 0):
    rng = np.random.default_rng([n, dims, seed])
    x = rng.normal(size=(n, dims) if dims > 1 else n).astype(state_dtype)
    pw = rng.normal(size=n)
    return x, pw


def key_of(seed) -> tuple[int, int]:
    return tuple(int(k[0]) for k in seed_keys([seed]))


def assert_parity(x, w, pw, seed, **kw) -> None:
    cpu = pr.resample_d3(x, w, pw, seed=seed, backend="cpu", **kw)
    dev = pr.resample_d3(cupy.asarray(x), cupy.asarray(w), cupy.asarray(pw), seed=seed, **kw)
    assert isinstance(dev, cupy.ndarray) and dev.shape == x.shape and dev.dtype == x.dtype
    dev = dev.get()
    assert cpu.dtype == x.dtype
    differ = np.flatnonzero((cpu != dev).reshape(x.shape[0], -1).any(axis=1))
    assert np.array_equal(cpu, dev), f"{kw}: {differ.size} particles differ, first at {differ[:5]}"


# ------------------------------------------------------------------ particles


@pytest.mark.parametrize("cdf", cpu_d3.CDFS)
@pytest.mark.parametrize("w_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", SIZES)
def test_particles_equal_the_cpu_reference(n, kind, w_dtype, cdf):
    w = weights_of(kind, n, w_dtype)
    for noise, state_dtype, dims in itertools.product(
        cpu_d3.NOISES, [np.float32, np.float64], [1, 2]
    ):
        x, pw = inputs(n, dims, state_dtype)
        assert_parity(x, w, pw, SEED, noise=noise, cdf=cdf)


@pytest.mark.parametrize("cdf", cpu_d3.CDFS)
@pytest.mark.parametrize("w_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [33, 1000, 50000])
def test_log_weights(n, w_dtype, cdf):
    logw = (np.random.default_rng(n).normal(size=n) * 5.0).astype(w_dtype)
    for noise in cpu_d3.NOISES:
        x, pw = inputs(n, 2, np.float32)
        assert_parity(x, logw, np.log(np.abs(pw)), SEED + 1, noise=noise, cdf=cdf, log=True)


@pytest.mark.parametrize("cdf", cpu_d3.CDFS)
@pytest.mark.parametrize("scale", [1e-310, 1e300])
def test_float64_weights_that_need_scaling(scale, cdf):
    """Subnormal and huge float64 weights: the statistics scale them
    (sums.stats_scale), the local search reads STAT_SCALE."""
    w = weights_of("random", 5000, np.float64) * scale
    x, pw = inputs(5000, 2, np.float64)
    assert_parity(x, w, pw, 7, cdf=cdf)


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_prefix_precision(precision):
    w = weights_of("random", 50000, np.float32)
    x, pw = inputs(50000, 1, np.float32)
    assert_parity(x, w, pw, 3, precision=precision)


def test_seeds_and_numpy_inputs():
    """Several seeds; NumPy inputs with backend="cuda" come back as NumPy."""
    w = weights_of("random", 1000, np.float32)
    x, pw = inputs(1000, 2, np.float32)
    for seed in (0, 1, 2**63 + 5):
        cpu = pr.resample_d3(x, w, pw, seed=seed, backend="cpu")
        dev = pr.resample_d3(x, w, pw, seed=seed, backend="cuda")
        assert isinstance(dev, np.ndarray) and np.array_equal(cpu, dev)


def test_equal_weights_return_the_input():
    x, _ = inputs(1000, 2, np.float32)
    w, pw = np.ones(1000, dtype=np.float32), np.zeros(1000)
    for cdf in ("prefix", "local"):  # the paper's halved strides move them
        dev = pr.resample_d3(cupy.asarray(x), cupy.asarray(w), cupy.asarray(pw), seed=1, cdf=cdf)
        assert np.array_equal(dev.get(), x)


# ------------------------------------------------------------------ the launcher


def device_call(w, seed):
    """A Call with its statistics enqueued and checked, as resample_d3 makes it."""
    from pfresample.cuda import stats
    from pfresample.cuda.workspace import make_call
    from pfresample.resampling.registry import get_method

    call = make_call(cupy.asarray(w), [seed])
    stats.enqueue_checked_inputs(get_method("d3"), call, {}, {})
    return call


def launch(w, x, pw, seed, **kw):
    """(particles, strides, l, iterations) of the launcher, buffers passed in."""
    from pfresample.cuda.d3 import d3

    n = w.size
    call = device_call(w, seed)
    strides, l_ = cupy.full(n, -7, dtype=np.int32), cupy.full(n, -7, dtype=np.int32)
    counts = cupy.full(n, -7, dtype=np.int32) if kw.get("cdf") in ("local", "paper") else None
    out = d3(
        call, cupy.asarray(x), cupy.asarray(pw), strides=strides, l_=l_, iterations=counts, **kw
    )
    return out.get(), strides.get(), l_.get(), None if counts is None else counts.get()


@pytest.mark.parametrize("cdf", cpu_d3.CDFS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", SIZES)
def test_strides_and_maxima_equal_the_plan(n, kind, cdf):
    w = weights_of(kind, n, np.float32)
    x, pw = inputs(n, 1, np.float32)
    _, strides, l_, _ = launch(w, x, pw, SEED, cdf=cdf)
    j, l_cpu, _, _ = cpu_d3.plan(w, pw, key_of(SEED), cdf)
    assert np.array_equal(strides, j)
    assert np.array_equal(l_, l_cpu)
    if cdf == "prefix":
        assert np.array_equal(strides, pr.resample(w, "systematic", seed=SEED, backend="cpu"))


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_prefix_strides_are_systematic_in_its_precision(precision):
    w = weights_of("random", 50000, np.float64)
    x, pw = inputs(50000, 1, np.float64)
    _, strides, _, _ = launch(w, x, pw, 5, precision=precision)
    systematic = pr.resample(w, "systematic", seed=5, backend="cpu", precision=precision)
    assert np.array_equal(strides, systematic)


def expected_iterations(w, seed) -> np.ndarray:
    """The weights slot i adds in the local search: j_i + 1 where
    floor(N c_k / S + u) > i for some k (the first such k is j_i), else N."""
    n = w.size
    c = np.cumsum(scaled_weights(w))
    u = float(uniform_float(philox_block(key_of(seed), 0, 0, DOMAIN_GLOBAL)[0]))
    passed = np.floor(c * float(n) / weight_sums(w)[0] + u)
    first = np.searchsorted(passed, np.arange(n), side="right")
    return np.where(first < n, first + 1, n)


@pytest.mark.parametrize("threads", [1, 33, 160, 196, 736, 1024])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 1000, 50000])
def test_paper_search_equals_the_cpu_at_every_block_size(n, kind, threads):
    """cdf="paper": the strides, the iteration counts (j_i + 1 where the
    threshold is reached) and the particles of the launch at ``threads`` per
    block are the CPU reference's at the same block size."""
    w = weights_of(kind, n, np.float32)
    x, pw = inputs(n, 2, np.float32)
    out, strides, l_, counts = launch(w, x, pw, SEED, cdf="paper", threads=threads)
    j, l_cpu, _, _ = cpu_d3.plan(w, pw, key_of(SEED), "paper", threads=threads)
    assert np.array_equal(strides, j) and np.array_equal(l_, l_cpu)
    u = cpu_d3.paper_thresholds(n, threads, key_of(SEED))
    c = np.cumsum(scaled_weights(w)) / weight_sums(w)[0]
    reached = u <= c[-1]
    assert np.array_equal(counts[reached], strides[reached] + 1)
    assert (counts[~reached] == n).all()
    for noise in cpu_d3.NOISES:
        cpu = pr.resample_d3(x, w, pw, seed=SEED, cdf="paper", threads=threads, noise=noise,
                             backend="cpu")  # fmt: skip
        dev = pr.resample_d3(cupy.asarray(x), cupy.asarray(w), cupy.asarray(pw), seed=SEED,
                             cdf="paper", threads=threads, noise=noise)  # fmt: skip
        assert np.array_equal(dev.get(), cpu), noise
    if threads == 160:
        assert np.array_equal(out, pr.resample_d3(x, w, pw, seed=SEED, cdf="paper",
                                                  threads=160, backend="cpu"))  # fmt: skip


@pytest.mark.parametrize("cdf", cpu_d3.CDFS)
def test_per_component_d3_equals_the_cpu(cdf):
    n = 5000
    w = np.stack([weights_of("random", n, np.float32, s) for s in (1, 2)], axis=1)
    x, _ = inputs(n, 2, np.float32)
    pw = np.random.default_rng(4).normal(size=(n, 2))
    for weights in (w, w[:, 0].copy()):
        cpu = pr.resample_d3(x, weights, pw, seed=SEED, cdf=cdf, threads=160,
                             components="each", backend="cpu")  # fmt: skip
        dev = pr.resample_d3(cupy.asarray(x), cupy.asarray(weights), cupy.asarray(pw),
                             seed=SEED, cdf=cdf, threads=160, components="each")  # fmt: skip
        assert isinstance(dev, cupy.ndarray) and np.array_equal(dev.get(), cpu)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", SIZES)
def test_local_iterations_per_thread(n, kind):
    w = weights_of(kind, n, np.float32)
    x, pw = inputs(n, 1, np.float32)
    _, strides, _, counts = launch(w, x, pw, SEED, cdf="local")
    expected = expected_iterations(w, SEED)
    assert np.array_equal(counts, expected)
    passed = expected < n
    assert np.array_equal(counts[passed], strides[passed] + 1)
    if kind == "uniform":
        assert np.array_equal(counts, np.arange(1, n + 1))  # thread i adds i + 1 weights


@pytest.mark.parametrize("cdf", ["prefix", "local"])  # "paper": drawn a block, above
def test_threads_per_block_do_not_change_the_particles(cdf):
    n = 5003
    w = weights_of("random", n, np.float32)
    x, pw = inputs(n, 2, np.float32)
    reference = launch(w, x, pw, SEED, cdf=cdf)
    for threads in (160, 736, 1, 33, 1024):
        got = launch(w, x, pw, SEED, cdf=cdf, threads=threads)
        for a, b in zip(reference, got, strict=True):
            assert (a is None and b is None) or np.array_equal(a, b), threads
    cpu = pr.resample_d3(x, w, pw, seed=SEED, cdf=cdf, backend="cpu")
    assert np.array_equal(reference[0], cpu)


@pytest.mark.parametrize("state_dtype", [np.float32, np.float64])
def test_rows_layout_and_strided_arrays(state_dtype):
    from pfresample.cuda.d3 import d3

    n = 1000
    w = weights_of("random", n, np.float32)
    x, pw = inputs(n, 2, state_dtype)
    cpu = pr.resample_d3(x, w, pw, seed=SEED, backend="cpu")
    call = device_call(w, SEED)
    dpw = cupy.asarray(pw)
    rows = cupy.asarray(np.ascontiguousarray(x.T))  # (D, N): the filter's layout
    assert np.array_equal(d3(call, rows, dpw, rows_layout=True).get(), cpu.T)
    out = cupy.empty((2, n), dtype=state_dtype)
    assert d3(call, rows, dpw, rows_layout=True, out=out) is out
    assert np.array_equal(out.get(), cpu.T)
    # views: every other column of a wider array in, rows of a (4, N) array out
    wide = cupy.zeros((n, 4), dtype=state_dtype)
    wide[:, ::2] = cupy.asarray(x)
    block = cupy.zeros((4, n), dtype=state_dtype)
    d3(call, wide[:, ::2], dpw, out=block[1:3].T)
    assert np.array_equal(block[1:3].get(), cpu.T)
    assert not block[0].any() and not block[3].any()
    # float32 prior weights compare as their float64 values do
    got = d3(call, cupy.asarray(x), dpw.astype(np.float32)).get()
    assert np.array_equal(
        got, pr.resample_d3(x, w, pw.astype(np.float32), seed=SEED, backend="cpu")
    )


@pytest.mark.parametrize("cdf", cpu_d3.CDFS)
def test_a_captured_graph_replays_the_call(cdf):
    """The launcher as the GPU filter calls it: the key in device memory
    (a Call with n_keys=1), (D, N) states, every buffer passed in; captured
    in a CUDA graph after an eager call (which compiles the kernels and makes
    the scan buffers), each replay gives the CPU's particles for the key the
    device holds at that replay."""
    from dataclasses import replace

    from pfresample.cuda.d3 import d3

    n = 20000
    w = weights_of("random", n, np.float32)
    x, pw = inputs(n, 2, np.float32)
    key = cupy.asarray(np.array(key_of(SEED), dtype=np.uint32))
    call = replace(device_call(w, 0), n_keys=1, keys=key, k0=np.uint32(0), k1=np.uint32(0))
    rows, dpw = cupy.asarray(np.ascontiguousarray(x.T)), cupy.asarray(pw)
    out = cupy.empty((2, n), np.float32)
    buffers = {"strides": cupy.empty(n, np.int32), "l_": cupy.empty(n, np.int32)}
    buffers |= {"out": out, "rows_layout": True, "cdf": cdf, "threads": 160}
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        eager = d3(call, rows, dpw, **buffers).get()
        out.fill(0)
        stream.synchronize()
        stream.begin_capture()
        try:
            d3(call, rows, dpw, **buffers)
        finally:
            graph = stream.end_capture()
        assert not out.any()  # captured, not run
        replays = {}
        for seed in (SEED, 99):
            key.set(np.array(key_of(seed), dtype=np.uint32), stream=stream)
            graph.launch(stream)
            replays[seed] = out.get()
    assert np.array_equal(replays[SEED], eager)
    for seed, got in replays.items():
        cpu = pr.resample_d3(x, w, pw, seed=seed, cdf=cdf, threads=160, backend="cpu")
        assert np.array_equal(got, cpu.T), seed


def test_bad_launcher_arguments():
    from pfresample.cuda.d3 import d3

    w = weights_of("random", 100, np.float32)
    x, pw = inputs(100, 2, np.float32)
    call = device_call(w, 1)
    dx, dpw = cupy.asarray(x), cupy.asarray(pw)
    with pytest.raises(ValueError, match="noise"):
        d3(call, dx, dpw, noise="eq6")
    with pytest.raises(ValueError, match="shape"):
        d3(call, dx, dpw, rows_layout=True)
    with pytest.raises(ValueError, match="local"):
        d3(call, dx, dpw, iterations=cupy.empty(100, np.int32))
    with pytest.raises(ValueError, match="impl"):
        pr.resample_d3(dx, cupy.asarray(w), dpw, seed=1, impl="loop")
    with pytest.raises(ValueError, match="threads"):
        d3(call, dx, dpw, threads=2048)
    with pytest.raises(ValueError, match="int32"):
        d3(call, dx, dpw, strides=cupy.empty(100, np.int64))
