"""The float32 log-domain scan of Güldaş (2015) Appendix A on the GPU
(cumulative.cu's log_scan_* kernels, precision="log32"): the same ancestors as
the CPU reference (resampling/log_scan.py) for Systematic, Stratified and
Multinomial -- one tile, partial tiles, many tiles, the tile totals' serial
chunk path (N > 2048^2), zero weights, float64 weights, log-weights at the
thesis's level (log_offset 97), several seeds a call -- and the scan's r
bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import pfresample as pr
from pfresample.resampling import log_scan

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

METHODS = ("systematic", "stratified", "multinomial")


def _weights(n: int, dtype, zeros: float = 0.1, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = rng.gamma(0.7, 1.0, n)
    w[rng.random(n) < zeros] = 0.0
    w[n // 2] = 1.0  # at least one positive weight
    return w.astype(dtype)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [1, 5, 2048, 2049, 100_000, 1 << 20])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log32_ancestors_equal_the_cpu(method, n, dtype):
    w = _weights(n, dtype, seed=n)
    seeds = [1, 2, 3]
    cpu = pr.resample_many(w, method, seeds=seeds, backend="cpu", precision="log32")
    gpu = pr.resample_many(cupy.asarray(w), method, seeds=seeds, backend="cuda",
                           precision="log32").get()  # fmt: skip
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("method", METHODS)
def test_log32_chunk_path_equals_the_cpu(method):
    n = 2048 * 2048 + 4097  # the tile totals span two chunks
    w = _weights(n, np.float32, seed=7)
    cpu = pr.resample(w, method, seed=5, backend="cpu", precision="log32")
    gpu = pr.resample(cupy.asarray(w), method, seed=5, backend="cuda", precision="log32").get()
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("method", METHODS)
def test_log32_log_weights_at_the_thesis_level(method):
    n = 300_000
    lw = np.log(_weights(n, np.float64, zeros=0.0, seed=3)) + 97.0
    lw32 = lw.astype(np.float32)
    kw = {"precision": "log32", "log_offset": float(lw32.max()), "log": True}
    cpu = pr.resample(lw32, method, seed=9, backend="cpu", **kw)
    gpu = pr.resample(cupy.asarray(lw32), method, seed=9, backend="cuda", **kw).get()
    np.testing.assert_array_equal(gpu, cpu)


def test_log32_ratios_bit_for_bit():
    from pfresample.cuda.cumulative import _log_ratios
    from pfresample.cuda.workspace import make_call

    n = 2048 * 3 + 17
    w = _weights(n, np.float32, seed=11)
    lb = _log_ratios(make_call(cupy.asarray(w), [1]), 0.0)
    r_cpu, last = log_scan.log_scaled_prefix_sum(w, n, 0.0)
    np.testing.assert_array_equal(lb.r.get(), r_cpu)
    assert int(lb.last.get()[0]) == last
