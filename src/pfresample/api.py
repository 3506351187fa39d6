"""The public entry points: ``resample``, ``resample_many``,
``resample_each_B``, ``methods``, ``offspring`` and ``choose_B``."""

from __future__ import annotations

import logging
import numbers

import numpy as np

from .backend import is_device_array, select_backend
from .constants import DEFAULT_SEGMENT_BYTES, EPSILON_RESAMPLING
from .resampling.registry import REGISTRY, Method, get_method
from .rng import seed_keys
from .tuning import metropolis_B, uphill_B
from .validation import check_int, check_weights, segment_geometry, weight_array

log = logging.getLogger("pfresample")

_PRECISIONS = (None, "float32", "float64")


def methods() -> tuple[str, ...]:
    """Names of every resampling method in the registry."""
    return tuple(REGISTRY)


def check_params(m: Method, params: dict) -> dict:
    unknown = sorted(set(params) - set(m.params))
    if unknown:
        accepted = ", ".join(m.params) or "none"
        names = ", ".join(unknown)
        raise TypeError(f"method {m.name!r} got unknown parameter(s) {names}; accepted: {accepted}")
    if "precision" in params and params["precision"] not in _PRECISIONS:
        raise ValueError(f"precision must be 'float32' or 'float64', got {params['precision']!r}")
    if "epsilon" in params:
        eps = params["epsilon"]
        if not isinstance(eps, numbers.Real) or not 0.0 < float(eps) < 1.0:
            raise ValueError(f"epsilon must be a number in (0, 1), got {eps!r}")
    return params


def choose_B(weights, method, **params) -> int:
    """The B a method uses when none is given: Murray et al.'s formula for the
    Metropolis family (``epsilon``, default 1/100), the SSD match for the
    Uphill family (``ssd_table``, computed for this N when not given).
    On a CuPy array the device computes it (the same B, tests/test_gpu.py)."""
    m = get_method(method)
    params = check_params(m, params)
    if m.uses_B is not None and is_device_array(weights) and m.gpu is not None:
        from .resampling import gpu

        return gpu.choose_B(m, weights, params)
    return _default_B(m, check_weights(weights), params)


def _default_B(m: Method, w: np.ndarray, params: dict) -> int:
    """``choose_B`` on weights and parameters already checked."""
    if m.uses_B == "metropolis":
        return metropolis_B(w, params.get("epsilon", EPSILON_RESAMPLING))
    if m.uses_B == "uphill":
        return uphill_B(w, params.get("ssd_table"))
    raise TypeError(f"method {m.name!r} has no B parameter")


def kernel_arguments(m: Method, n: int, itemsize: int, B, segment_bytes, params: dict) -> dict:
    """Keyword arguments of ``m``'s kernels, every one checked; ``B`` stays
    None when not given (each backend then chooses it)."""
    kw = {}
    if m.uses_B is None:
        if B is not None:
            raise TypeError(f"method {m.name!r} takes no B")
    else:
        kw["B"] = None if B is None else check_int(B, "B")
    if m.segmented:
        ss = DEFAULT_SEGMENT_BYTES if segment_bytes is None else segment_bytes
        kw["dc"], kw["sc"] = segment_geometry(n, ss, itemsize)
    elif segment_bytes is not None:
        raise TypeError(f"method {m.name!r} takes no segment_bytes (it has no s-segments)")
    elif m.uses_B is not None:
        kw["dc"], kw["sc"] = n, 1
    if "precision" in params:
        kw["precision"] = params["precision"]
    return kw


def _seed_list(seeds) -> list:
    """``seeds`` as a non-empty list of Python ints (object dtype keeps 64-bit seeds exact)."""
    seeds = list(np.asarray(seeds, dtype=object).ravel())
    if not seeds:
        raise ValueError("seeds is empty: need at least one seed")
    return seeds


def resample_many(weights, method, *, seeds, B=None, segment_bytes=None, backend="auto", **params):
    """K resamplings of the same weights, one per seed: row k of the (K, N)
    int32 result equals ``resample(weights, method, seed=seeds[k], ...)``.
    The result is a CuPy array for CuPy weights, else a NumPy array."""
    m = get_method(method)
    params = check_params(m, params)
    on_device = is_device_array(weights)
    where = select_backend(backend, weights, m.gpu is not None)
    seeds = _seed_list(seeds)
    if where == "cuda":
        import cupy

        from .resampling import gpu

        w = weight_array(weights, cupy)
        kw = kernel_arguments(m, w.size, w.itemsize, B, segment_bytes, params)
        ancestors = gpu.resample_many(m, w, seeds, kw, params)
        return ancestors if on_device else ancestors.get()
    if on_device:
        log.info("pfresample: %s on a CuPy array ran on the CPU (backend=%r)", m.name, backend)
    w = check_weights(weights.get() if on_device else weights)
    kw = kernel_arguments(m, w.size, w.itemsize, B, segment_bytes, params)
    if kw.get("B", 0) is None:
        kw["B"] = _default_B(m, w, params)
    ancestors = m.cpu(w, seed_keys(seeds), **kw)
    if on_device:
        import cupy

        return cupy.asarray(ancestors)
    return ancestors


def resample_each_B(weights, method, *, seeds, Bs, segment_bytes=None, backend="auto"):
    """``[resample_many(weights, method, seeds=seeds, B=B, ...) for B in Bs]``.

    On the GPU the Metropolis family computes them in one pass: iteration m's
    draws depend on (seed, particle, m) alone, so the chain after the
    smaller B is the first part of the chain after the larger one, and the
    kernel continues the chains from one B to the next (thesis §5.3's
    reduced-B Metropolis for the cost of the largest B). Elsewhere each B is
    a run of its own; the results are the same (tests/test_gpu.py)."""
    m = get_method(method)
    if m.uses_B is None:
        raise TypeError(f"method {m.name!r} has no B parameter")
    Bs = [check_int(B, "B") for B in Bs]
    where = select_backend(backend, weights, m.gpu is not None)
    if where == "cuda" and is_device_array(weights):
        import cupy

        from .resampling import gpu

        if m.gpu in gpu.CONTINUABLE:
            w = weight_array(weights, cupy)
            kws = [kernel_arguments(m, w.size, w.itemsize, B, segment_bytes, {}) for B in Bs]
            return gpu.continue_chains(m, w, _seed_list(seeds), kws)
    return [
        resample_many(
            weights, method, seeds=seeds, B=B, segment_bytes=segment_bytes, backend=backend
        )
        for B in Bs
    ]


def resample(weights, method, *, seed, B=None, segment_bytes=None, backend="auto", **params):
    """Resample: the ancestor indices (int32, length N) of the new particles,
    ``x_new[i] = x[ancestors[i]]``.

    ``weights`` are unnormalised, finite and non-negative (float32 by default,
    float64 kept as is). ``seed`` (0 <= seed < 2^64) fixes every random number
    (see ``pfresample.rng``). ``B`` is the inner-loop length of the Metropolis
    and Uphill families (chosen by :func:`choose_B` when None);
    ``segment_bytes`` the s-segment size of the coalesced variants (default
    128). ``backend`` is "auto", "cpu" or "cuda". Extra ``params``: see
    ``pfresample.methods()`` and each method's ``params`` in the registry.
    """
    return resample_many(
        weights, method, seeds=[seed], B=B, segment_bytes=segment_bytes, backend=backend, **params
    )[0]


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
