"""The cellular particle filter (``filters/cellular.py``) on the GPU.

A step is one kernel (``cellular.cu``, cpf_*_step), as in the paper's Fig 6:
a block loads its CELLULAR_THREADS predicted particles and the r before
them into shared memory, computes their likelihoods, resamples each of its
particles within its neighbourhood, adds the resampled particles to the
estimate (the last block to finish writes the mean) and writes their
prediction for the next step into the other state buffer. A run is one CUDA
graph: the initial kernel and the T steps, captured once per (model, N, r,
T, fast math) and replayed per run. A run's numbers -- the noise key, the
resampling key of each step and the measurements -- are one device buffer
that a run rewrites with one copy before the replay; the estimates come back
in one copy after it.

States and the model arithmetic are float32 (models.cuh); the weights and
sums float64, or float32 on request (``precision``, the paper's). How a
particle finds its neighbour (``neighbourhood``): "search" in its tile's
prefix sums, "scan" by the resampler's contract, or "divide", the paper's
running quotients (``NEIGHBOURHOOD_MODES``: cellular.cu's CPF_SEARCH,
CPF_SCAN, CPF_DIVIDE). ``weighted``: the step also writes the weighted mean of
the predicted particles before resampling (the SIR filter's estimate) and the
step's log-likelihood estimate.

The noise is Philox (models.cuh's normals4: block 0 the prior, block k + 1
the step from x_k to x_{k+1}), not NumPy's generator, so the CPU and GPU
filters give different runs of the same filter; their errors agree in
distribution (tests/gpu/test_gpu_cellular.py). The noise does not depend on the
kernel or on r (nor on the build, but for fast math's approximate logarithm
and sines), so runs of one seed with different kernels or radii share it
(common random numbers).
"""

from __future__ import annotations

import math

import numpy as np

from ..cuda import geometry, kernels
from .common import FilterResult, check_kernel, gpu_result, graph_inputs
from .graph import GraphRunner, StepProgram, check_finite, cuda_twin, kept

GRAPHS_KEPT = 8  # a timing cell interleaves 2 kernels x 2 builds at one (N, r)
# cellular.cu's modes of cpf_step (CPF_SEARCH, CPF_SCAN, CPF_DIVIDE) and the
# C++ type of each precision.
NEIGHBOURHOOD_MODES = {"search": 0, "scan": 1, "divide": 2}
REAL_TYPES = {"float64": ("double", 8), "float32": ("float", 4)}


def cpf_twin(model):
    """The CPF's device code of ``model`` (its ``cuda_twins["cpf"]``,
    ``cuda.twin``), or None."""
    return cuda_twin(model, "cpf")


class CpfGraph(StepProgram):
    """The T steps of the CPF for one (model, N, r, T, fast math, kernel,
    weighted), the step program of a :class:`graph.GraphRunner`, which
    captures them as a CUDA graph after one eager run (it loads the
    kernels) on the first :meth:`run` and replays it for every run."""

    stream_events = True  # one kernel a step: the run is timed whole

    def __init__(
        self, model, n: int, radius: int, steps: int, fast_math: bool = False,
        neighbourhood: str = "search", precision: str = "float64", weighted: bool = False,
    ):  # fmt: skip
        """``neighbourhood`` and ``precision``: the kernel (module docstring;
        ``cellular.check_kernel`` has checked the pair); ``weighted``: the
        steps also write the weighted mean before resampling."""
        import cupy

        self.twin = twin = cpf_twin(model)
        self.n, self.radius, self.steps, self.fast_math = n, radius, steps, fast_math
        self.neighbourhood, self.precision, self.weighted = neighbourhood, precision, weighted
        ctype, real_bytes = REAL_TYPES[precision]
        self.step_name = f"{twin.prefix}_step<{NEIGHBOURHOOD_MODES[neighbourhood]},{ctype}>"
        self.grid = geometry.blocks(n, geometry.CELLULAR_THREADS)
        span = geometry.CELLULAR_THREADS + radius
        # The tile's weights (and with the search their prefix sums) in the
        # kernel's precision, float32 log-weights and states (cellular.cu,
        # cpf_step): 46 KiB at most (float64 search, r = CPF_MAX_RADIUS, 4 rows)
        reals = span + (span + 1 if neighbourhood == "search" else 0)
        self.shared = reals * real_bytes + span * 4 + twin.rows * span * 4
        self.x = cupy.empty((2, twin.rows, n), dtype=np.float32)
        self.eager_steps = steps
        self.runner = GraphRunner(self, 2 + 3 * steps)
        self.inputs = self.runner.inputs
        # The blocks' plain sums, their weighted sums and weight, and their shifts (grid_means).
        self.parts = cupy.empty((2 * twin.rows + 2) * self.grid, dtype=np.float64)
        self.ticket = cupy.zeros(1, dtype=np.uint32)
        self.estimates = cupy.empty((steps, twin.rows), dtype=np.float64)
        # the weighted means, then log SUM_i w~_i of the step (cellular.cu, grid_means)
        self.weighted_estimates = cupy.empty((steps, twin.rows + 1), dtype=np.float64)

    def step(self, k: int, marks: bool = False) -> None:
        """Step k's kernel (one launch), on the current stream."""
        twin, n, steps = self.twin, self.n, self.steps
        args = (self.x[k % 2], self.x[(k + 1) % 2], np.uint32(n), np.uint32(self.radius))
        args += (self.inputs, np.uint32(steps), np.uint32(k), twin.drift(k + 1))
        args += (np.int32(k + 1 < steps), *twin.step_args())
        args += (self.parts, self.ticket, self.estimates[k])
        args += (np.int32(self.weighted), self.weighted_estimates[k])
        block = (geometry.CELLULAR_THREADS,)
        launch = kernels.kernel("cellular.cu", self.step_name, self.fast_math)
        launch((self.grid,), block, args, shared_mem=self.shared)

    def start(self, marks: bool = False) -> None:
        """The initial kernel, on the current stream."""
        twin, n, steps = self.twin, self.n, self.steps
        init_args = (self.x[0], np.uint32(n), self.inputs, np.uint32(steps), *twin.init_args())
        init = kernels.kernel("cellular.cu", f"{twin.prefix}_init", self.fast_math)
        init((self.grid,), (geometry.CELLULAR_THREADS,), init_args)

    def step_kernel_seconds(self, launches: int = 100, repeats: int = 5) -> float:
        """The device time of one step kernel: a graph of ``launches``
        launches of the middle step, timed with CUDA events, over
        ``launches``; the median of ``repeats`` replays. (Events around one
        launch from Python time the host's launch too, tens of us.) Its
        input buffer is not written by the step, so every launch does the
        same work; call after a run, whose particles it reads."""
        import cupy

        k = self.steps // 2

        def middle_steps() -> None:
            for _ in range(launches):
                self.step(k)

        runner = self.runner
        graph = runner.capture(middle_steps)
        start, end = runner.start_event, runner.end_event
        times = []
        for _ in range(repeats + 1):
            start.record(self.stream)
            graph.launch(self.stream)
            end.record(self.stream)
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) / launches)
        return 1e-3 * float(np.median(times[1:]))

    def host_inputs(self, y, seed: int) -> np.ndarray:
        """A run's inputs (``common.graph_inputs``)."""
        return graph_inputs(y, seed, self.steps)

    def collect(self, seed: int, wall: float) -> FilterResult:
        """The run's record: the estimates (and the weighted ones, with the
        log-likelihood, where the steps write them), the device time between
        the runner's events around the replay."""
        estimates = self.estimates.get(stream=self.stream)
        weighted = self.weighted_estimates.get(stream=self.stream) if self.weighted else None
        device = self.runner.device_seconds()
        log_z = None
        if weighted is not None:
            log_z = self.log_likelihood_steps(weighted[:, -1])
            weighted = weighted[:, :-1]
        for values in (estimates, weighted):
            if values is not None:
                check_finite(
                    values,
                    "the GPU CPF's estimate is not finite from step {step} on (a "
                    "log-likelihood was NaN or +inf, or no particle had weight)",
                )
        if self.twin.rows == 1:
            estimates = estimates[:, 0]
            weighted = None if weighted is None else weighted[:, 0]
        # CPF_OPTIONS's record: the weighted mean before resampling (NaN when the
        # steps did not write it) and the CPF's own estimate, the resampled mean
        before = np.full_like(estimates, np.nan) if weighted is None else weighted
        return gpu_result(
            "cellular", self.n, seed, before, wall_seconds=wall, total_seconds=device,
            resampled_estimates=estimates, log_likelihood_steps=log_z,
        )  # fmt: skip

    def log_likelihood_steps(self, log_sums: np.ndarray) -> np.ndarray:
        """log Z_k (``filters.engine``'s estimator) from the log SUM_i w~_i the
        last block of each step writes: the CPF resamples every step, so
        log Z_k = log SUM_i w~_i - log N, plus the constant the kernels drop
        from the model's log-likelihood (the same ``models.cuh`` function as
        the SIR graph's, so its twin's constant)."""
        from .sir_gpu import device_twin

        constant = device_twin(self.twin.model).log_likelihood_constant()
        return log_sums - math.log(self.n) + constant


def cpf_graph(
    model, n: int, radius: int, steps: int, fast_math: bool = False,
    neighbourhood: str = "search", precision: str = "float64", weighted: bool = False,
) -> CpfGraph:  # fmt: skip
    """The :class:`CpfGraph` of (device, model, N, r, T, fast math, kernel,
    weighted), built on first use and kept (the last GRAPHS_KEPT)."""
    import cupy

    if cpf_twin(model) is None:
        raise NotImplementedError(f"{type(model).__name__} has no GPU code; use backend='cpu'")
    if radius > geometry.CPF_MAX_RADIUS:
        raise ValueError(f"the GPU CPF takes radius <= {geometry.CPF_MAX_RADIUS}, got {radius}")
    check_kernel(precision, neighbourhood)
    options = (bool(fast_math), neighbourhood, precision, bool(weighted))
    key = (cupy.cuda.Device().id, model, n, radius, steps, *options)
    make = lambda: CpfGraph(model, n, radius, steps, *options)  # noqa: E731
    return kept("cpf", key, make, GRAPHS_KEPT)


def run_cpf_gpu(
    model, y, n: int, radius: int, seed: int, *, fast_math: bool = False,
    neighbourhood: str = "search", precision: str = "float64", weighted: bool = False,
) -> FilterResult:  # fmt: skip
    """run_filter's cellular filter (``CPF_OPTIONS``) on the GPU (``cpf_graph``'s replay)."""
    y = np.asarray(y, dtype=np.float64)
    graph = cpf_graph(model, n, radius, y.shape[0], fast_math, neighbourhood, precision, weighted)
    return graph.run(y, seed)
