"""Plot helpers for the pipeline's figures.

Figures are built on :class:`matplotlib.figure.Figure` directly (no pyplot
state), drawn with seaborn, and carry a caption line that states the backend
and the scale they were computed at (DESIGN.md: a figure made on the reduced
CPU grid says so). :func:`save` writes each format atomically.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import seaborn as sns
from matplotlib.figure import Figure

from ..pipeline.plots import add_caption, new_figure
from .weights import parse_distribution


def distribution_title(name: str) -> str:
    """Panel title of a weight distribution: its family and parameters."""
    family, params = parse_distribution(name)
    if family == "gamma":
        return f"Gamma: shape = {params['shape']:g}, scale = {params['scale']:g}"
    return f"Eq. 2.33: y = {params['y']:g}"


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
        fig, axes = new_figure(len(samples), ncols)
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


# Metric of a chapter 5-6 figure -> (table column, axis label, log y axis).
_METRICS = {
    "bias": ("bias_fraction", "||Bias||² / MSE", False),
    "mse": ("mse_per_n", "MSE / N", False),
    "variance": ("variance_per_n", "Var / N", False),
    "time": ("time_ms", "time per call (ms)", True),
    "speedup": ("speedup", "speed-up", False),
    "time_ratio": ("time_ratio", "T(N) / T(N/2)", False),
}


def dulger2017_figure(
    table, spec: Mapping, distributions: Sequence[str], caption: str | None = None
) -> Figure:
    """A figure of Dülger (2017) chapters 5-6 from its tidy table
    (``pfresample.tables.figure_tables``), as the catalog entry ``spec`` says:
    rows of panels = metrics, one column per distribution, one line per
    variant, N on a log2 axis; with ``hue: distribution`` one panel per metric
    and one line per distribution (Fig 6.5); with ``operations`` a table
    (Table 6.1)."""
    with sns.axes_style("whitegrid"), sns.plotting_context("paper"):
        if "operations" in spec:
            fig = _operations_table(table, spec)
        elif spec.get("hue") == "distribution":
            fig, axes = new_figure(len(spec["metrics"]), len(spec["metrics"]))
            names = {d: distribution_title(d) for d in distributions}
            lines = table.assign(distribution=table["distribution"].map(names))
            for ax, metric in zip(axes, spec["metrics"], strict=True):
                _metric_panel(ax, lines, metric, "distribution", list(names.values()))
                ax.set_title(table["label"].iloc[0])
            _figure_legend(fig, axes)
        else:
            fig = _metric_grid(table, spec["metrics"], distributions)
        width = max(40, int(fig.get_figwidth() * 13))
        fig.suptitle("\n".join(textwrap.wrap(spec["title"], width=width)), fontsize=9)
        if caption:
            add_caption(fig, caption)
    return fig


def _metric_grid(table, metrics, distributions) -> Figure:
    rows, cols = len(metrics), len(distributions)
    fig = Figure(figsize=(3.2 * cols, 2.7 * rows + 0.9), layout="constrained")
    axes = np.atleast_2d(fig.subplots(rows, cols, squeeze=False))
    order = list(dict.fromkeys(table["label"]))
    for r, metric in enumerate(metrics):
        for c, dist in enumerate(distributions):
            ax = axes[r, c]
            _metric_panel(ax, table[table["distribution"] == dist], metric, "label", order)
            if r == 0:
                ax.set_title(distribution_title(dist))
            if c:
                ax.set_ylabel("")
    _figure_legend(fig, axes.ravel())
    return fig


def _figure_legend(fig: Figure, axes) -> None:
    """One legend right of the panels instead of one per panel."""
    handles, labels = {}, []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in handles:
                handles[label] = handle
                labels.append(label)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if labels:
        fig.legend([handles[k] for k in labels], labels, loc="outside right upper", fontsize=7)


def _metric_panel(ax, data, metric, hue, order) -> None:
    """One panel: ``metric`` against N (log2 axis), one line per ``hue`` value,
    with the 99% confidence half-width across weight sequences as error bars."""
    column, label, log_y = _METRICS[metric]
    data = data.dropna(subset=[column])
    palette = dict(zip(order, sns.color_palette(n_colors=max(len(order), 1)), strict=True))
    sns.lineplot(
        data=data, x="n", y=column, hue=hue, hue_order=order, palette=palette,
        style=hue, style_order=order, markers=True, dashes=False, ax=ax,
    )  # fmt: skip
    ci = f"{column}_ci"
    if ci in data.columns:
        for key, part in data.groupby(hue):
            ax.errorbar(
                part["n"], part[column], yerr=part[ci], fmt="none", capsize=2,
                ecolor=palette.get(key), alpha=0.6,
            )  # fmt: skip
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    if metric in ("speedup", "time_ratio"):
        ax.axhline(1.0, color="0.5", linewidth=0.8)
    ax.set_xlabel("N (particles)")
    ax.set_ylabel(label)


def _operations_table(table, spec) -> Figure:
    """Table 6.1: operation counts per inner-loop iteration and the measured
    time per iteration."""
    fig = Figure(figsize=(8.0, 1.2 + 0.35 * len(table)), layout="constrained")
    ax = fig.subplots()
    ax.axis("off")
    columns = ["method", "random_numbers", "comparisons", "divisions", "ns_per_iteration"]
    measured = f"measured ns / iteration (N = {int(table['n'].iloc[0]):,})"
    header = ["method", "random numbers", "comparisons", "divisions", measured]
    cells = [
        [f"{v:.3g}" if isinstance(v, float) else str(v) for v in row]
        for row in table[columns].itertuples(index=False)
    ]
    ax.table(cellText=cells, colLabels=header, loc="center", cellLoc="center")
    return fig
