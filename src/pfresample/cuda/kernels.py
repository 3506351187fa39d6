"""The CUDA sources of ``gpu_kernels/`` and their compilation.

The sources ship inside the package (``pfresample/gpu_kernels`` in a wheel; the
top-level ``gpu_kernels/`` folder of a checkout, mapped to the same package by
``pyproject.toml``), so :func:`kernel_dir` finds them the same way from both.

Each ``.cu`` file is one family of kernels; all draw their random numbers
from ``philox.cuh`` under the contract of ``pfresample.rng``. Sources are
compiled by NVRTC once per process, the first time a family is used, and the
binaries kept on disk (:func:`binary_cache`), keyed by the source text, the
options, the device's architecture and NVRTC's version. Local
``#include "x.cuh"`` lines are pasted into the source here, so that a change
to a header changes that key too.

The compile goes through ``cupy.cuda.compiler.compile_using_nvrtc`` and a
``cupy.cuda.function.Module``, not ``cupy.RawModule``: RawModule appends
``-ftz=true`` to every compile, which flushes subnormal float32 values to
zero -- and subnormal weights are weights (docs/library.md).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import re
from functools import cache
from pathlib import Path

import numpy as np

from ..constants import CandidateScope
from . import settings
from .settings import GLOBAL_LOADS


def kernel_dir() -> Path:
    """The folder of the CUDA sources: ``PFRESAMPLE_KERNEL_DIR`` when set,
    else the package data ``pfresample.gpu_kernels``."""
    override = os.environ.get("PFRESAMPLE_KERNEL_DIR")
    if override:
        return Path(override)
    return Path(str(importlib.resources.files("pfresample.gpu_kernels")))


# --fmad=false: no fused multiply-adds, so that every floating-point
# expression rounds as NumPy's does (B and the cumulative sums depend on it);
# --ftz=false: subnormal weights are weights, never flushed to zero.
COMPILE_OPTIONS = ("-std=c++17", "--fmad=false", "--ftz=false")
# The fast-math build of a family (the cellular filter's Fig 11 compares it,
# as Gelencsér-Horváth et al. compare -use_fast_math): approximate
# transcendentals and division, fused multiply-adds, subnormals flushed.
FAST_MATH_OPTIONS = ("-std=c++17", "--use_fast_math")

# The builds of the global loads (GLOBAL_LOADS) are settings.py's: a caller chooses one.


def global_loads(loads: str | None = None) -> str:
    """``loads``, or the build that ``settings.launch_settings`` chose for
    the code around the call, else "nc" (the library's)."""
    value = loads if loads is not None else settings.loads() or "nc"
    if value not in GLOBAL_LOADS:
        known = ", ".join(GLOBAL_LOADS)
        raise ValueError(f"global loads must be one of {known}, got {value!r}")
    return value


def build_options(fast_math: bool = False, loads: str | None = None) -> tuple:
    """The NVRTC options of a build: COMPILE_OPTIONS or FAST_MATH_OPTIONS,
    then the options of its global loads (:data:`GLOBAL_LOADS`)."""
    base = FAST_MATH_OPTIONS if fast_math else COMPILE_OPTIONS
    return base + GLOBAL_LOADS[global_loads(loads)]


NULL = np.uint64(0)  # a null pointer argument (an optional buffer left out)

# The C++ type of each weight precision.
CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_PAIRS = [f"{w},{t}" for w in CTYPES.values() for t in CTYPES.values()]  # weights, precision

# Instantiations of each family's templates, for NVRTC's name expressions.
_TEMPLATES = {
    "metropolis.cu": [
        f"metropolis<{t},{int(scope)},{shared}>"
        for t in CTYPES.values()
        for scope in CandidateScope
        for shared in ("false", "true")
    ]
    + [f"megopolis<{t},{shared}>" for t in CTYPES.values() for shared in ("false", "true")],
    "uphill.cu": [
        f"uphill<{t},{int(scope)},{layout}>"
        for t in CTYPES.values()
        for scope in CandidateScope
        for layout in ("false,false", "true,false", "false,true")  # SHARED, GROUPED
    ],
    # geometry.fused_slice_items's two sizes, on the cooperative grid and on a
    # grid of one cluster of each of geometry.FUSED_CLUSTERS's sizes
    # (geometry imports this module)
    "fused.cu": [f"growth_systematic_run<{k}>" for k in (4, 16)]
    + [f"growth_systematic_cluster_run<{k},{c}>" for k in (4, 16) for c in (8, 16)],
    "rejection.cu": [
        f"rejection_{k}<{t}>" for t in CTYPES.values() for k in ("grouped", "queued", "tail")
    ],
    "cumulative.cu": [
        f"{k}<{pair}>"
        for k in ("residual_tile_counts", "residual_fractions", "residual_copies")
        for pair in _PAIRS
    ]
    + [
        f"{k}<{pair},{scaled}>"
        for k in ("scan_tiles", "scaled_prefix_sum", "systematic")
        for pair in _PAIRS
        for scaled in ("false", "true")
    ]
    + [f"inverse_cdf_draws<{t},{s}>" for t in CTYPES.values() for s in ("false", "true")]
    + [f"log_scan_tiles<{t}>" for t in CTYPES.values()],
    "butterfly.cu": [f"stage_sums<{pair}>" for pair in _PAIRS]
    + [f"stage_draws<{t},{d}>" for t in CTYPES.values() for d in range(3)]
    + [f"first_stage<{pair},{d}>" for pair in _PAIRS for d in range(3)]
    + [f"ess_gate<{pair}>" for pair in _PAIRS]
    + [f"stage_weights<{t}>" for t in CTYPES.values()],
    "filter.cu": [
        f"{k}<{rows}>" for k in ("normalise_estimate", "exp_total_estimate") for rows in (1, 2, 4)
    ]
    + [f"normalise_estimate_any<{rows}>" for rows in (2,)],
    "reduce.cu": [f"{k}<{t}>" for k in ("weight_stats", "uphill_b") for t in CTYPES.values()],
    "logweights.cu": [
        f"{k}<{t}>" for k in ("log_to_weights", "scale_weights") for t in CTYPES.values()
    ],
    "cellular.cu": [f"cellular<{t},{s}>" for t in CTYPES.values() for s in ("false", "true")]
    # cpf_step's (neighbourhood, precision) kernels: cellular_gpu.KERNELS
    + [
        f"cpf_{m}_step<{mode},{real}>"
        for m in ("growth", "bot")
        for mode, real in ((0, "double"), (1, "double"), (2, "double"), (1, "float"), (2, "float"))
    ],
    "d3.cu": [
        f"{k}<{w}>" for k in ("d3_local_strides", "d3_paper_strides") for w in CTYPES.values()
    ]
    + [
        f"d3_moves<{s},{w},{p}>"
        for s in CTYPES.values()
        for w in CTYPES.values()
        for p in CTYPES.values()  # states, weights, prior weights
    ]
    + [f"d3_claims<{s}>" for s in CTYPES.values()],
}

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)


def source(name: str, _seen: set | None = None, root: Path | None = None) -> str:
    """The text of ``gpu_kernels/<name>`` (or of ``root/<name>``: a caller's own CUDA
    sources, such as a study's) with its local includes, looked up in the same
    folder, pasted in (each header once, as ``#pragma once`` would)."""
    seen = set() if _seen is None else _seen
    path = (root or kernel_dir()) / name
    if not path.is_file():
        raise FileNotFoundError(
            f"CUDA source {path} not found; set PFRESAMPLE_KERNEL_DIR to the gpu_kernels folder"
        )

    def paste(match: re.Match) -> str:
        header = match.group(1)
        if header in seen:
            return ""
        seen.add(header)
        return source(header, seen, root)

    return _INCLUDE.sub(paste, path.read_text())


def binary_cache() -> Path:
    """Where compiled kernels are kept: ``PFRESAMPLE_KERNEL_CACHE``, else
    ``pfresample/`` in CuPy's cache folder (``CUPY_CACHE_DIR`` or
    ``~/.cupy/kernel_cache``)."""
    override = os.environ.get("PFRESAMPLE_KERNEL_CACHE")
    if override:
        return Path(override)
    cupy_cache = os.environ.get("CUPY_CACHE_DIR", str(Path.home() / ".cupy" / "kernel_cache"))
    return Path(cupy_cache) / "pfresample"


def compile_source(code: str, options=COMPILE_OPTIONS, name_expressions=()) -> tuple:
    """``(binary, lowered names)`` of a source for the current device, from
    the on-disk cache or compiled by NVRTC with exactly ``options``. The
    cache file is written atomically (a rename), so concurrent processes
    never read half a binary."""
    import cupy
    from cupy.cuda import compiler

    arch = cupy.cuda.Device().compute_capability
    version = compiler._get_nvrtc_version()
    key = json.dumps([code, list(options), list(name_expressions), arch, version])
    path = binary_cache() / hashlib.sha256(key.encode()).hexdigest()
    if path.is_file():
        entry = json.loads(path.read_text())
        return bytes.fromhex(entry["binary"]), entry["names"]
    binary, names = compiler.compile_using_nvrtc(
        code, options=tuple(options), name_expressions=list(name_expressions) or None
    )
    binary = binary if isinstance(binary, bytes) else binary.encode()
    names = dict(names or {})
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps({"binary": binary.hex(), "names": names}))
    temporary.replace(path)
    return binary, names


class Module:
    """A compiled source: its functions by name or template name expression."""

    def __init__(self, code: str, name_expressions=(), options=COMPILE_OPTIONS):
        from cupy.cuda import function

        binary, self.names = compile_source(code, options, name_expressions)
        self.module = function.Module()
        self.module.load(binary)

    def get_function(self, name: str):
        """The function ``name``: an ``extern "C"`` name, or a template
        instantiation listed when the module was compiled."""
        return self.module.get_function(self.names.get(name, name))


def module(name: str, fast_math: bool = False, loads: str | None = None) -> Module:
    """The compiled module of ``gpu_kernels/<name>`` (compiled once per
    process and build), with :func:`build_options`."""
    return _module(name, build_options(fast_math, loads))


@cache
def _module(name: str, options: tuple) -> Module:
    return Module(source(name), _TEMPLATES.get(name, ()), options)


def kernel(name: str, function: str, fast_math: bool = False, loads: str | None = None):
    """A kernel of a family (a ``cupy.cuda.function.Function``: call it with
    ``(grid, block, args)``); templates by their name expression; the build
    of :func:`global_loads` (``loads``, or the one ``launch_settings`` chose)."""
    return _kernel(name, function, fast_math, global_loads(loads))


@cache
def _kernel(name: str, function: str, fast_math: bool, loads: str):
    # Cached: looking a function up costs host time on every launch otherwise.
    return module(name, fast_math, loads).get_function(function)


def templates(name: str) -> tuple[str, ...]:
    """The template instantiations of ``gpu_kernels/<name>`` that are compiled
    (their name expressions, as :func:`kernel` takes them)."""
    return tuple(_TEMPLATES.get(name, ()))


def flag(value: bool) -> str:
    """A bool template argument, as C++ spells it."""
    return "true" if value else "false"
