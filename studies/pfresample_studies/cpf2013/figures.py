"""Figs 7-12 of Gelencsér-Horváth et al. (2013) from their tidy tables
(``tables``). The paper's figures are known from their captions and the
prose of "Evaluation and results"; the axes follow them, and the SIR
baselines (not in the paper) are drawn apart from the CPF's points."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ..pipeline import plots

# Colours of the particle numbers, markers of the SIR baselines' methods.
N_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
            "tab:pink", "tab:olive", "tab:cyan", "tab:gray")  # fmt: skip
SIR_MARKERS = {"multinomial": "^", "systematic": "v", "metropolis": "D"}
SIR_OTHER_MARKER = "P"
R_STYLES = ("o", "s", "^", "D", "v", "P")


def _n_color(ns, n) -> str:
    return N_COLORS[sorted(ns).index(n) % len(N_COLORS)]


def _log2_axis(ax, values) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(values)
    ax.set_xticklabels([f"{int(v):,}" for v in values], fontsize=7)
    ax.xaxis.set_minor_formatter(NullFormatter())


def growth_trajectory(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 7: the hidden states (blue), their observations (green) and the
    CPF's estimate (red) of one trajectory of the first model."""
    fig, (ax,) = plots.new_figure(1, 1, panel_size=(7.0, 3.6))
    ax.plot(table["t"], table["truth"], color="tab:blue", marker=".", lw=1,
            label="hidden state x_t")  # fmt: skip
    ax.plot(table["t"], table["observation"], color="tab:green", marker=".", lw=0.8,
            label="observation y_t")  # fmt: skip
    ax.plot(table["t"], table["estimate"], color="tab:red", marker=".", lw=1,
            label="CPF estimate x̂_t")  # fmt: skip
    mse = float(np.nanmean(table["squared_error"]))
    n, r = int(table["n"].iloc[0]), int(table["radius"].iloc[0])
    ax.set_title(f"trajectory {int(table['trajectory'].iloc[0])}, N = {n:,}, r = {r}: "
                 f"MSE {mse:.3g}", fontsize=9)  # fmt: skip
    ax.set(xlabel="time step t", ylabel="value")
    ax.legend(fontsize=7)
    plots.add_caption(fig, caption)
    return fig


def bot_trajectory(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 8: the hidden positions (blue) and the CPF's estimate (red) of one
    bearings-only trajectory in the plane, the sensor at the origin."""
    fig, (ax,) = plots.new_figure(1, 1, panel_size=(5.5, 4.5))
    ax.plot(table["x_true"], table["y_true"], color="tab:blue", marker=".", lw=1,
            label="hidden position")  # fmt: skip
    ax.plot(table["x_estimate"], table["y_estimate"], color="tab:red", marker=".", lw=1,
            label="CPF estimate")  # fmt: skip
    ax.plot([0], [0], "k*", ms=8, label="sensor")
    ax.plot(table["x_true"].iloc[:1], table["y_true"].iloc[:1], "bo", mfc="none", ms=8,
            label="x_0")  # fmt: skip
    mean = float(np.nanmean(table["position_error"]))
    n, r = int(table["n"].iloc[0]), int(table["radius"].iloc[0])
    ax.set_title(f"trajectory {int(table['trajectory'].iloc[0])}, N = {n:,}, r = {r}: "
                 f"mean position error {mean:.3g}", fontsize=9)  # fmt: skip
    ax.set(xlabel="x", ylabel="y")
    ax.legend(fontsize=7)
    plots.add_caption(fig, caption)
    return fig


def error_vs_time(table: pd.DataFrame, caption: str, ylabel: str, mark_best: bool) -> Figure:
    """Figs 9 (first model, MSE) and 10 (BOT, position RMSE): each CPF
    configuration's mean error against its mean step time, a line per N
    through its radii (labelled), with the interval of the error; with
    ``mark_best`` the best r of each N as a square (Fig 10). The SIR
    baselines at each N as open markers, one shape per method."""
    fig, (ax,) = plots.new_figure(1, 1, panel_size=(7.5, 4.6))
    cpf, sir = table[table["filter"] == "CPF"], table[table["filter"] == "SIR"]
    ns = sorted(table["n"].unique())
    for n, part in cpf.groupby("n"):
        part = part.sort_values("radius")
        color = _n_color(ns, n)
        ax.errorbar(part["step_us"], part["error"], yerr=part["error_ci"], color=color,
                    marker="o", ms=4, capsize=2, lw=1, label=f"CPF N = {int(n):,}")  # fmt: skip
        for _, row in part.iterrows():
            ax.annotate(f"r={int(row['radius'])}", (row["step_us"], row["error"]), fontsize=6,
                        xytext=(3, 3), textcoords="offset points", color=color)  # fmt: skip
        if mark_best:
            best = part[part["best_radius"]]
            ax.plot(best["step_us"], best["error"], "s", ms=10, mfc="none", mec="black", mew=1.2)
    if mark_best and not cpf.empty:
        ax.plot([], [], "s", ms=8, mfc="none", mec="black", label="best r of each N")
    for (method, n), part in sir.groupby(["method", "n"]):
        marker = SIR_MARKERS.get(method, SIR_OTHER_MARKER)
        ax.errorbar(part["step_us"], part["error"], yerr=part["error_ci"], ls="none",
                    marker=marker, ms=6, mfc="none", color=_n_color(ns, n), capsize=2)  # fmt: skip
    for method in sorted(sir["method"].unique()):
        marker = SIR_MARKERS.get(method, SIR_OTHER_MARKER)
        ax.plot([], [], marker, color="grey", mfc="none", ls="none",
                label=f"SIR + {method} (colour: N)")  # fmt: skip
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set(xlabel="mean time per step (µs)", ylabel=ylabel)
    ax.legend(fontsize=7, ncols=2)
    plots.add_caption(fig, caption)
    return fig


def kernel_times(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 11: the median time per step against N, one panel per kernel
    (precision and neighbourhood: the library's float64 search, the paper's
    float32 running quotients, ...), a line per r, the default build solid
    and --use_fast_math dashed (the GPU only), on log-log axes."""
    kernels = list(dict.fromkeys(table["kernel"]))
    fig, axes = plots.new_figure(len(kernels), 2, panel_size=(5.6, 4.0))
    radii = sorted(table["radius"].dropna().unique())
    ns = sorted(table["n"].unique())
    for ax, kernel in zip(axes, kernels, strict=True):
        for k, r in enumerate(radii):
            for build, ls in (("default", "-"), ("fast-math", "--")):
                part = table[(table["radius"] == r) & (table["build"] == build)
                             & (table["kernel"] == kernel)].sort_values("n")  # fmt: skip
                if part.empty:
                    continue
                ax.plot(part["n"], part["step_us"], ls=ls, marker=R_STYLES[k % len(R_STYLES)],
                        ms=3, color=N_COLORS[k % len(N_COLORS)],
                        label=f"r = {int(r)}, {build}")  # fmt: skip
        _log2_axis(ax, ns)
        ax.set_yscale("log")
        ax.set_title(f"kernel {kernel}", fontsize=9)
        ax.set(xlabel="N (particles)", ylabel="median time per step (µs)")
        ax.legend(fontsize=6, ncols=2)
    if "fast-math" not in set(table["build"]):
        fig.suptitle("time per step vs N (fast math: GPU only; not run here)", fontsize=9)
    plots.add_caption(fig, caption)
    return fig


def run_times(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 12: the median whole-run time of the first model against N, a line
    per r (the first kernel of the timing cells, default build; the others
    dotted); the SIR baselines' whole runs dashed grey, one marker per method."""
    fig, (ax,) = plots.new_figure(1, 1, panel_size=(7.0, 4.2))
    cpf = table[(table["filter"] == "CPF") & (table["build"] == "default")]
    kernels = list(dict.fromkeys(cpf["kernel"]))
    for kk, kernel in enumerate(kernels):
        for k, r in enumerate(sorted(cpf["radius"].dropna().unique())):
            part = cpf[(cpf["radius"] == r) & (cpf["kernel"] == kernel)].sort_values("n")
            ax.plot(part["n"], part["wall_ms"], marker=R_STYLES[k % len(R_STYLES)], ms=3,
                    ls="-" if kk == 0 else ":", color=N_COLORS[k % len(N_COLORS)],
                    label=f"CPF {kernel} r = {int(r)}")  # fmt: skip
    sir = table[table["filter"] == "SIR"]
    for method, part in sir.groupby("method"):
        part = part.sort_values("n")
        marker = SIR_MARKERS.get(method, SIR_OTHER_MARKER)
        ax.plot(part["n"], part["wall_ms"], color="grey", ls="--", mfc="none", marker=marker,
                label=f"SIR + {method}")  # fmt: skip
    _log2_axis(ax, sorted(table["n"].unique()))
    ax.set_yscale("log")
    ax.set(xlabel="N (particles)", ylabel="median whole-run time (ms)")
    steps = int(table["steps"].iloc[0])
    ax.set_title(f"whole run of {steps} steps: inputs, transfers, steps, estimates", fontsize=9)
    ax.legend(fontsize=6, ncols=2)
    plots.add_caption(fig, caption)
    return fig


def error_label(measure: str) -> str:
    """The y label of Figs 9-10 for a table's ``error_measure``."""
    labels = {"mse": "mean MSE over trajectories",
              "position_rmse": "mean position RMSE over trajectories"}  # fmt: skip
    return labels.get(measure, measure)


def caption_detail(figure: str, table: pd.DataFrame) -> str:
    """What a figure's caption says besides backend and scale: the counts
    behind each point and the device(s)."""
    devices = ", ".join(sorted(set(table["device"])))
    first = table.iloc[0]
    if figure in ("fig7", "fig8"):
        n, r = int(first["n"]), int(first["radius"])
        return f"trajectory 0, N = {n:,}, r = {r}, device {devices}"
    if figure in ("fig9", "fig10"):
        counts = f"{int(first['trajectories']):,} trajectories of {int(first['steps'])} steps"
        return (f"{counts} per point; x: mean time per step; SIR baselines not in the paper; "
                f"device {devices}")  # fmt: skip
    repeats = int(table.loc[table["filter"] == "CPF", "repeats"].iloc[0])
    detail = f"median of {repeats} runs of trajectory 0 per point"
    if figure == "fig12":
        detail += "; the default build"
    elif "fast-math" in set(table["build"]):
        detail += " (the builds take turns run by run)"
    else:
        detail += "; fast math is an option of the GPU kernels only"
    return f"{detail}; device {devices}"


def draw(figure: str, table: pd.DataFrame, scale: str) -> Figure:
    """Figure ``figure`` (catalog.FIGURES) from its tidy table, captioned with
    the backend(s) of its cells, the scale and :func:`caption_detail`."""
    backend = " / ".join(sorted(set(table["backend"])))
    caption = plots.caption(backend=backend, scale=scale, detail=caption_detail(figure, table))
    if figure == "fig7":
        return growth_trajectory(table, caption)
    if figure == "fig8":
        return bot_trajectory(table, caption)
    if figure in ("fig9", "fig10"):
        label = error_label(table["error_measure"].iloc[0])
        return error_vs_time(table, caption, label, mark_best=figure == "fig10")
    if figure == "fig11":
        return kernel_times(table, caption)
    if figure == "fig12":
        return run_times(table, caption)
    raise ValueError(f"no figure {figure!r}")
