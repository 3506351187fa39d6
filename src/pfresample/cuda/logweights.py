"""Log-weights to weights on the device (``logweights.cu``): the same bits as
:func:`pfresample.logweights.to_weights` on the host (its Taylor series,
uploaded once per device)."""

from __future__ import annotations

from functools import cache

import numpy as np

from ..logweights import TAYLOR, check_log_weights
from .geometry import MAP_THREADS, blocks
from .kernels import CTYPES, kernel


@cache
def _device_taylor(device_id: int):
    """TAYLOR on the device ``device_id`` (the current one), uploaded once."""
    import cupy

    return cupy.asarray(TAYLOR)


def to_weights_device(lw):
    """:func:`to_weights` on the device (a CuPy array), the same bits."""
    import cupy

    lw = cupy.ascontiguousarray(lw)  # the kernel reads lw[i] of a dense array
    top = check_log_weights(lw, cupy)
    w = cupy.empty_like(lw)
    coefficients = _device_taylor(cupy.cuda.Device().id)
    n = lw.size
    kernel("logweights.cu", f"log_to_weights<{CTYPES[lw.dtype]}>")(
        (blocks(n, MAP_THREADS),),
        (MAP_THREADS,),
        (lw, np.int64(n), np.float64(top), coefficients, np.int32(TAYLOR.size), w),
    )
    return w
