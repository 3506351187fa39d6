"""Plumbing shared by the scripts/ entry points: logging to the rule's log
file, the provenance record stored with every artifact, and saving a cell.
No algorithm code."""

from __future__ import annotations

import importlib.metadata
import logging
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import numpy as np


def library_version() -> str | None:
    import pfresample

    version = getattr(pfresample, "__version__", None)
    if version is None:
        try:
            version = importlib.metadata.version("pfresample")
        except importlib.metadata.PackageNotFoundError:
            version = None
    return version


COMMIT_ENV = "PFRESAMPLE_COMMIT"  # the commit a copied tree is, named by whoever copied it


def git_revision(path) -> str | None:
    """The commit a result ran: ``$PFRESAMPLE_COMMIT`` where set (a copy of the tree on
    another machine may carry a stale ``.git``, whose HEAD would name an older commit
    for every run), else the commit of the checkout that holds ``path`` (None outside
    git). A set value that is not 7-40 hexadecimal digits is an error, not a record."""
    named = os.environ.get(COMMIT_ENV, "").strip()
    if named:
        if not re.fullmatch(r"[0-9a-fA-F]{7,40}", named):
            raise ValueError(f"{COMMIT_ENV} must be a commit hash (7-40 hex digits), got {named!r}")
        return named.lower()
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def gpu():
    """CuPy and the first device's name, or (None, None) without CuPy or a GPU: the
    experiments and benches that time a GPU beside the CPU, which alone runs without one."""
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 -- no CuPy, no driver, no device: the CPU rows alone
        return None, None
    if count < 1:
        return None, None
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    return cupy, name.decode() if isinstance(name, bytes) else str(name)


def provenance(snakemake) -> dict:
    """Versions and revision that go into every artifact's metadata."""
    scriptdir = Path(snakemake.scriptdir) if snakemake.scriptdir else Path.cwd()
    return {
        "pfresample_version": library_version(),
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "git_revision": git_revision(scriptdir),
        "git_revision_from": "environment" if os.environ.get(COMMIT_ENV, "").strip() else "git",
        "rule": snakemake.rule,
    }


def run(main, snakemake) -> None:
    """Run ``main(snakemake, log)`` with logging to the rule's log file; a
    failure is logged with its traceback before it propagates."""
    log = logging.getLogger(f"pfresample_studies.pipeline.{snakemake.rule}")
    log.setLevel(logging.INFO)
    handler = logging.FileHandler(snakemake.log[0], mode="w") if snakemake.log else None
    handler = handler or logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    logging.captureWarnings(True)
    logging.getLogger("py.warnings").addHandler(handler)
    log.info("rule %s, wildcards %s", snakemake.rule, dict(snakemake.wildcards.items()))
    log.info("params %s", dict(snakemake.params.items()))
    try:
        main(snakemake, log)
    except Exception:
        log.exception("failed")
        raise
    log.info("done: %s", ", ".join(snakemake.output))


def save_cell(snakemake, log, arrays, metadata, claim=None) -> None:
    """Save a cell's ``arrays`` and ``metadata`` (with the scale and the
    provenance) atomically as the rule's first output, logging the GPU the
    job claimed (``claim``, from ``devices.pin_job``) and the backend and
    device that ran it, where the metadata names them."""
    from . import artifacts

    if claim is not None:
        log.info("GPU: device %s (waited %.1f s)", claim.device, claim.waited_s)
    metadata.update(scale=snakemake.params.scale, **provenance(snakemake))
    artifacts.save_npz(snakemake.output[0], arrays, metadata)
    if "backend" in metadata:
        log.info("backend %s, device %s", metadata["backend"], metadata["device"])


def save_figure_of_table(snakemake, log, plot: str, draw, titles) -> None:
    """A study's figure rule: ``draw(plot, table, scale)`` of the rule's table
    (``input.table``), saved as its PNG and PDF outputs with the title
    ``titles[plot]`` (``plots.save``)."""
    import pandas as pd

    from . import plots

    frame = pd.read_csv(snakemake.input.table)
    fig = draw(plot, frame, snakemake.params.scale)
    plots.save(fig, [snakemake.output.png, snakemake.output.pdf], title=titles[plot])
    log.info("%s: %d rows drawn", plot, len(frame))
