""":func:`pfresample.run_filter`'s CuPy loop (``filters.device``) for a
user's model, captured: the T steps of the model with the resampler as one
CUDA graph, made once per (model, method, N, T) and replayed by every run.

The loop reads three numbers back to the host a step (the largest
log-weight, the sum of the weights, the ESS) and launches each of its
kernels from Python: about 1 ms a step at every N on the design-space map's
linear-Gaussian panel, where the built-in models' graphs take 0.02-0.1 ms.
Captured, a step is the same kernels with nothing read back: the
statistics stay in device buffers (the log-likelihood increments, the ESS,
the estimates), copied back once after the run, and the resampler reads
its key from a device buffer that a run rewrites (``workspace.Call`` with
one key replica, as the SIR graph's), so that one graph replays any run.

What a captured step needs of the model: the protocol of docs/library.md
("Your own model") computed with the array module of the particles and
drawing only from the generator it is handed, and nothing read back to the
host -- ``float(y)``, ``.item()``, ``.get()`` or a branch on an array's
value synchronise the stream, which a capture forbids; shapes that depend
on the data cannot be replayed either. The measurement ``y`` it is handed
is a 0-d (or 1-d) CuPy array, a view of the run's inputs on the device. The
generator (:class:`CaptureRng`) draws Philox normals and uniforms keyed by
a device buffer (the run's noise key, from ``common.derive_seeds`` as every
GPU filter's), so that ``seed`` fixes every draw of a replay. Where the
capture fails the engine runs the loop instead and says why (``capture``
"auto"), or raises (``capture=True``).

Memory: every array the model makes while captured comes from a memory
pool of the graph's own (:class:`CapturedFilter`), kept as long as the
graph, so that no address the graph replays is handed to anything else; an
eager pass through the same pool before the capture makes its blocks.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..backend import cuda_device
from ..cuda import run as run_module
from ..cuda import stats, workspace
from ..validation import check_params, kernel_arguments
from .common import NO_B, STAGES, FilterResult, derive_seeds
from .graph import GraphRunner, check_finite, kept

GRAPHS_KEPT = 4  # captured filters kept per process (each holds its pool)
THREAD_LOCAL = 1  # cudaStreamCaptureModeThreadLocal (driver_types.h)

# Philox4x32-10 (rng.py's contract: Random123's constants, ten rounds) in an
# elementwise kernel: element i of call c draws the block ctr = (i mod 2^32,
# i >> 32, c, DOMAIN) under the key in ``key[0:2]`` (a device buffer).
DOMAIN = 3  # rng.py's domains are 0-2; the captured model's noise is a fourth
_PHILOX = r"""
__device__ void philox10(unsigned int c[4], unsigned int k0, unsigned int k1) {
    for (int r = 0; r < 10; ++r) {
        unsigned long long p0 = (unsigned long long)0xD2511F53u * c[0];
        unsigned long long p1 = (unsigned long long)0xCD9E8D57u * c[2];
        unsigned int h0 = (unsigned int)(p0 >> 32), l0 = (unsigned int)p0;
        unsigned int h1 = (unsigned int)(p1 >> 32), l1 = (unsigned int)p1;
        unsigned int n0 = h1 ^ c[1] ^ k0, n2 = h0 ^ c[3] ^ k1;
        c[0] = n0; c[1] = l1; c[2] = n2; c[3] = l0;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
}
// A float64 uniform in [0, 1) from two words: 53 bits, as NumPy's random_double.
__device__ double uniform53(unsigned int a, unsigned int b) {
    return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) * (1.0 / 9007199254740992.0);
}
"""
_BODY = (
    "unsigned long long e = (unsigned long long)i;\n"
    "unsigned int c[4] = {(unsigned int)e, (unsigned int)(e >> 32), call, "
    + str(DOMAIN)
    + "};\nphilox10(c, key[0], key[1]);\n"
)


def _kernels():
    """The generator's two elementwise kernels (compiled on first use)."""
    import cupy

    normal = cupy.ElementwiseKernel(
        "raw uint32 key, uint32 call", "float64 out",
        _BODY + "double u1 = 1.0 - uniform53(c[0], c[1]);\n"
        "double u2 = uniform53(c[2], c[3]);\n"
        "out = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);",
        "pfr_capture_normal", preamble=_PHILOX,
    )  # fmt: skip
    uniform = cupy.ElementwiseKernel(
        "raw uint32 key, uint32 call", "float64 out",
        _BODY + "out = uniform53(c[0], c[1]);", "pfr_capture_uniform", preamble=_PHILOX,
    )  # fmt: skip
    return normal, uniform


_KERNELS = []


def reference_normals(key, call: int, size: int) -> np.ndarray:
    """What :meth:`CaptureRng.standard_normal` draws for ``call`` under
    ``key`` (two uint32 words), in NumPy (``rng.philox4x32_10``): the check
    of the kernel (tests/gpu/test_gpu_capture.py)."""
    from ..rng import philox4x32_10

    i = np.arange(size, dtype=np.uint64)
    words = philox4x32_10(
        (i & np.uint64(0xFFFFFFFF), i >> np.uint64(32), call, DOMAIN),
        (int(key[0]), int(key[1])),
    )
    a, b, c, d = (w.astype(np.uint64) for w in words)

    def uniform53(p, q):
        return ((p >> np.uint64(5)).astype(np.float64) * 67108864.0
                + (q >> np.uint64(6)).astype(np.float64)) / 9007199254740992.0  # fmt: skip

    u1, u2 = 1.0 - uniform53(a, b), uniform53(c, d)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * math.pi * u2)


class CaptureRng:
    """The generator a captured model draws from: ``standard_normal``,
    ``normal``, ``random`` and ``uniform`` as a NumPy ``Generator``'s (float64),
    each call a new Philox stream (its index baked into the graph), the key
    read from the device buffer ``key`` (two uint32 words a run rewrites)."""

    def __init__(self, key):
        if not _KERNELS:
            _KERNELS.extend(_kernels())
        self.key = key
        self.calls = 0

    def _draw(self, kernel, size):
        import cupy

        shape = () if size is None else tuple(np.atleast_1d(size).tolist())
        out = cupy.empty(shape, dtype=np.float64)
        kernel(self.key, np.uint32(self.calls), out)
        self.calls += 1
        return out

    def standard_normal(self, size=None, dtype=np.float64):
        if np.dtype(dtype) != np.float64:
            raise TypeError("the captured run's generator draws float64")
        return self._draw(_KERNELS[0], size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return loc + scale * self.standard_normal(size)

    def random(self, size=None, dtype=np.float64):
        if np.dtype(dtype) != np.float64:
            raise TypeError("the captured run's generator draws float64")
        return self._draw(_KERNELS[1], size)

    def uniform(self, low=0.0, high=1.0, size=None):
        return low + (high - low) * self.random(size)

    def __getattr__(self, name):
        raise AttributeError(
            f"the captured run's generator draws standard_normal, normal, random and uniform; "
            f"the model asked for {name!r} (capture=False runs CuPy's generator)"
        )


class CaptureError(RuntimeError):
    """The model's step could not be captured as a CUDA graph."""


def capturable(m, options: dict) -> str | None:
    """Why the captured loop does not run these arguments (None: it does):
    it resamples every step with a method that returns ancestors and keeps
    nothing per step beyond the estimates, the ESS and log Z_k."""
    if m.output != "ancestors" or m.name == "cellular" or m.adaptive is not None:
        return f"the captured loop runs a resampler of one pass, not {m.name!r}"
    if options["ess_threshold"] is not None:
        return "the captured loop resamples every step (ess_threshold=None)"
    if options["resampled_estimates"] is not None or options["snapshot_step"] is not None:
        return "the captured loop keeps no resampled estimates or snapshot"
    return None


class CapturedFilter(GraphRunner):
    """The T steps of a model with the registry method ``m`` for one N,
    captured as one CUDA graph over buffers it owns (module docstring);
    :meth:`run` replays it for one seed and one set of measurements.
    Raises :class:`CaptureError` where the model cannot be captured."""

    def __init__(self, model, m, n: int, steps: int, y_shape: tuple, kw: dict, own: dict,
                 unnormalised: bool):  # fmt: skip
        import cupy

        self.model, self.m, self.n, self.steps = model, m, n, steps
        self.unnormalised = unnormalised
        params = check_params(m, {k: v for k, v in kw.items() if k in m.params})
        self.params = params
        self.kw = kernel_arguments(m, n, 8, kw.get("B"), kw.get("segment_bytes"), params)
        self.ws = workspace.workspace(n)
        self.pool = cupy.cuda.MemoryPool()
        z_words = 2 * int(np.prod(y_shape, dtype=np.int64))
        self.open(2 + 2 * steps + z_words)  # noise key, a key a step, y as float64
        self.y = self.inputs[2 + 2 * steps :].view(np.float64).reshape(y_shape)
        self.ancestors = cupy.empty((1, n), dtype=np.int32)
        self.increments = cupy.empty(steps, dtype=np.float64)
        self.ess = cupy.empty(steps, dtype=np.float64)
        self.estimates = None  # (T,) + the state's shape, made by the first pass
        self.x = None  # the last step's particles, after its resampling
        try:
            with self.stream:
                self._enqueue()  # compiles every kernel, makes the workspace's buffers
                self.stream.synchronize()
            with cupy.cuda.using_allocator(self.pool.malloc), self.stream:
                self._enqueue()  # the pool's blocks made, in the order the capture asks
                self.stream.synchronize()
                # Thread-local mode, not CuPy's relaxed default: a read back to the
                # host or an allocation outside the pool is then an error that ends
                # the capture, never a value or an address baked into the graph.
                self.stream.begin_capture(THREAD_LOCAL)
                try:
                    self._enqueue()
                finally:
                    graph = self.stream.end_capture()
                graph.upload(self.stream)
            self.graph = graph
        except Exception as error:  # a host read, a data-dependent shape, a driver refusal
            self.graph = None
            raise CaptureError(f"{type(error).__name__}: {error}") from error

    def _enqueue(self) -> None:
        """The T steps on the current stream (the device loop's arithmetic,
        ``filters.device``, with every statistic kept on the device)."""
        import cupy

        model, n = self.model, self.n
        rng = CaptureRng(self.inputs[:2])
        log_n = math.log(n)
        x = cupy.asarray(model.init_particles(n, rng))
        if x.shape[0] != n:
            raise ValueError(f"init_particles({n}, rng) returned {x.shape[0]} particles")
        if self.estimates is None:
            self.estimates = cupy.empty((self.steps,) + x.shape[1:], dtype=np.float64)
        for k in range(self.steps):
            x = model.transition(x, k, rng)
            lw = cupy.asarray(model.log_likelihood(self.y[k], x), dtype=np.float64) - log_n
            top = lw.max()
            w_tilde = cupy.exp(lw - top)
            total = w_tilde.sum()
            self.increments[k] = top + cupy.log(total)
            w = w_tilde / total
            self.estimates[k] = (w.reshape((n,) + (1,) * (x.ndim - 1)) * x).sum(axis=0)
            self.ess[k] = 1.0 / (w * w).sum()
            w_in = w_tilde if self.unnormalised else w
            keys = self.inputs[2 + 2 * k : 4 + 2 * k]
            call = workspace.Call(w_in, 1, keys, np.uint32(0), np.uint32(0), self.ws,
                                  self.ancestors)  # fmt: skip
            self.ws.scale, self.ws.max = 1.0, None
            if run_module.needs_stats(self.m, self.kw):
                stats.enqueue_inputs(self.m, call, self.kw, self.params)
            self.m.gpu(call, **self.kw)
            x = x[self.ancestors[0]]
        self.x = x

    def host_inputs(self, y, seed: int) -> np.ndarray:
        """A run's inputs: the noise key and the resampling keys of
        ``derive_seeds(seed, T)`` (as ``common.graph_inputs``), then y as float64."""
        rng, draw_seeds = derive_seeds(seed, self.steps)
        key = rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)
        keys = draw_seeds.astype("<u8", copy=False).view("<u4").astype(np.uint32, copy=False)
        z = np.ascontiguousarray(y, dtype=np.float64).reshape(-1).view(np.uint32)
        return np.concatenate([key, keys, z])

    def run(self, y, seed: int) -> FilterResult:
        """One run: upload, replay, wait, and the statistics copied back."""
        start = time.perf_counter()
        self.set_inputs(self.host_inputs(y, seed))
        self.graph.launch(self.stream)
        self.stream.synchronize()
        wall = time.perf_counter() - start
        estimates = self.estimates.get(stream=self.stream)
        increments = self.increments.get(stream=self.stream)
        ess = self.ess.get(stream=self.stream)
        check_finite(
            np.column_stack([estimates.reshape(self.steps, -1), increments]),
            "the captured filter's estimate or log-likelihood is not finite from step {step} on "
            "(a log-likelihood was NaN or +inf, or every weight underflowed)",
        )
        steps = self.steps
        return FilterResult(
            self.m.name, self.n, int(seed), estimates, ess, np.ones(steps, dtype=bool),
            float(increments.sum()), increments, np.full((steps, len(STAGES)), np.nan), wall,
            "cuda", cuda_device() or "CUDA device", total_seconds=wall,
            B=np.full(steps, NO_B, dtype=np.int64), stages=np.ones(steps, dtype=np.int64),
        )  # fmt: skip


def captured_filter(model, m, n: int, steps: int, y_shape: tuple, kw: dict, own: dict,
                    unnormalised: bool) -> CapturedFilter:  # fmt: skip
    """The :class:`CapturedFilter` of these arguments, made on first use and
    kept (the last GRAPHS_KEPT) in the graph cache (kind "capture")."""
    import cupy

    rule = tuple(sorted((k, v) for k, v in kw.items() if not isinstance(v, np.ndarray)))
    key = (cupy.cuda.Device().id, model, m.name, n, steps, y_shape, rule, unnormalised)
    make = lambda: CapturedFilter(model, m, n, steps, y_shape, kw, own, unnormalised)  # noqa: E731
    return kept("capture", key, make, GRAPHS_KEPT)
