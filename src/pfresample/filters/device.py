""":func:`pfresample.run_filter` on the GPU for a model written against the
array module it is handed: the engine's loop (``filters.engine``, its
default "float64" arithmetic) with every array a CuPy array.

The model's ``init_particles(n, rng)`` and ``transition(x, k, rng)`` get a
``cupy.random.Generator`` and CuPy particles, ``log_likelihood(y, x)`` CuPy
particles; a model that draws from ``rng`` and computes with the array
module of ``x`` (``pfresample.backend.array_module``; NumPy's ufuncs and
functions dispatch to CuPy's too) runs unchanged, without any CUDA of its
own. The resampler is the registry method's CUDA kernel
(``pfresample.resample`` on a device array; D3's ``resample_d3``). A model
says it may run this way with a class attribute ``array_generic = True``:
``backend="auto"`` then takes the GPU; ``backend="cuda"`` takes it for any
model.

The model's noise comes from CuPy's generator (seeded from the run's noise
stream, ``common.derive_seeds``), the resampler's draws from the same Philox
seeds as the CPU's: a GPU run is another draw of the same filter, whose
answers agree with the CPU's in distribution (tests/gpu/test_gpu_engine.py).
Each step reads three numbers back (the largest log-weight, the sum of the
weights, the ESS), so this path is for models without a fused GPU filter,
not a fast path.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..api import resample, resample_d3
from ..backend import cuda_device
from .common import FilterResult
from .loop import LOOP_OPTIONS, ArrayBackend, StepPlan, run_loop

GENERIC = {"arithmetic": "float64", "estimator": "normalised", "gate": "filter",
           "resample_at": None, "permutation": None, "seed_offset": 0,
           "diagnostics": False}  # fmt: skip


def applies(model, m, own: dict, options: dict) -> bool:
    """Whether this path runs these arguments: the engine's own conventions,
    and a resampler with a CUDA kernel and only its registry parameters."""
    if any(options.get(k) != v for k, v in GENERIC.items()):
        return False
    if options.get("resampled_estimates") not in (None, "mean"):
        return False
    if m.gpu is None:
        return False
    if m.name == "cellular":
        return set(own) <= {"radius"}
    if m.output == "particles":
        return own.get("components", "joint") == "joint" and own.get("impl", "table") == "table"
    return True


def prior_log_weights(x, mu):
    """Eqs. 2-4 of Das et al. up to a constant (``filters.d3.prior_log_weights``,
    joint) on any array module: -1/2 SUM_d (x_d - mu_d)^2 / sigma_d^2."""
    d = x - mu
    var = (d * d).sum(axis=0) / max(x.shape[0] - 1, 1)
    inv = (var > 0) / (var + (var == 0))  # 1 / var, and 0 where var = 0
    return -0.5 * (d * d) @ inv


def run(
    model, y, n: int, m, seed: int, kw: dict, own: dict, options: dict, noise: str = "cupy"
) -> FilterResult:
    """The engine's loop on the device (module docstring): ``run_loop``
    over CuPy with the CUDA resamplers (:func:`device_plan`). ``noise``
    "philox": the model draws from the captured run's generator
    (``capture.CaptureRng``) under the same key as a captured run of this
    seed, so that the loop and the graph draw the same numbers (the check
    of the capture, tests/gpu/test_gpu_capture.py); "cupy": CuPy's."""
    import cupy

    def generator(rng_host):
        if noise == "philox":
            from .capture import CaptureRng

            key = rng_host.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)
            return CaptureRng(cupy.asarray(key))
        return cupy.random.default_rng(int(rng_host.integers(0, 2**63)))

    # The sum of w~ comes back as a Python float (one read a step): w = w~ / sum
    # then stays a CuPy float64 array.
    on = ArrayBackend(cupy, "cuda", _device_name, cupy.asnumpy, float, generator)
    # the loop's options, run_filter's defaults for those not given
    given = {name: options.get(name, v) for name, v in LOOP_OPTIONS.items()}
    plan = device_plan(model, m, n, kw, own)
    return run_loop(model, y, n, m, int(seed), plan, on, **given)


def _device_name() -> str:
    return cuda_device() or "CUDA device"


def device_plan(model, m, n: int, kw: dict, own: dict) -> StepPlan:
    """Stage 4 on the device: the registry method's CUDA kernel on w~ or W
    (``pfresample.resample``), or D3's (``resample_d3``) with the prior
    weights of :func:`prior_log_weights`; one stage counted a resampling."""
    import cupy

    d3_kw = {k: v for k, v in own.items() if k not in ("components", "threads_scope", "impl")}
    kw = {k: v for k, v in kw.items() if k != "max_stages"}  # the staged gate's (CPU only)

    def move(k, x, w, w_in, lw, previous, y_k, seed):
        if m.output == "particles":
            mu = cupy.asarray(model.mean_transition(previous, k))
            cols = x.reshape(n, -1)
            prior = prior_log_weights(cols, mu.reshape(-1, cols.shape[1]))
            return resample_d3(x, w, prior, seed=seed, backend="cuda", **d3_kw), None, None
        return x[resample(w_in, m, seed=seed, backend="cuda", **kw)], None, None

    return StepPlan(move, 1, kw)


def runner(options: dict):
    """:func:`run` as the engine's GPU runner (model, y, n, m, seed, kw, own),
    with ``prepare`` (``engine._bind``): the captured graph of the steps
    where ``options["capture"]`` asks for it (``filters.capture``), else the loop."""

    def go(model, y, n, m, seed, kw, own):
        return run(model, y, n, m, seed, kw, own, options)

    def prepare(model, steps, n, m, kw, own):
        def loop(y, seed):
            return run(model, y, n, m, seed, kw, own, options)

        wanted = options.get("capture", False)
        if wanted is False:
            return loop
        from . import capture

        why = capture.capturable(m, options)
        if why is not None:
            if wanted is True:
                raise NotImplementedError(f"capture=True: {why}")
            return loop
        chosen = []

        def bound(y, seed):  # captured on the first call, which knows y's shape
            if not chosen:
                chosen.append(_captured_or_loop(model, y, n, m, kw, own, options, loop))
            return chosen[0](y, seed)

        return bound

    go.prepare = prepare
    return go


def _captured_or_loop(model, y, n, m, kw, own, options, loop):
    """The captured filter's ``run`` of these arguments, or, where the model
    cannot be captured, ``loop`` with a warning (``capture="auto"``) or a
    RuntimeError (``capture=True``) that says why."""
    from .capture import CaptureError, captured_filter

    unnormalised = {None: m.comparison_based, "normalised": False, "unnormalised": True}[
        options["stage4_weights"]
    ]  # fmt: skip
    try:
        return captured_filter(model, m, n, y.shape[0], y.shape, kw, own, unnormalised).run
    except CaptureError as error:
        message = (
            f"{type(model).__name__}'s steps could not be captured as a CUDA graph ({error}): "
            "a step that reads a value back to the host (float(y), .item(), a branch on an "
            "array), a shape that depends on the data, or a generator method the captured "
            "run lacks; running the CuPy loop"
        )
        if options["capture"] is True:
            raise RuntimeError(message.replace("; running the CuPy loop", "")) from error
        warnings.warn(message, RuntimeWarning, stacklevel=4)
        return loop
