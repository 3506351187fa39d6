"""The SIR filter of thesis Algorithm 2.4 on the GPU, as one CUDA graph.

The same four stages as the CPU filter (``filters/sir.py``), with the same
inputs to stage 4 (w~ for the comparison-based methods, w for the cumulative
ones, §6.9) and the same B rules (epsilon = 1/10 for the Metropolis family,
the SSD match for the Uphill family), computed on the device:

1. ``models.cu``: x_{k+1}^i from x_k^i, log p(z | x) and their maximum, in one
   kernel (the arithmetic in ``models.cuh``, checked on the host:
   tests/gpu/test_models_cuda.py); then ``filter.cu``'s w~ = exp(log w - max);
2. s = SUM(w~) in float64 (``filter.cu``);
3. w = w~ / s and x^_k = SUM(w~ x) / s, kept on the device (``filter.cu``);
4. the registry method's kernels (``pfresample.cuda``: B when the device
   chooses it, then the method), and the gather x = x[ancestors] into the
   other of two state buffers. A comparison-based method is handed the
   statistics of w~ that the filter already has -- the sum of stage 2 and
   the maximum, which is 1 -- where the resampler called on its own
   computes them (a reduction kernel fewer a step); the cumulative ones
   get w and compute what they read, as on their own.

Without stage times stages 1-3 are one kernel (``filter.cu``'s
``exp_total_estimate``: the same w~, sum and estimate as the three, bit for
bit) where no method needs w written: the comparison-based ones, and
Systematic, Stratified and Multinomial, which read w~ and the sum and divide
as they load (``workspace.Call.divisor``); Residual and the log-domain scan
get w from ``normalise_estimate`` as with stage times.

Why a graph: at N = 2^14 a step is a few microseconds of work but ten or so
kernel launches, and launching them one by one from Python costs about
0.2 ms a step. So the T steps are captured once per (model, method, N, T, B
rule) into a CUDA graph (:class:`FilterGraph`), and a run replays it. A
run's own numbers -- the noise key, the resamplers' keys of every step and
the measurements -- are read by the kernels from one device buffer, which a
run rewrites with one host-to-device copy before the replay. Nothing in the
time loop waits for the host; the estimates and the Bs are copied back once,
after the last step.

Each stage is timed with CUDA events recorded between the stages as timing
nodes of the graph (``cuEventRecordWithFlags`` with
``CU_EVENT_RECORD_EXTERNAL``: a plain event record inside a capture only
orders work and keeps no time). The marks hang off the kernels' chain on a
side branch, so that timing a run does not lengthen it; ``wall_seconds`` is
the host's clock around the upload, the replay and the synchronisation.

States are float32 on the device (the thesis is single precision, §2.4),
float64 on the CPU; the process noise comes from Philox (``models.cuh``), not
from NumPy's generator. So the two backends give different runs of the same
filter, and their RMSEs agree within the spread of runs
(tests/gpu/test_gpu_filter.py), not bit for bit.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..constants import EPSILON_FILTER
from ..cuda import cumulative, geometry, run, stats, workspace
from ..cuda import twin as twin_launch
from ..cuda.kernels import NULL
from ..validation import check_params, kernel_arguments
from . import sir_fused
from .common import GPU_STATE_DTYPE, NO_B, STAGES, FilterResult, gpu_result, graph_inputs
from .graph import GraphRunner, StepProgram, check_finite, cuda_twin, kept, log_z_steps

WEIGHT_DTYPE = np.float32  # the resamplers' default (api.resample)
THREADS = twin_launch.THREADS  # every kernel of models.cu and filter.cu (block reductions)
GRAPHS_KEPT = 4  # graphs kept per process (one holds a few N-sized buffers)


_launch = twin_launch.launch  # module's kernel with THREADS a block (cuda.twin.launch)


def device_twin(model):
    """The SIR graph's device code of ``model`` (its ``cuda_twins["sir"]``,
    ``cuda.twin``), or None."""
    return cuda_twin(model, "sir")


# A filter step's resampling by the registry method on the filter's w~: a
# comparison-based method reads the filter's own statistics record of w~ (its
# sum from stage 2, its maximum 1), so only B is computed; the others compute
# what they read, as on their own (cuda.stats).
enqueue_resampler = run.enqueue_with_known_statistics


class FilterGraph(StepProgram):
    """T steps of the filter for one (model, method, N, B rule) over buffers
    it owns, the step program of a :class:`graph.GraphRunner`, which
    captures them as a CUDA graph on the first :meth:`run` and replays it
    for one seed and one set of measurements."""

    eager_steps = 1  # steps of the eager run before the capture: one of each kernel

    def __init__(
        self, model, m, n: int, steps: int, kw: dict, params: dict, timed: bool = True,
        twin=None, normalised: bool = True, ws=None,
    ):  # fmt: skip
        """``twin``: the model's device code (``device_twin(model)`` when
        None). ``normalised`` False: every method resamples w~ itself (the
        Güldaş filters: no method needs w = w~ / sum, the cumulative family
        divides by its own C_N), so no w buffer and no normalising pass.
        ``ws``: the resampler's workspace (the process's shared one of N when
        None; a run of a batch has its own, ``sir_batch``)."""
        import cupy

        self.ws = workspace.workspace(n) if ws is None else ws
        self.twin = twin = device_twin(model) if twin is None else twin
        self.m, self.n, self.steps, self.kw, self.params = m, n, steps, kw, params
        self.device_B = stats.device_chooses_B(m, kw)
        rows, parts = twin.rows, geometry.sum_parts(n)
        self.parts = parts
        self.x = cupy.empty((2, rows, n), dtype=GPU_STATE_DTYPE)  # x_k, and the gather's target
        self.log_w = cupy.empty(n, dtype=WEIGHT_DTYPE)
        self.w_tilde = cupy.empty(n, dtype=WEIGHT_DTYPE)
        reads_w = normalised and not m.comparison_based
        # Without stage marks stages 1-3 are one pass (exp_total_estimate)
        # where nothing needs w written: a comparison-based method, or a
        # linear-scan cumulative one, which divides w~ by s as it loads it.
        self.divides = not timed and reads_w and cumulative.divides_as_it_loads(m, kw)
        self.merged = not timed and (not reads_w or self.divides)
        self.w = cupy.empty(n, dtype=WEIGHT_DTYPE) if reads_w and not self.divides else None
        self.top = cupy.zeros(steps, dtype=np.uint32)  # max log w~ of each step (to_ordered)
        # The statistics record (cuda.workspace.STAT_*) of each step's w~, which stage 4
        # of a comparison-based method reads instead of computing it: the sum
        # is stage 2's; the maximum is 1, since w~ = exp(log w - max log w)
        # is exp(0) = 1 exactly at the maximum; no entry is bad (a NaN or
        # infinite estimate raises after the run).
        self.stats = stats.known_statistics(n, steps)
        self.estimates = cupy.empty((steps, rows), dtype=np.float64)
        self.sums = cupy.empty((rows + 1) * parts, dtype=np.float64)  # partials of stages 2, 3
        self.tickets = cupy.zeros(2, dtype=np.uint32)
        self.fixed_B = NO_B if kw.get("B") is None else kw["B"]  # the B of every step, if given
        self.used_B = cupy.full(steps, self.fixed_B, dtype=np.int32)
        # Timing marks: with stage times, one between every two stages
        # (stage s of step k runs from mark 4k + s to mark 4k + s + 1);
        # without, one before the first step and one after the last.
        self.timed = timed
        marks = steps * len(STAGES) + 1 if timed else 2
        # Without stage times, a model that can predicts through the last
        # step's ancestors (one kernel fewer a step: at N = 2^22 the gather
        # moved 32 MB); with them the gather stays in stage 4, as the thesis
        # counts it.
        self.through = not timed and hasattr(twin, "predict_through")
        # A run's inputs, one buffer: noise key (2), resampling keys (2 per
        # step), then the measurements as float32.
        words = 2 + 2 * steps + steps * twin.measurement_size
        self.runner = GraphRunner(self, words, marks)
        self.inputs = self.runner.inputs
        self.noise_key = self.inputs[:2]
        self.z = self.inputs[2 + 2 * steps :].view(np.float32)
        self.ancestors = cupy.empty((1, n), dtype=np.int32)
        w_in = self.w_tilde if self.w is None else self.w
        sums_of = [stats.sum_slot(self.stats[k]) if self.divides else None for k in range(steps)]
        # One replica whose key (n_keys = 1) the kernels read from the step's
        # two words of `inputs` (lanes.cuh, make_lane): the same draws as the
        # key passed by value, but rewritten by each run without a new graph.
        self.calls = [
            workspace.Call(
                w_in,
                1,
                self.inputs[2 + 2 * k : 4 + 2 * k],
                np.uint32(0),
                np.uint32(0),
                self._step_workspace(k),
                self.ancestors,
                sums_of[k],
            )
            for k in range(steps)
        ]

    def _step_workspace(self, k: int):
        """The workspace of step k's resampling: the shared one, except that
        a comparison-based method reads the step's statistics record, and a
        B chosen on the device goes straight into ``used_B[k]`` (no copy
        node a step)."""
        ws = self.ws
        record = self.stats[k] if self.m.comparison_based else ws.stats
        b = self.used_B[k : k + 1] if self.device_B else None
        return stats.with_known_statistics(ws, record, b=b)

    def _mark(self, k: int, s: int, marks: bool) -> None:
        """The timing mark at the boundary before stage s of step k (none
        without ``marks``; only the run's first and last without stage times)."""
        if not marks:
            return
        stages = len(STAGES)
        if self.timed:
            self.runner.mark(stages * k + s)
        elif (k, s) in ((0, 0), (self.steps - 1, stages)):
            self.runner.mark(0 if s == 0 else 1)

    def start(self, marks: bool) -> None:
        """The step maxima zeroed and the particles' start."""
        import cupy

        stream = self.runner.stream
        cupy.cuda.runtime.memsetAsync(self.top.data.ptr, 0, self.top.nbytes, stream.ptr)
        self.twin.init(self.x[0], self.noise_key)

    def step(self, k: int, marks: bool) -> None:
        """Step k's four stages, with the timing marks or without any."""
        twin, n, through = self.twin, self.n, self.through
        mz = twin.measurement_size
        x, x_next = self.x[k % 2], self.x[(k + 1) % 2]
        top, total = (
            self.top[k : k + 1],
            stats.sum_slot(self.stats[k]),
        )
        self._mark(k, 0, marks)
        z = self.z[mz * k : mz * (k + 1)]
        if through:  # x_k from x_{k-1}[ancestors], in place at k = 0
            src, anc = (x, None) if k == 0 else (x_next, self.ancestors)
            twin.predict_through(src, anc, x, self.log_w, k, z, self.noise_key, top)
        else:
            twin.predict(x, self.log_w, k, z, self.noise_key, top)
        sums = (np.int64(n), self.sums, self.tickets[0:1], total)
        if self.merged:  # stages 1-3 in one pass; no mark falls between them
            args = (self.log_w, top, self.w_tilde, x, *sums, self.estimates[k])
            _launch("filter.cu", f"exp_total_estimate<{twin.rows}>", n, args, grid=self.parts)
            self._mark(k, 3, marks)
            self._resample(k)
            if not through:
                self._gather(x, x_next)
            return
        if self.timed:  # a stage mark between the exponentials and their sum
            self._exp_shifted(top)
            self._mark(k, 1, marks)
            _launch("filter.cu", "weight_total", n, (self.w_tilde, *sums), grid=self.parts)
        else:  # the same w~ and sum in one kernel
            args = (self.log_w, top, self.w_tilde, *sums)
            _launch("filter.cu", "exp_total", n, args, grid=self.parts)
        self._mark(k, 2, marks)
        w = NULL if self.w is None else self.w
        args = (self.w_tilde, x, np.int64(n), total, w, self.sums, self.tickets[1:2])
        name = f"normalise_estimate<{twin.rows}>"
        _launch("filter.cu", name, n, (*args, self.estimates[k]), grid=self.parts)
        self._mark(k, 3, marks)
        self._resample(k)
        if not through:
            self._gather(x, x_next)

    def finish(self, steps: int, marks: bool) -> None:
        """The mark after the last step."""
        self._mark(self.steps - 1, len(STAGES), marks)

    def _exp_shifted(self, top) -> None:
        """w~ = exp(log w - ``top``), the step's maximum log-weight (4 weights a thread)."""
        args = (self.log_w, top, np.uint32(self.n), self.w_tilde)
        _launch("filter.cu", "exp_shifted", geometry.blocks(self.n, 4), args)

    def _gather(self, x, x_next, go=NULL) -> None:
        """x_next = x[:, ancestors], every state row (4 particles a thread);
        x_next = x where the gate ``go`` (a device flag) is 0."""
        args = (x, self.ancestors, np.uint32(self.n), np.int32(self.twin.rows), x_next, go)
        _launch("filter.cu", "gather_rows", geometry.blocks(self.n, 4), args)

    def _resample(self, k: int, **extra):
        """Step k's resampling into ``self.ancestors`` (:func:`enqueue_resampler`)."""
        return enqueue_resampler(self.calls[k], self.m, self.kw, self.params, **extra)

    def host_inputs(self, y, seed: int) -> np.ndarray:
        """A run's inputs (``common.graph_inputs``)."""
        return graph_inputs(y, seed, self.steps)

    def stage_seconds(self) -> tuple[np.ndarray, float]:
        """(T, 4) stage times of the last replay (NaN without stage times),
        and the device time of all T steps."""
        runner = self.runner
        if not self.timed:
            return np.full((self.steps, len(STAGES)), np.nan), runner.seconds(0, 1)
        ms = [runner.seconds(i, i + 1) for i in range(len(runner.marks) - 1)]
        seconds = np.array(ms).reshape(self.steps, len(STAGES))
        return seconds, float(seconds.sum())

    def collect(self, seed: int, wall: float) -> FilterResult:
        """The run's result, its stage times from the marks."""
        stage_seconds, total_seconds = self.stage_seconds()
        return self.result(seed, wall, total_seconds, stage_seconds)

    def read_back(self) -> list:
        """What a run's graph copies back after its last step (the runner's
        page-locked buffers): the estimates, each step's maximum log-weight,
        the statistics records (their sums of w~), the Bs chosen on the device."""
        arrays = [self.estimates, self.top, self.stats]
        return arrays + [self.used_B] if self.device_B else arrays

    def result(self, seed: int, wall: float, total_seconds: float, stage_seconds=None):
        """The :class:`FilterResult` of the last replay, from what its buffers
        hold: the estimates, the B of every step, the log-likelihood (the
        graph's copies where it made them, else read from the device)."""
        copies = self.runner.copies()
        if copies is None:
            stream = self.runner.stream
            copies = [a.get(stream=stream) for a in self.read_back()]
        estimates, top, records = copies[:3]
        if self.twin.rows == 1:
            estimates = estimates[:, 0]
        check_finite(
            estimates,
            "the GPU filter's estimate is not finite from step {step} on (a log-likelihood was "
            "NaN or +inf, every weight underflowed, or a state overflowed)",
        )
        if self.device_B:
            used_B = copies[3].astype(np.int64)
        else:  # known on the host: no second copy back
            used_B = np.full(self.steps, self.fixed_B, np.int64)
        return gpu_result(
            self.m.name, self.n, seed, estimates, wall_seconds=wall,
            total_seconds=total_seconds, stage_seconds=stage_seconds, B=used_B,
            log_likelihood_steps=self.log_likelihood_steps(top, records[:, workspace.STAT_SUM]),
        )  # fmt: skip

    def log_likelihood_steps(self, top=None, sums=None) -> np.ndarray:
        """log Z_k of the last replay (``filters.engine``'s estimator), from
        what the steps already keep: each step's maximum log-weight m_k
        (``top``, ordered as ``reduce.cuh``'s to_ordered) and the float64 sum
        of w~ = exp(log w - m_k) (the statistics record's sum). The filter
        resamples every step, so log w is the step's log-likelihood and
        log Z_k = m_k + log SUM w~ - log N, plus the constant the kernels drop
        from the model's log-likelihood (the CPU filter's estimate is of the
        density ``model.log_likelihood`` returns, constant included). ``top``
        and ``sums``: the run's copies of them (read from the device when None)."""
        if top is None:
            top = self.top.get(stream=self.runner.stream)
            sums = self.stats[:, workspace.STAT_SUM].get(stream=self.runner.stream)
        return log_z_steps(top, sums, self.n, self.twin.log_likelihood_constant())


def graph_key(model, m, n: int, steps: int, kw: dict, params: dict, timed: bool) -> tuple:
    """What a graph of the SIR filter depends on: the device, the model's
    parameters (baked into the kernels' arguments), the method, N, T, the B
    rule and whether the stages are timed."""
    import cupy

    def plain(v):
        if isinstance(v, np.ndarray):
            return hashlib.sha1(np.ascontiguousarray(v).tobytes()).hexdigest()
        return v

    rule = tuple(sorted((k, plain(v)) for k, v in {**kw, **params}.items()))
    return (cupy.cuda.Device().id, model, m.name, n, steps, rule, timed)


def filter_graph(
    model, m, n: int, steps: int, kw: dict, params: dict, timed: bool = True
) -> FilterGraph:
    """The :class:`FilterGraph` of these arguments, built on first use and
    kept (the last GRAPHS_KEPT) under :func:`graph_key`."""
    key = graph_key(model, m, n, steps, kw, params, timed)
    make = lambda: FilterGraph(model, m, n, steps, kw, params, timed)  # noqa: E731
    return kept("sir", key, make, GRAPHS_KEPT)


def sir_arguments(m, n: int, *, B=None, epsilon=EPSILON_FILTER, segment_bytes=None,
                  ssd_table=None) -> tuple[dict, dict]:  # fmt: skip
    """The checked kernel arguments and parameters of the SIR filter's
    resampling by ``m`` with ``n`` particles (run_filter's keywords)."""
    params = {}
    if m.B_rule == "metropolis":
        params["epsilon"] = epsilon
    elif m.B_rule == "uphill" and ssd_table is not None:
        params["ssd_table"] = ssd_table
    params = check_params(m, params)
    kw = kernel_arguments(m, n, np.dtype(WEIGHT_DTYPE).itemsize, B, segment_bytes, params)
    return kw, params


def run_sir_gpu(
    model,
    y,
    n: int,
    m,
    seed: int,
    *,
    B=None,
    epsilon=EPSILON_FILTER,
    segment_bytes=None,
    ssd_table=None,
    stage_times=True,
    fused=None,
) -> FilterResult:
    """run_filter's SIR filter (``SIR_OPTIONS``) on the GPU (``backend="cuda"``);
    ``m`` is the registry entry, checked by the caller; the keywords'
    defaults are run_filter's. ``stage_times``
    False: no timing mark between the stages (NaN stage times; the total is
    the device time of the whole run), and the fused run of ``sir_fused``
    where it applies -- the same numbers in one kernel, with its phase
    times. ``fused`` True asks for the fused run (an error where it does not
    apply), False for the graph."""
    y = np.asarray(y, dtype=np.float64)
    keywords = dict(B=B, epsilon=epsilon, segment_bytes=segment_bytes, ssd_table=ssd_table)
    run = sir_runner(model, n, m, y.shape[0], stage_times=stage_times, fused=fused, **keywords)
    return run(y, seed)


def sir_runner(
    model, n: int, m, steps: int, *, B=None, epsilon=EPSILON_FILTER, segment_bytes=None,
    ssd_table=None, stage_times=True, fused=None,
):  # fmt: skip
    """:func:`run_sir_gpu`'s filter for T = ``steps``, made (or found in the
    graph cache) once: ``run(y, seed)``, the bound ``run`` of the fused run
    or of the SIR graph, which a repeated call replays with nothing else
    done on the host (the engine keeps it, ``engine.Plan``)."""
    if device_twin(model) is None:
        raise NotImplementedError(f"{type(model).__name__} has no GPU code; use backend='cpu'")
    covered = sir_fused.applies(model, m.name, n)
    if fused is None:  # the graph where it is the faster
        fused = not stage_times and covered and n <= geometry.FUSED_DEFAULT_MAX_N
    if fused:
        if not covered:
            raise NotImplementedError(
                f"the fused GPU filter covers the growth model with systematic resampling and "
                f"N <= {geometry.FUSED_MAX_N}; got {type(model).__name__}, {m.name!r}, N = {n}"
            )
        return sir_fused.fused_run(model, n, steps).run
    kw, params = sir_arguments(
        m, n, B=B, epsilon=epsilon, segment_bytes=segment_bytes, ssd_table=ssd_table
    )
    return filter_graph(model, m, n, steps, kw, params, stage_times).run
