"""Resampling methods: the registry and the CPU reference kernels."""

from .registry import REGISTRY, Method, get_method

__all__ = ["REGISTRY", "Method", "get_method"]
