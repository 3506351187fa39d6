"""A study's GPU experiment as a pipeline target: the files a GPU run writes, from this run
where a GPU ran it, else from the newest committed evidence folder that holds them,
labelled file by file.

A GPU experiment (d3_2014's timing, spread, regime and 360 s runs, ...) writes a fixed set of
files under ``results/<study>/gpu_runs/``. On a machine whose cells have a GPU the rule runs
the experiment; a file it did not produce (a section its deadline cut, or one it was told to
skip) is then drawn from the committed run. Without a GPU every file is drawn from the
committed run. ``sources.csv`` beside the files says, for each, where it came from
(:data:`pfresample_studies.pipeline.speedups.THIS_RUN` or the evidence folder's label:
"H100, evidence/2026-11-26-h100-804d6d3, 2026-11-26, commit 804d6d3, not run on this
machine"), and every table derived from them carries the sources of the files it read in
its ``gpu_source`` column (:func:`label`)."""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from pathlib import Path

from pfresample_studies.pipeline import devices, evidence
from pfresample_studies.pipeline.speedups import THIS_RUN

SOURCES = "sources.csv"
SOURCE_COLUMN = "gpu_source"


def committed(marker: str, root) -> evidence.Evidence:
    """The newest evidence folder under ``root`` holding ``marker`` (a file's path inside
    the folder, e.g. ``d3_2014/timing.csv``) with at least one row; an error naming the
    marker where none does (a GPU experiment drawn from nothing would be an empty table)."""
    found = evidence.find(marker, root)
    if found is None:
        raise FileNotFoundError(
            f"no folder of {root} holds {marker}: run the experiment on a GPU "
            "(the rule runs it where the cells have one)"
        )
    return found


def _copy(source: Path, target: Path) -> None:
    """``source`` to ``target`` atomically (a temporary file in the target's folder, then
    a rename), so that a killed job leaves no half-copied table."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fill(out, names, produced, found: evidence.Evidence, base: str) -> dict[str, str]:
    """Every file of ``names`` (paths relative to ``out``) with its source: those in
    ``produced`` are this run's, the rest are copied from ``base`` inside the committed
    folder of ``found``; writes ``out/sources.csv`` and returns file -> source."""
    out = Path(out)
    folder = _root_of(found) / found.folder
    sources = {}
    for name in names:
        if name in produced:
            if not (out / name).is_file():
                raise FileNotFoundError(f"the GPU run reports {name} but wrote no {out / name}")
            sources[name] = THIS_RUN
            continue
        committed_file = folder / base / name
        if not committed_file.is_file():
            raise FileNotFoundError(f"{committed_file} is missing: the committed run lacks {name}")
        _copy(committed_file, out / name)
        sources[name] = found.label
    write_sources(out, sources)
    return sources


def run_or_draw(snakemake, log, names, experiment, marker: str) -> dict[str, str]:
    """The ``<study>_gpu_runs`` rule's job: where the cells have a GPU (``params.gpu``),
    claim one and call ``experiment(out)`` (the set of ``names`` it wrote); then
    :func:`fill` the rest from the committed run (``input.committed``, which holds
    ``marker``) and log each file's source."""
    p = snakemake.params
    out = Path(snakemake.output.sources).parent
    if not snakemake.input.committed:
        raise FileNotFoundError(f"evidence/ holds no {marker} to draw from")
    found = evidence.describe(snakemake.input.committed[0])
    produced = set()
    if p.gpu:
        claim = devices.pin_job(p.devices)  # before CUDA starts: one GPU for this job
        if claim is not None:
            log.info("GPU: device %s (waited %.1f s)", claim.device, claim.waited_s)
        produced = experiment(out)
    sources = fill(out, names, produced, found, p.base)
    for name, source in sources.items():
        log.info("%s: %s", name, source)
    return sources


def _root_of(found: evidence.Evidence) -> Path:
    """The ``evidence/`` folder that holds ``found``'s folder."""
    for parent in found.path.parents:
        if parent.name == found.folder:
            return parent.parent
    raise ValueError(f"{found.path} is not inside evidence/{found.folder}")


def write_sources(out, sources: dict[str, str]) -> None:
    path = Path(out) / SOURCES
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["file", "source"])
        writer.writerows(sorted(sources.items()))
    os.replace(tmp, path)


def read_sources(path) -> dict[str, str]:
    """file -> source of a ``sources.csv``."""
    with open(path, newline="") as f:
        return {row["file"]: row["source"] for row in csv.DictReader(f)}


def label(sources: dict[str, str], names) -> str:
    """The ``gpu_source`` of a table that read ``names``: their sources, each once, in
    order of first appearance, joined by "; "."""
    missing = [n for n in names if n not in sources]
    if missing:
        raise KeyError(f"no source recorded for {missing}")
    return "; ".join(dict.fromkeys(sources[n] for n in names))


def labelled(frame, sources: dict[str, str], names):
    """``frame`` with its ``gpu_source`` column (:func:`label` of ``names``) last."""
    return frame.assign(**{SOURCE_COLUMN: label(sources, names)})
