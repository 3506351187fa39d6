"""Pieces the benchmark scripts share: the size syntax of their command lines
and the version of the `particles` peer library."""

from __future__ import annotations

import argparse
from importlib import metadata


def parse_size(text: str) -> int:
    """``65536``, ``2^16`` or ``2**16`` -> 65536."""
    for sep in ("**", "^"):
        if sep in text:
            base, exp = text.split(sep, 1)
            value = int(base) ** int(exp)
            break
    else:
        value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be >= 1, got {text!r}")
    return value


def particles_version() -> str | None:
    """The installed `particles` library's version, or None without it."""
    try:
        return metadata.version("particles")
    except metadata.PackageNotFoundError:
        try:
            import particles
        except ImportError:
            return None
        return getattr(particles, "__version__", "unknown")
