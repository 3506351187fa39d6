"""The one GPU graph runner (:class:`GraphRunner`) and what every GPU filter
shares.

A GPU filter is a step program (:class:`StepProgram`): its buffers, what it
enqueues before step 0, at step k and after the last step, its run's inputs
and what it reads back -- ``sir_gpu.FilterGraph``, the Güldaş programs that
extend it (``guldas_gpu``: bootstrap, adaptive, SMC-EM's E-step),
``d3_gpu.D3FilterGraph`` and ``cellular_gpu.CpfGraph``. The runner drives
it, the same for all of them:

* a non-blocking stream of its own, and one device buffer of the run's
  inputs (``common.graph_inputs``: the noise key, a resampling key a step,
  the measurements), rewritten by one host-to-device copy a run, so that a
  captured graph replays any run (:class:`DeviceStream`);
* eager-then-capture on the first run, before its clock starts: an eager
  pass (the program's ``eager_steps``; it compiles or loads every kernel
  and makes the workspace's buffers, neither of which may happen while
  capturing), then the capture of the T steps as one graph, or of one chunk
  of steps replayed between eager steps (the program's ``chunk``: D3's
  36,000-step runs), the graph uploaded (:meth:`GraphRunner.build`);
* the timing: marks the program records inside the graph on a side branch
  (:meth:`GraphRunner.mark`: the SIR filter's stage times), or events on
  the stream around the replay and each chunk; the host's clock around the
  upload, the replay and the wait (:meth:`GraphRunner.replay`);
* the process's one cache of built filters (:data:`GRAPHS`), the last few
  of each kind kept per key (:func:`kept`), emptied by :func:`clear_graphs`;
  beside them the engine's plans (kind "plan", ``filters.engine``): what a
  ``run_filter`` call resolved to -- the method record, the chosen GPU
  filter bound to its graph -- so that a repeated call replays the graph
  and does nothing else on the host;
* for the program's results: the check of the estimates brought back (a
  non-finite row names the first step it comes from, :func:`check_finite`)
  and the log-likelihood estimate from what a graph keeps of each step --
  its largest log-weight and the float64 sum of w~ (:func:`log_z_steps`).

Two GPU runs are no step program and use the stream alone
(:class:`DeviceStream`): ``sir_fused``'s run is one cooperative kernel for
all T steps (no host loop, no graph: its steps are grid barriers inside the
kernel), and ``capture``'s user model is captured in an arena of its own
sized by an eager pass under another allocator (``capture.CapturedFilter``).
``sir_batch`` captures K SIR programs' steps, each enqueued by its own
runner on its own stream, as K branches of one graph.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict

import numpy as np

from ..cuda import geometry, workspace

CU_EVENT_RECORD_EXTERNAL = 0x1  # cuda.h: an event record node that keeps its time


def _timing_record(event, stream) -> None:
    """Record ``event`` on the capturing ``stream`` as a node that keeps its time."""
    rc = geometry.libcuda().cuEventRecordWithFlags(event.ptr, stream.ptr, CU_EVENT_RECORD_EXTERNAL)
    if rc != 0:
        raise RuntimeError(f"cuEventRecordWithFlags failed (CUresult {rc})")


class StepProgram:
    """What one GPU filter is to the :class:`GraphRunner` that drives it: its
    buffers and kernels, and what it enqueues and reads back. A program
    makes its runner in its constructor (``self.runner = GraphRunner(self,
    words)``) and reads its inputs there (``self.inputs``).

    * ``start(marks)``: what precedes step 0 (the particles' start);
    * ``step(k, marks)``: step k's kernels (``marks``: with the program's
      timing marks, ``runner.mark``; the eager pass runs without);
    * ``finish(steps, marks)``: what follows the last of ``steps`` steps;
    * ``host_inputs(y, seed)``: the run's inputs (``common.graph_inputs``);
    * ``collect(seed, wall)``: the :class:`FilterResult` of the last run,
      from its buffers (``wall``: the host's seconds of the run).

    ``read_back()`` (optional): device arrays (C-contiguous) that a run's
    graph copies into page-locked host buffers after its last step, so that
    ``collect`` reads them without a copy and a wait of its own each
    (:meth:`GraphRunner.copies`).
    ``eager_steps``: the steps of the eager pass before the capture (every
    kernel compiled or loaded, every buffer made, neither of which may happen
    while capturing); ``chunk``: None, the T steps are one graph with
    ``start`` and ``finish`` in it; else the graph holds ``chunk`` steps and
    is replayed T / chunk times after the eager steps, ``start`` running
    eagerly before them and the steps left over after (the kernels then read
    the step from a device counter). ``stream_events``: the runner times
    the run with two events on the stream around the replay (else the
    program's own marks inside the graph time it)."""

    eager_steps = 1
    chunk = None
    stream_events = False

    def start(self, marks: bool) -> None:
        """What precedes step 0, on the current stream."""

    def finish(self, steps: int, marks: bool) -> None:
        """What follows the last of ``steps`` steps, on the current stream."""

    @property
    def stream(self):
        """The runner's stream, on which the program's buffers are read back."""
        return self.runner.stream

    def run(self, y, seed: int):
        """One run (``runner.run``)."""
        return self.runner.run(y, seed)


class DeviceStream:
    """A GPU filter's stream and the device buffer of a run's inputs, and
    the capture of a graph on that stream: what :class:`GraphRunner` is built
    on, and what the two GPU runs that no step program describes use alone
    (``sir_fused``'s one cooperative kernel a run, ``capture``'s user model
    captured in its arena)."""

    graph = None  # the captured graph, once captured

    def open(self, input_words: int) -> None:
        """The filter's stream and its inputs buffer of ``input_words`` uint32
        words (zeros until a run uploads its own)."""
        import cupy

        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.inputs = cupy.zeros(input_words, dtype=np.uint32)
        self.graph = None

    def pinned_copy(self, device, host: np.ndarray, up: bool) -> None:
        """An asynchronous copy on the filter's stream between the device
        array ``device`` and page-locked ``host`` memory (``pinned``) of the
        same bytes: up to the device, or down from it. Captured, it is a node
        of the graph, so a replay moves the run's data itself."""
        import cupy

        runtime = cupy.cuda.runtime
        if up:
            dst, src, kind = device.data.ptr, host.ctypes.data, runtime.memcpyHostToDevice
        else:
            dst, src, kind = host.ctypes.data, device.data.ptr, runtime.memcpyDeviceToHost
        runtime.memcpyAsync(dst, src, host.nbytes, kind, self.stream.ptr)

    def set_inputs(self, host: np.ndarray) -> None:
        """A run's inputs, uploaded on the filter's stream."""
        self.inputs.set(host, stream=self.stream)

    def capture(self, enqueue, *, eager=None, finish=None):
        """On the filter's stream: ``eager()`` and a wait for it (when given),
        then ``enqueue()`` and ``finish()`` captured as a graph, which is
        uploaded and returned."""
        with self.stream:
            if eager is not None:
                eager()
                self.stream.synchronize()
            self.stream.begin_capture()
            try:
                enqueue()
                if finish is not None:
                    finish()
            finally:
                graph = self.stream.end_capture()
            graph.upload(self.stream)
        return graph


class GraphRunner(DeviceStream):
    """The one runner of the GPU filters: it owns a filter's stream, the
    device buffer of a run's inputs, the eager pass and the capture of the
    steps (whole, or in chunks), the timing marks, the replay and its
    clock, for the :class:`StepProgram` it drives (module docstring).

    A run (:meth:`run`): the inputs uploaded; on the first run the eager
    pass and the capture, before the clock starts (so that no run's time
    holds compiling or capturing); then the clock, the upload again, the
    replay (or the chunks' replays between eager steps) and the wait; the
    program's :meth:`StepProgram.collect` reads the results back."""

    def __init__(self, program: StepProgram, input_words: int, marks: int = 0):
        """``input_words``: the uint32 words of a run's inputs; ``marks``: the
        timing events the program records (``mark``) inside the graph."""
        import cupy

        self.program, self.steps = program, program.steps
        self.open(input_words)
        self.marks = [cupy.cuda.Event() for _ in range(marks)]
        self.side = cupy.cuda.Stream(non_blocking=True)  # the marks' branch
        self._fork, self._join = (cupy.cuda.Event(disable_timing=True) for _ in range(2))
        self.start_event, self.end_event = cupy.cuda.Event(), cupy.cuda.Event()
        self.chunk_marks = []  # with chunks: an event before the first and after each
        self._marked = False  # a mark forked the side branch in the enqueue under way
        # A whole-run graph's own transfers (build): the inputs up from a
        # page-locked buffer, the program's read_back arrays down into others.
        self.host_in = None
        self._copies: list = []

    def mark(self, index: int) -> None:
        """Timing mark ``index`` recorded once the work enqueued so far is
        done, as a node on a side branch of the graph (``self.side``): the
        kernels' chain does not wait for the marks. (In the chain itself each
        mark would be one more dependent node; docs/performance.md has its
        cost.)"""
        self._fork.record(self.stream)
        self.side.wait_event(self._fork)
        _timing_record(self.marks[index], self.side)
        self._marked = True

    def _rejoin(self) -> None:
        """The marks' branch rejoins the stream before the graph ends."""
        if self._marked:
            self._join.record(self.side)
            self.stream.wait_event(self._join)
            self._marked = False

    def enqueue(self, steps: int, marks: bool, first: int = 0) -> None:
        """Steps ``first`` ... ``first + steps - 1`` on the current stream;
        with ``first`` 0 (a whole run), the program's start before them and
        its finish after."""
        program = self.program
        if first == 0:
            program.start(marks)
        for k in range(first, first + steps):
            program.step(k, marks)
        if first == 0:
            program.finish(steps, marks)

    def _chunked(self) -> bool:
        """Whether this run replays chunks: the program's chunk, and enough steps."""
        chunk = self.program.chunk
        return chunk is not None and self.steps >= self.program.eager_steps + chunk

    def build(self) -> None:
        """The eager pass, then the graph captured (uploaded), the inputs
        already on the device: the whole run with the marks, or one chunk of
        steps from the first step after the eager ones (an even step: the
        state buffers alternate)."""
        eager = self.program.eager_steps
        if self._chunked():
            with self.stream:
                self.enqueue(eager, marks=False)
            self.graph = self.capture(lambda: self.enqueue(self.program.chunk, False, first=eager))
            self.stream.synchronize()
            return
        if not self.program.stream_events:  # else the events around the replay time the upload
            self._host_in_memory, self.host_in = pinned(self.inputs.size, np.uint32)
        read = getattr(self.program, "read_back", tuple)()
        self._copies = [(a, *pinned(a.size, a.dtype)) for a in read]

        def whole_run():
            if self.host_in is not None:
                self._upload()
            self.enqueue(self.steps, marks=True)

        def finish():
            self._rejoin()
            self._download()

        self.graph = self.capture(
            whole_run, eager=lambda: self.enqueue(eager, marks=False), finish=finish
        )

    def _upload(self) -> None:
        """The inputs from their page-locked buffer (a node of the graph)."""
        self.pinned_copy(self.inputs, self.host_in, up=True)

    def _download(self) -> None:
        """The program's read_back arrays into their page-locked buffers."""
        for device, _, host in self._copies:
            self.pinned_copy(device, host, up=False)

    def copies(self) -> list | None:
        """The program's read_back arrays as the last run's graph left them
        (host copies, shaped as on the device), or None where no whole-run
        graph copied them (chunks, a batch's branch): then read the device."""
        if self.graph is None or self._chunked() or not self._copies:
            return None
        return [host.reshape(device.shape).copy() for device, _, host in self._copies]

    def replay(self, y, seed: int) -> float:
        """Upload a run's inputs (the graph built on the first run), replay
        the graph and wait for it: the host's seconds for the upload, the
        replay and the wait."""
        host = self.program.host_inputs(y, seed)
        if self.graph is None and (self.program.chunk is None or self._chunked()):
            self.set_inputs(host)
            self.build()
        start = time.perf_counter()
        if self.host_in is not None and not self._chunked():
            self.host_in[:] = host  # the graph uploads it
        else:
            self.set_inputs(host)
        if self._chunked():
            self._replay_chunks()
        elif self.graph is None:  # fewer steps than a chunk: every step eager
            with self.stream:
                self.program.start(False)
                self.start_event.record(self.stream)
                for k in range(self.steps):
                    self.program.step(k, False)
                self.end_event.record(self.stream)
        else:
            if self.program.stream_events:
                self.start_event.record(self.stream)
            self.graph.launch(self.stream)
            if self.program.stream_events:
                self.end_event.record(self.stream)
        self.stream.synchronize()
        return time.perf_counter() - start

    def _replay_chunks(self) -> None:
        """The program's start and its eager steps, the chunk's graph replayed
        while a whole chunk is left (an event after each: each chunk's time
        apart), then the steps left over, eagerly; start and end events
        around all but the start."""
        import cupy

        program, eager, chunk = self.program, self.program.eager_steps, self.program.chunk
        with self.stream:
            program.start(False)
            self.start_event.record(self.stream)
            for k in range(eager):
                program.step(k, False)
            done = eager
            self.chunk_marks = [cupy.cuda.Event()]
            self.chunk_marks[0].record(self.stream)
            while done + chunk <= self.steps:
                self.graph.launch(self.stream)
                self.chunk_marks.append(cupy.cuda.Event())
                self.chunk_marks[-1].record(self.stream)
                done += chunk
            for k in range(done, self.steps):
                program.step(k, False)
            self.end_event.record(self.stream)

    def run(self, y, seed: int):
        """One run: the measurements ``y`` (T rows) and the run's ``seed``
        (``derive_seeds``: the noise key and the resampling seeds)."""
        return self.program.collect(seed, self.replay(y, seed))

    def seconds(self, a: int = 0, b: int = 1) -> float:
        """The device seconds between the marks ``a`` and ``b`` of the last run."""
        import cupy

        return 1e-3 * cupy.cuda.get_elapsed_time(self.marks[a], self.marks[b])

    def device_seconds(self) -> float:
        """The device seconds of the last run between the stream's two events."""
        import cupy

        return 1e-3 * cupy.cuda.get_elapsed_time(self.start_event, self.end_event)

    def chunk_seconds(self) -> tuple:
        """Each replayed chunk's device seconds in the last run (none unchunked)."""
        import cupy

        if not self._chunked():
            return ()
        pairs = zip(self.chunk_marks, self.chunk_marks[1:], strict=False)
        return tuple(1e-3 * cupy.cuda.get_elapsed_time(a, b) for a, b in pairs)


def pinned(count: int, dtype):
    """``count`` items of page-locked host memory: (the allocation, which
    must outlive the view, and the NumPy view)."""
    import cupy

    dtype = np.dtype(dtype)
    memory = cupy.cuda.alloc_pinned_memory(max(1, count) * dtype.itemsize)
    return memory, np.frombuffer(memory, dtype=dtype, count=count)


class GraphCache:
    """The process's built GPU filters, one cache for all of them: each
    filter's kind ("sir", "fused", "batch", "cpf", "d3", "guldas") keeps its
    last few under the keys its module builds (device, model, method, N, T,
    options). :func:`clear_graphs` is the one way to empty it."""

    def __init__(self) -> None:
        self._kinds: dict[str, OrderedDict] = {}

    def get(self, kind: str, key, make, count: int):
        """The filter of ``key`` among ``kind``'s, made by ``make()`` on first
        use; the last ``count`` of the kind kept (``cuda.workspace.cached``)."""
        return workspace.cached(self._kinds.setdefault(kind, OrderedDict()), key, make, count)

    def find(self, kind: str, key):
        """The entry of ``key`` among ``kind``'s, or None (nothing made)."""
        store = self._kinds.get(kind)
        if store is None or key not in store:
            return None
        store.move_to_end(key)
        return store[key]

    def entries(self, kind: str) -> list:
        """The filters of ``kind`` kept now, the least recently used first."""
        return list(self._kinds.get(kind, {}).values())

    def clear(self, kind: str | None = None) -> None:
        """Forget every filter kept (or ``kind``'s): the next run builds and
        captures its graph afresh. The engine's plans go with any kind, since
        a plan holds the filter it resolved to."""
        for name, cache in self._kinds.items():
            if kind is None or name in (kind, PLAN):
                cache.clear()


PLAN = "plan"  # the engine's kind (filters.engine.run_filter's resolved calls)
GRAPHS = GraphCache()


def kept(kind: str, key, make, count: int):
    """The GPU filter of ``key`` among ``kind``'s in the process's one cache
    (:data:`GRAPHS`), made by ``make()`` on first use; the last ``count`` kept."""
    return GRAPHS.get(kind, key, make, count)


def clear_graphs(kind: str | None = None) -> None:
    """Empty the process's cache of built GPU filters (or ``kind``'s:
    "sir", "fused", "batch", "cpf", "d3", "guldas", "capture"; the engine's
    plans go with any of them): the next run of each
    builds and captures its graph afresh (a bench that times the build, or
    frees the device memory the graphs hold)."""
    GRAPHS.clear(kind)


def cuda_twin(model, graph: str, **options):
    """``model``'s device code for the GPU graph ``graph`` (the protocol of
    ``cuda.twin``: the model's own ``cuda_twin(graph, **options)``), or None
    where the model has none -- a user's model, or a graph it has no twin for.
    The GPU filters choose by what the model answers here, never by its class."""
    ask = getattr(model, "cuda_twin", None)
    return ask(graph, **options) if callable(ask) else None


def check_finite(values, message: str) -> None:
    """Raise ``FloatingPointError(message)`` when a row of ``values`` (one a
    step) is not finite, ``{step}`` in the message the first such step (1 ...)."""
    values = np.asarray(values)
    if np.isfinite(values).all():  # the common case in two calls: a run's host time counts
        return
    rows = values.reshape(len(values), -1)
    bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
    if bad.size:
        raise FloatingPointError(message.format(step=int(bad[0]) + 1))


def from_ordered(keys: np.ndarray) -> np.ndarray:
    """float32 values of ``reduce.cuh``'s to_ordered keys (its from_ordered on
    the host): the sign bit set marks a non-negative float."""
    keys = np.asarray(keys, dtype=np.uint32)
    # sign bit set: clear it (xor 0x80000000); else invert (xor 0xFFFFFFFF).
    # (key >> 31) - 1 is 0 or 0xFFFFFFFF (uint32 wraps): one mask for both.
    mask = (keys >> np.uint32(31)) - np.uint32(1) | np.uint32(0x80000000)
    return (keys ^ mask).view(np.float32)


def log_z_steps(top_keys, sums, n: int, constant: float = 0.0, carried=None) -> np.ndarray:
    """log Z_k of every step (``filters.engine``'s estimator) from what a GPU
    graph keeps of it: the largest log-weight m_k (``top_keys``, to_ordered
    keys) and the float64 sum of w~ = exp(log w - m_k) (``sums``), so that
    log SUM exp(log w) = m_k + log SUM w~ with no weight underflowing.

    ``carried`` None: the filter resampled before every step (even weights
    carried), so the carried weights sum to N; else the float64 sum of the
    linear weights each step carries on (the adaptive filter's output
    weights), the carried sum of step 1 being N (log w = 0). ``constant``:
    what the kernels drop from the model's log g (the CPU estimate is of the
    density ``model.log_likelihood`` returns, constant included)."""
    top = from_ordered(top_keys).astype(np.float64)
    log_z = top + _log0(np.asarray(sums, dtype=np.float64))
    if carried is None:
        log_z -= math.log(n)
        log_z += constant
        return log_z
    carried = np.asarray(carried, dtype=np.float64)
    before = np.concatenate(([math.log(n)], _log0(carried[:-1])))
    return log_z - before + constant


def _log0(values: np.ndarray) -> np.ndarray:
    """log of the values, -inf at 0 without the warning (no errstate
    context, whose set-up costs more than the log of T values); a NaN stays
    NaN, so a bad sum still shows in the log-likelihood."""
    if values.all():  # the common case, in one call
        return np.log(values)
    return np.log(values, out=np.full(values.shape, -np.inf), where=values != 0)
