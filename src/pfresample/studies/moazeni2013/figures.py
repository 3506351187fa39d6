"""Moazeni (2013) chapter 3: the figures, each from its tidy table (``tables``)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

TITLES = {
    "fig13": "Moazeni (2013) Figs 13-14: time against n per block size (CPU)",
    "fig15": "Moazeni (2013) Fig 15: share of each kernel kind",
    "fig16": "Moazeni (2013) Fig 16: speed-up over one CPU thread",
    "fig17": "Moazeni (2013) Fig 17: min-plus operations a second",
}


def _lines(ax, frame, x, y, by, logy=True):
    for key, part in frame.groupby(by):
        part = part.sort_values(x)
        label = key if isinstance(key, str) else " ".join(map(str, key))
        ax.plot(part[x], part[y], marker="o", label=label)
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.legend(fontsize=6)


def draw(figure: str, table: pd.DataFrame, scale: str) -> Figure:
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    dtypes = sorted(table["dtype"].unique())
    axes = fig.subplots(1, len(dtypes), squeeze=False)[0]
    for ax, dtype in zip(axes, dtypes, strict=True):
        part = table[table["dtype"] == dtype]
        if figure == "fig13":
            _lines(ax, part, "n", "seconds", ["order", "block"])
            ax.set_ylabel("seconds")
        elif figure == "fig15":
            last = part[part["n"] == part["n"].max()]
            shares = last.set_index(["order", "block"])[
                ["diagonal_share", "triangular_share", "rectangular_share"]]  # fmt: skip
            shares.plot.bar(stacked=True, ax=ax, legend=ax is axes[0])
            ax.set_ylabel(f"share of the time, n = {int(part['n'].max())}")
        elif figure == "fig16":
            _lines(ax, part, "n", "speedup_over_one_thread", ["implementation", "order", "block"])
            ax.axhline(1.0, color="grey", lw=0.5)
            ax.set_ylabel("speed-up over one C thread")
        elif figure == "fig17":
            _lines(ax, part, "n", "gop_per_s", ["implementation", "block"])
            ax.set_ylabel("Gop/s ((n^3 - n)/6 min-plus)")
        ax.set_title(dtype, fontsize=9)
        if figure != "fig15":
            ax.set_xlabel("n (matrix side)")
    fig.text(0.01, 0.01, f"{scale} scale; CPU only (the GPU kernels are not built yet)",
             fontsize=7)  # fmt: skip
    return fig
