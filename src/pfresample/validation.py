"""Checks of user input, shared by every backend: each failure is a
``ValueError`` or ``TypeError`` whose message names the problem."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .constants import CELLULAR_DEFAULT_RADIUS, DEFAULT_SEGMENT_BYTES, MAX_PARTICLES
from .contracts import D3_CDFS, D3_NOISES, check_d3_threads
from .radix import check_radix


def weight_array(weights, xp=np) -> object:
    """``weights`` as a 1-D float32/float64 array of the backend ``xp``, its
    shape and type checked (the values are :func:`check_weights`'s job).

    Float32 and float64 arrays are kept as they are; float16 becomes float32
    and other real types float64 (a Python list of floats is float64 already).
    """
    w = xp.asarray(weights)
    if w.dtype == np.float16:
        w = w.astype(np.float32)
    elif w.dtype.kind in "iub":
        w = w.astype(np.float64)
    elif w.dtype.kind != "f":
        raise TypeError(f"weights must be real numbers, got dtype {w.dtype}")
    if w.ndim != 1:
        raise ValueError(f"weights must be a 1-D array, got shape {tuple(w.shape)}")
    n = int(w.shape[0])
    if n == 0:
        raise ValueError("weights is empty: need at least one particle")
    if n > MAX_PARTICLES:
        raise ValueError(f"{n} particles do not fit int32 ancestors (at most {MAX_PARTICLES})")
    return w


def bad_weight_error(index: int, value: float) -> ValueError:
    """The error for a NaN, infinite or negative weight at ``index``."""
    what = "NaN" if value != value else ("infinite" if abs(value) == float("inf") else "negative")
    return ValueError(f"weights[{index}] is {what} ({value}): weights must be finite and >= 0")


ALL_ZERO = "all weights are zero: at least one must be positive"


def check_weights(weights, xp=np) -> object:
    """Return ``weights`` as a 1-D float32/float64 array of the backend ``xp``
    (see :func:`weight_array`), or raise naming the first bad entry.

    Weights need not sum to one, but must be finite, non-negative and not all
    zero.
    """
    w = weight_array(weights, xp)
    low, high = w.min(), w.max()  # NaN propagates into both
    if not (low >= 0 and high < float("inf")):
        i = int(xp.flatnonzero(~xp.isfinite(w) | (w < 0))[0])
        raise bad_weight_error(i, float(w[i]))
    if not high > 0:
        raise ValueError(ALL_ZERO)
    return w


def check_int(value, name: str, *, minimum: int = 0) -> int:
    """An integer parameter (``B``, a seed, a segment size) at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def segment_geometry(n: int, segment_bytes: int, itemsize: int) -> tuple[int, int]:
    """``(DC, SC)`` of an s-segment of ``segment_bytes`` bytes over ``n``
    weights of ``itemsize`` bytes (thesis §5.1: DC = SS/4, SC = 4N/SS).

    SS is clamped to the whole array (``n * itemsize`` bytes), so that a large
    SS turns the coalesced variants into their parents. N must then be a
    multiple of DC; the thesis asks for powers of two, which always are.
    """
    segment_bytes = check_int(segment_bytes, "segment_bytes", minimum=1)
    if segment_bytes % itemsize:
        raise ValueError(
            f"segment_bytes={segment_bytes} is not a multiple of the weight size ({itemsize} bytes)"
        )
    per_segment = min(segment_bytes // itemsize, n)
    if n % per_segment:
        raise ValueError(
            f"N={n} is not compatible with segment_bytes={segment_bytes}: an s-segment holds "
            f"{per_segment} weights and N must be a multiple of that (use a power of two for N)"
        )
    return per_segment, n // per_segment


# --- method parameters -----------------------------------------------------------

_PRECISIONS = (None, "float32", "float64")
LOG_PRECISION = "log32"  # Güldaş Appendix A's float32 log-domain scan (methods with log_offset)


def check_params(m, params: dict) -> dict:
    """``params``, the extra keyword parameters of method ``m`` (a registry
    entry), each checked: unknown names are a ``TypeError``."""
    unknown = sorted(set(params) - set(m.params))
    if unknown:
        accepted = ", ".join(m.params) or "none"
        names = ", ".join(unknown)
        raise TypeError(f"method {m.name!r} got unknown parameter(s) {names}; accepted: {accepted}")
    if "precision" in params and params["precision"] not in _PRECISIONS:
        log_ok = "log_offset" in m.params and params["precision"] == LOG_PRECISION
        if not log_ok:
            allowed = "'float32', 'float64'" + (", 'log32'" if "log_offset" in m.params else "")
            raise ValueError(f"precision must be one of {allowed}, got {params['precision']!r}")
    if "log_offset" in params:
        offset = params["log_offset"]
        if params.get("precision") != LOG_PRECISION:
            raise TypeError(
                "log_offset is the level of the log-domain scan: it needs precision='log32'"
            )
        if not isinstance(offset, numbers.Real) or not math.isfinite(float(offset)):
            raise ValueError(f"log_offset must be a finite number, got {offset!r}")
    if "noise" in params and params["noise"] not in D3_NOISES:
        raise ValueError(f"noise must be one of {', '.join(D3_NOISES)}, got {params['noise']!r}")
    if "cdf" in params and params["cdf"] not in D3_CDFS:
        raise ValueError(f"cdf must be one of {', '.join(D3_CDFS)}, got {params['cdf']!r}")
    if params.get("threads") is not None:
        params = {**params, "threads": check_d3_threads(params["threads"])}
    if "epsilon" in params:
        eps = params["epsilon"]
        if not isinstance(eps, numbers.Real) or not 0.0 < float(eps) < 1.0:
            raise ValueError(f"epsilon must be a number in (0, 1), got {eps!r}")
    return params


def kernel_arguments(m, n: int, itemsize: int, B, segment_bytes, params: dict) -> dict:
    """Keyword arguments of ``m``'s kernels (CPU and CUDA alike), every one
    checked: ``B`` (None when not given: each backend then chooses it), the
    s-segment geometry ``per_segment`` (DC, weights per s-segment) and
    ``segments`` (SC), ``precision``, and the butterfly's ``radix`` (its
    default sequence when not given)."""
    kw = {}
    if m.B_rule is None:
        if B is not None:
            raise TypeError(f"method {m.name!r} takes no B")
    else:
        kw["B"] = None if B is None else check_int(B, "B")
    if m.segmented:
        ss = DEFAULT_SEGMENT_BYTES if segment_bytes is None else segment_bytes
        kw["per_segment"], kw["segments"] = segment_geometry(n, ss, itemsize)
    elif segment_bytes is not None:
        raise TypeError(f"method {m.name!r} takes no segment_bytes (it has no s-segments)")
    elif m.B_rule is not None:
        kw["per_segment"], kw["segments"] = n, 1
    if "precision" in params:
        kw["precision"] = params["precision"]
    if "log_offset" in params:
        kw["log_offset"] = float(params["log_offset"])
    if "radix" in m.params:
        kw["radix"] = check_radix(params.get("radix"), n)
    if "radius" in m.params:
        kw["radius"] = check_radius(params.get("radius"), n)
    return kw


def check_particles(particles, n: int, xp=np):
    """D3's particles: an (N,) or (N, D) float32/float64 array of the
    backend ``xp`` with finite values (other real types become float64)."""
    x = xp.asarray(particles)
    if x.dtype.kind in "iub":
        x = x.astype(np.float64)
    elif x.dtype not in (np.float32, np.float64):
        raise TypeError(f"particles must be float32 or float64, got dtype {x.dtype}")
    if x.ndim not in (1, 2) or int(x.shape[0]) != n:
        raise ValueError(
            f"particles must have shape ({n},) or ({n}, D) to match the weights, "
            f"got {tuple(x.shape)}"
        )
    bad = ~xp.isfinite(x.reshape(n, -1)).all(axis=1)
    if bool(bad.any()):
        i = int(xp.flatnonzero(bad)[0])
        raise ValueError(f"particles[{i}] is not finite: particles must be finite")
    return xp.ascontiguousarray(x)


def check_prior_weights(prior_weights, n: int, xp=np):
    """D3's prior weights, float64 (only compared: -inf and any finite value
    are fine, NaN and +inf are not)."""
    pw = xp.asarray(prior_weights)
    if pw.dtype.kind not in "iuf":
        raise TypeError(f"prior_weights must be real numbers, got dtype {pw.dtype}")
    if pw.shape != (n,):
        raise ValueError(f"prior_weights must have shape ({n},), got {tuple(pw.shape)}")
    pw = pw.astype(np.float64)
    bad = xp.isnan(pw) | (pw == np.inf)
    if bool(bad.any()):
        i = int(xp.flatnonzero(bad)[0])
        raise ValueError(f"prior_weights[{i}] is {float(pw[i])}: NaN and +inf cannot be compared")
    return pw


def check_radius(radius, n: int) -> int:
    """Cellular resampling's neighbourhood radius r: 0 <= r <= N - 1 (a
    larger r would count particles twice); CELLULAR_DEFAULT_RADIUS, capped at
    N - 1, when None."""
    if radius is None:
        return min(CELLULAR_DEFAULT_RADIUS, n - 1)
    radius = check_int(radius, "radius")
    if radius > n - 1:
        raise ValueError(f"radius must be at most N - 1 = {n - 1}, got {radius}")
    return radius
