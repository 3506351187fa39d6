"""Which backend runs a call: CPU (NumPy) or CUDA (CuPy).

"auto" picks CUDA when CuPy is importable and sees a device, else the CPU,
and logs the choice once per process. No GPU is not an error: the CPU
backend is the default then. Asking for "cuda" without a device is.
"""

from __future__ import annotations

import logging
from functools import cache, lru_cache

log = logging.getLogger("pfresample")

BACKENDS = ("auto", "cpu", "cuda")
# How figures, tables and artifacts name the backend that ran.
BACKEND_LABELS = {"cpu": "CPU (NumPy)", "cuda": "CUDA (CuPy)"}


@lru_cache(maxsize=1)
def cuda_status() -> tuple[str | None, str]:
    """``(name, why)``: the name of CUDA device 0 as CuPy sees it, or None
    (no CuPy, no device), and a line that says which."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy that cannot load CUDA
        return None, f"CuPy not importable ({type(exc).__name__})"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "CuPy sees no CUDA device"
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    except Exception as exc:  # no driver, no device
        return None, f"CuPy sees no CUDA device ({type(exc).__name__})"
    name = name.decode() if isinstance(name, bytes) else str(name)
    return name, f"CUDA device 0: {name}"


def cuda_device() -> str | None:
    """Name of CUDA device 0 as CuPy sees it, or None (no CuPy, no device)."""
    return cuda_status()[0]


def is_device_array(x) -> bool:
    """True for a CuPy array (checked without importing CuPy)."""
    return type(x).__module__.split(".")[0] == "cupy"


def array_module(x):
    """The array module of ``x``: CuPy for a CuPy array, else NumPy. A model
    that computes with ``array_module(x)`` runs on either backend
    (``run_filter``'s GPU path for such models, ``filters.device``)."""
    if is_device_array(x):
        import cupy

        return cupy
    import numpy

    return numpy


@cache
def _log_choice(message: str) -> None:
    log.info(message)


def resolve_backend(
    backend: str, has_gpu_code: bool = True, *, fallback: str | None = None, log_to=None
) -> str:
    """Resolve ``backend`` ("auto", "cpu" or "cuda") to "cpu" or "cuda", the one
    resolver of the library and the studies. ``has_gpu_code``: whether what
    runs (a method, a filter on a model) has CUDA code. "auto" is CUDA where a
    device is visible and the code exists, else the CPU, logged once. "cuda"
    without a device raises; "cuda" without the code raises too, unless
    ``fallback`` names what runs (a pipeline cell): it then runs on the CPU
    with a warning naming it (to ``log_to``, default the library's log)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "cpu":
        return "cpu"
    if backend == "cuda" and not has_gpu_code and fallback is not None:
        (log_to or log).warning("%s has no GPU code: it runs on the CPU", fallback)
        return "cpu"
    device = cuda_device()
    if backend == "cuda":
        if device is None:
            raise RuntimeError(
                "backend='cuda' was asked for, but no CUDA device is visible "
                "(CuPy missing or no GPU); use backend='cpu' or 'auto'"
            )
        if not has_gpu_code:
            raise NotImplementedError("this method has no CUDA kernel; use backend='cpu'")
        return "cuda"
    if device is not None and has_gpu_code:
        _log_choice(f"pfresample: backend 'auto' -> cuda ({device})")
        return "cuda"
    reason = "no CUDA device found" if device is None else "the method has no CUDA kernel"
    _log_choice(f"pfresample: backend 'auto' -> cpu ({reason})")
    return "cpu"
