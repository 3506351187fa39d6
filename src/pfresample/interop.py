"""Arrays of other libraries in and out of the resampling API, without copies.

A particle filter whose weights live in PyTorch or JAX passes them through
:func:`to_native`, gives the array it gets to ``pfresample.resample`` (or
``resample_many``, ``resample_each_B``), and passes the ancestors through the
``restore`` it got back: the filter receives its own kind of array, on the
device its weights came from. Both ways go through DLPack or
``__cuda_array_interface__``, so no data is copied and GPU weights make no
round trip through the host:

* NumPy and CuPy arrays, lists, tuples, scalars and anything else that speaks
  neither protocol are returned as they are; ``restore`` is the identity.
* CUDA data (``__cuda_array_interface__``, or a ``__dlpack_device__`` of type
  2, kDLCUDA, or 13, kDLCUDAManaged) becomes a CuPy array on its device.
* CPU data with ``__dlpack__`` (a PyTorch CPU tensor, a JAX CPU array) becomes
  a NumPy array; a CuPy result (the call ran on the GPU) goes to the host first.

``restore`` finds the input's library from ``type(x).__module__``: ``torch``
gives ``torch.from_dlpack``, ``jax``/``jaxlib`` ``jax.numpy.from_dlpack``, any
other library its top-level ``from_dlpack``; without one the CuPy or NumPy
result is returned as it is. PyTorch, JAX and CuPy are imported only when an
input of theirs arrives.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np

from .backend import is_device_array

KDL_CPU = 1
KDL_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def _identity(out):
    return out


def _cupy():
    try:
        import cupy
    except ImportError as exc:
        raise ImportError("CUDA arrays need CuPy: pip install 'pfresample[cuda]'") from exc
    return cupy


def _export(x, convert: Callable):
    """``convert(x)``, the zero-copy view of ``x`` in CuPy or NumPy."""
    # PyTorch refuses to export a tensor that requires grad (DLPack carries no
    # autograd graph): its detached tensor shares the memory, and ancestors
    # have no gradient anyway.
    if getattr(x, "requires_grad", False) and hasattr(x, "detach"):
        x = x.detach()
    try:
        return convert(x)
    except (BufferError, RuntimeError):
        # A library that cannot export a strided view: its contiguous copy, the
        # one copy made here (PyTorch exports strided tensors as they are).
        if not hasattr(x, "contiguous"):
            raise
        return convert(x.contiguous())


def _from_dlpack(x) -> Callable | None:
    """The ``from_dlpack`` of the library that made ``x``, or None."""
    root = type(x).__module__.split(".")[0]
    if root in ("jax", "jaxlib"):
        return importlib.import_module("jax.numpy").from_dlpack
    try:
        module = importlib.import_module(root)  # torch: torch.from_dlpack
    except ImportError:
        return None
    return getattr(module, "from_dlpack", None)


def to_native(x) -> tuple[object, Callable]:
    """``(array, restore)``: ``x`` as an array the resampling API takes (CuPy
    for CUDA data, NumPy for other CPU data with ``__dlpack__``, else ``x``
    itself), and ``restore(out)``, which gives a result of the API back as
    ``x``'s kind of array on ``x``'s device, zero copy where the devices match.
    """
    if isinstance(x, np.ndarray) or is_device_array(x):
        return x, _identity
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        kind = int(x.__dlpack_device__()[0])
    elif hasattr(x, "__cuda_array_interface__"):
        kind = KDL_CUDA[0]
    elif hasattr(x, "__dlpack__"):
        kind = KDL_CPU  # no device given: a host array, or NumPy says why not
    else:
        return x, _identity
    if kind != KDL_CPU and kind not in KDL_CUDA:
        raise TypeError(
            f"{type(x).__name__} lives on DLPack device type {kind}; "
            f"pfresample takes CPU ({KDL_CPU}) or CUDA {KDL_CUDA} arrays"
        )
    back = _from_dlpack(x)
    if kind in KDL_CUDA:
        cupy = _cupy()
        array = _export(x, cupy.from_dlpack if hasattr(x, "__dlpack__") else cupy.asarray)

        def restore(out):
            if not is_device_array(out):  # a host result (offspring counts): to x's device
                with array.device:
                    out = cupy.asarray(out)
            return out if back is None else back(out)

    else:
        array = _export(x, np.from_dlpack)

        def restore(out):
            if is_device_array(out):  # the call ran on the GPU: to the host, as x was
                out = out.get()
            return out if back is None else back(out)

    return array, restore


def restore_each(outs, restore: Callable) -> list:
    """``[restore(out) for out in outs]``, e.g. for the list of ``resample_each_B``."""
    return [restore(out) for out in outs]
