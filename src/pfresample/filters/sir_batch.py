"""Independent runs of the GPU SIR filter (``sir_gpu``) as one CUDA graph.

At N = 2^10 ... 2^16 one run of the SIR graph fills a fraction of the GPU:
each of its ten or so kernels a step is a few blocks, and the step's time is
mostly the latency of one kernel after another. A filter cell runs hundreds of
such runs (Dülger's tables: 16 trajectories x 100 runs), one after another.

A :class:`FilterBatch` holds K runs of one (model, method, N, T, B rule) side
by side: K :class:`sir_gpu.FilterGraph` members, each with its own buffers,
its own resampling workspace and its own inputs (noise key, resampling keys,
measurements), their T steps captured as K independent branches of one graph.
One replay runs K runs; the GPU schedules the branches' kernels concurrently,
so that the K runs cost about what the launches of one cost while the
particles of all K fit the GPU (``cuda.geometry.batch_width``).

Each member enqueues exactly the kernels, with exactly the arguments, that a
run of the filter made alone enqueues (the stage-timed graph, less its timing
marks), on buffers no other member touches, and reads the same Philox
counters, so a batched run equals the run made alone bit for bit
(tests/gpu/test_gpu_sir_batch.py). What a batch cannot give is a run's own
time: its runs share the GPU, so their stage times, device times and wall
times are NaN.

Why branches and not one launch over K x N particles with segmented scans:
the branches reuse every resampling kernel of the registry unchanged (each
member's calls are the ones of a single run), so every method batches, its
bits are the single run's by construction, and no kernel has a second,
segmented form to keep equal to the first.
"""

from __future__ import annotations

import math

import numpy as np

from ..cuda import geometry
from ..cuda.workspace import Workspace
from .graph import kept
from .sir_gpu import FilterGraph, graph_key, sir_arguments

BATCHES_KEPT = 1  # batches kept per process (one holds K runs' buffers)


class FilterBatch:
    """K runs of the SIR filter for one (model, method, N, T, B rule) as one
    CUDA graph of K branches (module docstring): K SIR step programs, each
    with its graph runner's stream and inputs, their steps enqueued by
    their runners on their own streams, forked from and joined back into
    the batch's stream."""

    def __init__(self, model, m, n: int, steps: int, kw: dict, params: dict, width: int):
        import cupy

        if width < 1:
            raise ValueError(f"a batch holds at least one run, got width {width}")
        self.n, self.steps, self.width = n, steps, width
        self.members = [
            FilterGraph(model, m, n, steps, kw, params, timed=True, ws=Workspace(n))
            for _ in range(width)
        ]
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.graph = None

    def _capture(self) -> None:
        """Each member's eager step (compiles or loads the kernels, makes its
        workspace's buffers), then the K members' T steps captured on their
        own streams, forked from and joined back into the batch's stream."""
        import cupy

        self.stream.synchronize()  # the members' streams read the inputs uploaded on it
        for member in self.members:
            with member.stream:
                member.runner.enqueue(member.eager_steps, marks=False)
        for member in self.members:
            member.stream.synchronize()
        fork = cupy.cuda.Event(disable_timing=True)
        joins = [cupy.cuda.Event(disable_timing=True) for _ in self.members]
        with self.stream:
            self.stream.begin_capture()
            try:
                fork.record(self.stream)
                for member, join in zip(self.members, joins, strict=True):
                    member.stream.wait_event(fork)
                    with member.stream:
                        member.runner.enqueue(self.steps, marks=False)
                    join.record(member.stream)
                    self.stream.wait_event(join)
            finally:
                self.graph = self.stream.end_capture()
            self.graph.upload(self.stream)

    def run(self, ys, seeds) -> list:
        """Up to K runs: run i on the measurements ``ys[i]`` (T rows) with the
        seed ``seeds[i]``; a list of ``FilterResult``, one a run, with NaN
        times. Fewer runs than K leave the last members repeating the last
        run, whose results are dropped."""
        count = len(seeds)
        if not 1 <= count <= self.width or len(ys) != count:
            raise ValueError(
                f"a batch of width {self.width} runs 1 ... {self.width} runs with one y each; "
                f"got {count} seeds and {len(ys)} measurement sets"
            )
        for i, member in enumerate(self.members):
            j = min(i, count - 1)
            member.inputs.set(member.host_inputs(ys[j], seeds[j]), stream=self.stream)
        if self.graph is None:
            self._capture()
        self.graph.launch(self.stream)  # after the uploads, on the same stream
        self.stream.synchronize()
        nan = math.nan
        return [
            member.result(int(seed), nan, nan)
            for member, seed in zip(self.members[:count], seeds, strict=True)
        ]


def filter_batch(model, m, n: int, steps: int, kw: dict, params: dict, width: int):
    """The :class:`FilterBatch` of these arguments, built on first use and
    kept (the last BATCHES_KEPT)."""
    key = (*graph_key(model, m, n, steps, kw, params, True), width)
    make = lambda: FilterBatch(model, m, n, steps, kw, params, width)  # noqa: E731
    return kept("batch", key, make, BATCHES_KEPT)


def run_sir_batch(model, ys, n: int, m, seeds, *, width: int | None = None, **keywords) -> list:
    """The SIR filter's runs ``(ys[i], seeds[i])`` on the GPU, K at a time
    (``width``, else ``cuda.geometry.batch_width``); each equal to
    ``run_sir_gpu(model, ys[i], n, m, seeds[i], **keywords)`` with stage
    times, less its times. ``keywords``: run_sir_gpu's ``B``, ``epsilon``,
    ``segment_bytes``, ``ssd_table``."""
    ys = [np.asarray(y, dtype=np.float64) for y in ys]
    seeds = [int(s) for s in seeds]
    if len(ys) != len(seeds):
        raise ValueError(f"{len(seeds)} seeds for {len(ys)} measurement sets")
    if not seeds:
        return []
    steps = ys[0].shape[0]
    if any(y.shape != ys[0].shape for y in ys):
        raise ValueError("every run of a batch has measurements of one shape (T rows)")
    width = geometry.batch_width(n, len(seeds)) if width is None else int(width)
    kw, params = sir_arguments(m, n, **keywords)
    batch = filter_batch(model, m, n, steps, kw, params, width)
    out = []
    for start in range(0, len(seeds), width):
        out += batch.run(ys[start : start + width], seeds[start : start + width])
    return out
