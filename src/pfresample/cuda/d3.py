"""Launcher of D3 resampling (Das et al. 2014, ``d3.cu``): the contract is
``pfresample.resampling.d3``'s."""

from __future__ import annotations


def d3(x, w, pw, key, *, noise: str, cdf: str, precision=None, threads=None, out=None):
    """D3 on the device: the new particles (a CuPy array shaped like ``x``)."""
    raise NotImplementedError("the D3 CUDA kernel is being written")
