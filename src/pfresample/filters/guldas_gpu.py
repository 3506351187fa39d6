"""Güldaş's filters on the GPU: the bootstrap and the adaptive-resampling
filter of §4.2 (``filters/adaptive.py``) on the bimodal model, and SMC-EM's
particle filter of §4.3 (``filters/smcem.py``) on the stochastic-volatility
model. Each is one CUDA graph over T steps, built on the SIR filter's
machinery (``sir_gpu.FilterGraph``: buffers, keys, the capture after one
eager step); a run uploads its keys and measurements, replays the graph and
reads the results back once.

* Bootstrap (Fig 1.2): per step, the prediction and log g_t
  (``models.cu``), w~ = exp(log w - max), the ESS and sum of w~
  (``butterfly.cu``'s ess_gate, no gate), the registry method's kernels,
  the gather, and the mean of the resampled particles.
* Adaptive (Fig 1.3): the log-weights are carried (``bimodal_predict``
  with ``carry``), and the adaptive butterfly's stages run under
  ``cuda.butterfly.Gates``: the device tests the ESS before each stage and
  the stage's kernels read the flag, so no step waits for the host. The
  output weights of the last stage run (or w~ when none ran) weight the
  estimate and become the next step's log-weights.
* SMC-EM: five rows a particle (x and the sums S_1 ... S_4), the
  parameters (alpha, sigma, beta) read from the device, so that one graph
  serves every EM iteration; the multinomial scheme resamples every d-th
  step with the registry's multinomial, the butterfly scheme runs one stage
  a step and the transposing gather (``filter.cu``'s gather_transposed).

States are float32 (the SIR filter's reasons), the noise Philox
(``models.cuh``): a GPU run is another draw of the same filter as the CPU
run, and the two agree in distribution (tests/gpu/test_gpu_guldas.py), not bit
for bit.
"""

from __future__ import annotations

import numpy as np

from ..cuda import geometry, workspace
from ..cuda.butterfly import Gates, ess_gate
from ..cuda.kernels import NULL
from ..cuda.stats import sum_slot
from ..models.volatility import BETA
from ..radix import default_radix
from ..resampling.registry import get_method
from ..validation import check_params, kernel_arguments
from .common import (
    MAX_RADIX,
    SCHEMES,
    FilterResult,
    gpu_result,
    resampling_period,
)
from .graph import check_finite, cuda_twin, kept, log_z_steps
from .sir_gpu import WEIGHT_DTYPE, FilterGraph, _launch

GRAPHS_KEPT = 4


class _GuldasGraph(FilterGraph):
    """What the bootstrap and the adaptive graph share: untimed stages (the
    run's device time only), the ESS, the output weights and the scratch
    of their sums."""

    def __init__(self, model, m, n: int, steps: int, kw: dict, params: dict, twin):
        import cupy

        super().__init__(model, m, n, steps, kw, params, timed=False, twin=twin, normalised=False)
        self.ess = cupy.empty(steps, dtype=np.float64)
        self.w_post = cupy.empty(n, dtype=WEIGHT_DTYPE)
        self.mean_parts = cupy.empty(2 * geometry.sum_parts(n), dtype=np.float64)
        self.gate_parts = cupy.empty(2 * geometry.reduction_parts(n), dtype=np.float64)
        self.gate_ticket = cupy.zeros(1, dtype=np.uint32)
        self.mean_ticket = cupy.zeros(1, dtype=np.uint32)

    def read_back(self) -> list:
        """Nothing copied by the graph: the results are read from the device
        (``results``), whose arrays are not the SIR program's."""
        return []

    def _mean(self, w, x, k: int) -> None:
        """estimates[k] = SUM(w x) / SUM(w) (w None: the plain mean)."""
        args = (NULL if w is None else w, x, np.int64(self.n), self.mean_parts, self.mean_ticket)
        _launch(
            "filter.cu",
            "weighted_mean",
            self.n,
            (*args, self.estimates[k]),
            geometry.sum_parts(self.n),
        )

    def start(self, marks: bool) -> None:
        import cupy

        stream = self.stream
        if marks:
            self.runner.mark(0)
        cupy.cuda.runtime.memsetAsync(self.top.data.ptr, 0, self.top.nbytes, stream.ptr)
        # even weights at time 0: log w = 0 (the adaptive filter carries them from here)
        cupy.cuda.runtime.memsetAsync(self.log_w.data.ptr, 0, self.log_w.nbytes, stream.ptr)
        self.twin.init(self.x[0], self.noise_key)

    def step(self, k: int, marks: bool) -> None:
        x, x_next = self.x[k % 2], self.x[(k + 1) % 2]
        self.twin.predict(x, self.log_w, k, self.z[k : k + 1], self.noise_key, self.top[k : k + 1])
        self._exp_shifted(self.top[k : k + 1])
        self._stage4(k, x, x_next)

    def finish(self, steps: int, marks: bool) -> None:
        if marks:
            self.runner.mark(1)

    def collect(self, seed: int, wall: float) -> FilterResult:
        """The run's record (:meth:`result`): its device seconds between the
        marks around the whole run, the stages each step ran."""
        estimates, ess = self.results()
        return self.result(seed, estimates, ess, self.stages(), self.runner.seconds(0, 1), wall)

    def result(self, seed, estimates, ess, stages, seconds: float, wall: float) -> FilterResult:
        """A run as ``BOOTSTRAP_OPTIONS``' / ``ADAPTIVE_OPTIONS``' record: the
        estimate after resampling (§4.2.1) in ``estimates`` and
        ``resampled_estimates``, the stages each step ran, the graph's device
        time in ``total_seconds`` and the host's clock in ``wall_seconds``
        (``adaptive.interaction_level`` gives Fig 4.11's level from the stages)."""
        return gpu_result(
            self.m.name, self.n, seed, estimates, wall_seconds=wall, total_seconds=seconds,
            ess=ess, stages=stages, resampled=stages > 0, resampled_estimates=estimates,
            log_likelihood_steps=self.log_likelihood_steps(),
        )  # fmt: skip

    def results(self) -> tuple[np.ndarray, np.ndarray]:
        estimates = self.estimates.get(stream=self.stream)[:, 0]
        check_finite(estimates, "the GPU filter's estimate is not finite from step {step} on")
        return estimates, self.ess.get(stream=self.stream)


class BootstrapGraph(_GuldasGraph):
    """The bootstrap filter (Fig 1.2) with any registry method that has CUDA kernels."""

    def __init__(self, model, m, n, steps, kw, params):
        super().__init__(model, m, n, steps, kw, params, _twin(model, carry=False))

    def _stage4(self, k: int, x, x_next) -> None:
        n = self.n
        total = sum_slot(self.stats[k])
        ess_gate(self.w_tilde, 0, n, 1, WEIGHT_DTYPE, self.gate_parts, self.gate_ticket,
                 ess=self.ess[k : k + 1], total=total)  # fmt: skip
        self._resample(k)
        self._gather(x, x_next)
        self._mean(None, x_next, k)

    def stages(self) -> np.ndarray:
        return np.full(self.steps, self.depth, dtype=np.int64)

    @property
    def depth(self) -> int:
        radix = self.kw.get("radix")
        return 1 if self.m.adaptive is None or radix is None else len(radix)


class AdaptiveGraph(_GuldasGraph):
    """The adaptive-resampling filter (Fig 1.3) with a gated method
    (``Method.gated``): an adaptive butterfly, its stages decided on the
    device, or multinomial or stratified resampling, run when the ESS is
    low."""

    def __init__(self, model, m, n, steps, kw, params, tau: float):
        import cupy

        super().__init__(model, m, n, steps, kw, params, _twin(model, carry=True))
        self.radix = tuple(kw.get("radix", (n,)))  # a standard method: one stage of N
        self.tau = tau
        self.go = cupy.zeros((steps, max(1, len(self.radix))), dtype=np.int32)
        # SUM of the weights each step carries on (float64): the log-likelihood's
        # denominator of the next step (graph.log_z_steps)
        self.carried = cupy.empty(steps, dtype=np.float64)

    def _stage4(self, k: int, x, x_next) -> None:
        n = self.n
        gates = Gates(self.go[k], self.tau * n, self.gate_parts, self.gate_ticket,
                      ess=self.ess[k : k + 1], total=sum_slot(self.stats[k]),
                      w_out=self.w_post, log_w=self.log_w)  # fmt: skip
        self._resample(k, gates=gates)
        args = (self.go[k, 0:1], self.w_tilde, np.uint32(n), self.w_post, self.log_w)
        _launch("filter.cu", "carry_weights", n, args)
        # SUM of the carried weights (the scratch of the SIR graph's sums, unused here)
        args = (self.w_post, np.int64(n), self.sums, self.tickets[0:1], self.carried[k : k + 1])
        _launch("filter.cu", "weight_total", n, args, grid=self.parts)
        self._gather(x, x_next, go=self.go[k, 0:1])
        self._mean(self.w_post, x_next, k)

    def log_likelihood_steps(self) -> np.ndarray:
        """log Z_k of the last replay: the step's maximum and sum of w~ over
        the sum of the weights the step before carried on."""
        top = self.top.get(stream=self.stream)
        sums = self.stats[:, workspace.STAT_SUM].get(stream=self.stream)
        carried = self.carried.get(stream=self.stream)
        return log_z_steps(top, sums, self.n, self.twin.log_likelihood_constant(), carried)

    def stages(self) -> np.ndarray:
        return self.go.get(stream=self.stream).sum(axis=1).astype(np.int64)


def _graph(kind, model, m, n: int, steps: int, kw: dict, params: dict, *extra):
    """The graph of these arguments, built on first use and kept (the last
    GRAPHS_KEPT). ``model`` None: a graph that does not depend on it."""
    import cupy

    rule = tuple(sorted((k, str(v)) for k, v in {**kw, **params}.items()))
    key = (cupy.cuda.Device().id, kind.__name__, model, m.name, n, steps, rule, extra)
    if model is None:
        make = lambda: kind(m, n, steps, kw, params, *extra)  # noqa: E731
    else:
        make = lambda: kind(model, m, n, steps, kw, params, *extra)  # noqa: E731
    return kept("guldas", key, make, GRAPHS_KEPT)


def _arguments(m, n: int, params: dict) -> tuple[dict, dict]:
    params = check_params(m, params)
    kw = kernel_arguments(m, n, np.dtype(WEIGHT_DTYPE).itemsize, None, None, params)
    return kw, params


def _record(method):
    """The registry's record of ``method``: a name looked up, a record (the
    engine's, looked up once a run_filter call) taken as it is."""
    return get_method(method) if isinstance(method, str) else method


def _twin(model, carry: bool = False):
    """The Güldaş graphs' device code of ``model`` (``cuda.twin``), or a
    NotImplementedError naming the model."""
    twin = cuda_twin(model, "guldas", carry=carry)
    if twin is None:
        raise NotImplementedError(
            f"{type(model).__name__} has no GPU code for Güldaş's filters; use backend='cpu'"
        )
    return twin


def run_bootstrap_gpu(model, y, n: int, method, seed: int, **params) -> FilterResult:
    """run_filter's bootstrap filter (``BOOTSTRAP_OPTIONS``) on the GPU (``seconds``: the
    run's device time)."""
    _twin(model)
    m = _record(method)
    if m.gpu is None:
        raise NotImplementedError(f"method {m.name!r} has no CUDA kernel; use backend='cpu'")
    kw, params = _arguments(m, n, params)
    y = np.asarray(y, dtype=np.float64)
    return _graph(BootstrapGraph, model, m, n, y.shape[0], kw, params).run(y, seed)


def run_adaptive_gpu(model, y, n: int, method, seed: int, *, tau: float, radix=None,
                     **params) -> FilterResult:  # fmt: skip
    """:func:`pfresample.filters.run_adaptive` on the GPU."""
    _twin(model)
    m = _record(method)
    if not m.gated:
        raise TypeError(f"method {m.name!r} cannot be gated on the GPU (Method.gated)")
    if "radix" in m.params:
        params = {**params, "radix": radix}
    kw, params = _arguments(m, n, params)
    y = np.asarray(y, dtype=np.float64)
    return _graph(AdaptiveGraph, model, m, n, y.shape[0], kw, params, float(tau)).run(y, seed)


class VolatilityTwin:
    """The volatility model's layout on the device: five rows (x, S_1 ... S_4)."""

    rows, measurement_size = 5, 1


class SmcemGraph(FilterGraph):
    """One E-step of SMC-EM (``smcem.expected_statistics``) as a CUDA graph:
    the particle filter over y_0 ... y_n under the parameters in
    ``self.theta`` and the weighted mean of the statistics at time n."""

    def __init__(self, m, n: int, steps: int, kw: dict, params: dict, scheme: str, r1: int,
                 period: int):  # fmt: skip
        import cupy

        twin = VolatilityTwin()
        super().__init__(None, m, n, steps, kw, params, timed=False, twin=twin, normalised=False)
        self.scheme, self.r1, self.period = scheme, r1, period
        self.eager_steps = min(steps, period + 1)  # every kernel of both kinds of step
        self.theta = cupy.zeros(3, dtype=np.float32)  # alpha, sigma, 1 / (2 beta^2)
        self.statistics = cupy.empty(4, dtype=np.float64)
        self.total = cupy.empty(1, dtype=np.float64)  # SUM(w~) at time n

    def read_back(self) -> list:
        """Nothing copied by the graph: the E-step reads its statistics itself."""
        return []

    def start(self, marks: bool) -> None:
        import cupy

        stream, n = self.stream, self.n
        if marks:
            self.runner.mark(0)
        cupy.cuda.runtime.memsetAsync(self.top.data.ptr, 0, self.top.nbytes, stream.ptr)
        args = (self.x[0], np.uint32(n), self.noise_key, self.theta, self.z[0:1], self.log_w)
        _launch("models.cu", "volatility_init", geometry.blocks(n, 4), (*args, self.top[0:1]))
        self.current = 0  # the state buffer the particles are in

    def step(self, k: int, marks: bool) -> None:
        """Time k >= 1: the scheme's resampling of time k - 1, then the
        prediction and the weights of time k (time 0 is the start's)."""
        import cupy

        if k == 0:
            return
        stream, n, current = self.stream, self.n, self.current
        x, x_next = self.x[current], self.x[1 - current]
        if self.scheme == "butterfly":  # one stage, then the transposing gather
            self._exp_shifted(self.top[k - 1 : k])
            sums, prev_r = self._resample(k)[-1]
            args = (x, self.ancestors, np.uint32(n), np.int32(5), np.uint32(self.r1))
            args += (sums, np.int32(prev_r), x_next, self.log_w)
            _launch("filter.cu", "gather_transposed", n, args)
            current = 1 - current
        elif k % self.period == 0:  # multinomial, then even weights
            self._exp_shifted(self.top[k - 1 : k])
            self._resample(k)
            self._gather(x, x_next)
            cupy.cuda.runtime.memsetAsync(self.log_w.data.ptr, 0, self.log_w.nbytes, stream.ptr)
            current = 1 - current
        self.current = current
        args = (self.x[current], self.log_w, np.uint32(n), self.noise_key, np.uint64(k))
        args += (self.theta, self.z[k : k + 1], self.top[k : k + 1])
        _launch("models.cu", "volatility_predict", geometry.blocks(n, 4), args)

    def finish(self, steps: int, marks: bool) -> None:
        """The E-step: SUM(w~ S) / SUM(w~) of the four statistics at time n."""
        n, current = self.n, self.current
        args = (self.log_w, self.top[steps - 1 : steps], self.w_tilde, np.int64(n), self.sums)
        args += (self.tickets[0:1], self.total)
        _launch("filter.cu", "exp_total", n, args, grid=self.parts)
        args = (self.w_tilde, self.x[current][1:], np.int64(n), self.total, NULL, self.sums)
        args += (self.tickets[1:2], self.statistics)
        _launch("filter.cu", "normalise_estimate<4>", n, args, grid=self.parts)
        if marks:
            self.runner.mark(1)

    def expected_statistics(self, y, seed: int, alpha: float, sigma: float, beta: float):
        """The E-step under (alpha, sigma, beta): the four statistics and the device seconds."""
        self.theta.set(
            np.array([alpha, sigma, 0.5 / beta**2], dtype=np.float32), stream=self.stream
        )
        self.runner.replay(y, seed)
        stats = self.statistics.get(stream=self.stream)
        if not np.all(np.isfinite(stats)):
            raise FloatingPointError(f"the GPU E-step's statistics are not finite: {stats}")
        return stats, self.runner.seconds(0, 1)


def smcem_e_step(y, n: int, scheme: str, beta: float = BETA):
    """SMC-EM's E-step on the GPU as ``smcem.em_loop`` takes it:
    ``e_step(alpha, sigma, seed)`` -> the four statistics, each one replay
    of the filter's graph (:class:`SmcemGraph`, built on first use and kept)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    y = np.asarray(y, dtype=np.float64)
    r1 = default_radix(n, MAX_RADIX)[0]
    period = resampling_period(n)
    if scheme == "butterfly":
        m = get_method("butterfly-multinomial")
        kw, params = _arguments(m, n, {})
        kw["radix"] = (r1,)  # one stage a step: stage 1 of (r_1, N / r_1)
    else:
        m = get_method("multinomial")
        kw, params = _arguments(m, n, {})
    graph = _graph(SmcemGraph, None, m, n, y.size, kw, params, scheme, r1, period)

    def e_step(alpha: float, sigma: float, seed) -> np.ndarray:
        return graph.expected_statistics(y, seed, alpha, sigma, beta)[0]

    return e_step
