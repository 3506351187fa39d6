"""The one GPU graph runner every GPU filter is built on (``sir_gpu`` and the
Güldaş graphs that extend it, ``cellular_gpu``, ``d3_gpu``, ``sir_fused``):
what each of them needs and used to do for itself.

* a non-blocking stream of its own, and one device buffer of the run's
  inputs (``common.graph_inputs``: the noise key, a resampling key a step,
  the measurements), rewritten by one host-to-device copy a run, so that a
  captured graph replays any run (:meth:`GraphRunner.open`,
  :meth:`GraphRunner.set_inputs`);
* eager-then-capture: an eager pass first (it compiles or loads every kernel
  and makes the workspace's buffers, neither of which may happen while
  capturing), then the capture, the graph uploaded (:meth:`GraphRunner.capture`);
* the process's cache of built graphs, the last few kept per key
  (:func:`kept`);
* the check of the estimates brought back: a non-finite row names the first
  step it comes from (:func:`check_finite`).
"""

from __future__ import annotations

import numpy as np

from ..cuda import workspace


class GraphRunner:
    """The stream, the inputs and the capture of one GPU filter's graph
    (module docstring); a filter class calls :meth:`open` in its constructor."""

    graph = None  # the captured graph, once captured

    def open(self, input_words: int) -> None:
        """The filter's stream and its inputs buffer of ``input_words`` uint32
        words (zeros until a run uploads its own)."""
        import cupy

        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.inputs = cupy.zeros(input_words, dtype=np.uint32)
        self.graph = None

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


def kept(cache, key, make, count: int):
    """The graph of ``key`` in ``cache``, made by ``make()`` on first use;
    the last ``count`` kept (``cuda.workspace.cached``)."""
    return workspace.cached(cache, key, make, count)


def check_finite(values, message: str) -> None:
    """Raise ``FloatingPointError(message)`` when a row of ``values`` (one a
    step) is not finite, ``{step}`` in the message the first such step (1 ...)."""
    rows = np.asarray(values).reshape(len(values), -1)
    bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
    if bad.size:
        raise FloatingPointError(message.format(step=int(bad[0]) + 1))
