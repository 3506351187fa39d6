"""Plot helpers for the pipeline's figures.

Figures are built on :class:`matplotlib.figure.Figure` directly (no pyplot
state), drawn with seaborn, and carry a caption line that states the backend
and the scale they were computed at (DESIGN.md: a figure made on the reduced
CPU grid says so). :func:`save` writes each format atomically.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

from .weights import parse_distribution

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


def distribution_title(name: str) -> str:
    """Panel title of a weight distribution: its family and parameters."""
    family, params = parse_distribution(name)
    if family == "gamma":
        return f"Gamma: shape = {params['shape']:g}, scale = {params['scale']:g}"
    return f"Eq. 2.33: y = {params['y']:g}"


def _new_figure(panels: int, ncols: int, panel_size=(4.0, 3.2)) -> tuple[Figure, list]:
    ncols = max(1, min(ncols, panels))
    nrows = math.ceil(panels / ncols)
    fig = Figure(figsize=(panel_size[0] * ncols, panel_size[1] * nrows + 0.4), layout="constrained")
    axes = list(np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel())
    for ax in axes[panels:]:
        fig.delaxes(ax)
    return fig, axes[:panels]


def add_caption(fig: Figure, text: str) -> None:
    """Write ``text`` as one line under the panels (space kept by the layout)."""
    height = 0.35 / fig.get_figheight()  # about a third of an inch
    engine = fig.get_layout_engine()
    if engine is not None and hasattr(engine, "set"):
        engine.set(rect=(0.0, height, 1.0, 1.0 - height))
    fig.text(0.5, height / 2, text, ha="center", va="center", fontsize=CAPTION_FONTSIZE)


def weight_histograms(
    samples: Mapping[str, np.ndarray],
    bins: int = 100,
    caption: str | None = None,
    ncols: int = 3,
) -> Figure:
    """One histogram per weight distribution (thesis Fig 2.3): x = the bins of
    the weights, y = the number of weights in each bin.

    ``samples`` maps a distribution name (``"gamma-k1-s2"``) to one weight
    sequence; panels appear in the mapping's order.
    """
    if not samples:
        raise ValueError("weight_histograms needs at least one weight sequence")
    if int(bins) < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    with sns.axes_style("whitegrid"), sns.plotting_context("paper"):
        fig, axes = _new_figure(len(samples), ncols)
        _draw_histograms(axes, samples, int(bins))
        if caption:
            add_caption(fig, caption)
    return fig


def _draw_histograms(axes, samples, bins):
    for ax, (name, values) in zip(axes, samples.items(), strict=True):
        values = np.asarray(values)
        # Count with NumPy: seaborn would otherwise copy all N weights into a DataFrame.
        counts, edges = np.histogram(values, bins=bins)
        sns.histplot(
            x=0.5 * (edges[:-1] + edges[1:]),  # bin centres, weighted by their counts
            weights=counts,
            bins=bins,
            binrange=(edges[0], edges[-1]),
            ax=ax,
            stat="count",
            element="bars",
            color=sns.color_palette()[0],
            linewidth=0,
        )
        ax.set_title(distribution_title(name))
        ax.set_xlabel("weight (histogram bins)")
        ax.set_ylabel("count")
        ax.set_xlim(edges[0], edges[-1])
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 3))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save(fig: Figure, paths: Sequence, title: str | None = None, dpi: int = 150) -> list[Path]:
    """Write ``fig`` to each path (format from the suffix: .png, .pdf, .svg),
    each atomically: a temporary file in the same directory, then a rename.
    PDFs carry no creation date, so a rerun gives the same bytes."""
    texts = [t.get_text() for t in fig.texts]
    description = texts[-1] if texts else ""
    written = []
    for path in map(Path, paths):
        fmt = path.suffix.lstrip(".").lower()
        if fmt == "png":
            metadata = {"Title": title, "Description": description, "Software": "pfresample"}
        elif fmt == "pdf":
            metadata = {
                "Title": title,
                "Subject": description,
                "Creator": "pfresample",
                "CreationDate": None,
            }
        else:
            metadata = {}
        metadata = {k: v for k, v in metadata.items() if v is not None or k == "CreationDate"}
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp.{fmt}", dir=path.parent)
        os.close(fd)
        try:
            fig.savefig(tmp, format=fmt, dpi=dpi, metadata=metadata)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(path)
    return written
