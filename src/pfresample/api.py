"""The public entry points: ``resample``, ``resample_many``,
``resample_each_B``, ``resample_adaptive``, ``resample_d3``, ``choose_B``,
``methods``, ``offspring`` and ``time_resample``.

Each call goes one way down: an array of another library (PyTorch, JAX)
seen as NumPy or CuPy without a copy (:mod:`pfresample.interop`), the
registry entry of the method, the backend
(:func:`pfresample.backend.resolve_backend`), the input checked and converted
once (:func:`prepare`, log-weights included), then the
CPU backend (:mod:`pfresample.resampling.cpu`) or the CUDA one
(:mod:`pfresample.cuda.run`), which check nothing again. The ancestors go
back in the caller's kind of array.
"""

from __future__ import annotations

import logging
import math
import numbers
import statistics
import time
from dataclasses import dataclass

import numpy as np

from .backend import is_device_array, resolve_backend
from .interop import restore_each, to_native
from .logweights import to_weights
from .resampling import cpu
from .resampling.butterfly import AdaptiveResult
from .resampling.registry import REGISTRY, get_method, method_record
from .rng import seed_keys
from .timing import Timing, cpu_name
from .validation import (
    check_int,
    check_params,
    check_particles,
    check_prior_weights,
    check_weights,
    kernel_arguments,
    weight_array,
)

log = logging.getLogger("pfresample")


@dataclass(frozen=True)
class Prepared:
    """One call's input, checked and converted once: the weights as an array
    of the backend that runs the call, and the kernels' keyword arguments."""

    w: object  # 1-D float32/float64 NumPy or CuPy array
    kw: dict  # kernel_arguments
    params: dict  # check_params


def prepare(
    weights, m, on_device: bool, B, segment_bytes, params: dict, log: bool = False
) -> Prepared:
    """Check and convert a call's input for the backend that runs it
    (``on_device``: CUDA). On the host the values are checked here
    (:func:`check_weights`); on the device the weight-statistics kernel checks
    them in the pass that computes what the method reads
    (``cuda.stats.check_stats``), so they are read once. ``log``: the input
    is log-weights, turned into weights first (:mod:`pfresample.logweights`)."""
    params = check_params(m, params)
    if not isinstance(log, bool):
        raise TypeError(f"log must be True or False, got {log!r}")
    if on_device:
        import cupy

        w = weight_array(weights, cupy)
        if log:
            from .cuda.logweights import to_weights_device

            w = to_weights_device(w)
    else:
        host = weights.get() if is_device_array(weights) else weights
        w = check_weights(to_weights(weight_array(host)) if log else host)
    kw = kernel_arguments(m, int(w.shape[0]), w.itemsize, B, segment_bytes, params)
    return Prepared(w, kw, params)


def methods(output: str = "ancestors") -> tuple[str, ...]:
    """Names of the registry's methods: those of :func:`resample`, which
    return ancestors (``output="ancestors"``, the default), or those of
    :func:`resample_d3`, which move particles (``output="particles"``)."""
    if output not in ("ancestors", "particles"):
        raise ValueError(f"output must be 'ancestors' or 'particles', got {output!r}")
    return tuple(name for name, m in REGISTRY.items() if m.output == output)


def choose_B(weights, method, *, log=False, **params) -> int:
    """The B a method uses when none is given: Murray et al.'s formula for the
    Metropolis family (``epsilon``, default 1/100), the SSD match for the
    Uphill family (``ssd_table``, computed for this N when not given).
    On a CuPy array the device computes it (the same B, tests/gpu/test_gpu.py)."""
    m = method_record(method)
    if m.B_rule is None:
        raise TypeError(f"method {m.name!r} has no B parameter")
    weights, _ = to_native(weights)
    on_device = is_device_array(weights) and m.gpu is not None
    call = prepare(weights, m, on_device, None, None, params, log)
    if on_device:
        from .cuda import run

        return run.choose_B(m, call.w, call.params)
    return cpu.default_B(m, call.w, call.params)


def _seed_list(seeds) -> list:
    """``seeds`` as a non-empty list of Python ints (object dtype keeps 64-bit seeds exact)."""
    seeds = list(np.asarray(seeds, dtype=object).ravel())
    if not seeds:
        raise ValueError("seeds is empty: need at least one seed")
    return seeds


def resample_many(
    weights, method, *, seeds, B=None, segment_bytes=None, backend="auto", log=False, **params
):
    """K resamplings of the same weights, one per seed: row k of the (K, N)
    int32 result equals ``resample(weights, method, seed=seeds[k], ...)``.
    The result is the caller's kind of array: CuPy for CuPy weights, a
    PyTorch tensor for a tensor (on its device), NumPy for NumPy."""
    weights, restore = to_native(weights)
    return restore(_resample_many(weights, method, seeds, B, segment_bytes, backend, log, params))


def _ancestor_method(method):
    """The registry entry of ``method`` (a name or a record), which must return ancestors."""
    m = method_record(method)
    if m.output != "ancestors":
        raise TypeError(
            f"method {m.name!r} moves particles instead of choosing ancestors: "
            f"call pfresample.resample_{m.name}(particles, weights, prior_weights, seed=...)"
        )
    return m


def _resample_many(weights, method, seeds, B, segment_bytes, backend, log, params):
    """:func:`resample_many` on a NumPy or CuPy array."""
    m = _ancestor_method(method)
    seeds = _seed_list(seeds)
    where = resolve_backend(backend, m.gpu is not None)
    call = prepare(weights, m, where == "cuda", B, segment_bytes, params, log)
    on_device = is_device_array(weights)
    if where == "cuda":
        from .cuda import run

        ancestors = run.resample_many(m, call.w, seeds, call.kw, call.params)
        return ancestors if on_device else ancestors.get()
    if on_device:
        log.info("pfresample: %s on a CuPy array ran on the CPU (backend=%r)", m.name, backend)
    ancestors = cpu.resample_many(m, call.w, seeds, call.kw, call.params)
    if on_device:
        import cupy

        return cupy.asarray(ancestors)
    return ancestors


def resample_each_B(weights, method, *, seeds, Bs, segment_bytes=None, backend="auto", log=False):
    """``[resample_many(weights, method, seeds=seeds, B=B, ...) for B in Bs]``.

    On the GPU the Metropolis family computes them in one pass: iteration m's
    draws depend on (seed, particle, m) alone, so the chain after the
    smaller B is the first part of the chain after the larger one, and the
    kernel continues the chains from one B to the next (thesis §5.3's
    reduced-B Metropolis for the cost of the largest B). Elsewhere each B is
    a run of its own; the results are the same (tests/gpu/test_gpu.py)."""
    m = get_method(method)
    if m.B_rule is None:
        raise TypeError(f"method {m.name!r} has no B parameter")
    Bs = [check_int(B, "B") for B in Bs]
    weights, restore = to_native(weights)
    where = resolve_backend(backend, m.gpu is not None)
    if where == "cuda" and is_device_array(weights) and Bs:
        from .cuda import run
        from .cuda.iterative import CONTINUABLE

        if m.gpu in CONTINUABLE:
            w = prepare(weights, m, True, Bs[0], segment_bytes, {}, log).w
            kws = [kernel_arguments(m, w.size, w.itemsize, B, segment_bytes, {}) for B in Bs]
            return restore_each(run.continue_chains(m, w, _seed_list(seeds), kws), restore)
    return restore_each(
        [_resample_many(weights, method, seeds, B, segment_bytes, backend, log, {}) for B in Bs],
        restore,
    )


def resample(
    weights, method, *, seed, B=None, segment_bytes=None, backend="auto", log=False, **params
):
    """Resample: the ancestor indices (int32, length N) of the new particles,
    ``x_new[i] = x[ancestors[i]]``.

    ``weights`` are unnormalised, finite and non-negative (float32 by default,
    float64 kept as is), any such values (docs/library.md, "The weight
    contract"); with ``log=True``, log-weights (-inf a zero weight; see
    ``pfresample.logweights``). A NumPy, CuPy, PyTorch or JAX array; the
    ancestors come back in the same kind, on the same device.
    ``seed`` (0 <= seed < 2^64) fixes every random number
    (see ``pfresample.rng``). ``B`` is the inner-loop length of the Metropolis
    and Uphill families (chosen by :func:`choose_B` when None);
    ``segment_bytes`` the s-segment size of the coalesced variants (default
    128). ``backend`` is "auto", "cpu" or "cuda". Extra ``params``: see
    ``pfresample.methods()`` and each method's ``params`` in the registry.
    """
    weights, restore = to_native(weights)
    ancestors = _resample_many(weights, method, [seed], B, segment_bytes, backend, log, params)
    return restore(ancestors[0])


def resample_adaptive(
    weights, method, *, seed, tau, max_stages=None, backend="auto", log=False, **params
) -> AdaptiveResult:
    """Adaptive resampling (Güldaş 2015, Fig 3.7), for the methods with an
    adaptive form (the butterfly family): stage k of the method runs only
    while the effective sample size (eq. 1.11) of the current weights is
    below ``tau * N`` (the thesis uses tau = 0.6). Returns
    ``AdaptiveResult(ancestors, weights, stages)``: the ancestors (int32,
    length N, the caller's kind of array), the output weights (a NumPy
    array in the weights' precision and scale: after k stages, each slot's
    weight is the mean of the input weights over its aligned segment of
    r_1 ... r_k slots; the input weights when no stage ran), and the number
    of stages run. ``radix=(N,)`` is adaptive multinomial (one stage, run
    when the ESS is low). ``max_stages`` caps the stages run (None: every
    stage of ``radix``; with ``tau`` above 1 and ``max_stages=1``, exactly
    the first stage, as the SMC-EM filter of §4.3.2 runs it). ``weights``,
    ``seed``, ``backend`` and ``log`` as in
    :func:`resample`. On the GPU the device decides the stages (the same
    decisions and ancestors as the CPU's, tests/gpu/test_gpu_guldas.py)."""
    m = method_record(method)
    if m.adaptive is None:
        adaptive = ", ".join(name for name, e in REGISTRY.items() if e.adaptive is not None)
        raise TypeError(f"method {m.name!r} has no adaptive form; those with one: {adaptive}")
    if not isinstance(tau, numbers.Real) or not math.isfinite(float(tau)) or tau < 0:
        raise ValueError(f"tau must be a finite number >= 0, got {tau!r}")
    if max_stages is not None:
        max_stages = check_int(max_stages, "max_stages", minimum=0)
    weights, restore = to_native(weights)
    where = resolve_backend(backend, m.adaptive_gpu is not None)
    call = prepare(weights, m, where == "cuda", None, None, params, log)
    if where == "cuda":
        from .cuda.workspace import make_call

        device_call = make_call(call.w, [seed])
        ancestors, means, stages = m.adaptive_gpu(
            device_call, tau=float(tau), max_stages=max_stages, **call.kw
        )
        ancestors = ancestors[0] if is_device_array(weights) else ancestors[0].get()
        return AdaptiveResult(restore(ancestors), means, stages)
    keys = seed_keys(_seed_list([seed]))
    result = m.adaptive(call.w, keys, tau=float(tau), max_stages=max_stages, **call.kw)
    ancestors = result.ancestors[0]
    if is_device_array(weights):
        import cupy

        ancestors = cupy.asarray(ancestors)
    return AdaptiveResult(restore(ancestors), result.weights[0], int(result.stages[0]))


def resample_d3(
    particles,
    weights,
    prior_weights,
    *,
    seed,
    noise="eq5",
    cdf="prefix",
    precision=None,
    threads=None,
    components="joint",
    impl="table",
    backend="auto",
    log=False,
):
    """D3 resampling (Das et al. 2014, Table 1 and eqs. 5-6): returns the
    **new particles**, not ancestors. D3 moves each particle towards the
    particle of highest prior weight between it and its systematic
    ancestor j, and particle j towards the one of highest likelihood weight
    there, with uniform noise (``pfresample.resampling.d3`` states the
    contract and the choices where the paper errs). Every weight is 1/N
    afterwards.

    ``particles``: (N,) or (N, D) float32/float64, finite; the result has
    their shape, dtype and kind of array (NumPy or CuPy). ``weights``: the
    likelihood weights, as in :func:`resample` (``log=True`` for
    log-weights). ``prior_weights``: (N,) prior weights of eqs. 1-4 or any
    increasing function of them (log prior weights avoid underflow; D3
    only compares them); no NaN. ``noise``: "eq5" (default), "table1",
    "fig9", "between" or "fig9neg"; ``cdf``: "prefix" (the systematic
    prefix sum), "local" (the paper's per-thread O(N^2) search with the
    systematic thresholds) or "paper" (that search with the thresholds of
    the paper's Figs 8-9, one u1 a block of ``threads``: biased, see
    ``resampling.d3``); ``threads``: threads per block (1 ... 1024; the
    particles depend on it only with ``cdf="paper"``; None: 256);
    ``precision`` of the prefix sum (the weights' own by default).

    ``components``: "joint" (one D3 of the whole state) or "each" (Fig 9's
    "resample for xdot": each component d of (N, D) particles is a D3 of
    its own, with ``weights[:, d]`` when the weights are (N, D) -- the same
    (N,) weights otherwise -- and ``prior_weights[:, d]``, (N, D), under
    the seed ``resampling.d3.component_seed(seed, d)``). ``impl`` (CPU
    only): "table" (sparse-table range maxima) or "loop" (Table 1's
    sequential loop, ``resampling.d3_loop``): the same particles. ``seed``
    and ``backend`` as in :func:`resample`."""
    from .resampling.d3 import COMPONENTS, component_seed

    if components not in COMPONENTS:
        raise ValueError(f"components must be one of {', '.join(COMPONENTS)}, got {components!r}")
    if components == "each":
        return _resample_d3_each(
            particles, weights, prior_weights, seed=seed, noise=noise, cdf=cdf,
            precision=precision, threads=threads, impl=impl, backend=backend, log=log,
            seed_of=component_seed,
        )  # fmt: skip
    if impl not in ("table", "loop"):
        raise ValueError(f"impl must be 'table' or 'loop', got {impl!r}")
    m = REGISTRY["d3"]
    params = {"noise": noise, "cdf": cdf, "precision": precision, "threads": threads}
    weights, _ = to_native(weights)
    particles, restore = to_native(particles)
    prior_weights, _ = to_native(prior_weights)
    where = resolve_backend(backend, m.gpu is not None)
    call = prepare(weights, m, where == "cuda", None, None, params, log)
    threads = call.params.get("threads")
    n = int(call.w.shape[0])
    xp = np
    if where == "cuda":
        import cupy as xp
    x = check_particles(particles, n, xp)
    pw = check_prior_weights(prior_weights, n, xp)
    if where == "cuda":
        from .cuda import stats
        from .cuda.workspace import make_call

        if impl != "table":
            raise ValueError("impl='loop' is Table 1's CPU loop: use backend='cpu'")
        device_call = make_call(call.w, [seed])
        stats.enqueue_checked_inputs(m, device_call, call.kw, call.params)
        out = m.gpu(device_call, x, pw, noise=noise, cdf=cdf, precision=precision,
                    threads=threads)  # fmt: skip
        return restore(out if is_device_array(particles) else out.get())
    key = tuple(int(k[0]) for k in seed_keys([seed]))
    out = m.cpu(x, call.w, pw, key, noise=noise, cdf=cdf, precision=precision, threads=threads,
                impl=impl)  # fmt: skip
    if is_device_array(particles):
        import cupy

        out = cupy.asarray(out)
    return restore(out)


def _resample_d3_each(particles, weights, prior_weights, *, seed, seed_of, **kw):
    """:func:`resample_d3` with ``components="each"``: a D3 a component."""
    particles, restore = to_native(particles)
    weights, _ = to_native(weights)
    prior_weights, _ = to_native(prior_weights)
    if particles.ndim != 2:
        raise ValueError(
            f"components='each' needs (N, D) particles, got shape {tuple(particles.shape)}"
        )
    n, dims = (int(v) for v in particles.shape)
    if tuple(prior_weights.shape) != (n, dims):
        raise ValueError(
            f"components='each' needs prior_weights of shape ({n}, {dims}), one column a "
            f"component, got {tuple(prior_weights.shape)}"
        )
    if weights.ndim == 2 and tuple(weights.shape) != (n, dims):
        raise ValueError(
            f"components='each' takes weights of shape ({n},) or ({n}, {dims}), "
            f"got {tuple(weights.shape)}"
        )
    xp = np
    if is_device_array(particles):
        import cupy as xp

    def column(a, d):  # contiguous: the kernels and checks take 1-D contiguous arrays
        return xp.ascontiguousarray(a[:, d]) if a.ndim == 2 else a

    columns = [
        resample_d3(column(particles, d), column(weights, d), column(prior_weights, d),
                    seed=seed_of(seed, d), **kw)
        for d in range(dims)
    ]  # fmt: skip
    if is_device_array(columns[0]):
        import cupy as xp
    return restore(xp.stack(columns, axis=1))


def offspring(ancestors, n: int):
    """Offspring counts ``o_i`` (how often particle i was chosen) of an ancestor
    array, or of each row of a (K, N) array of ancestors."""
    n = check_int(n, "n", minimum=1)
    a = np.asarray(ancestors.get() if is_device_array(ancestors) else ancestors)
    if a.dtype.kind not in "iu":
        raise TypeError(f"ancestors must be integers, got dtype {a.dtype}")
    if a.ndim not in (1, 2):
        raise ValueError(f"ancestors must be 1-D or 2-D, got shape {a.shape}")
    if a.size and (a.min() < 0 or a.max() >= n):
        bad = int(np.flatnonzero((a.ravel() < 0) | (a.ravel() >= n))[0])
        raise ValueError(
            f"ancestor {int(a.ravel()[bad])} at flat position {bad} is outside [0, {n})"
        )
    if a.ndim == 1:
        return np.bincount(a, minlength=n)
    rows = np.arange(a.shape[0])[:, None] * n
    return np.bincount((a + rows).ravel(), minlength=n * a.shape[0]).reshape(a.shape[0], n)


def time_resample(
    weights,
    method,
    *,
    seed=0,
    repeats=5,
    warmup=1,
    B=None,
    segment_bytes=None,
    backend="auto",
    **params,
) -> Timing:
    """Median time of ``resample(weights, method, seed=seed, ...)`` (DESIGN.md,
    "Timing"): on the CPU ``time.perf_counter`` around the whole call; on
    CUDA, CUDA events around the kernels the thesis counts (§6.5), the first
    call (NVRTC compile or cache load) reported apart as ``first_call_ms``.
    ``warmup`` untimed calls, then ``repeats`` timed ones. On the CUDA
    backend ``weights`` must be a CuPy array (host-to-device copies are not
    part of the thesis's times)."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got {repeats} and {warmup}")
    m = _ancestor_method(method)
    where = resolve_backend(backend, m.gpu is not None)
    if where == "cuda":
        if not is_device_array(weights):
            raise TypeError("timing on the CUDA backend needs a CuPy array of weights")
        from .cuda import run

        call = prepare(weights, m, True, B, segment_bytes, params)
        return run.time_resample(m, call.w, seed, call.kw, call.params, repeats, warmup)

    def once():
        start = time.perf_counter()
        resample(
            weights, method, seed=seed, B=B, segment_bytes=segment_bytes, backend="cpu", **params
        )
        return (time.perf_counter() - start) * 1e3

    first = once()
    for _ in range(max(warmup - 1, 0)):
        once()
    times = tuple(once() for _ in range(repeats))
    return Timing(statistics.median(times), times, "cpu", cpu_name(), first)
