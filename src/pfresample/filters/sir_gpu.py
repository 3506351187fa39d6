"""The SIR filter of thesis Algorithm 2.4 on the GPU (CuPy, gpu_kernels/models.cu).

The same four stages as the CPU filter (``filters/sir.py``), with the same
inputs to stage 4 (w~ for the comparison-based methods, w for the cumulative
ones, §6.9) and the same B rules (epsilon = 1/10 for the Metropolis family,
the SSD match for the Uphill family), computed on the device:

1. ``models.cu``: x_{k+1}^i from x_k^i and log p(z | x) in one kernel (its
   arithmetic in ``models.cuh``, checked on the host: tests/test_models_cuda.py); then
   the maximum of the log-weights and w~ = exp(log w - max) (weights_from_log);
2. s = SUM(w~) in float64;
3. w = w~ / s and x^_k = SUM(w~ x) / s, kept on the device;
4. the registry method's kernels (``resampling/gpu.py``: the statistics and B
   kernels when the method needs them, then the method), and the gather
   x = x[ancestors].

Nothing in the time loop waits for the device: B stays on the device, the
estimates and the Bs are copied back once, after the last step. Each stage is
timed with CUDA events recorded between the stages on the current stream
(``stage_seconds``, read after the loop); ``wall_seconds`` is the host's
clock around the loop and the final synchronisation.

States are float32 on the device (the thesis is single precision, §2.4),
float64 on the CPU; the process noise comes from Philox (``models.cu``), not
from NumPy's generator. So the two backends give different runs of the same
filter, and their RMSEs agree within the spread of runs (tests/test_gpu.py),
not bit for bit.
"""

from __future__ import annotations

import math
import time
from functools import cache

import numpy as np

from ..api import check_params, kernel_arguments
from ..resampling import gpu
from ..resampling.registry import Method
from .sir import NO_B, STAGES, SirResult, derive_seeds

STATE_DTYPE = np.float32  # thesis §2.4: single precision
WEIGHT_DTYPE = np.float32  # the resamplers' default (api.resample)


class _GrowthTwin:
    """The growth model (eqs. 2.34-2.35) on the device: a state is a float."""

    def __init__(self, model):
        self.model = model

    def shape(self, n: int) -> tuple:
        return (n,)

    def init(self, x, key) -> None:
        m = self.model
        args = (x, np.uint32(x.size), *key, np.float32(m.init_mean), np.float32(m.init_var**0.5))
        _launch("growth_init", x.size, args)

    def predict(self, x, log_w, k: int, z, key) -> None:
        m = self.model
        drift = 8.0 * math.cos(1.2 * k)  # eq. 2.34, with the index of the state propagated
        args = (x, log_w, np.uint32(x.size), *key, np.uint64(k + 1), np.float32(drift))
        args += (np.float32(m.sigma_v2**0.5), np.float32(z), np.float32(1.0 / m.sigma_n2))
        _launch("growth_predict", x.size, args)

    def weighted_sum(self, x, w_tilde):
        """SUM(w~ x) in float64 (a 0-d array)."""
        return _weighted_sum()(w_tilde, x)


class _RadarTwin:
    """The radar model (eqs. 7.1-7.2) on the device: rows p_x, p_y, v_x, v_y
    of a (4, N) array, so that each row is read and written coalesced."""

    def __init__(self, model):
        self.model = model

    def shape(self, n: int) -> tuple:
        return (4, n)

    def init(self, x, key) -> None:
        m = self.model
        n = x.shape[1]
        means = [np.float32(v) for v in m.x0]
        sds = [np.float32(v**0.5) for v in m.p0_diag]
        _launch("radar_init", n, (x, np.uint32(n), *key, *means, *sds))

    def predict(self, x, log_w, k: int, z, key) -> None:
        m = self.model
        n = x.shape[1]
        f = np.float32
        args = (x, log_w, np.uint32(n), *key, np.uint64(k + 1), f(m.dt))
        args += (f(m.q_diag[0] ** 0.5), f(m.q_diag[1] ** 0.5), f(m.sensor[0]), f(m.sensor[1]))
        args += (f(z[0]), f(z[1]), f(1.0 / m.r_diag[0]), f(1.0 / m.r_diag[1]))
        _launch("radar_predict", n, args)

    def weighted_sum(self, x, w_tilde):
        """SUM(w~ x) of each state component in float64 (shape (4,))."""
        return _weighted_sum()(w_tilde, x, axis=1)


def device_twin(model):
    """The device code of ``model`` (a GrowthModel or RadarModel), or None."""
    from ..models import GrowthModel, RadarModel

    if isinstance(model, GrowthModel):
        return _GrowthTwin(model)
    if isinstance(model, RadarModel):
        return _RadarTwin(model)
    return None


def _launch(name: str, n: int, args: tuple) -> None:
    block = gpu.block_size(n)
    gpu.kernel("models.cu", name)((gpu.blocks(n, block),), (block,), args)


@cache
def _weighted_sum():
    import cupy

    return cupy.ReductionKernel(
        "float32 w, float32 x",
        "float64 y",
        "(double)w * (double)x",
        "a + b",
        "y = a",
        "0",
        "pfr_weighted_sum",
    )


@cache
def _exp_shifted():
    """w~ = exp(log w - max log w), the maximum read from the device (weights_from_log)."""
    import cupy

    return cupy.ElementwiseKernel(
        "float32 log_w, raw float32 top",
        "float32 w",
        "w = expf(log_w - top[0])",
        "pfr_exp_shifted",
    )


@cache
def _normalise():
    """w = w~ / s, s (float64) read from the device."""
    import cupy

    return cupy.ElementwiseKernel(
        "float32 w_tilde, raw float64 s",
        "float32 w",
        "w = (float)(w_tilde / s[0])",
        "pfr_normalise",
    )


def run_sir_gpu(
    model, y, n: int, m: Method, seed: int, *, B, epsilon, segment_bytes, ssd_table
) -> SirResult:
    """:func:`pfresample.filters.run_sir` on the GPU (``backend="cuda"``);
    ``m`` is the registry entry, checked by the caller."""
    import cupy

    twin = device_twin(model)
    if twin is None:
        raise NotImplementedError(f"{type(model).__name__} has no GPU code; use backend='cpu'")
    y = np.asarray(y, dtype=np.float64)
    steps = y.shape[0]
    rng, draw_seeds = derive_seeds(seed, steps)
    # The noise key comes from the noise stream, as the CPU filter's noise does.
    key = tuple(np.uint32(v) for v in rng.integers(0, 2**32, size=2, dtype=np.uint64))
    params = {}
    if m.uses_B == "metropolis":
        params["epsilon"] = epsilon
    elif m.uses_B == "uphill" and ssd_table is not None:
        params["ssd_table"] = ssd_table
    params = check_params(m, params)
    kw = kernel_arguments(m, n, np.dtype(WEIGHT_DTYPE).itemsize, B, segment_bytes, params)
    device_B = m.uses_B is not None and kw.get("B") is None
    reads_stats = gpu.needs_stats(m, kw)

    x = cupy.empty(twin.shape(n), dtype=STATE_DTYPE)
    log_w = cupy.empty(n, dtype=WEIGHT_DTYPE)
    w_tilde = cupy.empty(n, dtype=WEIGHT_DTYPE)
    w = cupy.empty(n, dtype=WEIGHT_DTYPE)
    estimates = cupy.empty((steps,) + twin.shape(1)[:-1], dtype=np.float64)
    used_B = cupy.full(steps, NO_B if B is None else B, dtype=np.int64)
    events = [[cupy.cuda.Event() for _ in range(len(STAGES) + 1)] for _ in range(steps)]
    exp_shifted, normalise = _exp_shifted(), _normalise()

    twin.init(x, key)
    wall_start = time.perf_counter()
    for k in range(steps):
        ev = events[k]
        ev[0].record()
        twin.predict(x, log_w, k, y[k], key)
        exp_shifted(log_w, log_w.max().reshape(1), w_tilde)  # raw arguments: 1-D
        ev[1].record()
        total = cupy.sum(w_tilde, dtype=np.float64)
        ev[2].record()
        normalise(w_tilde, total.reshape(1), w)
        estimates[k] = twin.weighted_sum(x, w_tilde) / total
        ev[3].record()
        call = gpu.make_call(w_tilde if m.comparison_based else w, [int(draw_seeds[k])])
        if reads_stats:
            gpu.enqueue_stats(call)
        gpu.enqueue_method(m, call, kw, params)
        if device_B:
            used_B[k : k + 1] = call.ws.b
        x = x.take(call.out[0], axis=-1)
        ev[4].record()
    events[-1][-1].synchronize()
    wall = time.perf_counter() - wall_start

    stage_seconds = 1e-3 * np.array(
        [[cupy.cuda.get_elapsed_time(e[s], e[s + 1]) for s in range(len(STAGES))] for e in events]
    )
    host_estimates = estimates.get()
    bad = np.flatnonzero(~np.isfinite(host_estimates.reshape(steps, -1)).all(axis=1))
    if bad.size:
        raise FloatingPointError(
            f"the GPU filter's estimate is not finite from step {int(bad[0]) + 1} on "
            "(every weight underflowed or a state overflowed)"
        )
    return SirResult(
        m.name,
        n,
        int(seed),
        host_estimates,
        stage_seconds,
        float(stage_seconds.sum()),
        wall,
        used_B.get(),
        backend="cuda",
    )
