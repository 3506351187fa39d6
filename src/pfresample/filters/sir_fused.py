"""The GPU SIR filter as one kernel a run: the growth model with Systematic
resampling (``gpu_kernels/fused.cu``).

:class:`FilterGraph` (``sir_gpu.py``) runs four kernels a step from one
CUDA graph; at N = 2^14 a step is a few microseconds of work in each and
the latency between the graph's nodes sets the time (docs/performance.md).
:class:`FusedRun` runs all T steps in one cooperative launch of
a grid that is resident at once, with a grid barrier where a kernel
boundary was. It computes the same numbers as the graph, bit for bit: the
same noise, the same float64 sums over the graph's blocks, the same prefix
sum and ancestors (``fused.cu`` says how; tests/gpu/test_gpu_fused_filter.py
checks it). Its stage times are the kernel's phases, read from the
device's clock at each grid barrier (:meth:`FusedRun.run` says how they
differ from the thesis's stages).

``run_filter(..., backend="cuda", stage_times=False, **SIR_OPTIONS)`` takes this path where it
applies (:func:`applies`: the growth model, Systematic, and N up to
``geometry.FUSED_MAX_N``) and N is at most ``geometry.FUSED_DEFAULT_MAX_N``
(docs/performance.md has the measurements). Up to ``geometry.FUSED_CLUSTER_N``
its grid is one thread block cluster (:func:`default_cluster`).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..cuda import geometry, kernels
from .common import GPU_STATE_DTYPE, STAGES, FilterResult, gpu_result, graph_inputs
from .graph import DeviceStream, check_finite, cuda_twin, kept, log_z_steps, pinned

FAMILY = "fused.cu"
RUNS_KEPT = 4  # FusedRun objects kept per process (each holds a few N-sized buffers)


# cuFuncSetAttribute's attributes (cuda.h's CUfunction_attribute)
_MAX_DYNAMIC_SHARED = 8
_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
# Dynamic shared memory a spread cluster asks for, which two of its blocks
# cannot share on one SM (228 KiB an SM on sm_90, 23 KiB of static use).
_SPREAD_BYTES = 120 * 1024


def function(slice_items: int, cluster: int = 0) -> str:
    """The run's kernel with phase 4 in slices of ``slice_items`` a thread:
    on a cooperative grid (``cluster`` 0) or on a grid that is one cluster
    of ``cluster`` blocks."""
    if cluster:
        return f"growth_systematic_cluster_run<{slice_items},{cluster}>"
    return f"growth_systematic_run<{slice_items}>"


def applies(model, method_name: str, n: int) -> bool:
    """Whether the fused run covers this filter: the growth model,
    Systematic, and N at most ``geometry.FUSED_MAX_N``."""
    twin = cuda_twin(model, "sir")
    return (
        getattr(twin, "fused", False) and method_name == "systematic" and n <= geometry.FUSED_MAX_N
    )


def _growth_constant(model) -> float:
    """What the growth kernels leave out of the model's log g (its SIR twin's)."""
    return cuda_twin(model, "sir").log_likelihood_constant()


def resident_blocks() -> int:
    """Blocks of the run's kernels the device holds at once (the fewer of
    the two slice sizes'): the most a cooperative launch may have."""
    sizes = (geometry.FUSED_SLICE_ITEMS, geometry.SCAN_ITEMS)
    threads = min(
        geometry.resident_threads(FAMILY, function(k), geometry.FUSED_THREADS) for k in sizes
    )
    return threads // geometry.FUSED_THREADS


def default_blocks(n: int) -> int:
    """``geometry.fused_blocks`` for N on this device."""
    import cupy

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    return geometry.fused_blocks(n, resident_blocks(), sms)


def _cluster_grid(cluster: int, blocks: int | None) -> int:
    """The grid of a run on one cluster: ``cluster`` blocks, on a device
    with thread block clusters (compute capability 9.0 and later)."""
    import cupy

    if cluster not in geometry.FUSED_CLUSTERS:
        raise ValueError(f"cluster must be one of {geometry.FUSED_CLUSTERS}, got {cluster}")
    if blocks is not None and int(blocks) != cluster:
        raise ValueError(f"a run on one cluster has cluster = {cluster} blocks, got {blocks}")
    capability = int(cupy.cuda.Device().compute_capability)  # "90" for 9.0
    if capability < 90:
        raise ValueError(
            f"thread block clusters need compute capability 9.0, not {capability / 10:.1f}"
        )
    return cluster


def allow_cluster(kernel, cluster: int, shared_bytes: int = 0) -> None:
    """The attributes a cluster launch of ``kernel`` needs: sizes above 8
    (non-portable) allowed, and ``shared_bytes`` of dynamic shared memory."""
    from cupy.cuda import driver

    if cluster > 8:
        driver.funcSetAttribute(kernel.ptr, _NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
    if shared_bytes:
        driver.funcSetAttribute(kernel.ptr, _MAX_DYNAMIC_SHARED, shared_bytes)


class FusedRun(DeviceStream):
    """T steps of the growth-model filter with Systematic resampling for one
    N, over buffers it owns; :meth:`run` runs it for one seed and one set of
    measurements. ``blocks``: the grid (at most :func:`resident_blocks`);
    :func:`default_blocks` when None. ``replay``: run from a captured CUDA
    graph (upload, kernel, copy back) where the driver captures the
    cooperative launch; False enqueues the three afresh each run (the
    bench's comparison, ``bench/fused_bound.py``). ``cluster`` (one of
    ``geometry.FUSED_CLUSTERS``; 0: the cooperative grid): the grid is one
    thread block cluster of that many blocks, its barrier the cluster's
    (compute capability 9.0 on; a device that cannot hold it raises a CUDA
    error here, which :func:`fused_run` turns into its fallback);
    ``spread``: one block of the cluster an SM (a shared-memory request two
    blocks cannot share), for the bench's comparison."""

    def __init__(self, model, n: int, steps: int, blocks: int | None = None,
                 replay: bool = True, cluster: int = 0, spread: bool = False):  # fmt: skip
        import cupy

        if not 1 <= n <= geometry.FUSED_MAX_N:
            raise ValueError(f"the fused run takes 1 <= N <= {geometry.FUSED_MAX_N}, got N = {n}")
        if cluster:
            grid = _cluster_grid(cluster, blocks)
        else:
            resident = resident_blocks()
            grid = default_blocks(n) if blocks is None else int(blocks)
            if not 1 <= grid <= resident:
                raise ValueError(
                    f"blocks must be in [1, {resident}] (the blocks this device holds at once), "
                    f"got {blocks}"
                )
        self.model, self.n, self.steps, self.blocks = model, n, steps, grid
        self.replay, self.cluster = replay, cluster
        self.constant = _growth_constant(model)  # what fused.cu drops from log g
        self.function = function(geometry.fused_slice_items(n, grid), cluster)
        self.shared_bytes = _SPREAD_BYTES if cluster and spread else 0
        if cluster:
            allow_cluster(kernels.kernel(FAMILY, self.function), cluster, self.shared_bytes)
        self.parts, self.tiles = geometry.sum_parts(n), geometry.scan_tiles(n)
        self.x = cupy.empty((2, n), dtype=GPU_STATE_DTYPE)
        self.log_w = cupy.empty(n, dtype=np.float32)
        self.w_tilde = cupy.empty(n, dtype=np.float32)
        self.ancestors = cupy.empty(n, dtype=np.int32)
        self.part_sums = cupy.empty(2 * self.parts, dtype=np.float64)
        self.tile_sum = cupy.empty(self.tiles, dtype=np.float32)
        self.tile_end = cupy.empty(self.tiles, dtype=np.int64)
        self.local_scan = cupy.empty(self.tiles * geometry.SCAN_TILE, dtype=np.float32)
        # What a run brings back, one buffer (one copy to the host): the T
        # estimates and the T sums of w~ (float64), each step's maximum
        # log-weight (T to_ordered words, zeroed by the kernel), then the phase
        # marks (1 + 4T nanosecond times).
        top_words = (steps + 1) // 2
        self.out = cupy.empty(2 * steps + top_words + 1 + len(STAGES) * steps, dtype=np.uint64)
        self.estimates = self.out[: 2 * steps].view(np.float64)
        self.top = self.out[2 * steps : 2 * steps + top_words].view(np.uint32)[:steps]
        self.marks = self.out[2 * steps + top_words :]
        # Eq. 2.34's drift as the graph's driver passes it: the model's
        # filter_drift(k) (8 cos(1.2 k)) in float64 on the host, rounded to float32.
        drift = np.array([model.filter_drift(k) for k in range(steps)], dtype=np.float64)
        self.drift = cupy.asarray(drift.astype(np.float32))
        # The runner's stream and inputs: the run's words (common.graph_inputs), then
        # the grid barrier's count, which the same upload zeroes (no memset a run).
        self.words = 2 + 3 * steps
        self.open(self.words + 1)
        self.bar = self.inputs[self.words :]
        # Pinned host twins of the inputs and of ``out``: a run is one upload,
        # the kernel and one copy back, enqueued together and waited for once.
        self._host_in, self.host_in = pinned(self.words + 1, np.uint32)
        self.host_in[:] = 0
        self._host_out, self.host_out = pinned(self.out.size, np.uint64)
        if cluster:  # a device whose clusters cannot hold the grid says so here
            self._enqueue()
            self.stream.synchronize()
        self.graph = self._capture()

    def _launch(self) -> None:
        m, f32 = self.model, np.float32
        args = (self.x, self.log_w, self.w_tilde, self.ancestors, np.uint32(self.n))
        args += (np.int32(self.steps), np.int32(self.parts), np.int32(self.tiles))
        args += (self.inputs, self.drift, f32(m.start_mean), f32(m.start_sd))
        args += (f32(m.sigma_v2**0.5), f32(1.0 / m.sigma_n2), self.part_sums, self.tile_sum)
        args += (self.tile_end, self.local_scan, self.bar, self.top, self.estimates, self.marks)
        launch = kernels.kernel(FAMILY, self.function)
        grid, block = (self.blocks,), (geometry.FUSED_THREADS,)
        if self.cluster:  # resident together by the cluster's guarantee
            launch(grid, block, args, stream=self.stream, shared_mem=self.shared_bytes)
        else:
            launch(grid, block, args, stream=self.stream, enable_cooperative_groups=True)

    def _enqueue(self) -> None:
        """A run on the stream: the pinned inputs up (the barrier's count
        zeroed with them), the kernel, ``out`` back into pinned memory."""
        self.pinned_copy(self.inputs, self.host_in, up=True)
        self._launch()
        self.pinned_copy(self.out, self.host_out, up=False)

    def _capture(self):
        """The run (:meth:`_enqueue`) as a CUDA graph, replayed by one call a
        run (the kernel's 22 arguments packed once, not each run), or None
        where the driver does not capture a cooperative launch: then each run
        enqueues it afresh. The eager pass compiles the kernel first."""
        import cupy

        if not self.replay:
            return None
        try:
            return self.capture(self._enqueue, eager=self._enqueue)
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError):
            self.stream.synchronize()
            return None

    def run(self, y, seed: int) -> FilterResult:
        """One run: the measurements ``y`` (T values) and the run's ``seed``
        (``derive_seeds``: the noise key and the resampling seeds), as
        ``FilterGraph.run``. ``stage_seconds`` holds the kernel's four
        phases a step (fused.cu: the thesis's stages, except that the
        exponentials of stage 1 and the estimate's partial sums of stage 3
        fall in phase 2, phase 3 is the first pass of stage 4's prefix sum
        and ends with the estimate's last sum), read from the device's clock
        by one thread;
        ``total_seconds`` is their sum; ``wall_seconds`` the host's clock
        around the upload, the run, the copy back and the wait."""
        self.host_in[: self.words] = graph_inputs(y, seed, self.steps)
        start = time.perf_counter()
        if self.graph is not None:
            self.graph.launch(self.stream)
        else:
            self._enqueue()
        self.stream.synchronize()
        return self.result(seed, time.perf_counter() - start)

    def result(self, seed: int, wall: float) -> FilterResult:
        """The :class:`FilterResult` of the run just waited for, from its
        pinned ``out`` (:meth:`run`'s; ``wall``: the host's seconds of it)."""
        out = self.host_out.copy()  # the pinned buffer is the next run's
        steps, top_words = self.steps, (self.steps + 1) // 2
        estimates = out[:steps].view(np.float64)
        sums = out[steps : 2 * steps].view(np.float64)
        top = out[2 * steps : 2 * steps + top_words].view(np.uint32)[:steps]
        marks = out[2 * steps + top_words :].view(np.int64)
        stage_seconds = 1e-9 * np.diff(marks).reshape(self.steps, len(STAGES))
        check_finite(
            estimates,
            "the GPU filter's estimate is not finite from step {step} on (a log-likelihood was "
            "NaN or +inf, or a state overflowed)",
        )
        return gpu_result(
            "systematic", self.n, seed, estimates, wall_seconds=wall,
            total_seconds=float(stage_seconds.sum()), stage_seconds=stage_seconds,
            log_likelihood_steps=log_z_steps(top, sums, self.n, self.constant),
        )  # fmt: skip


def default_cluster(n: int) -> int:
    """``geometry.fused_cluster`` for N on this device, 0 where a cluster of
    its size failed to launch here before."""
    import cupy

    device = cupy.cuda.Device()
    if device.id in _NO_CLUSTERS:
        return 0
    return geometry.fused_cluster(n, int(device.compute_capability))


_NO_CLUSTERS: set[int] = set()  # devices whose clusters could not hold the run's grid


def fused_run(model, n: int, steps: int, blocks: int | None = None) -> FusedRun:
    """The :class:`FusedRun` of these arguments, made on first use and kept
    (the last RUNS_KEPT) per device, model, N, T and grid. With ``blocks``
    None the grid is the default: one cluster (:func:`default_cluster`) or
    the cooperative grid (:func:`default_blocks`); where the cluster does
    not launch (a device whose GPCs hold fewer SMs, a partition), the
    cooperative grid, with a warning, from then on."""
    import cupy

    device = cupy.cuda.Device().id
    cluster = default_cluster(n) if blocks is None else 0
    if cluster:
        key = (device, model, n, steps, "cluster", cluster)
        try:
            make = lambda: FusedRun(model, n, steps, cluster=cluster)  # noqa: E731
            return kept("fused", key, make, RUNS_KEPT)
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as e:
            _NO_CLUSTERS.add(device)
            warnings.warn(
                f"the fused run's cluster of {cluster} blocks did not launch on device "
                f"{device} ({e}); it runs on the cooperative grid",
                RuntimeWarning,
                stacklevel=2,
            )
    key = (device, model, n, steps, blocks)
    make = lambda: FusedRun(model, n, steps, blocks)  # noqa: E731
    return kept("fused", key, make, RUNS_KEPT)
