"""Pieces the benchmark scripts share: the size syntax of their command lines,
the version of the `particles` peer library, and writing their CSV."""

from __future__ import annotations

import argparse
import csv
from importlib import metadata
from pathlib import Path


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


def write_rows(path: Path, rows: list[dict], fields=None, announce=True) -> None:
    """``rows`` as a CSV file at ``path`` (its folder made), columns ``fields``
    (default: the first row's keys; keys not among them are left out)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields or list(rows[0]), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    if announce:
        print(f"# wrote {path}")
