"""Moazeni (2013) chapter 3: the figures, each from its tidy table (``tables``), and what
every chapter's figures share: the lines, the caption, and the committed GPU rows drawn
beside this machine's where no GPU ran here (``overlaid``: a ``source`` column; their
lines dashed, their legend entries and the caption naming the device, folder, date and
commit)."""

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
LOCAL = "this machine"  # the ``source`` of this machine's rows


def overlaid(local: pd.DataFrame, theirs: pd.DataFrame | None = None, evidence=None
             ) -> pd.DataFrame:  # fmt: skip
    """This machine's rows (``source`` LOCAL) and, where given, the committed rows
    ``theirs`` of ``evidence`` (a ``pipeline.evidence.Evidence``; ``source`` its legend
    words) in one frame. Without them: ``local``."""
    if theirs is None:
        return local
    parts = [p for p in (local.assign(source=LOCAL), theirs.assign(source=evidence.legend))
             if len(p)]  # fmt: skip
    return pd.concat(parts, ignore_index=True) if parts else local


def sources_of(table: pd.DataFrame) -> list:
    """The sources of a frame, this machine's first (one None where it has no column)."""
    if "source" not in table:
        return [None]
    return sorted(table["source"].unique(), key=lambda s: (s != LOCAL, s))


def legend_label(name: str, source, several: bool) -> str:
    return f"{name} ({source})" if source is not None and (several or source != LOCAL) else name


def _style(source) -> dict:
    return {"ls": "--", "marker": "s", "ms": 3} if source not in (None, LOCAL) else {
        "marker": "o"}  # fmt: skip


def _spread(values) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(v.max() / v.min()) if v.size else 1.0


def _lines(ax, frame, x, y, by, logy=True):
    lines(ax, frame, x, y, by, logy=logy, named=False)
    ax.set_xlabel("")


def lines(ax, table, x, y, by, logx=True, logy=False, named=True) -> None:
    """One line a value of ``by`` (labelled "by value", or the value alone) and source
    (``overlaid``: committed rows dashed, their source in the legend); a log y axis
    where sources several orders apart share the axes."""
    sources = sources_of(table)
    for source in sources:
        part_of = table if source is None else table[table["source"] == source]
        for key, part in part_of.groupby(by):
            part = part.sort_values(x)
            name = key if isinstance(key, str) else " ".join(map(str, np.atleast_1d(key)))
            name = f"{by} {name}" if named and isinstance(by, str) else name
            ax.plot(part[x], part[y], label=legend_label(name, source, len(sources) > 1),
                    **_style(source))  # fmt: skip
    if logx:
        ax.set_xscale("log", base=2)
    if logy or (len(sources) > 1 and _spread(table[y]) > 30):
        ax.set_yscale("log")
    ax.set(xlabel=x, ylabel=y)
    ax.legend(fontsize=6)


def captioned(width: float, table: pd.DataFrame, scale: str, gpus: list[str], evidence=None,
              fill: str = "") -> Figure:  # fmt: skip
    """A figure whose caption line names the scale and the GPUs that ran here (none: CPU
    only) and, where committed rows are drawn, their ``evidence`` (its label); where
    ``table`` has no rows it says so in its middle, with the command that would fill it
    (``fill``)."""
    fig = Figure(figsize=(width, 3.6 if evidence is None else 4.4), layout="constrained")
    where = f"GPU: {', '.join(gpus)}" if gpus else "CPU only (no GPU ran here)"
    text = f"{scale} scale; {where}"
    if evidence is not None:
        text += f"\ndashed, square markers: {evidence.label}"
    height = (0.08 + 0.13 * (text.count("\n") + 1)) / fig.get_figheight()
    fig.get_layout_engine().set(rect=(0.0, height, 1.0, 1.0 - height))
    fig.text(0.01, height / 2, text, fontsize=7, va="center")
    if table.empty:
        fig.text(0.5, 0.5, f"no GPU ran here and no committed run holds these rows:\n{fill}",
                 ha="center", va="center", fontsize=8)  # fmt: skip
    return fig


def gather_legends(fig: Figure, most: int = 6) -> Figure:
    """Where the axes' legends hold more than ``most`` entries, or committed rows are
    drawn, one legend under the panels instead (each label once), so that none hides
    a line."""
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    handles = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if not legends or (len(handles) <= most and not any(
            "evidence" in label for label in handles)):  # fmt: skip
        return fig
    for legend in legends:
        legend.remove()
    width = max(len(label) for label in handles) * 0.045  # inches at 6 points
    fig.set_figwidth(fig.get_figwidth() + min(width, 5.0))
    fig.legend(list(handles.values()), list(handles), loc="outside right upper", fontsize=6,
               frameon=False)  # fmt: skip
    return fig


def draw(figure: str, table: pd.DataFrame, scale: str, gpus: list[str], evidence=None,
         fill: str = "") -> Figure:  # fmt: skip
    """The figure of one tidy table (``overlaid`` with a committed run's GPU rows where
    ``evidence`` is given); ``gpus`` names the devices that ran here (none: CPU only)."""
    fig = captioned(9, table, scale, gpus, evidence, fill)
    if table.empty:
        return fig
    sources = sources_of(table)
    if figure == "fig12":
        ax = fig.subplots()
        for source in sources:
            part_of = table if source is None else table[table["source"] == source]
            style = _style(source)
            style.pop("marker", None)
            for device, part in part_of.groupby("device"):
                part = part.sort_values("p")
                for column, name, marker in (("minplus_s", "min-plus", "o"),
                                             ("matmul_s", "cuBLAS sgemm", "s")):  # fmt: skip
                    label = legend_label(f"{name}, {device}", source, len(sources) > 1)
                    ax.plot(part["p"], part[column], marker=marker, label=label, **style)
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
            # each source at its own largest n (a committed run's is the thesis's)
            bars, keys = [], ["implementation", "order", "block"]
            for source in sources:
                mine = part if source is None else part[part["source"] == source]
                last = mine[mine["n"] == mine["n"].max()].copy()
                n = f"n = {int(mine['n'].max())}"
                last["implementation"] = [legend_label(f"{i}, {n}", source, len(sources) > 1)
                                          for i in last["implementation"]]  # fmt: skip
                bars.append(last)
            shares = pd.concat(bars).set_index(keys)[
                ["diagonal_share", "triangular_share", "rectangular_share"]]  # fmt: skip
            shares.plot.bar(stacked=True, ax=ax, legend=ax is axes[0], fontsize=5)
            ax.set_ylabel("share of the time at the largest n")
        elif figure == "fig16":
            # each implementation and order at its best block size for each n (the table
            # keeps every block size)
            known = part.dropna(subset=["speedup_over_one_thread"])
            group = ["implementation", "order", "n", *(["source"] if "source" in part else [])]
            best = known.loc[known.groupby(group)["speedup_over_one_thread"].idxmax()]
            _lines(ax, best, "n", "speedup_over_one_thread", ["implementation", "order"])
            ax.axhline(1.0, color="grey", lw=0.5)
            ax.set_ylabel("speed-up over one C thread of its own host")
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
