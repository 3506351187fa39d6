"""Figs 4.1-4.8 of Güldaş (2015) from their tidy tables (``tables``). The
thesis's figures are not in its text, only their captions and prose (§4.1):
the axes follow the prose, and every panel says what it plots."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ..pipeline import plots

SCHEME_STYLE = {"standard": ("tab:blue", "o"), "butterfly": ("tab:orange", "s")}


def _log2_axis(ax, values) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(values)
    ax.set_xticklabels([f"$2^{{{int(math.log2(v))}}}$" for v in values], fontsize=7)
    ax.xaxis.set_minor_formatter(NullFormatter())  # base-2 minor labels overlap the majors


def radix2_histograms(table: pd.DataFrame, limit: float, caption: str) -> Figure:
    """Fig 4.1: the errors E (eq. 4.1) scaled by sqrt(N / log2 N), one panel
    per N, with the density of the limiting N(0, (1 - 1/2) Var) in red."""
    ns = sorted(table["n"].unique())
    fig, axes = plots.new_figure(len(ns), ncols=min(len(ns), 3))
    sd = math.sqrt(limit)
    grid = np.linspace(-4.5 * sd, 4.5 * sd, 400)
    density = np.exp(-(grid**2) / (2 * limit)) / math.sqrt(2 * math.pi * limit)
    for ax, n in zip(axes, ns, strict=True):
        scaled = table.loc[table["n"] == n, "scaled_error"].to_numpy()
        ax.hist(scaled, bins=60, range=(grid[0], grid[-1]), density=True, color="0.6")
        ax.plot(grid, density, color="red", lw=1.5, label=f"N(0, {limit:.2f})")
        ax.set_title(f"N = 2^{int(math.log2(n))}: var {scaled.var():.2f}", fontsize=9)
        ax.set_xlabel("E √(N/log₂N)")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("density")
    plots.add_caption(fig, caption)
    return fig


def radix2_lmse(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 4.2: LMSE x N / log2 N against N with its confidence interval,
    MSE x N / log2 N beside it, and the limit of Theorem 3.4 dashed red."""
    fig, (ax,) = plots.new_figure(1, 1, panel_size=(6.0, 3.6))
    n = table["n"].to_numpy()
    for stat, color, label in (
        ("lmse", "black", "LMSE (eq. 4.6)"),
        ("mse", "tab:blue", "MSE (eq. 4.5)"),
    ):
        ax.errorbar(
            n,
            table[f"{stat}_scaled"],
            yerr=table[f"{stat}_scaled_ci"],
            color=color,
            marker="o",
            ms=3,
            capsize=2,
            lw=1,
            label=f"{label} × N/log₂N",
        )
    ax.axhline(table["limit"].iloc[0], color="red", ls="--",
               label=f"limit (1 - 1/2) Var = {table['limit'].iloc[0]:.2f}")  # fmt: skip
    _log2_axis(ax, n)
    ax.set_xlabel("N")
    ax.set_ylabel("scaled error")
    ax.legend(fontsize=7)
    plots.add_caption(fig, caption)
    return fig


def radix_sweep(table: pd.DataFrame, x: str, caption: str) -> Figure:
    """Figs 4.3 (x = "depth") and 4.4 (x = "log2_first_radix"): LMSE with the
    0.1 / 0.9 quantiles of the squared errors dashed, MSE, and for a fixed
    first-order LMSE sum_k (1 - 1/r_k) Var / N (Theorems 3.4-3.5)."""
    fig, (ax,) = plots.new_figure(1, 1, panel_size=(6.0, 3.6))
    t = table.sort_values(x)
    ax.errorbar(t[x], t["lmse"], yerr=t["lmse_ci"], color="black", marker="o", ms=3, capsize=2,
                lw=1, label="LMSE (eq. 4.6)")  # fmt: skip
    ax.plot(t[x], t["lmse_q10"], "k--", lw=0.8, label="0.1 / 0.9 quantiles of squared errors")
    ax.plot(t[x], t["lmse_q90"], "k--", lw=0.8)
    ax.plot(t[x], t["mse"], color="tab:blue", marker=".", lw=0.8, label="MSE (eq. 4.5)")
    ax.plot(t[x], t["first_order_lmse"], "r^", ms=5, label="Σ_k (1 - 1/r_k) Var / N")
    ax.set_yscale("log")
    ax.set_xticks(t[x])
    if x == "depth":
        labels = [
            f"r={radix.split('x')[0]}\nD={d}"
            for radix, d in zip(t["radix"], t["depth"], strict=True)
        ]
    else:
        labels = [str(d) for d in t[x]]
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_xlabel(
        "radix r and depth D, r^D = N" if x == "depth" else "d: radix sequence (2^d, 2^(D-d))"
    )
    ax.set_ylabel("squared error")
    ax.legend(fontsize=7)
    plots.add_caption(fig, caption)
    return fig


SPEED_STYLE = {  # (scheme, precision) -> colour, marker, line, label
    ("standard", "float32"): ("tab:blue", "o", "-", "standard"),
    ("butterfly", "float32"): ("tab:orange", "s", "-", "butterfly"),
    ("standard", "log32"): ("tab:purple", "D", ":", "standard, log-domain scan (App. A)"),
    ("standard", "float64"): ("tab:blue", "o", "-", "standard"),
    ("butterfly", "float64"): ("tab:orange", "s", "-", "butterfly"),
}


def speed(table: pd.DataFrame, caption: str, error: str = "LMSE", column: str = "lmse",
          beside: str | None = "mse") -> Figure:  # fmt: skip
    """Figs 4.5-4.8: row a float32, row b float64; columns ``error`` vs run
    time, run time vs N, ``error`` vs N, standard and butterfly; ``column``
    is the table's error (LMSE, eq. 4.6, the thesis's), ``beside`` a second
    one drawn dotted in the last column (MSE, eq. 4.5). Row a adds the
    standard method on the float32 log-domain scan where the table has it
    (precision "log32"). Figs 4.9-4.10 draw their AMSE the same way
    (``error="AMSE", column="mse", beside=None``)."""
    precisions = [p for p in ("float32", "float64") if p in set(table["precision"])]
    fig = Figure(figsize=(12.5, 3.4 * len(precisions) + 0.5), layout="constrained")
    axes = np.atleast_2d(fig.subplots(len(precisions), 3, squeeze=False))
    for row, precision in zip(axes, precisions, strict=True):
        shown = [precision, "log32"] if precision == "float32" else [precision]
        for (scheme, p), (color, marker, ls, name) in SPEED_STYLE.items():
            if p not in shown:
                continue
            s = table[(table["precision"] == p) & (table["scheme"] == scheme)].sort_values("n")
            if s.empty:
                continue
            label = f"{name} ({s['label' if 'label' in s else 'method'].iloc[0]})"
            row[0].plot(s["time_ms"], s[column], color=color, marker=marker, ls=ls, ms=3,
                        lw=0.8, label=label)  # fmt: skip
            row[1].plot(s["n"], s["time_ms"], color=color, marker=marker, ls=ls, ms=3, label=label)
            row[2].errorbar(s["n"], s[column], yerr=s[f"{column}_ci"], color=color, marker=marker,
                            ls=ls, ms=3, capsize=2, lw=1, label=f"{error}: {label}")  # fmt: skip
            if beside is not None:
                row[2].plot(s["n"], s[beside], color=color, ls=(0, (1, 2)), lw=1, alpha=0.7,
                            label=f"{beside.upper()}: {name}")  # fmt: skip
        row[0].set(xscale="log", yscale="log", xlabel="run time (ms)", ylabel=error)
        row[0].xaxis.set_minor_formatter(NullFormatter())  # the minor labels overlap
        row[1].set(yscale="log", xlabel="N", ylabel="run time (ms)")
        row[2].set(yscale="log", xlabel="N",
                   ylabel=error if beside is None else f"{error} (MSE dotted)")  # fmt: skip
        for ax in row[1:]:
            _log2_axis(ax, sorted(table["n"].unique()))
        panel = "a" if precision == "float32" else "b"
        row[0].set_title(f"({panel}) {precision}: {error} vs run time", fontsize=9)
        row[1].set_title(f"({panel}) {precision}: run time vs N", fontsize=9)
        row[2].set_title(f"({panel}) {precision}: {error} vs N", fontsize=9)
        row[0].legend(fontsize=7)
        row[2].legend(fontsize=6)
    plots.add_caption(fig, caption)
    return fig


def interaction(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 4.11: ESS (eq. 1.11) and interaction level (log2 of the largest
    block that interacted) at every step, adaptive multinomial against the
    radix-2 adaptive butterfly."""
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    ess_ax, level_ax = fig.subplots(1, 2)
    for (label, part), color in zip(table.groupby("filter", sort=False), ("tab:blue", "tab:orange"),
                                    strict=False):  # fmt: skip
        ess_ax.plot(part["t"], part["ess"], color=color, lw=0.9, label=label)
        level_ax.step(part["t"], part["level"], where="mid", color=color, lw=0.9,
                      label=f"{label} (mean {part['level'].mean():.2f})")  # fmt: skip
    n, tau = int(table["n"].iloc[0]), float(table["tau"].iloc[0])
    ess_ax.axhline(tau * n, color="grey", ls="--", lw=0.8, label=f"τN = {tau * n:g}")
    ess_ax.set(xlabel="time step t", ylabel="ESS before resampling")
    level_ax.set(xlabel="time step t", ylabel="interaction level (log2 block size)")
    ess_ax.legend(fontsize=7)
    level_ax.legend(fontsize=7)
    plots.add_caption(fig, caption)
    return fig


SMCEM_STYLE = {
    ("bootstrap", "multinomial"): ("tab:blue", "o", "-"),
    ("bootstrap", "butterfly"): ("tab:orange", "s", "-"),
    ("adaptive", "multinomial"): ("tab:green", "^", "--"),
    ("adaptive", "butterfly"): ("tab:red", "v", "--"),
}


def smcem(table: pd.DataFrame, caption: str) -> Figure:
    """Fig 4.12: time per EM iteration vs N; for alpha and sigma, the Monte
    Carlo part of the SMC-EM estimate's MSE (SMC-EM minus exact EM at the
    same iteration) against the time per iteration, for each filter and
    scheme, with the data's part (the ML point's MSE around the truth, the
    same at every N) dashed grey with its interval. The runs of the first
    start in the table (the ML point where configured)."""
    fig = Figure(figsize=(12.5, 3.8), layout="constrained")
    axes = fig.subplots(1, 3)
    start = table["start"].iloc[0]
    part = table[table["start"] == start]
    for (kind, scheme), (color, marker, ls) in SMCEM_STYLE.items():
        s = part[(part["filter"] == kind) & (part["scheme"] == scheme)].sort_values("n")
        if s.empty:
            continue
        label = f"{kind}, {scheme}"
        t = s["time_per_iteration_ms"]
        axes[0].plot(s["n"], t, color=color, marker=marker, ls=ls, ms=3, label=label)
        for ax, name in zip(axes[1:], ("alpha", "sigma"), strict=True):
            ax.errorbar(t, s[f"{name}_mc_mse"], yerr=s[f"{name}_mc_mse_ci"], color=color,
                        marker=marker, ls=ls, ms=3, capsize=2, lw=1, label=label)  # fmt: skip
    for ax, name in zip(axes[1:], ("alpha", "sigma"), strict=True):
        ml, half = part[f"{name}_ml_mse"].iloc[0], part[f"{name}_ml_mse_ci"].iloc[0]
        ax.axhline(ml, color="0.4", ls="--", lw=1, label="ML point vs truth (the data's part)")
        if np.isfinite(half):
            ax.axhspan(max(ml - half, ml * 1e-3), ml + half, color="0.85", zorder=0)
    axes[0].set(yscale="log", xlabel="N", ylabel="time per EM iteration (ms)")
    _log2_axis(axes[0], sorted(part["n"].unique()))
    for ax, name in zip(axes[1:], ("α", "σ"), strict=True):
        ax.set(xscale="log", yscale="log", xlabel="time per EM iteration (ms)",
               ylabel=f"MSE of {name}")  # fmt: skip
        ax.xaxis.set_minor_formatter(NullFormatter())  # the minor labels overlap
        ax.set_title(f"{name}: Monte Carlo part (SMC-EM − exact EM)", fontsize=9)
    axes[0].set_title(f"start: {start}", fontsize=9)
    for ax in axes:
        ax.legend(fontsize=6)
    plots.add_caption(fig, caption)
    return fig
