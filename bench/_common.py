"""Pieces the benchmark scripts share: the size syntax of their command lines,
the version of the `particles` peer library, the weight families and the
default options of a timed call, the CUDA device's description, the host's
description every row of the best-CPU benches carries (``host``, ``gpu``), writing
their CSV, and the d3_2014 study's configuration at the paper's scale."""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
from importlib import metadata
from pathlib import Path

import yaml

import pfresample as pr
from pfresample.timing import cpu_name
from pfresample_studies.pipeline import tables
from pfresample_studies.pipeline.jobs import gpu  # noqa: F401 -- the benches take it from here
from pfresample_studies.pipeline.tables import Rows  # noqa: F401 -- the benches take it from here

REPO = Path(__file__).resolve().parents[1]

# The weight families the GPU benchmarks run on (pfresample_studies.dulger2017.weights):
# thesis eq. 2.33 with y = 4, and gamma with shape 1, scale 2.
DISTRIBUTIONS = ("eq233-y4", "gamma-k1-s2")


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
    """``rows`` as a CSV file at ``path`` (``pipeline.tables.write_rows``), and a line
    that names it."""
    tables.write_rows(path, rows, fields)
    if announce:
        print(f"# wrote {path}")


def default_call(w, method, segment_bytes: int, ssd_table=None) -> tuple[int | None, dict]:
    """``(B, kw)`` of a call of ``method`` (a registry entry) on ``w`` as the
    library runs it by default: B as :func:`pfresample.choose_B` chooses it
    (None for a method without B), and the keyword arguments a call takes,
    ``segment_bytes`` for the segmented methods and the Uphill family's
    ``ssd_table`` (computed once per N by the caller, so that B is not a
    table computation per call)."""
    params = {"ssd_table": ssd_table} if method.B_rule == "uphill" else {}
    B = pr.choose_B(w, method.name, **params) if method.B_rule else None
    kw = {"segment_bytes": segment_bytes} if method.segmented else {}
    kw.update(params)
    return B, kw


def cuda_device_info() -> dict:
    """Today's date, CUDA device 0's name, the CUDA runtime's and CuPy's versions."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    version = cupy.cuda.runtime.runtimeGetVersion()
    return {
        "date": datetime.date.today().isoformat(),
        "device": name,
        "cuda": f"{version // 1000}.{version % 1000 // 10}",
        "cupy": cupy.__version__,
    }


def host() -> dict:
    """CPU model, cores, commit, date: the columns every row of a best-CPU bench carries."""
    model = cpu_name()
    root = Path(__file__).resolve().parent.parent
    try:
        git = {"cwd": root, "capture_output": True, "text": True, "check": True}
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], **git).stdout.strip()
        status = ["git", "status", "--porcelain", "--untracked-files=no"]
        dirty = subprocess.run(status, **git).stdout.strip()
        commit += "-dirty" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = os.environ.get("PFRESAMPLE_COMMIT", "unknown")
    return {"cpu": model, "cores": os.cpu_count(), "commit": commit,
            "date": datetime.date.today().isoformat()}  # fmt: skip


def d3_2014_config() -> dict:
    """config/config.yaml and config/studies/d3_2014.yaml, merged (the paper's scale)."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return cfg | yaml.safe_load((REPO / "config" / "studies" / "d3_2014.yaml").read_text())
