"""The CUDA sources of ``gpu_kernels/`` and their compilation.

The sources ship inside the package (``pfresample/gpu_kernels`` in a wheel; the
top-level ``gpu_kernels/`` folder of a checkout, mapped to the same package by
``pyproject.toml``), so :func:`kernel_dir` finds them the same way from both.

Each ``.cu`` file is one family of kernels; all draw their random numbers
from ``philox.cuh`` under the contract of ``pfresample.rng``. Sources are
compiled by NVRTC (``cupy.RawModule``) once per process, the first time a
family is used; CuPy keeps the binaries in its on-disk kernel cache
(``~/.cupy/kernel_cache``), keyed by the source text. Local
``#include "x.cuh"`` lines are pasted into the source here, so that a change
to a header changes that key too.
"""

from __future__ import annotations

import importlib.resources
import os
import re
from functools import cache
from pathlib import Path

import numpy as np

from ..constants import CandidateScope


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
    ],
    "uphill.cu": [
        f"uphill<{t},{int(scope)},{layout}>"
        for t in CTYPES.values()
        for scope in CandidateScope
        for layout in ("false,false", "true,false", "false,true")  # SHARED, GROUPED
    ],
    "rejection.cu": [f"rejection_{k}<{t}>" for t in CTYPES.values() for k in ("grouped", "queued")],
    "cumulative.cu": [
        f"{k}<{pair}>"
        for k in (
            "scan_tiles",
            "scaled_prefix_sum",
            "systematic",
            "residual_tile_counts",
            "residual_fractions",
            "residual_copies",
        )
        for pair in _PAIRS
    ]
    + [f"inverse_cdf_draws<{t},{s}>" for t in CTYPES.values() for s in ("false", "true")],
    "filter.cu": [f"normalise_estimate<{rows}>" for rows in (1, 4)],
    "reduce.cu": [f"{k}<{t}>" for k in ("weight_stats", "uphill_b") for t in CTYPES.values()],
}

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)


def source(name: str, _seen: set | None = None) -> str:
    """The text of ``gpu_kernels/<name>`` with its local includes pasted in
    (each header once, as ``#pragma once`` would)."""
    seen = set() if _seen is None else _seen
    path = kernel_dir() / name
    if not path.is_file():
        raise FileNotFoundError(
            f"CUDA source {path} not found; set PFRESAMPLE_KERNEL_DIR to the gpu_kernels folder"
        )

    def paste(match: re.Match) -> str:
        header = match.group(1)
        if header in seen:
            return ""
        seen.add(header)
        return source(header, seen)

    return _INCLUDE.sub(paste, path.read_text())


@cache
def module(name: str):
    """The compiled module of ``gpu_kernels/<name>`` (compiled once per process)."""
    import cupy

    return cupy.RawModule(
        code=source(name), options=COMPILE_OPTIONS, name_expressions=_TEMPLATES.get(name, [])
    )


@cache
def kernel(name: str, function: str):
    """A kernel of a family; templates by their name expression. Cached:
    looking a function up costs host time on every launch otherwise."""
    return module(name).get_function(function)


def flag(value: bool) -> str:
    """A bool template argument, as C++ spells it."""
    return "true" if value else "false"
