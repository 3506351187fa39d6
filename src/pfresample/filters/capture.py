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

Memory: CUDA forbids ``cudaMalloc`` while a stream is captured, and the
graph replays the addresses its kernels were captured with. A CuPy
``MemoryPool`` warmed by an eager pass does not make this safe: its free
blocks are split and merged as they are asked for, so the capture's
sequence of sizes can miss the cached blocks and call ``cudaMalloc``,
which ends the capture. So every array the model and the loop make while
captured comes from an :class:`Arena`: one device allocation of the
filter's own, kept as long as the graph, in which a deterministic
first-fit allocator (512-byte aligned, as CuPy's pool) hands out offsets
and calls no CUDA function. An eager pass with the same allocator over
virtual offsets (the memory itself from CuPy's pool) measures the arena's
size: the same Python code makes the same sequence of allocations and
frees, so the capture finds every block where the eager pass put it; the
arena is that size and a quarter more (:func:`arena_bytes`), and a capture
that asks for more ends with a :class:`CaptureError` that says so. A block
freed during the capture is handed out again later in the same capture:
the capture of one stream is a chain of nodes, so every kernel that reads
the freed block runs before any kernel that writes its next tenant, as in
CuPy's stream-ordered pool; the arena then holds the step's peak, not the
T steps' sum.

Why not CuPy's ``MemoryAsyncPool`` (``cudaMallocAsync`` becomes a graph
memory node): every block allocated in the capture must then be freed in
it, or the graph's next launch fails, so the particles and every statistic
would have to be copied out of the step into preallocated buffers, and the
driver's support for memory nodes becomes part of the contract. The arena
needs neither: its addresses are fixed, any survivor (the last particles)
stays in the arena, and the allocator is plain bookkeeping that the CPU
tests check (tests/library/test_capture.py).
"""

from __future__ import annotations

import contextlib
import math
import time

import numpy as np

from ..backend import cuda_device
from ..cuda import cumulative, geometry, stats, workspace
from ..cuda import run as run_module
from ..validation import check_params, kernel_arguments
from .common import NO_B, STAGES, FilterResult, run_words
from .graph import DeviceStream, check_finite, kept

GRAPHS_KEPT = 4  # captured filters kept per process (each holds its arena)
THREAD_LOCAL = 1  # cudaStreamCaptureModeThreadLocal (driver_types.h)

# Philox4x32-10 (rng.py's contract: Random123's constants, ten rounds) in an
# elementwise kernel: draw i of call c is the block ctr = (i mod 2^32, i >> 32,
# c, DOMAIN) under the key in ``key[0:2]`` (a device buffer). A uniform takes
# a draw's first two words (53 bits); a pair of normals, elements 2i and
# 2i + 1, takes draw i's two uniforms through Box-Muller's cosine and sine.
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
# Normals 2i and 2i + 1 of n from draw i's words c (Box-Muller).
_NORMAL_PAIR = (
    "double u1 = 1.0 - uniform53(c[0], c[1]);\n"
    "double u2 = uniform53(c[2], c[3]);\n"
    "double r = sqrt(-2.0 * log(u1)), s, co;\n"
    "sincos(6.283185307179586 * u2, &s, &co);\n"
    "out[2 * i] = r * co;\n"
    "if (2 * i + 1 < n) out[2 * i + 1] = r * s;\n"
)
_BODY = (
    "unsigned long long e = (unsigned long long)i;\n"
    "unsigned int c[4] = {(unsigned int)e, (unsigned int)(e >> 32), call, "
    + str(DOMAIN)
    + "};\nphilox10(c, key[0], key[1]);\n"
)


def _kernels():
    """The generator's two elementwise kernels (compiled on first use)."""
    import cupy

    normal = cupy.ElementwiseKernel(  # a thread a pair of normals (``_draw``'s size)
        "raw uint32 key, uint32 call, int64 n", "raw float64 out",
        _BODY + _NORMAL_PAIR, "pfr_capture_normal", preamble=_PHILOX,
    )  # fmt: skip
    uniform = cupy.ElementwiseKernel(
        "raw uint32 key, uint32 call", "float64 out",
        _BODY + "out = uniform53(c[0], c[1]);", "pfr_capture_uniform", preamble=_PHILOX,
    )  # fmt: skip
    return normal, uniform


_KERNELS = []

# A step's statistics in two kernels of their own where CuPy's operators
# would take a dozen (each a node of the graph, and at large N a pass over
# the weights; tests/gpu/test_gpu_capture.py holds them to the loop's):
# ``pfr_capture_weigh`` writes w~ = exp(log w - m) and, in the same pass,
# each block's partial sums of w~, w~^2 and w~ x_j (column c of block b at
# parts[b * (2 + d) + c]); ``pfr_capture_finish``, one block, adds the
# blocks' partials in block order and writes the step's scalars: SUM w~, the
# log-likelihood increment m - log N + log SUM w~, the ESS (SUM w~)^2 /
# SUM w~^2 and the estimate SUM w~ x / SUM w~. The blocks are a function of
# N alone (geometry.capture_blocks), so a replay's sums are the same bits.
_STATISTICS_SOURCE = r"""
// The largest log-weight in one kernel (CuPy's max is two): each block's
// maximum into parts, the last block to finish takes theirs into top[0]. A
// NaN wins, as in CuPy's max (the run then raises on its statistics).
__device__ __forceinline__ double nan_max(double a, double b) {
    if (a != a) return a;
    if (b != b) return b;
    return b > a ? b : a;
}

extern "C" __global__ void pfr_capture_top(const double* __restrict__ lw, long long n,
        double* __restrict__ parts, unsigned int* __restrict__ ticket, double* __restrict__ top) {
    __shared__ double acc[1024];
    __shared__ bool last;
    const int t = threadIdx.x, threads = blockDim.x;
    double m = __longlong_as_double(0xFFF0000000000000LL);  // -inf
    for (long long i = (long long)blockIdx.x * threads + t; i < n;
         i += (long long)gridDim.x * threads) m = nan_max(m, lw[i]);
    acc[t] = m;
    __syncthreads();
    for (int half = threads / 2; half > 0; half /= 2) {
        if (t < half) acc[t] = nan_max(acc[t], acc[t + half]);
        __syncthreads();
    }
    if (t == 0) {
        parts[blockIdx.x] = acc[0];
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        if (last) *ticket = 0u;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    m = __longlong_as_double(0xFFF0000000000000LL);
    for (int b = t; b < (int)gridDim.x; b += threads) m = nan_max(m, __ldcg(parts + b));
    acc[t] = m;
    __syncthreads();
    for (int half = threads / 2; half > 0; half /= 2) {
        if (t < half) acc[t] = nan_max(acc[t], acc[t + half]);
        __syncthreads();
    }
    if (t == 0) top[0] = acc[0];
}

extern "C" __global__ void pfr_capture_weigh(const double* __restrict__ lw,
        const double* __restrict__ top, const double* __restrict__ x, long long n, int d,
        double* __restrict__ w, double* __restrict__ parts) {
    extern __shared__ double acc[];  // column c of thread t at acc[c * blockDim.x + t]
    const int t = threadIdx.x, threads = blockDim.x, cols = 2 + d;
    for (int c = 0; c < cols; ++c) acc[c * threads + t] = 0.0;
    const double m = top[0];
    for (long long i = (long long)blockIdx.x * threads + t; i < n;
         i += (long long)gridDim.x * threads) {
        const double v = exp(lw[i] - m);
        w[i] = v;
        acc[t] += v;
        acc[threads + t] += v * v;
        for (int j = 0; j < d; ++j) acc[(2 + j) * threads + t] += v * x[i * d + j];
    }
    __syncthreads();
    for (int half = threads / 2; half > 0; half /= 2) {
        if (t < half)
            for (int c = 0; c < cols; ++c) acc[c * threads + t] += acc[c * threads + t + half];
        __syncthreads();
    }
    if (t < cols) parts[(long long)blockIdx.x * cols + t] = acc[t * threads];
}

extern "C" __global__ void pfr_capture_finish(const double* __restrict__ parts, int blocks,
        int d, const double* __restrict__ top, double log_n, int k,
        double* __restrict__ total, double* __restrict__ inc, double* __restrict__ ess,
        double* __restrict__ est) {
    extern __shared__ double acc[];
    const int t = threadIdx.x, threads = blockDim.x, cols = 2 + d;
    for (int c = 0; c < cols; ++c) {
        double sum = 0.0;
        for (int b = t; b < blocks; b += threads) sum += parts[(long long)b * cols + c];
        acc[c * threads + t] = sum;
    }
    __syncthreads();
    for (int half = threads / 2; half > 0; half /= 2) {
        if (t < half)
            for (int c = 0; c < cols; ++c) acc[c * threads + t] += acc[c * threads + t + half];
        __syncthreads();
    }
    const double s = acc[0];
    if (t == 0) {
        total[0] = s;
        inc[k] = top[0] - log_n + log(s);
        ess[k] = s * s / acc[threads];
    }
    for (int j = t; j < d; j += threads) est[j] = acc[(2 + j) * threads] / s;
}
"""
_STATISTICS = []


def _statistics():
    """The step's three statistics kernels (compiled on first use)."""
    import cupy

    if not _STATISTICS:
        module = cupy.RawModule(code=_STATISTICS_SOURCE)
        names = ("pfr_capture_top", "pfr_capture_weigh", "pfr_capture_finish")
        _STATISTICS.extend(module.get_function(f) for f in names)
    return _STATISTICS


def statistics_columns(state_shape: tuple) -> int:
    """The sums a block keeps for particles of ``state_shape`` (their shape
    without N): SUM w~, SUM w~^2 and one a number of the state. Raises
    :class:`CaptureError` where their shared memory would exceed a block's."""
    cols = 2 + int(np.prod(state_shape, dtype=np.int64))
    if cols > geometry.CAPTURE_MAX_COLUMNS:
        raise CaptureError(
            f"a particle of {cols - 2} numbers: the captured step's statistics keep at most "
            f"{geometry.CAPTURE_MAX_COLUMNS - 2} a particle (the loop has no such limit)"
        )
    return cols


def reference_normals(key, call: int, size: int) -> np.ndarray:
    """What :meth:`CaptureRng.standard_normal` draws for ``call`` under
    ``key`` (two uint32 words), in NumPy (``rng.philox4x32_10``): the check
    of the kernel (tests/gpu/test_gpu_capture.py)."""
    from ..rng import philox4x32_10

    i = np.arange((size + 1) // 2, dtype=np.uint64)  # a draw a pair of normals
    words = philox4x32_10(
        (i & np.uint64(0xFFFFFFFF), i >> np.uint64(32), call, DOMAIN),
        (int(key[0]), int(key[1])),
    )
    a, b, c, d = (w.astype(np.uint64) for w in words)

    def uniform53(p, q):
        return ((p >> np.uint64(5)).astype(np.float64) * 67108864.0
                + (q >> np.uint64(6)).astype(np.float64)) / 9007199254740992.0  # fmt: skip

    u1, u2 = 1.0 - uniform53(a, b), uniform53(c, d)
    r, angle = np.sqrt(-2.0 * np.log(u1)), 2.0 * math.pi * u2
    return np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1).reshape(-1)[:size]


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

    def _draw(self, kernel, size, pairs: bool = False):
        import cupy

        shape = () if size is None else tuple(np.atleast_1d(size).tolist())
        out = cupy.empty(shape, dtype=np.float64)
        if pairs:  # the normals' kernel: a thread a pair
            count = out.size
            if count:
                args = (self.key, np.uint32(self.calls), np.int64(count), out)
                kernel(*args, size=(count + 1) // 2)
        else:
            kernel(self.key, np.uint32(self.calls), out)
        self.calls += 1
        return out

    def standard_normal(self, size=None, dtype=np.float64):
        if np.dtype(dtype) != np.float64:
            raise TypeError("the captured run's generator draws float64")
        return self._draw(_KERNELS[0], size, pairs=True)

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


ALIGN = 512  # bytes: CuPy's pool rounds every block so; the arena's blocks are aligned alike
SLACK = 4  # the arena is the eager pass's peak plus a SLACK-th of it ...
SLACK_BYTES = 1 << 20  # ... plus this, in case the capture's sequence differs a little


class ArenaExhausted(MemoryError):
    """A block does not fit in the arena: the capture asked for more than the eager pass."""


def aligned(size: int) -> int:
    """``size`` bytes rounded up to a multiple of ALIGN; a block of 0 bytes
    takes ALIGN too, so that every block has an address of its own."""
    size = int(size)
    if size < 0:
        raise ValueError(f"a block of {size} bytes")
    return max(ALIGN, -(-size // ALIGN) * ALIGN)


def arena_bytes(peak: int) -> int:
    """The arena's size for an eager pass whose blocks reached ``peak`` bytes."""
    return aligned(peak + peak // SLACK + SLACK_BYTES)


class Arena:
    """Deterministic first-fit placement of blocks at offsets in
    ``[0, capacity)`` (``capacity`` None: unbounded, the eager pass that
    measures the size): bookkeeping only, no memory. The same sequence of
    :meth:`place` and :meth:`release` calls puts every block at the same
    offset, whatever the capacity, as long as it fits."""

    def __init__(self, capacity: int | None = None):
        if capacity is not None and (capacity <= 0 or capacity % ALIGN):
            raise ValueError(f"an arena of {capacity} bytes (a positive multiple of {ALIGN})")
        self.capacity = capacity
        self.live: dict[int, int] = {}  # offset -> aligned size, each block not yet freed
        self.peak = 0  # the largest end of a block handed out: the size this pass needs
        self.blocks = 0  # blocks handed out

    def place(self, size: int) -> int:
        """The offset of a new block of ``size`` bytes: the lowest gap between
        live blocks that holds it, else just past the last live block."""
        need, offset = aligned(size), 0
        # a snapshot: a collection run here may free a block (its gap then unused)
        for start, length in sorted(self.live.items()):
            if start - offset >= need:
                break
            offset = start + length
        if self.capacity is not None and offset + need > self.capacity:
            raise ArenaExhausted(
                f"a block of {need} bytes does not fit in the arena of {self.capacity} bytes "
                f"({len(self.live)} blocks, {sum(self.live.values())} bytes live): the capture "
                "asked for more memory than the eager pass before it"
            )
        self.live[offset] = need
        self.peak = max(self.peak, offset + need)
        self.blocks += 1
        return offset

    def release(self, offset: int) -> None:
        """Free the block at ``offset`` (its last array is gone)."""
        if self.live.pop(offset, None) is None:
            raise KeyError(f"no live block at offset {offset}")

    def allocator(self, wrap, *, base: int = 0, keep=None, backing=None):
        """A CuPy allocator (bytes -> pointer) placing its blocks here: at
        ``base + offset`` in the arena's memory ``keep``, or, where ``backing``
        is given (the eager pass, before the arena exists), in the memory
        ``backing(bytes)`` returns. ``wrap(ptr, bytes, owner)`` makes the
        pointer; it holds ``owner``, whose deletion frees the block."""

        def malloc(size):
            offset = self.place(size)
            need = self.live[offset]
            if backing is None:
                return wrap(base + offset, need, _Block(self, offset, keep))
            memory = backing(need)
            return wrap(memory.ptr, need, _Block(self, offset, memory))

        return malloc


class _Block:
    """One block's owner: it keeps the block's memory alive, and its
    deletion (the last array on the block gone) frees the block."""

    __slots__ = ("arena", "offset", "memory")

    def __init__(self, arena: Arena, offset: int, memory):
        self.arena, self.offset, self.memory = arena, offset, memory

    def __del__(self):
        self.arena.release(self.offset)


def _cupy_pointer(device_id: int):
    """``Arena.allocator``'s ``wrap`` for CuPy: a pointer to unowned memory
    (its device named, so that CuPy asks the driver nothing while captured)."""
    import cupy

    def wrap(ptr: int, size: int, owner):
        return cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(ptr, size, owner, device_id), 0)

    return wrap


def _end_failed_capture(stream) -> None:
    """End a capture that an error broke off; the driver then reports the
    capture invalidated, which says less than the error that broke it."""
    with contextlib.suppress(Exception):
        stream.end_capture()


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


class CapturedFilter(DeviceStream):
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
        z_words = 2 * int(np.prod(y_shape, dtype=np.int64))
        self.open(2 + 2 * steps + z_words)  # noise key, a key a step, y as float64
        self.y = self.inputs[2 + 2 * steps :].view(np.float64).reshape(y_shape)
        self.ancestors = cupy.empty((1, n), dtype=np.int32)
        self.ticket = cupy.zeros(1, dtype=np.uint32)  # pfr_capture_top's last-block count
        self.increments = cupy.empty(steps, dtype=np.float64)
        self.ess = cupy.empty(steps, dtype=np.float64)
        self.estimates = None  # (T,) + the state's shape, made by the first pass
        self.x = None  # the last step's particles, after its resampling (in the arena)
        self.planned = self.served = None  # the eager pass's Arena, the capture's
        self.arena = None  # the device memory of every block the graph replays
        try:
            with self.stream:
                self._enqueue()  # compiles every kernel, makes the workspace's buffers
                self.stream.synchronize()
            wrap = _cupy_pointer(cupy.cuda.Device().id)
            self.planned = Arena()
            measure = self.planned.allocator(wrap, backing=cupy.cuda.get_allocator())
            with cupy.cuda.using_allocator(measure), self.stream:
                self._enqueue()  # the capture's allocations and frees, in its order
                self.stream.synchronize()
            self.x = None  # the eager pass's last particles, freed before the capture
            self.served = Arena(arena_bytes(self.planned.peak))
            self.arena = cupy.cuda.alloc(self.served.capacity)
            serve = self.served.allocator(wrap, base=self.arena.ptr, keep=self.arena)
            with cupy.cuda.using_allocator(serve), self.stream:
                # Thread-local mode, not CuPy's relaxed default: a read back to the
                # host or an allocation outside the arena is then an error that ends
                # the capture, never a value or an address baked into the graph.
                self.stream.begin_capture(THREAD_LOCAL)
                try:
                    self._enqueue()
                except BaseException:
                    _end_failed_capture(self.stream)
                    raise
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
        top_of, weigh, finish = _statistics()
        x = cupy.asarray(model.init_particles(n, rng))
        if x.shape[0] != n:
            raise ValueError(f"init_particles({n}, rng) returned {x.shape[0]} particles")
        if self.estimates is None:
            self.estimates = cupy.empty((self.steps,) + x.shape[1:], dtype=np.float64)
        cols = statistics_columns(x.shape[1:])
        blocks, threads = geometry.capture_blocks(n), geometry.CAPTURE_THREADS
        shared = cols * threads * 8
        for k in range(self.steps):
            x = model.transition(x, k, rng)
            # log w = log g - log N (the weights carried are 1/N); the log N
            # goes into the increment, so that w~ = exp(log g - max log g).
            lw = cupy.ascontiguousarray(model.log_likelihood(self.y[k], x), dtype=np.float64)
            if lw.shape != (n,):
                raise ValueError(f"log_likelihood returned shape {lw.shape}, not ({n},)")
            top = cupy.empty(1, dtype=np.float64)
            w_tilde = cupy.empty(n, dtype=np.float64)
            parts = cupy.empty(blocks * cols, dtype=np.float64)
            total = cupy.empty(1, dtype=np.float64)
            top_of((blocks,), (threads,), (lw, np.int64(n), parts, self.ticket, top))
            x64 = cupy.ascontiguousarray(x, dtype=np.float64)
            d = np.int32(cols - 2)
            weigh((blocks,), (threads,), (lw, top, x64, np.int64(n), d, w_tilde, parts),
                  shared_mem=shared)  # fmt: skip
            finish((1,), (threads,), (parts, np.int32(blocks), d, top, np.float64(log_n),
                   np.int32(k), total, self.increments, self.ess, self.estimates[k]),
                   shared_mem=shared)  # fmt: skip
            # w = w~ / s, divided by the scan as it loads w~ where the method
            # reads the weights only there (one pass over N fewer).
            divisor = None
            if self.unnormalised:
                w_in = w_tilde
            elif cumulative.divides_as_it_loads(self.m, self.kw):
                w_in, divisor = w_tilde, total
            else:
                w_in = w_tilde / total
            keys = self.inputs[2 + 2 * k : 4 + 2 * k]
            call = workspace.Call(w_in, 1, keys, np.uint32(0), np.uint32(0), self.ws,
                                  self.ancestors, divisor)  # fmt: skip
            # The largest w~ is exp(0) = 1: where the resampler is handed w~
            # (a scan dividing it by s sees at most 1 / s >= 1 / N, which no
            # tile needs to scale either: sums.needs_scaling) the host knows
            # it without reading the device; w~ / s's maximum it reads.
            self.ws.scale, self.ws.max = 1.0, (1.0 if w_in is w_tilde else None)
            if run_module.needs_stats(self.m, self.kw):
                stats.enqueue_inputs(self.m, call, self.kw, self.params)
            self.m.gpu(call, **self.kw)
            x = x[self.ancestors[0]]
        self.x = x

    def host_inputs(self, y, seed: int) -> np.ndarray:
        """A run's inputs: the noise key and the resampling keys of
        ``derive_seeds(seed, T)`` (as ``common.graph_inputs``), then y as float64."""
        z = np.ascontiguousarray(y, dtype=np.float64).reshape(-1).view(np.uint32)
        return run_words(seed, self.steps, z)

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
