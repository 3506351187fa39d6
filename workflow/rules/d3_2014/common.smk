"""Helpers of the Das et al. (2014) rules (cells.smk, outputs.smk): the artifact paths,
the cells each figure and table reads, the memory of each job. No rules live here; the
grid and its checks are Python (pfresample_studies.d3_2014.catalog)."""

import math

from pfresample_studies.d3_2014 import catalog as d3_2014_catalog
from pfresample_studies.d3_2014 import gpu_runs as d3_2014_gpu_runs
from pfresample_studies.d3_2014 import gpu_tables as d3_2014_gpu_tables
from pfresample_studies.d3_2014 import thresholds as d3_2014_thresholds

D3_2014_FILTERS = tuple(d3_2014_catalog.filters(config))
D3_2014_GPU_ALGORITHMS = tuple(d3_2014_catalog.gpu_algorithms(config))
# Where the cells of Figs 3-6 and the methods table run: on the GPU where cell jobs may
# have one (`backend`, common.smk), else on the CPU. Table 5's CPU columns are timing
# cells of their own, always on the CPU.
D3_2014_WHERE = "gpu" if CELL_GPUS else "cpu"


def d3_2014_trajectory(j) -> str:
    return f"results/d3_2014/trajectories/t{j}.npz"


def d3_2014_filter_cell(where, label, n, j, r) -> str:
    return f"results/d3_2014/filter/{where}/{label}/n{n}/t{j}_r{r}.npz"


def d3_2014_timing_cell(label, n) -> str:
    return f"results/d3_2014/timing/{label}/n{n}.npz"


def d3_2014_best_cpu_cell(n) -> str:
    return f"results/d3_2014/best_cpu/n{n}.npz"


def d3_2014_best_cpu_cells() -> list[str]:
    """The best-CPU cells (ratio 2 of Table 5): one per N of Table 5, its filters."""
    return [d3_2014_best_cpu_cell(n) for n in d3_2014_catalog.table5_n(config)]


def d3_2014_gpu_cell(algorithm, n) -> str:
    return f"results/d3_2014/gpu/{algorithm}/n{n}.npz"


def d3_2014_fig11_cell(n) -> str:
    return f"results/d3_2014/fig11/n{n}.npz"


def d3_2014_regime_cell(regime, label, n, j) -> str:
    return f"results/d3_2014/regimes/{regime}/{label}/n{n}/t{j}.npz"


def d3_2014_regime_cells() -> list[str]:
    """The regime experiment's cells, filter by filter (then N, regime, trajectory): the
    order of its tables' rows."""
    return [
        d3_2014_regime_cell(regime, label, n, j)
        for label in d3_2014_catalog.regime_filters(config)
        for n in d3_2014_catalog.regime_n(config)
        for regime in d3_2014_catalog.regimes(config)
        for j in d3_2014_catalog.regime_trajectories(config)
    ]


def d3_2014_regime_tables() -> list[str]:
    return [f"results/tables/d3_2014/regimes/{t}.csv" for t in d3_2014_catalog.REGIME_TABLES]


def d3_2014_threshold_cell(weights) -> str:
    return f"results/d3_2014/thresholds/{weights}.npz"


def d3_2014_threshold_cells() -> list[str]:
    """The printed thresholds' cells: one per regime (in d3_2014_regimes' order), then the
    gamma(2) weights' (the order of the bias table's rows)."""
    names = [*d3_2014_catalog.regimes(config), d3_2014_catalog.THRESHOLDS_GAMMA]
    return [d3_2014_threshold_cell(name) for name in names]


def d3_2014_threshold_tables() -> list[str]:
    return [f"results/tables/d3_2014/thresholds/{t}.csv" for t in d3_2014_thresholds.TABLES]


def d3_2014_trajectories() -> list[str]:
    return [d3_2014_trajectory(j) for j in d3_2014_catalog.trajectories(config)]


def d3_2014_filter_cells(where, label, n) -> list[str]:
    """Every (trajectory, run) of one filter at N."""
    return [
        d3_2014_filter_cell(where, label, n, j, r)
        for j in d3_2014_catalog.trajectories(config)
        for r in d3_2014_catalog.runs(config)
    ]


def d3_2014_method_cells() -> list[str]:
    """Every filter at the figure N (the methods table)."""
    n = d3_2014_catalog.figure_n(config)
    return [p for label in D3_2014_FILTERS for p in d3_2014_filter_cells(D3_2014_WHERE, label, n)]


def d3_2014_timing_cells(loop: bool = True) -> list[str]:
    """Table 5's CPU columns: systematic and D3 at each of its N, and with ``loop`` Table
    1's loop at d3_2014_timing_loop_n."""
    loops = [d3_2014_timing_cell(d3_2014_catalog.LOOP_FILTER, n)
             for n in d3_2014_catalog.timing_loop_n(config) if loop]  # fmt: skip
    return [
        d3_2014_timing_cell(label, n)
        for label in d3_2014_catalog.TIMING_FILTERS
        for n in d3_2014_catalog.table5_n(config)
    ] + loops


def d3_2014_gpu_cells(ns=None) -> list[str]:
    """The GPU cells (none without a GPU), one per (algorithm, N), of ``ns`` where given."""
    if not CELL_GPUS:
        return []
    return [
        d3_2014_gpu_cell(a, n)
        for a in D3_2014_GPU_ALGORITHMS
        for n in d3_2014_catalog.gpu_cells(config)
        if ns is None or n in ns
    ]


def d3_2014_figure_table_inputs(figure) -> dict[str, list[str]]:
    """The artifacts one figure's table reads, by role."""
    n = d3_2014_catalog.figure_n(config)
    if figure == "fig11":
        return {"trajectory": [], "cell": [d3_2014_fig11_cell(d3_2014_catalog.fig11_n(config))]}
    label = {**d3_2014_catalog.TRAJECTORY_FIGURES, **d3_2014_catalog.SNAPSHOT_FIGURES}[figure]
    return {"trajectory": [d3_2014_trajectory(0)],
            "cell": [d3_2014_filter_cell(D3_2014_WHERE, label, n, 0, 0)]}  # fmt: skip


def d3_2014_table_inputs(table) -> dict[str, list[str]]:
    """The artifacts one of Tables 5-7 or the methods table reads, by role."""
    none = {"trajectories": [], "cpu": [], "cells": [], "gpu": []}
    if table == "methods":
        return none | {"trajectories": d3_2014_trajectories(), "cells": d3_2014_method_cells()}
    if table == "table5":
        gpu = d3_2014_gpu_cells(d3_2014_catalog.table5_n(config))
        return none | {"cpu": d3_2014_timing_cells(), "gpu": gpu}
    if table == "table6":
        return none | {"gpu": d3_2014_gpu_cells(ns=d3_2014_catalog.table6_n(config))}
    return none | {"gpu": d3_2014_gpu_cells(ns=[d3_2014_catalog.figure_n(config)])}


def d3_2014_outputs() -> list[str]:
    """The study's figures (PNG, PDF) and tables (CSV; Tables 5-7, Table 5's speed-ups and
    methods also Markdown; the regime experiment's four, the printed thresholds' two)."""
    out = [f"results/tables/d3_2014/{t}.csv" for t in d3_2014_catalog.FIGURE_TABLES]
    for figure in d3_2014_catalog.FIGURES:
        out += [f"results/figures/d3_2014/{figure}.{ext}" for ext in ("png", "pdf")]
    for table in (*d3_2014_catalog.TABLES, d3_2014_catalog.SPEEDUP_TABLE):
        out += [f"results/tables/d3_2014/{table}.{ext}" for ext in ("csv", "md")]
    return out + d3_2014_regime_tables() + d3_2014_threshold_tables()


def d3_2014_artifacts() -> set[str]:
    """Every .npz artifact the study's target reads."""
    out = set(d3_2014_trajectories()) | set(d3_2014_method_cells())
    out |= set(d3_2014_timing_cells()) | set(d3_2014_gpu_cells())
    out |= set(d3_2014_best_cpu_cells())
    out |= set(d3_2014_regime_cells()) | set(d3_2014_threshold_cells())
    out |= {d3_2014_trajectory(j) for j in d3_2014_catalog.regime_trajectories(config)}
    return out | {d3_2014_fig11_cell(d3_2014_catalog.fig11_n(config))}


def d3_2014_mem_mb(n) -> int:
    """Memory of a cell job at N: the trajectory (T x 2 float64 truth and readings, 1.2 MB
    at 36,000 steps), T x 2 estimates, a few float64 (N, 2) particle arrays and the
    resampler's temporaries (the D3 range maxima's sparse table: N log2 N int64), and
    CuPy's context on the GPU."""
    n = int(n)
    return 768 + math.ceil((8 * n * max(1, math.log2(n)) + 40 * 8 * n) / 2**20)


def d3_2014_cell_params() -> dict:
    return {
        "seed": config["seed"],
        "ess_threshold": config["d3_2014_ess_threshold"],
    }


# The GPU experiment (gpu.smk): its files, the committed run it draws from.
D3_2014_GPU_SCRIPT = "../../../scripts/d3_2014/gpu.py"
D3_2014_GPU_RUNS = "results/d3_2014/gpu_runs"


def d3_2014_gpu_run_files() -> list[str]:
    return [f"{D3_2014_GPU_RUNS}/{name}" for name in d3_2014_gpu_runs.NAMES]


def d3_2014_gpu_committed(relative) -> list[str]:
    """The newest committed table ``relative`` (a list of one path; none where evidence/
    holds none, and the job says so)."""
    found = newest_evidence(relative)
    return [str(found.path)] if found is not None else []


def d3_2014_gpu_tables_outputs() -> list[str]:
    return [f"results/tables/d3_2014/gpu/{t}.csv" for t in d3_2014_gpu_tables.TABLES]
