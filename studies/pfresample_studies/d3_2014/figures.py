"""Figs 3-6, 10 and 11 of Das, Mazumdar & Banerjee (2014) from their tidy
tables (``tables``). The paper's figures are known from their captions and
the prose of §3.2 and §4.3; the axes follow them."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ..pipeline import plots
from . import catalog

COMPONENTS = (("x", "Ẋ (m/s)"), ("y", "Ẏ (m/s)"))
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
          "tab:pink", "tab:gray", "tab:olive")  # fmt: skip


def estimates(table: pd.DataFrame, caption: str) -> Figure:
    """Figs 3-4: the true velocities (blue) and the filter's estimates (red),
    one panel per component, the run's RMSE and bias in each title."""
    fig, axes = plots.new_figure(2, 1, panel_size=(8.0, 2.8))
    first = table.iloc[0]
    for ax, (c, label) in zip(axes, COMPONENTS, strict=True):
        ax.plot(table["t"], table[f"truth_{c}"], color="tab:blue", lw=0.8, label="true state")
        ax.plot(table["t"], table[f"estimate_{c}"], color="tab:red", lw=0.8, label="estimate")
        ax.set_title(f"{label.split()[0]}: RMSE {first[f'rmse_{c}']:.4g} m/s, bias "
                     f"{first[f'bias_{c}']:.3g} m/s", fontsize=9)  # fmt: skip
        ax.set(xlabel="t (s)", ylabel=label)
        ax.legend(fontsize=7)
    fig.suptitle(f"filter {first['filter']}, N = {int(first['n']):,}, trajectory "
                 f"{int(first['trajectory'])}", fontsize=10)  # fmt: skip
    plots.add_caption(fig, caption)
    return fig


def snapshot(table: pd.DataFrame, caption: str) -> Figure:
    """Figs 5-6: the particles' values against their index right after the
    resampling at the snapshot time, one panel per component; the titles
    count the distinct values and give the spread over all N particles."""
    fig, axes = plots.new_figure(2, 1, panel_size=(8.0, 2.8))
    first = table.iloc[0]
    for ax, (c, label) in zip(axes, COMPONENTS, strict=True):
        ax.plot(table["particle"], table[f"{c}dot"], ".", ms=1.5, color="tab:blue")
        ax.set_title(f"{label.split()[0]}: {int(first[f'distinct_{c}']):,} distinct values of "
                     f"{int(first['n']):,}; std {first[f'std_{c}']:.3g}, range "
                     f"{first[f'range_{c}']:.3g} m/s", fontsize=9)  # fmt: skip
        ax.set(xlabel="particle index i", ylabel=label)
    shown = len(table)
    fig.suptitle(f"filter {first['filter']}: particles after resampling at t = "
                 f"{first['t']:g} s (the first {shown:,} of N = {int(first['n']):,})",
                 fontsize=10)  # fmt: skip
    plots.add_caption(fig, caption)
    return fig


def threads_per_block(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 10 / Table 6: GPU D3 milliseconds per filter step against threads
    per block, a line per N, one panel per algorithm measured (ours, the
    paper's GPU algorithm; the paper's per-run numbers, unit not stated, on
    axes of their own), and the theoretical occupancy of each algorithm's
    dominant D3 kernel against threads per block (the paper's Fig 10
    quantity; it depends on the block size alone, not on N)."""
    measured = table[table["gpu_d3_ms_per_step"].notna()]
    algorithms = list(dict.fromkeys(table["algorithm"]))
    fig, axes = plots.new_figure(len(algorithms) + 2, len(algorithms) + 2, panel_size=(5.0, 3.8))
    ns = sorted(table["n"].unique())
    first = table[table["algorithm"] == algorithms[0]]
    where = f" ({table['source'].iloc[0]}, not run here)" if "source" in table else ""
    panels = [(axes[k], table[table["algorithm"] == a], "gpu_d3_ms_per_step",
               f"measured: {a}{where}", "ms per filter step")
              for k, a in enumerate(algorithms)]  # fmt: skip
    panels.append((axes[len(algorithms)], first, "paper", "paper, as printed",
                   "per run (unit not stated)"))  # fmt: skip
    for ax, part_of, column, what, ylabel in panels:
        for k, n in enumerate(ns):
            part = part_of[(part_of["n"] == n) & part_of[column].notna()].sort_values("threads")
            if not part.empty:
                ax.plot(part["threads"], part[column], marker="o", ms=3, lw=1,
                        color=COLORS[k % len(COLORS)], label=f"N = {int(n):,}")  # fmt: skip
        ax.set_yscale("log")
        ax.set(xlabel="threads per block", ylabel=ylabel)
        ax.set_title(what, fontsize=9)
        if ax.lines:
            ax.legend(fontsize=6, ncols=2)
    occupancy_ax = axes[-1]
    if measured.empty:
        for ax in (*axes[: len(algorithms)], occupancy_ax):
            ax.text(0.5, 0.5, "no GPU ran:\nthis needs a CUDA device", ha="center",
                    va="center", transform=ax.transAxes, fontsize=10)  # fmt: skip
    for k, a in enumerate(algorithms):
        part = table[(table["algorithm"] == a) & table["occupancy"].notna()]
        occ = part.groupby("threads")["occupancy"].first()
        if not occ.empty:
            occupancy_ax.plot(occ.index, occ.values, marker="o", ms=3, color=COLORS[k],
                              label=a)  # fmt: skip
    occupancy_ax.set_ylim(0, 1.05)
    occupancy_ax.set(xlabel="threads per block", ylabel="occupancy (fraction of the SM's warps)")
    occupancy_ax.set_title("theoretical occupancy of the dominant D3 kernel (Fig 10's quantity)",
                           fontsize=9)  # fmt: skip
    if occupancy_ax.lines:
        occupancy_ax.legend(fontsize=7)
    plots.add_caption(fig, caption)
    return fig


def committed_fig10(table: pd.DataFrame, found) -> pd.DataFrame:
    """Fig 10's rows where no GPU ran here: the committed run's (``found``, a
    ``pipeline.evidence.Evidence`` of a Table 6; its algorithm ours where it predates
    the paper's), its ``source`` and its label in ``note`` (the caption states it)."""
    theirs = found.frame()
    if "algorithm" not in theirs:
        theirs.insert(0, "algorithm", catalog.D3_FILTER)
    return theirs.assign(source=found.legend, note=found.label)


def iterations(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 11: iterations of the local-CDF search per thread, with our mean and
    the paper's printed mean (1,315 over 5,000 threads)."""
    fig, (ax,) = plots.new_figure(1, 1, panel_size=(8.0, 3.6))
    first = table.iloc[0]
    ax.plot(table["thread"], table["iterations"], lw=0.6, color="tab:blue",
            label="iterations j_i + 1, systematic thresholds")  # fmt: skip
    mean = float(first["mean_iterations"])
    ax.axhline(mean, color="tab:red", lw=1, label=f"systematic thresholds: mean {mean:,.0f}")
    if "paper_thresholds_iterations" in table and (table["paper_thresholds_iterations"] > 0).all():
        mean = float(first["paper_thresholds_mean_iterations"])
        ax.plot(table["thread"], table["paper_thresholds_iterations"], lw=0.6,
                color="tab:green", label="iterations, Figs 8-9's thresholds")  # fmt: skip
        ax.axhline(mean, color="tab:green", lw=1, ls=":",
                   label=f"Figs 8-9's thresholds: mean {mean:,.0f}")  # fmt: skip
    paper = float(first["paper_mean_iterations"])
    ax.axhline(paper, color="black", ls="--", lw=1, label=f"paper's mean {paper:,.0f}")
    ax.set(xlabel="thread i", ylabel="iterations")
    ax.set_title(f"N = {int(first['n']):,} threads, weights of step {int(first['step']):,} "
                 f"(t = {first['t']:g} s), N_eff = {first['ess']:,.0f}", fontsize=9)  # fmt: skip
    ax.legend(fontsize=7)
    plots.add_caption(fig, caption)
    return fig


def caption_detail(figure: str, table: pd.DataFrame) -> str:
    if figure == "fig10":
        devices = ", ".join(sorted({d for d in table["device"].fillna("") if d})) or "none"
        note = table["note"].dropna()
        extra = f"; {note.iloc[0]}" if not note.empty and note.iloc[0] else ""
        return f"GPU device {devices}; one run of trajectory 0 per (TPB, N){extra}"
    devices = ", ".join(sorted(set(table["device"])))
    return f"device {devices}"


def draw(figure: str, table: pd.DataFrame, scale: str) -> Figure:
    """Figure ``figure`` (catalog.FIGURES) from its tidy table, captioned with
    the backend, the scale and :func:`caption_detail`."""
    if figure == "fig10":
        measured = table["gpu_d3_ms_per_step"].notna().any()
        backend = "CUDA (CuPy)" if measured else "none (no GPU ran)"
        if measured and "source" in table:  # committed_fig10: not this machine's
            backend = "CUDA (CuPy) of a committed run (none here)"
    else:
        backend = " / ".join(sorted(set(table["backend"])))
    caption = plots.caption(backend=backend, scale=scale, detail=caption_detail(figure, table))
    if figure in ("fig3", "fig4"):
        return estimates(table, caption)
    if figure in ("fig5", "fig6"):
        return snapshot(table, caption)
    if figure == "fig10":
        return threads_per_block(table, caption)
    if figure == "fig11":
        return iterations(table, caption)
    raise ValueError(f"no figure {figure!r}")
