"""The filters of Das et al. (2014) on the GPU: the UUV model with D3 or any
registry resampler, every step (``filters/d3.py`` is the CPU filter).

One step, as the CPU filter's, each a kernel (``models.cu``, ``filter.cu``,
``d3.cu``): predict and log-likelihood (``uuv_predict``), w~ =
exp(log w - max) and its float64 sum, the estimate x^_k; then D3 -- the
prior of eqs. 1-2 (``uuv_prior``), the log prior weights of eq. 4
(``uuv_prior_weights``) and the D3 kernels (``cuda.d3``), which write the
moved particles into the other state buffer -- or a registry method's
ancestors and the gather; last, ``step_advance``.

Why chunks: the paper's run has 36,000 steps. One CUDA graph of every step
(as ``sir_gpu.FilterGraph`` does for 100) would hold hundreds of thousands
of nodes; launching kernel by kernel from Python costs about ten
microseconds a launch. So the kernels read the step k from a device
counter (``step_advance`` moves it on), and one graph of CHUNK steps is
captured after two eager steps (which compile every kernel) and replayed
T / CHUNK times; the steps left over run eagerly. The first run of a graph
captures it before its clocks start (``wall_seconds``, ``device_seconds``),
so no run's time holds compiling or capturing. States are float32 rows
(Xdot, Ydot) of a (2, N) array, as in the SIR filter's GPU code; the model
noise comes from Philox (``models.cuh``), so CPU and GPU runs of one seed
differ and agree in distribution (tests/gpu/test_gpu_d3_filter.py).

Only every-step resampling runs here (the paper's filter; ``ess_threshold``
belongs to the CPU filter).

``threads_scope``: "d3" (ours) launches the D3 kernels with ``threads`` per
block and every other kernel at THREADS (256; the reductions' tree is built
for it); "step" (the paper's GPU filter, §4.1: one thread a particle, the
block size it sweeps in Tables 6-7) launches every kernel of a step with
``threads`` -- the prediction, the sums and the estimate through their
any-block-size twins (``uuv_predict_any``, ``exp_total_any``,
``normalise_estimate_any``, ``uuv_prior_any``), the prior weights, D3 and
the snapshot copy -- but ``step_advance``, one thread of bookkeeping. The
sums then depend on the block size in their last bits.
"""

from __future__ import annotations

import numpy as np

from ..constants import EPSILON_FILTER
from ..cuda import d3 as cuda_d3
from ..cuda import geometry, kernels, stats, workspace
from ..cuda.kernels import NULL
from ..validation import check_params, kernel_arguments
from .common import GPU_STATE_DTYPE, FilterResult, gpu_result, graph_inputs
from .graph import GraphRunner, StepProgram, check_finite, cuda_twin, kept, log_z_steps
from .sir_gpu import THREADS, enqueue_resampler

CHUNK = 100  # steps a replayed graph holds (even: the two state buffers alternate)
GRAPHS_KEPT = 2


THREADS_SCOPES = ("d3", "step")
STEP_MIN_THREADS = 32  # the *_any reductions need one whole warp (reduce.cuh)
# doubles a step keeps: the estimate (2), the statistics record of w~, the maximum's key
RECORD = 2 + workspace.STAT_COUNT + 1


def _launch(module: str, name: str, n: int, args: tuple, grid: int | None = None,
            threads: int = THREADS) -> None:  # fmt: skip
    grid = geometry.blocks(n, threads) if grid is None else grid
    kernels.kernel(module, name)((grid,), (threads,), args)


class D3FilterGraph(StepProgram):
    """The buffers and kernels of one (model, method, N, T, D3 options), the
    step program of a :class:`graph.GraphRunner` in chunks of CHUNK steps
    after two eager ones; :meth:`run` runs the filter for one seed and one
    set of measurements."""

    eager_steps = 2  # every kernel compiled; the chunks then start at an even step
    chunk = CHUNK
    stream_events = True

    def __init__(self, model, m, n: int, steps: int, noise: str, cdf: str, threads,
                 threads_scope: str = "d3"):  # fmt: skip
        import cupy

        self.model, self.m, self.n, self.steps = model, m, n, steps
        self.noise, self.cdf, self.threads = noise, cdf, threads
        self.step_threads = threads if threads_scope == "step" else None
        self.parts = parts = geometry.sum_parts(n)
        if self.step_threads is not None:  # a partial per block of the step's grid
            parts = max(parts, geometry.blocks(n, self.step_threads))
        self.x = cupy.empty((2, 2, n), dtype=GPU_STATE_DTYPE)
        self.log_w = cupy.empty(n, dtype=np.float32)
        self.w_tilde = cupy.empty(n, dtype=np.float32)
        self.log_pw = cupy.empty(n, dtype=np.float64)
        self.counter = cupy.zeros(1, dtype=np.uint32)  # the step the kernels read
        self.key = cupy.zeros(2, dtype=np.uint32)  # the current step's resampling key
        self.sums = cupy.empty(2 * parts, dtype=np.float64)
        self.tickets = cupy.zeros(3, dtype=np.uint32)
        # The step's record, which step_advance copies to row k of `estimates`:
        # the estimate (2), the statistics record of w~ the resampler reads
        # (its sum the float64 SUM w~ exp_total writes) and, in the low word of
        # the last double (its high word stays 0), the maximum log-weight as
        # reduce.cuh's to_ordered key: what the log-likelihood estimate needs
        # of the step (graph.log_z_steps), kept by no kernel or copy of its own.
        self.estimate = cupy.zeros(RECORD, dtype=np.float64)
        record = self.estimate[2 : 2 + workspace.STAT_COUNT]
        record[...] = stats.known_statistics(n)
        self.top = self.estimate[RECORD - 1 :].view(np.uint32)[:1]
        self.previous = cupy.zeros(RECORD, dtype=np.float64)  # the prior reads rows 0-1
        self.prior = cupy.zeros(4, dtype=np.float64)
        self.estimates = cupy.zeros((steps, RECORD), dtype=np.float64)
        self.snapshot = cupy.empty((2, n), dtype=GPU_STATE_DTYPE)
        self.twin = cuda_twin(model, "d3")
        self.table = cupy.asarray(self.twin.table())
        # The run's inputs (common.graph_inputs): noise key, a key a step, measurements.
        self.runner = GraphRunner(self, 2 + 2 * steps + 2 * steps)
        self.inputs = self.runner.inputs
        self.noise_key = self.inputs[:2]
        self.keys = self.inputs[2 : 2 + 2 * steps]
        self.z = self.inputs[2 + 2 * steps :].view(np.float32)
        # The statistics record of w~ that the resampler reads: the sum is the
        # filter's (weight_total), the maximum 1 (w~ = exp(0) at the maximum),
        # no scaling (w~ <= 1), no bad entry.
        ws = stats.with_known_statistics(workspace.Workspace(n), record)
        self.ancestors = cupy.empty((1, n), dtype=np.int32)
        self.strides = cupy.empty(n, dtype=np.int32)
        self.l_ = cupy.empty(n, dtype=np.int32)
        self.call = workspace.Call(
            self.w_tilde, 1, self.key, np.uint32(0), np.uint32(0), ws, self.ancestors
        )
        # The Metropolis family's B as in the CPU filter (epsilon = 1/10, Dülger §5.4),
        # chosen on the device every step.
        self.params = {"epsilon": EPSILON_FILTER} if m.B_rule == "metropolis" else {}
        self.kw = {}
        if m.output == "ancestors":
            self.kw = kernel_arguments(m, n, 4, None, None, check_params(m, self.params))
        self.snapshot_step = None

    def step(self, k: int, marks: bool = False) -> None:
        """Enqueue one step (the device's counter says which); ``k`` only
        picks the state buffers (its parity)."""
        n, m = self.n, self.m
        x, x_next = self.x[k % 2], self.x[(k + 1) % 2]
        tpb = self.step_threads  # None: ours, the kernels' own sizes
        args = (x, self.log_w, np.uint32(n), self.noise_key, self.counter, self.table, self.z)
        args += (*self.twin.predict_args(), self.top)
        total = stats.sum_slot(self.call.ws.stats)
        weights = (self.log_w, self.top, self.w_tilde, np.int64(n), self.sums, self.tickets[0:1])
        estimate = (self.w_tilde, x, np.int64(n), total)
        prior = (x, np.int64(n), self.previous, self.counter, self.table, self.sums)
        prior += (self.tickets[2:3], self.prior)
        if tpb is None:
            _launch("models.cu", "uuv_predict", n, args)
            _launch("filter.cu", "exp_total", n, (*weights, total), grid=self.parts)
            estimate += (NULL, self.sums, self.tickets[1:2], self.estimate)
            _launch("filter.cu", "normalise_estimate<2>", n, estimate, grid=self.parts)
        else:
            _launch("models.cu", "uuv_predict_any", n, args, threads=tpb)
            _launch("filter.cu", "exp_total_any", n, (*weights, total), threads=tpb)
            estimate += (self.sums, self.tickets[1:2], self.estimate)
            _launch("filter.cu", "normalise_estimate_any<2>", n, estimate, threads=tpb)
        if m.output == "particles":
            if tpb is None:
                _launch("filter.cu", "uuv_prior", n, prior, grid=self.parts)
            else:
                _launch("filter.cu", "uuv_prior_any", n, prior, threads=tpb)
            args = (x, np.uint32(n), self.prior, self.log_pw)
            _launch("filter.cu", "uuv_prior_weights", n, args, threads=tpb or THREADS)
            cuda_d3.d3(
                self.call, x, self.log_pw, noise=self.noise, cdf=self.cdf, threads=self.threads,
                rows_layout=True, out=x_next, strides=self.strides, l_=self.l_,
            )  # fmt: skip
        else:
            enqueue_resampler(self.call, m, self.kw, self.params)
            args = (x, self.ancestors, np.uint32(n), np.int32(2), x_next, NULL)
            _launch("filter.cu", "gather_rows", geometry.blocks(n, 4), args)
        if self.snapshot_step is not None:
            args = (self.counter, np.uint32(self.snapshot_step - 1), x_next, np.int64(2 * n))
            _launch("filter.cu", "snapshot_rows", 2 * n, (*args, self.snapshot),
                    threads=tpb or THREADS)  # fmt: skip
        args = (self.counter, np.int32(RECORD), self.estimate, self.previous, self.estimates)
        args += (self.keys, self.key, self.top, np.uint32(self.steps))
        kernels.kernel("filter.cu", "step_advance")((1,), (1,), args)

    def start(self, marks: bool = False) -> None:
        """Step 0: the counter, the first key, the particles of N(x0, sd^2 I)
        and x^_0, their mean (the prior mean of step 1)."""
        import cupy

        n = self.n
        self.counter.fill(0)
        self.top.fill(0)
        self.key[:] = self.keys[:2]
        args = (self.x[0], np.uint32(n), self.noise_key)
        args += self.twin.init_args()
        _launch("models.cu", "uuv_init", n, args)
        cupy.mean(self.x[0], axis=1, dtype=np.float64, out=self.previous[:2])

    def host_inputs(self, y, seed: int) -> np.ndarray:
        """A run's inputs (``common.graph_inputs``), y as T rows of 2."""
        return graph_inputs(np.asarray(y).reshape(self.steps, 2), seed, self.steps)

    def run(self, y, seed: int, snapshot_step: int | None) -> FilterResult:
        """One run; ``snapshot_step``: the step whose particles it keeps (a
        new graph, with the copy, where it changes)."""
        if snapshot_step != self.snapshot_step:
            self.snapshot_step, self.runner.graph = snapshot_step, None
        return self.runner.run(y, seed)

    def collect(self, seed: int, wall: float) -> FilterResult:
        """The run's record: estimates, log-likelihood, the device time of the
        run and of each chunk, the snapshot."""
        runner = self.runner
        device, chunks = runner.device_seconds(), runner.chunk_seconds()
        record = self.estimates.get()
        estimates = np.ascontiguousarray(record[:, :2])
        check_finite(estimates, "the GPU D3 filter's estimate is not finite from step {step} on")
        top = np.ascontiguousarray(record[:, -1]).view(np.uint32)[0::2]  # the low words
        constant = self.twin.log_likelihood_constant()
        log_z = log_z_steps(top, record[:, 2 + workspace.STAT_SUM], self.n, constant)
        snapshot_step = self.snapshot_step
        snapshot = None if snapshot_step is None else self.snapshot.get().T.astype(np.float64)
        # no marks between the stages: the run is timed whole (NaN stage times)
        return gpu_result(
            self.m.name, self.n, seed, estimates, wall_seconds=wall, total_seconds=device,
            snapshot=snapshot, device_seconds=device, chunk_seconds=chunks,
            log_likelihood_steps=log_z,
        )  # fmt: skip


def run_d3_gpu(
    model,
    y,
    n: int,
    seed: int,
    *,
    m,
    noise,
    cdf,
    ess_threshold,
    snapshot_step,
    threads=None,
    threads_scope="d3",
) -> FilterResult:
    """run_filter's D3 filter (``D3_OPTIONS``) on the GPU (``backend="cuda"``)."""
    import cupy

    if cuda_twin(model, "d3") is None:
        raise NotImplementedError(f"{type(model).__name__} has no GPU D3 filter; use backend='cpu'")
    if ess_threshold is not None:
        raise NotImplementedError("the GPU filter resamples every step (ess_threshold=None)")
    if m.output != "particles" and m.gpu is None:
        raise NotImplementedError(f"{m.name!r} has no CUDA kernel; use backend='cpu'")
    if threads_scope not in THREADS_SCOPES:
        raise ValueError(f"threads_scope must be one of {THREADS_SCOPES}, got {threads_scope!r}")
    if threads_scope == "step":
        if threads is None or not STEP_MIN_THREADS <= int(threads) <= 1024:
            raise ValueError(
                f"threads_scope='step' needs threads in {STEP_MIN_THREADS} ... 1024 (every "
                f"kernel of the step runs at it), got {threads!r}"
            )
        if m.output != "particles":
            raise ValueError("threads_scope='step' is the paper's D3 filter: method 'd3' only")
    y = np.asarray(y, dtype=np.float64)
    steps = y.shape[0]
    if y.ndim != 2 or y.shape[1] != 2 or not 1 <= steps <= model.steps:
        raise ValueError(
            f"y must have shape (T, 2) with 1 <= T <= {model.steps} (the model's steps), "
            f"got {y.shape}"
        )
    key = (cupy.cuda.Device().id, model, m.name, n, steps, noise, cdf, threads, threads_scope)
    make = lambda: D3FilterGraph(model, m, n, steps, noise, cdf, threads, threads_scope)  # noqa: E731
    graph = kept("d3", key, make, GRAPHS_KEPT)
    return graph.run(y, seed, snapshot_step)
