"""Artifacts: ``.npz`` files written atomically, with a metadata record.

``save_npz`` writes to a temporary file in the target's directory and renames
it into place, so a reader (or a rerun after ``kill -9``) sees either the old
file or the complete new one, never half of one. ``load_npz`` reads every
array, so a truncated or corrupt file is detected when it is loaded (raising
``CorruptArtifact``) and can be regenerated rather than silently used.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from pfresample import tuning

_META_KEY = "__metadata__"


class CorruptArtifact(ValueError):
    """An artifact that cannot be read back completely."""


def write_atomically(path, write, suffix: str = ".tmp") -> Path:
    """Create ``path`` all at once: ``write(tmp)`` fills a temporary file in
    the same directory, which is then renamed into place, so a reader (or a
    rerun after ``kill -9``) sees the old file or the complete new one, never
    half of one. The file gets the usual mode (mkstemp makes it 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def save_npz(path, arrays: dict, metadata: dict | None = None) -> Path:
    """Write ``arrays`` and a JSON ``metadata`` record to ``path`` atomically.

    Uncompressed: weights are random floats that zlib barely shrinks, and
    decompressing them cost more CPU than a whole GPU cell's resampling
    (docs/performance.md, "Measurements behind the code's choices").
    Zip still stores a CRC-32 per array, so a corrupt file fails to load."""
    path = Path(path)
    if _META_KEY in arrays:
        raise ValueError(f"array name {_META_KEY!r} is reserved for the metadata")
    payload = dict(arrays)
    payload[_META_KEY] = np.array(json.dumps(metadata or {}, sort_keys=True, default=str))

    def write(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            np.savez(fh, **payload)
            fh.flush()
            os.fsync(fh.fileno())

    return write_atomically(path, write)


def load_npz(path) -> tuple[dict, dict]:
    """Read an artifact written by :func:`save_npz`: ``(arrays, metadata)``."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise CorruptArtifact(f"{path}: cannot be read ({exc}); delete it to regenerate") from exc
    if _META_KEY not in arrays:
        raise CorruptArtifact(f"{path}: no metadata record; not written by artifacts.save_npz")
    metadata = json.loads(str(arrays.pop(_META_KEY)))
    return arrays, metadata


def load_all(paths) -> list[tuple[dict, dict]]:
    """:func:`load_npz` of each of ``paths``, in order (a table's cells)."""
    return [load_npz(path) for path in paths]


def check_npz(path, full_bytes: int = 64 << 20) -> None:
    """Raise ``CorruptArtifact`` when ``path`` is not a complete artifact.

    Files up to ``full_bytes`` are read entirely (every member's CRC is
    checked, as ``load_npz`` would); larger ones only structurally (the zip
    directory at the end of the file, which truncation destroys, and the
    metadata record), which costs a few reads instead of the whole file.
    """
    path = Path(path)
    if path.stat().st_size <= full_bytes:
        load_npz(path)
        return
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if f"{_META_KEY}.npy" not in names:
                raise CorruptArtifact(f"{path}: no metadata record")
            end = max(i.header_offset + i.compress_size for i in archive.infolist())
    except (OSError, zipfile.BadZipFile) as exc:
        raise CorruptArtifact(f"{path}: cannot be read ({exc}); delete it to regenerate") from exc
    if end > path.stat().st_size:
        raise CorruptArtifact(f"{path}: truncated")


def discard_corrupt(paths, full_bytes: int = 64 << 20) -> list[tuple[Path, str]]:
    """Delete every existing artifact among ``paths`` that :func:`check_npz`
    finds corrupt, so that the pipeline regenerates it; returns what was
    deleted and why."""
    removed = []
    for path in map(Path, paths):
        if not path.is_file():
            continue
        try:
            check_npz(path, full_bytes)
        except CorruptArtifact as exc:
            path.unlink()
            removed.append((path, str(exc)))
    return removed


# --- the Uphill SSD tables (pfresample.tuning), cached per N ----------------------


def save_ssd_table(path, table: np.ndarray, n: int, metadata: dict | None = None) -> None:
    """Write the SSD table of N = ``n`` as the artifact that
    :func:`load_or_compute_ssd_table` reads (array ``ssd``, metadata ``n``)."""
    record = {"what": "SSD(EU(., B))", "n": n, "b_max": table.size - 1, **(metadata or {})}
    save_npz(path, {"ssd": table}, record)


def load_or_compute_ssd_table(path, n: int) -> np.ndarray:
    """The SSD table for N = ``n`` from ``path``, computing and saving it
    there first when it is missing or unreadable."""
    path = Path(path)
    if path.exists():
        try:
            arrays, meta = load_npz(path)
            if meta.get("n") == n and arrays["ssd"].shape == (tuning.UPHILL_B_MAX + 1,):
                return arrays["ssd"]
        except (CorruptArtifact, KeyError):
            pass
    table = tuning.ssd_table(n)
    save_ssd_table(path, table, n)
    return table
