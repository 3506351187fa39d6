#!/usr/bin/env python3
"""The quality-time frontier figure of ``bench/frontier.py``'s CSV: MSE/N
against time per call, both axes logarithmic, a panel per N (columns) and
weight family (rows).

One colour and marker a method; filled markers float32 weights, hollow ones
float64; the Megopolis repository's points (library "megopolis-repo") are
stars edged in black, in the colour of the same method of ours. In each panel
the Pareto frontier, the points that no other point of the panel beats in
both time and MSE/N (the peer's included), is joined by a line.

    python bench/frontier_figure.py                      # results/bench/frontier.{csv -> png}
    python bench/frontier_figure.py --csv run.csv --out run.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from pfresample.resampling.registry import REGISTRY
from pfresample_studies.pipeline import plots

PEER = "megopolis-repo"
MARKERS = ("o", "s", "^", "v", "D", "P", "p", "h", "<", ">", "X", "d", "8", "H")
FRONTIER_STYLE = {"color": "black", "lw": 0.9, "ls": "--", "zorder": 1}


def pareto_front(times, errors) -> list[int]:
    """Indices of the points that no other point dominates (at most its time
    and at most its error, less in one of them), ordered by time."""
    points = list(zip(times, errors, strict=True))
    front = [
        i
        for i, (t, e) in enumerate(points)
        if not any(t2 <= t and e2 <= e and (t2 < t or e2 < e) for t2, e2 in points)
    ]
    return sorted(front, key=lambda i: points[i])


def at_least_a_decade(low: float, high: float) -> tuple[float, float]:
    """Log-axis limits around ``(low, high)`` that span a factor of ten or
    more (widened about their geometric centre), so that a power of ten, a
    labelled major tick, lies inside."""
    if high >= 10 * low:
        return low, high
    centre = np.sqrt(low * high)
    return centre / np.sqrt(10), centre * np.sqrt(10)


def label_ticks(axis, decades: float) -> None:
    """Plain numbers on a log axis: every power of ten, and 2 and 5 times
    each where the axis spans fewer than two decades (more would crowd)."""
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))

    def minor(x, _):
        mantissa = round(x / 10 ** np.floor(np.log10(x)), 6)
        return f"{x:g}" if decades < 2 and mantissa in (2, 5) else ""

    axis.set_minor_formatter(FuncFormatter(minor))


def method_styles(methods) -> dict[str, tuple[str, str]]:
    """(colour, marker) of each method, in the registry's order (methods it
    does not know after), so that a method looks the same in every figure."""
    order = [m for m in REGISTRY if m in methods] + sorted(set(methods) - set(REGISTRY))
    pairs = colormaps["tab20"].colors  # ten hues, each dark then light
    colours = pairs[0::2] + pairs[1::2]
    return {m: (colours[k % len(colours)], MARKERS[k % len(MARKERS)]) for k, m in enumerate(order)}


def _one_or_all(values) -> str:
    return ", ".join(sorted({str(v) for v in values if pd.notna(v) and str(v)}))


def caption(rows: pd.DataFrame, left_out: int) -> str:
    ours = rows[rows["library"] != PEER]
    parts = []
    for backend, group in ours.groupby("backend"):
        clock = (
            "CUDA events around the method's kernels (thesis §6.5)"
            if backend == "cuda"
            else "the host's clock around the call"
        )
        parts.append(
            f"pfresample ({backend}): median of {_one_or_all(group['repeats'])} calls, {clock}; "
            f"MSE/N the mean over {_one_or_all(group['mse_calls'])} calls"
        )
    peer = rows[rows["library"] == PEER]
    if len(peer):
        parts.append(
            f"Megopolis repository (stars): the mean of {_one_or_all(peer['repeats'])} calls, "
            "the host's clock around a launch and a device synchronize, its own MSE/N on its "
            "own eq. 2.33 weights of the same y, our B"
        )
    parts.append(
        "B chosen as the library does by default (Metropolis family eps = 1/100, Uphill SSD)"
    )
    if left_out:
        parts.append(f"{left_out} points with MSE/N or time <= 0 not drawn (log axes)")
    return "; ".join(parts) + "."


def frontier_figure(rows: pd.DataFrame) -> Figure:
    """The figure of ``rows`` (``bench/frontier.py``'s CSV columns)."""
    sizes = sorted(rows["n"].unique())
    families = list(dict.fromkeys(rows["distribution"]))
    styles = method_styles(list(dict.fromkeys(rows["method"])))
    fig, axes = plots.new_figure(len(sizes) * len(families), len(sizes), panel_size=(4.2, 3.4))
    drawable = (rows["time_ms"] > 0) & (rows["mse_per_n"] > 0)
    for k, (family, n) in enumerate((f, n) for f in families for n in sizes):
        ax = axes[k]
        cell = rows[(rows["distribution"] == family) & (rows["n"] == n) & drawable]
        for _, r in cell.iterrows():
            colour, marker = styles[r["method"]]
            if r["library"] == PEER:
                kw = {"marker": "*", "s": 140, "facecolors": [colour], "edgecolors": "black"}
            else:
                filled = r["precision"] == "float32"
                kw = {
                    "marker": marker,
                    "s": 36,
                    "facecolors": [colour] if filled else "none",
                    "edgecolors": [colour],
                }
            ax.scatter([r["time_ms"]], [r["mse_per_n"]], linewidths=1.0, zorder=2, **kw)
        if len(cell):
            front = pareto_front(cell["time_ms"].to_list(), cell["mse_per_n"].to_list())
            ax.plot(cell["time_ms"].iloc[front], cell["mse_per_n"].iloc[front], **FRONTIER_STYLE)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(at_least_a_decade(*ax.get_xlim()))
        ax.set_ylim(at_least_a_decade(*ax.get_ylim()))
        for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            label_ticks(axis, np.log10(high / low))
        ax.set_title(f"{family}, N = 2^{int(np.log2(n))}", fontsize=9)
        ax.set_xlabel("time per call (ms)")
        ax.set_ylabel("MSE / N")
        ax.grid(True, which="major", lw=0.3, alpha=0.5)
    handles = [
        Line2D([], [], ls="", marker=marker, color=colour, label=m)
        for m, (colour, marker) in styles.items()
    ]
    handles += [
        Line2D([], [], ls="", marker="o", color="gray", label="float32 weights"),
        Line2D([], [], ls="", marker="o", color="gray", mfc="none", label="float64 weights"),
    ]
    if (rows["library"] == PEER).any():
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="*",
                ms=11,
                mfc="gray",
                mec="black",
                label="Megopolis repository",
            )  # fmt: skip
        )
    handles.append(Line2D([], [], label="Pareto frontier", **FRONTIER_STYLE))
    fig.legend(handles=handles, loc="outside right upper", fontsize=8)
    fig.suptitle(
        f"Quality against time per call: {_one_or_all(rows['device'])}, "
        f"{_one_or_all(rows['date'])}, commit {_one_or_all(rows['commit']) or 'unknown'}",
        fontsize=10,
    )
    plots.add_caption(fig, caption(rows, int((~drawable).sum())))
    return fig


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--csv", type=Path, default=Path("results/bench/frontier.csv"))
    p.add_argument("--out", type=Path, default=Path("results/bench/frontier.png"))
    args = p.parse_args(argv)
    if not args.csv.is_file():
        p.error(f"{args.csv} not found: run bench/frontier.py (make frontier) first")
    rows = pd.read_csv(args.csv, keep_default_na=False, na_values=[""])
    if rows.empty:
        p.error(f"{args.csv} has no rows")
    plots.save(frontier_figure(rows), [args.out], title="pfresample quality-time frontier")
    print(f"# wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
