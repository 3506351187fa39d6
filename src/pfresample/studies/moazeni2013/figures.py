"""Moazeni (2013) chapter 3: the figures, each from its tidy table (``tables``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

TITLES = {
    "fig12": "Moazeni (2013) Fig 12: one rectangular launch against cuBLAS, p x p",
    "fig13": "Moazeni (2013) Figs 13-14: time against n per block size",
    "fig15": "Moazeni (2013) Fig 15: share of each kernel kind",
    "fig16": "Moazeni (2013) Fig 16: speed-up over one CPU thread (best block size)",
    "fig17": "Moazeni (2013) Fig 17: min-plus operations a second",
    "fig18": "Moazeni (2013) Fig 18: the GPUs compared (block 32 below n = 512, 64 above)",
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


def lines(ax, table, x, y, by, logx=True, logy=False, named=True) -> None:
    """One line a value of ``by`` (labelled "by value", or the value alone)."""
    for key, part in table.groupby(by):
        part = part.sort_values(x)
        name = key if isinstance(key, str) else " ".join(map(str, np.atleast_1d(key)))
        ax.plot(part[x], part[y], marker="o", label=f"{by} {name}" if named else name)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set(xlabel=x, ylabel=y)
    ax.legend(fontsize=6)


def captioned(width: float, table: pd.DataFrame, scale: str, gpus: list[str]) -> Figure:
    """A figure whose caption line names the scale and the GPUs that ran (none: CPU
    only); where ``table`` has no rows it says so in its middle (``fig.axes`` empty)."""
    fig = Figure(figsize=(width, 3.6), layout="constrained")
    where = f"GPU: {', '.join(gpus)}" if gpus else "CPU only (no GPU ran)"
    fig.text(0.01, 0.01, f"{scale} scale; {where}", fontsize=7)
    if table.empty:
        fig.text(0.5, 0.5, "no GPU ran: no rows", ha="center", va="center")
    return fig


def draw(figure: str, table: pd.DataFrame, scale: str, gpus: list[str]) -> Figure:
    """The figure of one tidy table; ``gpus`` names the devices that ran (none: CPU only)."""
    fig = captioned(9, table, scale, gpus)
    if table.empty:
        return fig
    if figure == "fig12":
        ax = fig.subplots()
        for device, part in table.groupby("device"):
            ax.plot(part["p"], part["minplus_s"], marker="o", label=f"min-plus, {device}")
            ax.plot(part["p"], part["matmul_s"], marker="s", label=f"cuBLAS sgemm, {device}")
        ax.set(xscale="log", yscale="log", xlabel="p (a p x p product)", ylabel="seconds")
        ax.set_xscale("log", base=2)
        ax.legend(fontsize=6)
        return fig
    dtypes = sorted(table["dtype"].unique())
    axes = fig.subplots(1, len(dtypes), squeeze=False)[0]
    for ax, dtype in zip(axes, dtypes, strict=True):
        part = table[table["dtype"] == dtype]
        if figure == "fig13":
            _lines(ax, part, "n", "seconds", ["implementation", "order", "block"])
            ax.set_ylabel("seconds")
        elif figure == "fig15":
            last = part[part["n"] == part["n"].max()]
            shares = last.set_index(["implementation", "order", "block"])[
                ["diagonal_share", "triangular_share", "rectangular_share"]]  # fmt: skip
            shares.plot.bar(stacked=True, ax=ax, legend=ax is axes[0])
            ax.set_ylabel(f"share of the time, n = {int(part['n'].max())}")
        elif figure == "fig16":
            # each implementation and order at its best block size for each n (the table
            # keeps every block size)
            known = part.dropna(subset=["speedup_over_one_thread"])
            best = known.loc[known.groupby(["implementation", "order", "n"])
                             ["speedup_over_one_thread"].idxmax()]  # fmt: skip
            _lines(ax, best, "n", "speedup_over_one_thread", ["implementation", "order"])
            ax.axhline(1.0, color="grey", lw=0.5)
            ax.set_ylabel("speed-up over one C thread")
        elif figure == "fig17":
            _lines(ax, part, "n", "gop_per_s", ["implementation", "block"])
            ax.set_ylabel("Gop/s ((n^3 - n)/6 min-plus)")
        elif figure == "fig18":
            _lines(ax, part, "n", "seconds_with_upload", ["implementation"])
            ax.set_ylabel("seconds (upload included)")
        ax.set_title(dtype, fontsize=9)
        if figure != "fig15":
            ax.set_xlabel("n (matrix side)")
    return fig
