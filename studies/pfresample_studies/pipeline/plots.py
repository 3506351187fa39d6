"""What every study's figures share: the caption line that states the backend
and the scale a figure was computed at (DESIGN.md: a figure made on the
reduced CPU grid says so), a panel grid, and saving each format atomically.
Figures are built on :class:`matplotlib.figure.Figure` directly (no pyplot
state)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from .artifacts import write_atomically
from .evidence import SOURCE_KEY

CAPTION_FONTSIZE = 8


def caption(backend: str, scale: str, n: int | None = None, detail: str | None = None) -> str:
    """The caption line of a figure, e.g.
    ``"Backend: CPU (NumPy) | scale: quick: reduced grid ... | N = 4,194,304"``."""
    parts = [f"Backend: {backend}", f"scale: {scale}"]
    if n is not None:
        parts.append(f"N = {int(n):,}")
    if detail:
        parts.append(detail)
    return " | ".join(parts)


def new_figure(panels: int, ncols: int, panel_size=(4.0, 3.2)) -> tuple[Figure, list]:
    ncols = max(1, min(ncols, panels))
    nrows = math.ceil(panels / ncols)
    fig = Figure(figsize=(panel_size[0] * ncols, panel_size[1] * nrows + 0.4), layout="constrained")
    axes = list(np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel())
    for ax in axes[panels:]:
        fig.delaxes(ax)
    return fig, axes[:panels]


def add_caption(fig: Figure, text: str) -> None:
    """Write ``text`` under the panels (space kept by the layout), wrapped to
    the figure's width."""
    lines = textwrap.wrap(text, width=max(40, int(fig.get_figwidth() * 15)))
    height = (0.1 + 0.16 * len(lines)) / fig.get_figheight()  # inches -> figure fraction
    engine = fig.get_layout_engine()
    if engine is not None and hasattr(engine, "set"):
        engine.set(rect=(0.0, height, 1.0, 1.0 - height))
    fig.text(0.5, height / 2, "\n".join(lines), ha="center", va="center", fontsize=CAPTION_FONTSIZE)


def save(fig: Figure, paths: Sequence, title: str | None = None, dpi: int = 150,
         source: str | None = None) -> list[Path]:  # fmt: skip
    """Write ``fig`` to each path (format from the suffix: .png, .pdf, .svg),
    each atomically: a temporary file in the same directory, then a rename.
    PDFs carry no creation date, so a rerun gives the same bytes. ``source``
    (``evidence.source``: this machine, committed evidence, or none) goes into
    the PNG's text chunk ``Source`` and the PDF's keywords."""
    texts = [t.get_text() for t in fig.texts]
    description = texts[-1].replace("\n", " ") if texts else ""
    written = []
    for path in map(Path, paths):
        fmt = path.suffix.lstrip(".").lower()
        if fmt == "png":
            metadata = {"Title": title, "Description": description, "Software": "pfresample",
                        SOURCE_KEY: source}  # fmt: skip
        elif fmt == "pdf":
            metadata = {
                "Title": title,
                "Subject": description,
                "Creator": "pfresample",
                "Keywords": f"{SOURCE_KEY}: {source}" if source else None,
                "CreationDate": None,
            }
        else:
            metadata = {}
        metadata = {k: v for k, v in metadata.items() if v is not None or k == "CreationDate"}
        write_atomically(
            path,
            lambda tmp, fmt=fmt, metadata=metadata: fig.savefig(
                tmp, format=fmt, dpi=dpi, metadata=metadata
            ),
            suffix=f".tmp.{fmt}",
        )
        written.append(path)
    return written
