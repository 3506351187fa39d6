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
* the process's one cache of built graphs (:data:`GRAPHS`), the last few
  of each kind kept per key (:func:`kept`), emptied by :func:`clear_graphs`;
* the check of the estimates brought back: a non-finite row names the first
  step it comes from (:func:`check_finite`);
* the log-likelihood estimate from what a graph keeps of each step -- its
  largest log-weight and the float64 sum of w~ (:func:`log_z_steps`).
"""

from __future__ import annotations

import math
from collections import OrderedDict

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

    def entries(self, kind: str) -> list:
        """The filters of ``kind`` kept now, the least recently used first."""
        return list(self._kinds.get(kind, {}).values())

    def clear(self, kind: str | None = None) -> None:
        """Forget every filter kept (or ``kind``'s): the next run builds and
        captures its graph afresh."""
        for name, cache in self._kinds.items():
            if kind is None or name == kind:
                cache.clear()


GRAPHS = GraphCache()


def kept(kind: str, key, make, count: int):
    """The GPU filter of ``key`` among ``kind``'s in the process's one cache
    (:data:`GRAPHS`), made by ``make()`` on first use; the last ``count`` kept."""
    return GRAPHS.get(kind, key, make, count)


def clear_graphs(kind: str | None = None) -> None:
    """Empty the process's cache of built GPU filters (or ``kind``'s:
    "sir", "fused", "batch", "cpf", "d3", "guldas"): the next run of each
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
    rows = np.asarray(values).reshape(len(values), -1)
    bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
    if bad.size:
        raise FloatingPointError(message.format(step=int(bad[0]) + 1))


def from_ordered(keys: np.ndarray) -> np.ndarray:
    """float32 values of ``reduce.cuh``'s to_ordered keys (its from_ordered on
    the host): the sign bit set marks a non-negative float."""
    keys = np.asarray(keys, dtype=np.uint32)
    bits = np.where(keys & np.uint32(0x80000000), keys & np.uint32(0x7FFFFFFF), ~keys)
    return bits.astype(np.uint32).view(np.float32)


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
    sums = np.asarray(sums, dtype=np.float64)
    if carried is None:
        before = np.full(top.shape, math.log(n))
    else:
        carried = np.asarray(carried, dtype=np.float64)
        with np.errstate(divide="ignore"):
            before = np.concatenate(([math.log(n)], np.log(carried[:-1])))
    with np.errstate(divide="ignore"):
        return top + np.log(sums) - before + constant
