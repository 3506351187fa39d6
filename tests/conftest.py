"""Shared pytest configuration: skip ``@pytest.mark.gpu`` tests where no CUDA device is usable.

``make test`` (``pytest -m "not gpu"``) deselects them anyway; this hook is for a plain
``pytest`` run on a CPU-only machine, where they are reported as skipped with the reason.
"""

from __future__ import annotations

import functools

import pytest


@functools.cache
def _no_cuda_reason() -> str | None:
    """Why GPU tests cannot run here, or None when CuPy sees at least one CUDA device."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install failing at import
        return f"CuPy is not importable ({type(exc).__name__}: {exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError: no driver, no device, ...
        return f"CuPy sees no CUDA device ({type(exc).__name__}: {exc})"
    if count < 1:
        return "CuPy sees no CUDA device (device count is 0)"
    return None


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items:
        return
    reason = _no_cuda_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA device: {reason}")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture
def native_build(tmp_path_factory, monkeypatch):
    """The studies' compiled CPU code, built into this session's temporary cache; the test
    is skipped, saying why, where the host has no C compiler."""
    monkeypatch.setenv("PFRESAMPLE_NATIVE_CACHE", str(tmp_path_factory.getbasetemp() / "native"))
    from pfresample_studies.pipeline import cbuild

    try:
        cbuild.compiler()
    except RuntimeError as exc:
        pytest.skip(str(exc))
