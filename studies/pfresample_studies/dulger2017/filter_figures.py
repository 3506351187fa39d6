"""Figures of the SIR-filter experiments of Dülger (2017): Figs 7.1-7.2 (the
tracked aircraft: truth, measurements, one filter estimate) and Fig 6.23 (the
speed-up of the GPU filter over the CPU filter). Captions and saving as the
other figures (:mod:`pfresample_studies.pipeline.plots`)."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ..pipeline.plots import add_caption


def measurements_xy(y, sensor=(0.0, 0.0)) -> np.ndarray:
    """Range-bearing measurements (eq. 7.2), shape (T, 2), as x/y positions:
    sensor + r (cos theta, sin theta)."""
    y = np.asarray(y, dtype=np.float64)
    return np.stack(
        [sensor[0] + y[:, 0] * np.cos(y[:, 1]), sensor[1] + y[:, 0] * np.sin(y[:, 1])], axis=1
    )


def _title(fig: Figure, title: str) -> None:
    width = max(40, int(fig.get_figwidth() * 13))
    fig.suptitle("\n".join(textwrap.wrap(title, width=width)), fontsize=9)


def trajectory_figure(
    truth,
    y,
    estimate=None,
    *,
    sensor=(0.0, 0.0),
    estimate_label: str = "filter estimate",
    title: str = "",
    caption: str | None = None,
) -> Figure:
    """Figs 7.1-7.2: true positions ``truth`` (T + 1, 4) of the aircraft in
    the plane, the measurements ``y`` (T, 2) converted to x/y, and one filter
    estimate (T, 4) when given."""
    truth = np.asarray(truth, dtype=np.float64)
    xy = measurements_xy(y, sensor)
    with sns.axes_style("whitegrid"), sns.plotting_context("paper"):
        fig = Figure(figsize=(6.4, 5.6), layout="constrained")
        ax = fig.subplots()
        ax.plot(truth[:, 0], truth[:, 1], "-", color="k", linewidth=1.6, label="true position")
        ax.plot(truth[0, 0], truth[0, 1], "o", color="k", markersize=5, label="start (x_0)")
        ax.plot(xy[:, 0], xy[:, 1], ".", color="tab:orange", markersize=4,
                alpha=0.8, label="measurements (range, bearing) as x/y")  # fmt: skip
        if estimate is not None:
            est = np.asarray(estimate, dtype=np.float64)
            ax.plot(est[:, 0], est[:, 1], "--", color="tab:blue", linewidth=1.2,
                    label=estimate_label)  # fmt: skip
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("x position p_x (m)")
        ax.set_ylabel("y position p_y (m)")
        ax.legend(loc="best", fontsize=7)
        if title:
            _title(fig, title)
        if caption:
            add_caption(fig, caption)
    return fig


def speedup_figure(
    frame: pd.DataFrame, *, steps: int = 100, title: str = "", caption: str | None = None
) -> Figure:
    """Fig 6.23 from :func:`pfresample.filter_tables.speedup_frame`: the
    speed-up CPU time / GPU time of the whole filter and of its resampling
    stage against N (log2 axis), next to the seconds per run of both. Without
    GPU times only the CPU seconds are drawn (nothing is made up)."""
    measured = frame["gpu_exec_s"].notna().any()
    with sns.axes_style("whitegrid"), sns.plotting_context("paper"):
        fig = Figure(figsize=(9.6 if measured else 5.2, 4.2), layout="constrained")
        axes = fig.subplots(1, 2 if measured else 1, squeeze=False).ravel()
        ax = axes[0]
        series = [
            ("cpu_exec_s", "CPU: whole filter", "tab:blue", "-"),
            ("cpu_resampling_s", "CPU: resampling stage", "tab:blue", "--"),
        ]
        if measured:
            series += [
                ("gpu_exec_s", "GPU: whole filter", "tab:green", "-"),
                ("gpu_resampling_s", "GPU: resampling stage", "tab:green", "--"),
            ]
        for column, label, color, style in series:
            ax.plot(frame["n"], frame[column], style, marker="o", color=color, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N (particles)")
        ax.set_ylabel(f"seconds per run ({steps} steps)")
        ax.legend(fontsize=7)
        if measured:
            ax = axes[1]
            ax.plot(frame["n"], frame["speedup_total"], "-o", color="tab:red",
                    label="whole filter")  # fmt: skip
            ax.plot(frame["n"], frame["speedup_resampling"], "--s", color="tab:purple",
                    label="resampling stage")  # fmt: skip
            ax.axhline(1.0, color="0.5", linewidth=0.8)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("N (particles)")
            ax.set_ylabel("speed-up (CPU time / GPU time)")
            ax.legend(fontsize=7)
        if title:
            _title(fig, title)
        if caption:
            add_caption(fig, caption)
    return fig
