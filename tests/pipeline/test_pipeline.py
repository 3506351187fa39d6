"""The Snakemake pipeline: lint, DAG, a tiny real run, config validation, corrupt artifacts.

Snakemake runs as a subprocess (`python -m snakemake`) on the repository's Snakefile with
`--directory` set to the test's own tmp_path, so every test writes its own results/.
"""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pfresample_studies.dulger2017 import filter_experiments as fe
from pfresample_studies.dulger2017.experiments import expand_variants
from pfresample_studies.dulger2017.tables import TIME_COLUMNS
from pfresample_studies.guldas2015 import catalog as guldas2015_catalog
from pfresample_studies.moazeni2013 import tables as moazeni2013_tables
from pfresample_studies.pipeline import artifacts as io
from pfresample_studies.pipeline import evidence
from snake_tools import job_counts, snakemake

pytestmark = pytest.mark.slow  # make test-fast leaves this module out (docs/testing.md)

REPO = Path(__file__).resolve().parents[2]
SNAKEFILE = REPO / "Snakefile"
CATALOG = yaml.safe_load((REPO / "config" / "studies" / "dulger2017.yaml").read_text())
GULDAS2015 = yaml.safe_load((REPO / "config" / "studies" / "guldas2015.yaml").read_text())
CONFIG = {**yaml.safe_load((REPO / "config" / "config.yaml").read_text()), **CATALOG, **GULDAS2015}
QUICK = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
FIGURES = CATALOG["dulger2017_figures"]
FILTER_TABLES = CATALOG["dulger2017_filter_tables"]
FILTER_FIGURES = CATALOG["dulger2017_filter_figures"]
GAMMA = CONFIG["gamma_distributions"]

# A grid small enough to run in about a minute on 2 cores: every figure and table,
# with two distributions of each family.
TINY_GRID = {
    "log2_n_min": 4,
    "log2_n_max": 6,
    "sequences": 2,
    "draws": 48,
    "timing_repeats": 1,
    "timing_warmup": 0,
    "fig2_3_n": 4096,
    "gamma_distributions": ["gamma-k1-s2", "gamma-k5-s1"],
    "eq233_distributions": ["eq233-y1", "eq233-y4"],
    "eq233_sweep_distributions": ["eq233-y3.5", "eq233-y4"],
    # The filter experiments: N = 2^6, 2^7, 4 trajectories x 2 runs, one job per
    # (model, variant) on any machine.
    "filter_log2_n": [6, 7],
    "filter_trajectories": 4,
    "filter_runs": 2,
    "filter_speedup_runs": 2,
    "filter_jobs": "per_variant",
    # Fig 6.23 against the best CPU code at 2^7, an N of Fig 6.23's cells (no NumPy run).
    "filter_best_cpu_log2_n": [7],
    # One resampling job per variant, as the quick grid runs them.
    "resample_jobs": "per_variant",
    # Güldaş (2015): radix 2 up to N = 2^4, sweeps at 2^4, speed at 2^5 and 2^6.
    "guldas2015_radix2_log2_n_max": 4,
    "guldas2015_radix2_replicates": 20,
    "guldas2015_histogram_log2_n": [2, 4],
    "guldas2015_sweep_log2_n": 4,
    "guldas2015_sweep_log2_radix": [1, 2, 4],
    "guldas2015_sweep_replicates": 10,
    "guldas2015_speed_log2_n_min": 5,
    "guldas2015_speed_log2_n_max": 6,
    "guldas2015_speed_replicates": 5,
    "guldas2015_timing_repeats": 1,
    # Güldaş (2015) filters: N = 2^4, 2^5, 3 runs of 10 steps; SMC-EM at 2^4, 2 x 2 iterations.
    "guldas2015_filter_log2_n_min": 4,
    "guldas2015_filter_log2_n_max": 5,
    "guldas2015_filter_runs": 3,
    "guldas2015_filter_steps": 10,
    "guldas2015_interaction_log2_n": 4,
    "guldas2015_smcem_log2_n": [4],
    "guldas2015_smcem_sequences": 2,
    "guldas2015_smcem_length": 20,
    "guldas2015_smcem_iterations": 2,
    # its CPU checks: float32 stability at N = 2^5 (exact and 3 draws), exact EM 3 iterations.
    "guldas2015_log32_log2_n_min": 5,
    "guldas2015_log32_exact_log2_n_max": 5,
    "guldas2015_log32_draws_log2_n_max": 5,
    "guldas2015_log32_draws_replicates": 3,
    "guldas2015_exact_em_iterations": 3,
    # Gelencsér-Horváth (2013): N = 64, 128, r = 4, 3 trajectories of each model, one
    # baseline (the study's own tests: tests/studies/cpf2013/test_cpf2013.py).
    "cpf2013_n": [64, 128],
    "cpf2013_radii": [4],
    "cpf2013_growth_trajectories": 3,
    "cpf2013_growth_steps": 20,
    "cpf2013_bot_trajectories": 3,
    "cpf2013_bot_steps": 10,
    "cpf2013_baselines": ["systematic"],
    "cpf2013_timing_repeats": 1,
    "cpf2013_large_n": [],
    "cpf2013_timing_n": [64, 128],
    "cpf2013_timing_baselines": ["systematic"],
    # Das et al. (2014): 2.5 s of the UUV model (250 steps), N = 32 and 64, one trajectory;
    # Table 5's timing runs over the first 1 s; Fig 11 at N = 128 (the study's own tests:
    # tests/studies/d3_2014/test_d3_2014.py).
    "d3_2014_duration": 2.5,
    "d3_2014_timing_duration": 1.0,
    "d3_2014_snapshot_time": 2.0,
    "d3_2014_fig11_time": 0.5,
    "d3_2014_fig11_n": 128,
    "d3_2014_figure_n": 64,
    "d3_2014_table5_n": [32, 64],
    "d3_2014_table6_n": [32],
    "d3_2014_snapshot_particles": 50,
    # its regime experiment: systematic in both regimes at N = 32 on one trajectory, 1 s.
    "d3_2014_regime_filters": ["systematic"],
    "d3_2014_regime_n": [32],
    "d3_2014_regime_trajectories": 1,
    "d3_2014_regime_duration": 1.0,
    "d3_2014_regime_bin_seconds": 0.5,
    # its printed thresholds: N = 32 over 10 draws, at the quick grid's 1 s.
    "d3_2014_thresholds_n": 32,
    "d3_2014_thresholds_draws": 10,
    # Moazeni (2013) chapter 3: matrices of side 32 and 64 in blocks of 8 and 16, the
    # compiled baseline at 64 (the study's own tests: tests/studies/moazeni2013/).
    "moazeni2013_ch3_numpy_n": [32, 64],
    "moazeni2013_ch3_native_n": [64],
    "moazeni2013_ch3_block_sizes": [8, 16],
    "moazeni2013_ch3_recursive_base": 8,
    "moazeni2013_ch3_repeats": 3,
    "moazeni2013_ch3_gpu_n": [64],
    "moazeni2013_ch3_gpu_block_sizes": [16],
    "moazeni2013_ch3_fig12_sizes": [64],
    "moazeni2013_ch4_tables": [1, 5],
    "moazeni2013_ch4_top_tables": 5,
    "moazeni2013_ch4_batches": [512],
    "moazeni2013_ch4_variances": [0.05],
    "moazeni2013_ch4_hashes": ["dek"],
    "moazeni2013_ch4_cpu_threads": 2,
    "moazeni2013_ch4_thread_sweep": [1, 2],
    "moazeni2013_ch4_preload": 2048,
    "moazeni2013_ch4_repeats": 3,
    "moazeni2013_ch6_tiles": [8],
    "moazeni2013_ch6_iterations": 20,
    "moazeni2013_ch6_cpu_size": 16,
    "moazeni2013_ch6_sweep_lambdas": [3.0],
    "moazeni2013_ch6_sweep_eps": [0.01],
    "moazeni2013_ch6_sweep_steps": [0.003],
    "moazeni2013_ch6_native_sizes": [16],
    "moazeni2013_ch6_native_iterations": 1,
    "moazeni2013_ch6_peer_size": 16,
    "moazeni2013_ch6_peer_weights": [0.1],
    "moazeni2013_ch6_gpu_sizes": [16],
    "moazeni2013_ch6_check_size": 16,
    "moazeni2013_ch6_check_iterations": 5,
    "moazeni2013_ch6_repeats": 1,
    "moazeni2013_ch5_sizes_3d": [16],
    "moazeni2013_ch5_sizes_2d": [64],
    "moazeni2013_ch5_repeats": 1,
    "moazeni2013_ch7_m": 16,
    "moazeni2013_ch7_planted_widths": [3],
    "moazeni2013_ch7_planted_length": 512,
    "moazeni2013_ch7_planted_seeds": 1,
    "moazeni2013_ch7_queries_per_label": 1,
    "moazeni2013_ch7_timing_widths": [3],
    "moazeni2013_ch7_timing_lengths": [1024],
    "moazeni2013_ch7_timing_queries": [16],
    "moazeni2013_ch7_cpu_max_length": 1024,
    "moazeni2013_ch7_repeats": 1,
    # chapter 7's best-CPU cell at a tiny case (no committed GPU row there: an empty
    # ch7_speedups; its own tests run the committed case)
    "moazeni2013_ch7_best_cpu_cases": ["3:1024:16"],
}
TINY = [
    f"{k}=[{','.join(map(str, v))}]" if isinstance(v, list) else f"{k}={v}"
    for k, v in TINY_GRID.items()
]
# The tiny grid with one resampling job per (variant, distribution), as at thesis scale.
TINY_PER_CELL = [c for c in TINY if not c.startswith("resample_jobs=")] + ["resample_jobs=per_cell"]


def expected_cells(grid) -> set[tuple[str, str]]:
    """(variant, distribution) of every cell the figure catalog needs."""
    variants = expand_variants(CATALOG["variants"], grid["segment_bytes"])
    cells = set()
    for spec in FIGURES.values():
        names = list(spec.get("variants", []))
        if "match" in spec:
            names.append(spec["match"]["target"])
            groups = spec["match"]["candidates"]
            names += [v for v, var in variants.items() if var.group in groups]
        dists = []
        for entry in spec["distributions"]:
            dists += grid[entry] if entry in grid else [entry]
        cells |= {(v, d) for v in names for d in dists}
    return cells


def cell_jobs(grid) -> dict[str, int]:
    """Cell jobs by rule: a resample_cell per single variant and distribution
    (`resample_jobs: per_cell`) or a resample_variant_<variant> per single
    variant (per_variant), a resample_ladder_<ladder> per reduced-B ladder and
    distribution."""
    variants = expand_variants(CATALOG["variants"], grid["segment_bytes"])
    counts, ladders = {}, set()
    per_variant = grid.get("resample_jobs") == "per_variant"
    for v, d in expected_cells(grid):
        ladder = variants[v].ladder
        if ladder is None and per_variant:
            counts["resample_variant_" + re.sub(r"\W", "_", v)] = 1
        elif ladder is None:
            counts["resample_cell"] = counts.get("resample_cell", 0) + 1
        else:
            ladders.add((ladder, d))
    for ladder, _ in ladders:
        rule = f"resample_ladder_{ladder}"
        counts[rule] = counts.get(rule, 0) + 1
    return counts


def guldas2015_jobs(grid, filters=True) -> dict[str, int]:
    """Güldaş (2015) jobs by rule: a radix-2 cell per N, one sweep cell, a speed cell
    per particle-weight set and N, a table and a figure per figure; with ``filters``
    (the study at quick scale) also a filter cell per filter kind and N, one
    interaction cell and an SMC-EM cell per N; float32 stability's cells (a set and N
    each, exact and draws) and tables always, EM's convergence (a cell per sequence,
    tables) with the filters."""
    figures = len(guldas2015_catalog.FIGURES if filters else guldas2015_catalog.SINGLE_STEP_FIGURES)
    return {
        "guldas2015_radix2_cell": len(guldas2015_catalog.radix2_n(grid)),
        "guldas2015_sweep_cell": 1,
        "guldas2015_speed_cell": 2 * len(guldas2015_catalog.speed_n(grid)),
        "guldas2015_filter_cell": 2 * len(guldas2015_catalog.filter_n(grid)) if filters else 0,
        "guldas2015_interaction_cell": 1 if filters else 0,
        "guldas2015_smcem_cell": len(guldas2015_catalog.smcem_n(grid)) if filters else 0,
        "guldas2015_smcem_reference": 1 if filters else 0,
        "guldas2015_table": figures,
        "guldas2015_figure": figures,
        "guldas2015_radix_timings": 1,
        "guldas2015_log32_cell": 2 * len(guldas2015_catalog.log32_exact_n(grid))
        + 2 * len(guldas2015_catalog.log32_draws_n(grid)),
        "guldas2015_log32_tables": 1,
        "guldas2015_exact_em_cell": grid["guldas2015_smcem_sequences"] if filters else 0,
        "guldas2015_exact_em_tables": 1 if filters else 0,
    }


def figure_files(chapter=None) -> list[str]:
    names = [n for n in FIGURES if chapter is None or re.match(rf"(fig|table){chapter}_", n)]
    return [f"{n}.{ext}" for n in names for ext in ("png", "pdf")]


def resampling_targets() -> list[str]:
    """The outputs of chapters 2, 5 and 6 that the resampling cells feed (no filter)."""
    names = ["fig2_3.png", "fig2_3.pdf", *figure_files()]
    return [f"results/figures/dulger2017/{name}" for name in names]


def filter_cells(grid) -> set[tuple[str, str]]:
    """(model, variant) of every filter cell the filter tables and figures need
    (each at every N of filter_log2_n)."""
    cells = {(s["model"], v) for s in FILTER_TABLES.values() for v in s["variants"]}
    return cells | {(s["model"], s["variant"]) for s in FILTER_FIGURES.values()}


def filter_jobs(grid, gpu: bool) -> dict[str, int]:
    """Filter jobs by rule for a grid: per_cell, one per (model, variant, N);
    per_variant, one per (model, variant). Fig 6.23 needs CPU and GPU cells; per_cell,
    its CPU cells run in parts (one per filter_cpu_part_particles of N) and a merge."""
    n = len(grid["filter_log2_n"])
    cells = len(filter_cells(grid))
    per_cell = grid["filter_jobs"] == "per_cell"
    if per_cell:
        parts = [
            fe.cpu_cell_parts(
                2**e,
                grid["filter_trajectories"],
                grid["filter_speedup_runs"],
                grid["filter_cpu_part_particles"],
            )
            for e in grid["filter_log2_n"]
        ]
        speedup = {
            "filter_cell": cells * n,
            "filter_speedup_cell": n if gpu else 0,
            "filter_speedup_part": sum(parts),
            "filter_speedup_merge": n,
        }
    else:
        speedup = {"filter_cells": cells, "filter_speedup_cells": 2 if gpu else 1}
    return {
        "filter_trajectories": len(CATALOG["filter_models"]),
        **speedup,
        "dulger2017_filter_table": len(FILTER_TABLES),
        "dulger2017_filter_trajectory_figure": 2,
        "dulger2017_filter_speedup_figure": 1,
        "dulger2017_best_cpu_cell": 1,
        "dulger2017_best_cpu_table": 1,
    }


def filter_output_files() -> tuple[list[str], list[str]]:
    """(tables, figures): the file names the filter catalog produces."""
    tables = [f"{n}.{ext}" for n in FILTER_TABLES for ext in ("csv", "md")]
    figures = [f"{n}.{ext}" for n in FILTER_FIGURES for ext in ("png", "pdf")]
    speedup = [f"{n}.csv" for n, s in FILTER_FIGURES.items() if s["kind"] == "speedup"]
    speedup += [f"{n}_speedups.{ext}" for n, s in FILTER_FIGURES.items()
                if s["kind"] == "speedup" for ext in ("csv", "md")]  # fmt: skip
    return tables + speedup, figures


def cuda_visible() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def test_lint_is_clean(tmp_path):
    proc = snakemake(tmp_path, "--lint")
    assert proc.returncode == 0, proc.output
    assert "Congratulations, your workflow is in a good condition!" in proc.output, proc.output


def test_dry_run_default_config_builds_the_dag(tmp_path):
    proc = snakemake(tmp_path, "-n")
    assert proc.returncode == 0, proc.output
    counts = job_counts(proc.output)
    scale = "thesis" if cuda_visible() else "quick"
    grid = {**CONFIG, **QUICK} if scale == "quick" else CONFIG
    assert f"pfresample: scale {scale}" in proc.output
    if scale == "quick":
        assert "no CUDA device visible" in proc.output
    assert counts["uphill_ssd_tables"] == 1  # one job, every N of the grid
    top = 2 ** grid["log2_n_max"]
    assert f"results/tuning/uphill_ssd/{top}.npz" in proc.output
    cells = expected_cells(grid)
    dists = {d for _, d in cells}
    assert counts["weight_datasets"] == len(dists)  # one job per distribution, all N
    fig2_3_extra = 0 if grid["fig2_3_n"] <= 2 ** grid["log2_n_max"] else len(GAMMA)
    assert counts.get("fig2_3_weight_dataset", 0) == fig2_3_extra
    assert {k: v for k, v in counts.items() if k.startswith("resample_")} == cell_jobs(grid)
    assert "dulger2017_table" not in counts  # the figure job writes its tables
    assert counts["dulger2017_figure"] == len(FIGURES)
    assert counts["dulger2017_fig2_3"] == 1
    assert counts["all"] == 1
    jobs = filter_jobs(grid, cuda_visible())
    assert {k: counts.get(k, 0) for k in jobs} == jobs
    jobs = guldas2015_jobs(grid)
    assert {k: counts.get(k, 0) for k in jobs} == jobs


def test_dry_run_thesis_scale_and_overrides(tmp_path):
    proc = snakemake(tmp_path, "-n", config=["scale=thesis"])
    assert proc.returncode == 0, proc.output
    counts = job_counts(proc.output)
    assert counts["uphill_ssd_tables"] == 1
    tables = set(re.findall(r"results/tuning/uphill_ssd/(\d+)\.npz", proc.output))
    assert tables == {str(2**e) for e in range(4, 23)}  # N = 2^4 ... 2^22
    cells = expected_cells(CONFIG)
    jobs = cell_jobs(CONFIG)
    assert {k: v for k, v in counts.items() if k.startswith("resample_")} == jobs
    assert (
        len(cells) > 150 and jobs["resample_ladder_metropolis-reduced"] == 5
    )  # eq. 2.33, y = 0..4
    assert counts["weight_datasets"] == len({d for _, d in cells})  # Fig 2.3's N is 2^22
    assert "fig2_3_weight_dataset" not in counts
    assert counts["dulger2017_figure"] == len(FIGURES) == 35  # Figs 5.3-5.14, 6.2-6.22, 6.27, T 6.1
    # The filter experiments: one job per (model, variant, N), N = 2^14 ... 2^22; 10 variants
    # on the growth model (Tables 5.1-5.2, 6.2-6.3), 6 on each radar scenario (Tables 7.2-7.6).
    jobs = filter_jobs(CONFIG, cuda_visible())
    assert {k: counts.get(k, 0) for k in jobs} == jobs
    assert jobs["filter_cell"] == 110 and len(FILTER_TABLES) == 8
    found = set(re.findall(r"results/filter/growth/uphill/n(\d+)\.npz", proc.output))
    assert sorted(map(int, found)) == [2**e for e in (14, 16, 18, 20, 22)]
    proc = snakemake(tmp_path, "-n", config=["scale=thesis", "backend=cuda"])
    assert proc.returncode == 0, proc.output
    counts = job_counts(proc.output)
    # Fig 6.23: GPU cells, 5 N; CPU cells in 1 + 2 + 8 + 32 + 128 parts (2^15 particles a part)
    assert counts["filter_speedup_cell"] == 5 and counts["filter_speedup_merge"] == 5
    assert counts["filter_speedup_part"] == 171
    assert "results/filter_speedup/cuda/growth/uphill/n4194304.npz" in proc.output
    # Güldaş (2015) at thesis scale: N = 2 ... 2^20 radix 2, 2 x 12 speed cells; the
    # filter figures (CPU filters) only through their own target.
    jobs = guldas2015_jobs(CONFIG, filters=False)
    assert {k: counts.get(k, 0) for k in jobs} == jobs
    assert jobs["guldas2015_radix2_cell"] == 20 and jobs["guldas2015_speed_cell"] == 24
    assert jobs["guldas2015_log32_cell"] == 2 * 12 + 2 * 8  # exact 2^11 ... 2^22, draws ... 2^18
    assert "results/guldas2015/speed/poisson/n4194304.npz" in proc.output
    proc = snakemake(tmp_path, "-n", "guldas2015_filters", config=["scale=thesis"])
    assert proc.returncode == 0, proc.output
    counts = job_counts(proc.output)
    assert counts["guldas2015_filter_cell"] == 24 and counts["guldas2015_smcem_cell"] == 6
    assert counts["guldas2015_smcem_reference"] == 1
    assert counts["guldas2015_exact_em_cell"] == 10 and counts["guldas2015_exact_em_tables"] == 1
    assert "results/guldas2015/filters/adaptive/n4194304.npz" in proc.output
    # --config wins over config/quick.yaml
    proc = snakemake(tmp_path, "-n", config=["scale=quick", "log2_n_max=5"])
    assert proc.returncode == 0, proc.output
    tables = set(re.findall(r"results/tuning/uphill_ssd/(\d+)\.npz", proc.output))
    assert tables == {"16", "32"}


@pytest.mark.parametrize(
    "target, config, jobs",
    [
        (
            "results/figures/dulger2017/fig2_3.png",
            (),
            {"fig2_3_weight_dataset": len(GAMMA), "dulger2017_fig2_3": 1},
        ),
        # Fig 6.27: three variants on eq. 2.33 with y = 4; Uphill's B needs the SSD tables.
        (
            "results/figures/dulger2017/fig6_27.png",
            TINY_PER_CELL,
            {"weight_datasets": 1, "uphill_ssd_tables": 1, "resample_cell": 3,
             "dulger2017_figure": 1},
        ),
        # Güldaş Fig 4.3: the one sweep cell, its table and figure.
        (
            "results/figures/guldas2015/fig4_3.png",
            TINY,
            {"guldas2015_sweep_cell": 1, "guldas2015_table": 1, "guldas2015_figure": 1},
        ),
        # Table 7.3: the six variants of scenario 1 and their trajectory set, nothing else.
        (
            "results/tables/dulger2017/table7_3.md",
            TINY,
            {"filter_trajectories": 1, "filter_cells": 6, "dulger2017_filter_table": 1},
        ),
    ],
)  # fmt: skip
def test_one_figure_builds_only_what_it_needs(tmp_path, target, config, jobs):
    proc = snakemake(tmp_path, "-n", target, config=config)
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output) == jobs


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The whole pipeline on the tiny grid, run once for the tests below."""
    workdir = tmp_path_factory.mktemp("tiny")
    proc = snakemake(workdir, config=TINY, timeout=600)
    assert proc.returncode == 0, proc.output
    return workdir


def read_tables(workdir: Path) -> dict[str, pd.DataFrame]:
    tables = sorted((workdir / "results" / "tables" / "dulger2017").glob("*.csv"))
    return {p.name: pd.read_csv(p) for p in tables}


def test_tiny_grid_builds_every_figure_and_table(tiny_run):
    results = tiny_run / "results"
    figures = results / "figures" / "dulger2017"
    for name in ["fig2_3.png", "fig2_3.pdf", *figure_files()]:
        assert (figures / name).stat().st_size > 1000, name
        if name.endswith(".png"):
            assert (figures / name).read_bytes()[:4] == b"\x89PNG"
    log = (results / "logs" / "figures" / "dulger2017" / "fig2_3.log").read_text()
    assert "Backend: CPU (NumPy)" in log and "N = 4,096" in log
    log = (results / "logs" / "figures" / "dulger2017" / "fig6_3.log").read_text()
    assert "Backend: CPU (NumPy)" in log and "scale: quick" in log

    filter_tables, filter_figures = filter_output_files()
    for name in filter_figures:
        assert (figures / name).stat().st_size > 1000, name
    tables = read_tables(tiny_run)
    expected = {f"{n}{s}.csv" for n in FIGURES for s in ("", "_sequences")}
    assert set(tables) == expected | {n for n in filter_tables if n.endswith(".csv")}
    tables = {k: v for k, v in tables.items() if k in expected}
    for name, spec in FIGURES.items():
        t = tables[f"{name}.csv"]
        if "operations" in spec:
            assert set(t["variant"]) == set(spec["operations"])
            assert (t["ns_per_iteration"] > 0).all()
            continue
        assert set(t["n"]) == {16, 32, 64}, name
        assert (t["sequences"] == 2).all() and (t["draws"] == 48).all(), name
        assert (t["backend"] == "cpu").all() and t["device"].notna().all(), name
        for v in spec.get("variants", []):
            assert v in set(t["variant"]), (name, v)
    # Every cell is one variant x distribution with (G, S, K) squared errors, no ancestors.
    cells = sorted((results / "resample").glob("*/*.npz"))
    assert len(cells) == len(expected_cells({**CONFIG, **TINY_GRID}))
    arrays, meta = io.load_npz(cells[0])
    assert arrays["squared_errors"].shape == (3, 2, 48)
    assert arrays["mean_offspring_64"].shape == (2, 64)
    assert meta["draws"] == 48 and meta["backend"] == "cpu" and meta["git_revision"]
    # One job per variant (the tiny grid's resample_jobs): one benchmark for its cells.
    assert (results / "benchmarks" / "resample" / cells[0].parent.name / "all.tsv").exists()

    # Nothing is redone when nothing changed; a changed parameter reruns what depends on it.
    proc = snakemake(tiny_run, "-n", config=TINY)
    assert "Nothing to be done" in proc.output, proc.output
    proc = snakemake(tiny_run, "-n", config=[*TINY, "fig2_3_bins=20"])
    assert job_counts(proc.output) == {"dulger2017_fig2_3": 1, "figure_sources": 1, "all": 1}


def test_tiny_grid_guldas2015(tiny_run):
    """Güldaş (2015) on the tiny grid: every figure and table, one row per plotted point."""
    results = tiny_run / "results"
    for plot in guldas2015_catalog.FIGURES:
        for ext in ("png", "pdf"):
            assert (results / "figures" / "guldas2015" / f"{plot}.{ext}").stat().st_size > 1000
    root = results / "tables" / "guldas2015"
    t = {p.stem: pd.read_csv(p) for p in root.glob("*.csv")}
    assert set(t) == {*guldas2015_catalog.FIGURES, "radix_timings"}
    assert t["fig4_1"].groupby("n").size().to_dict() == {4: 20, 16: 20}
    assert list(t["fig4_2"]["n"]) == [2, 4, 8, 16] and (t["fig4_2"]["lmse"] > 0).all()
    assert list(t["fig4_3"]["radix"]) == ["2x2x2x2", "4x4", "16"]
    assert list(t["fig4_4"]["radix"]) == ["2x8", "4x4", "8x2"]
    for plot in guldas2015_catalog.SPEED_FIGURES:
        speed = t[plot]
        assert len(speed) == 2 * 2 * 2, plot  # N x precision x (standard, butterfly)
        assert (speed["time_ms"] > 0).all() and (speed["particle_sets"] == 5).all()
        assert set(speed["backend"]) == {"CPU (NumPy)"} and set(speed["scale"]) == {"quick"}
    timings = t["radix_timings"]
    assert timings.groupby(["target", "n", "method", "precision"])["chosen"].sum().eq(1).all()
    for plot in guldas2015_catalog.FILTER_FIGURES:
        filters = t[plot]
        assert len(filters) == 2 * 2, plot  # N x (standard, butterfly)
        assert (filters["mse"] > 0).all() and (filters["runs"] == 3).all()
        assert set(filters["backend"]) == {"CPU (NumPy)"} and set(filters["scale"]) == {"quick"}
    assert t["fig4_11"].groupby("filter").size().to_dict() == {
        "adaptive butterfly": 10, "adaptive multinomial": 10,
    }  # fmt: skip
    assert t["fig4_11"]["level"].between(0, 4).all()
    smcem = t["fig4_12"]  # 2 filters x 2 schemes from the ML point (quick.yaml's starts)
    assert sorted(smcem["scheme"]) == ["butterfly"] * 2 + ["multinomial"] * 2
    assert set(smcem["filter"]) == {"bootstrap", "adaptive"} and set(smcem["start"]) == {"ml"}
    assert (smcem["n"] == 16).all() and (smcem["time_per_iteration_ms"] > 0).all()
    assert (smcem["sigma_mean"] > 0).all() and (smcem["alpha_mc_mse"] >= 0).all()
    assert (smcem["alpha_em_mse"] < 1e-4).all()  # from the ML point exact EM stays there
    butterfly = smcem[smcem["scheme"] == "butterfly"]
    assert butterfly["alpha_mc_p"].between(0, 1).all()
    log = (results / "logs" / "figures" / "guldas2015" / "fig4_5.log").read_text()
    assert "Backend: CPU (NumPy)" in log and "scale: quick" in log


def test_tiny_grid_filter_tables_are_sane(tiny_run):
    """The filter tables of the tiny grid (N = 2^6, 2^7, 4 trajectories x 2 runs):
    stage shares add up to 100, RMSEs are plausible, the Markdown has one block per N
    (stage tables) or one row per method (RMSE tables); Figs 7.1, 7.2, 6.23 exist."""
    root = tiny_run / "results" / "tables" / "dulger2017"
    for name, spec in FILTER_TABLES.items():
        t = pd.read_csv(root / f"{name}.csv")
        assert list(dict.fromkeys(t["variant"])) == spec["variants"], name
        assert (
            set(t["n"]) == {64, 128} and (t["trajectories"] == 4).all() and (t["runs"] == 2).all()
        )
        shares = t[[f"stage{s}_pct" for s in range(1, 5)]].sum(axis=1)
        assert np.allclose(shares, 100.0, atol=1e-6), name
        assert (t["exec_s"] > 0).all() and (t["exec_s_ci"] >= 0).all()
        assert (t["rmse_ci"] > 0).all() and t["backend"].isin(["cpu", "cuda"]).all()
        assert cuda_visible() or (t["backend"] == "cpu").all()
        if spec["model"] == "growth":
            assert t["rmse"].between(3.0, 7.0).all(), (name, t["rmse"].tolist())
        else:
            assert np.isfinite(t["rmse"]).all() and (t["rmse"] < 100.0).all(), name
        md = (root / f"{name}.md").read_text()
        assert md.startswith(f"# Table {name[5:].replace('_', '.')}: {spec['title']}")
        assert "scale: quick" in md and "4 trajectories x 2 runs per N" in md
        labels = [spec["labels"][v] for v in spec["variants"]]
        if spec["layout"] == "stages":
            assert md.count("| Stage4 |") == 2 and "| log2 N = 7 (N = 128) |" in md
            assert "| " + " | ".join(labels) + " |" in md
        else:
            assert "| Method \\ N | 64 | 128 |" in md
            assert all(f"| {label} |" in md for label in labels)
    # Every method sees the same trajectories and run seeds (common random numbers).
    a, _ = io.load_npz(tiny_run / "results/filter/growth/systematic/n64.npz")
    b, meta = io.load_npz(tiny_run / "results/filter/growth/uphill/n64.npz")
    assert np.array_equal(a["seeds"], b["seeds"]) and a["rmse"].shape == (4, 2)
    assert a["estimates"].shape == (100,) and meta["git_revision"] and meta["threads"] == "1"
    speedup = pd.read_csv(root / "fig6_23.csv")
    assert set(speedup["n"]) == {64, 128} and (speedup["cpu_exec_s"] > 0).all()
    log = (tiny_run / "results/logs/figures/dulger2017/fig6_23.log").read_text()
    if not cuda_visible():
        assert speedup["speedup_total"].isna().all()
        assert "no CUDA device: speed-up not measured" in log
    assert "logical CPUs" in log
    log = (tiny_run / "results/logs/figures/dulger2017/fig7_1.log").read_text()
    assert "estimate: Systematic, N = 64, trajectory 0, run 0" in log


def test_per_cell_job_gives_the_per_variant_cell(tiny_run, tmp_path):
    """`filter_jobs: per_cell` (thesis scale) writes the same cell as one job per
    (model, variant) does: the RMSEs, B and seeds do not depend on the job layout."""
    target = "results/filter/growth/uphill-ca-ss128/n64.npz"
    config = [c for c in TINY if not c.startswith("filter_jobs=")] + ["filter_jobs=per_cell"]
    proc = snakemake(tmp_path, target, config=config)
    assert proc.returncode == 0, proc.output
    assert "filter_cell " in proc.output or "rule filter_cell:" in proc.output
    got, meta = io.load_npz(tmp_path / target)
    want, _ = io.load_npz(tiny_run / target)
    for key in ("rmse", "B", "seeds", "estimates"):
        assert np.array_equal(got[key], want[key]), key
    assert meta["n"] == 64 and meta["rule"] == "filter_cell"
    assert (tmp_path / "results/benchmarks/filter/growth/uphill-ca-ss128/n64.tsv").exists()


def test_per_cell_resample_job_gives_the_per_variant_cell(tiny_run, tmp_path):
    """`resample_jobs: per_cell` (thesis scale) writes the same resampling cell as
    the tiny run's one job per variant: the draws' statistics and B do not depend on
    the job layout (the times do)."""
    target = "results/resample/uphill/eq233-y4.npz"
    proc = snakemake(tmp_path, target, config=TINY_PER_CELL)
    assert proc.returncode == 0, proc.output
    assert "rule resample_cell:" in proc.output or "resample_cell " in proc.output
    got, meta = io.load_npz(tmp_path / target)
    want, want_meta = io.load_npz(tiny_run / target)
    for key in ("n", "squared_errors", "variance", "bias2", "B"):
        assert np.array_equal(got[key], want[key]), key
    assert meta["rule"] == "resample_cell" and want_meta["rule"] == "resample_variant_uphill"
    assert (tiny_run / "results/benchmarks/resample/uphill/all.tsv").exists()


def _pooled_difference(a: pd.DataFrame, b: pd.DataFrame, column: str) -> tuple[float, float]:
    """Mean of a - b over matching (distribution, N, sequence) rows and its
    standard error from the per-row spread."""
    keys = ["distribution", "n", "sequence"]
    d = a.set_index(keys)[column] - b.set_index(keys)[column]
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))


def test_tiny_grid_values_are_sane(tiny_run):
    """Thesis §6.6 on the tiny grid: Systematic's MSE/N is below that of
    Rejection (which samples every offspring independently, as Multinomial does);
    Uphill's bias contribution on y = 4 is above Metropolis's. Each difference must
    exceed 4 standard errors of its mean over (N, sequence)."""
    rows = read_tables(tiny_run)["fig6_3_sequences.csv"]
    rows = rows.assign(mse_per_n=rows["mse"] / rows["n"], bias_fraction=rows["bias2"] / rows["mse"])
    by = {
        v: rows[rows["variant"] == v] for v in ("systematic", "rejection", "uphill", "metropolis")
    }
    diff, se = _pooled_difference(by["rejection"], by["systematic"], "mse_per_n")
    assert diff > 4 * se and diff > 0, (diff, se)
    y4 = {v: f[f["distribution"] == "eq233-y4"] for v, f in by.items()}
    diff, se = _pooled_difference(y4["uphill"], y4["metropolis"], "bias_fraction")
    assert diff > 4 * se and diff > 0, (diff, se)
    # MSE = Var + ||Bias||^2 (eq. 2.31) in every row; MSE/N of Rejection near 1 - sum p^2 <= 1.
    assert np.allclose(rows["mse"], rows["variance"] + rows["bias2"])
    assert (rows.loc[rows["variant"] == "rejection", "mse_per_n"] < 1.5).all()


def test_tiny_grid_figures_say_where_their_data_came_from(tiny_run):
    """The run report (results/report/figures.csv) lists every figure with its source,
    read from the figure: none is blank where a committed table of its rows exists
    (moazeni2013's GPU figures draw the committed H100 runs here), and no speed-up of
    CPU threads over one thread exceeds the threads (a first call's cost in the one
    thread's time: Fig 16 read 600x on 2 threads before the warm-up). The negative
    controls: tests/pipeline/test_evidence.py, tests/studies/moazeni2013/
    test_moazeni2013_timing.py."""
    results = tiny_run / "results"
    report = pd.read_csv(results / "report" / "figures.csv", keep_default_na=False)
    pngs = sorted((results / "figures").glob("*/*.png"))
    assert len(report) == len(pngs) and set(report["source"]) <= set(evidence.KINDS)
    blank = report[report["blank_despite_evidence"]]
    assert blank.empty, blank.to_string()
    moazeni = report[report["study"] == "moazeni2013"].set_index("figure")
    assert len(moazeni) == 39 and (moazeni["source"] != "none").all(), moazeni.to_string()
    if not cuda_visible():  # the GPU-only figures: the committed runs, labelled
        for figure in ("fig12", "fig19", "fig49", "fig60", "reuse"):
            assert moazeni.loc[figure, "source"] == "committed evidence", figure
            assert "not run on this machine" in moazeni.loc[figure, "detail"], figure
        assert moazeni.loc["fig26", "source"] == "this machine + committed evidence"
        assert moazeni.loc["cpu_threads", "source"] == "this machine"
    assert (results / "report" / "figures.md").read_text().count("| moazeni2013 |") == 39
    tables = results / "tables" / "moazeni2013"
    found = moazeni2013_tables.beyond_threads(pd.read_csv(tables / "fig16.csv"),
                                              pd.read_csv(tables / "cpu_threads.csv"))  # fmt: skip
    assert found == [], found


def test_report_has_the_figures_and_captions(tiny_run):
    proc = snakemake(tiny_run, "--report", "report.html", config=TINY)
    assert proc.returncode == 0, proc.output
    html = (tiny_run / "report.html").read_text(errors="replace")
    assert "fig6_27" in html and "fig2_3" in html
    # The captions: each figure's title from the catalog, the grid and the scale.
    assert FIGURES["fig6_27"]["title"] in html and "scale: quick" in html


def assert_same_tables(got, expected):
    """Equal tables, times aside (measurements). Figs 5.13-5.14 pick the reduced-B
    Metropolis whose *time* matches C1/C2, so which rung they show is a measurement
    too: there only the target's rows must be equal (every rung's numbers are in the
    _sequences table, compared in full)."""
    for name, want in expected.items():
        have = got[name]
        spec = FIGURES.get(name.removesuffix(".csv"), {})
        if spec.get("match", {}).get("by") == "time":
            have, want = (t[t["variant"] == spec["match"]["target"]] for t in (have, want))
        keep = [c for c in want.columns if c not in TIME_COLUMNS]
        pd.testing.assert_frame_equal(
            have[keep].reset_index(drop=True), want[keep].reset_index(drop=True), check_exact=True
        )


def incomplete_outputs(workdir: Path) -> set[Path]:
    """Outputs Snakemake has marked incomplete: .snakemake/incomplete/ holds one
    record per output, named by the urlsafe base64 of its path (long names split into
    '@'-prefixed directories)."""
    root = workdir / ".snakemake" / "incomplete"
    found = set()
    for record in root.rglob("*"):
        if record.is_file() and record.name != "migration_underway":
            parts = [p.lstrip("@") for p in record.relative_to(root).parts]
            found.add(Path(base64.urlsafe_b64decode("".join(parts)).decode()))
    return found


def _cell_state(workdir: Path) -> dict[str, int]:
    return {
        str(p): p.stat().st_mtime_ns for p in (workdir / "results" / "resample").glob("*/*.npz")
    }


def _finished_cells(workdir: Path) -> dict[str, int]:
    """Cells written and recorded as finished (no incomplete marker)."""
    in_flight = incomplete_outputs(workdir)
    return {
        p: t
        for p, t in _cell_state(workdir).items()
        if Path(p).relative_to(workdir) not in in_flight
    }


def test_kill_and_resume_gives_identical_tables(tiny_run, tmp_path):
    """kill -9 mid-run, then restart: completed cells are kept, not recomputed, and the
    tables equal the uninterrupted run's (times aside: they are measurements). One
    job per cell (thesis scale), so that a kill lands between cells; the tiny run,
    whose tables these must equal, ran one job per variant."""
    # The resampling outputs only: the filter jobs resume the same way and are
    # covered by their own tests.
    targets = resampling_targets()
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), "--directory",
           str(tmp_path), "--cores", "2", *targets, "--config", *TINY_PER_CELL]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 300
    # Wait for 10 finished cells: a cell can be written (atomically) a moment before
    # Snakemake removes its incomplete marker, so counting files alone is racy.
    while len(_finished_cells(tmp_path)) < 10 and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # snakemake and every job it started
    proc.wait()
    present = _cell_state(tmp_path)
    # A job killed after its atomic write but before Snakemake recorded it as finished
    # still has an incomplete marker; Snakemake reruns it (rerun-incomplete), correctly.
    done = _finished_cells(tmp_path)
    # At most one job per core was in flight. A reduced-B ladder job writes one file
    # per rung (metropolis-reduced-bx<scale>/<dist>.npz), so count jobs, not files.
    in_flight_jobs = {re.sub(r"-bx[0-9.]+/", "/", p) for p in set(present) - set(done)}
    assert len(in_flight_jobs) <= 2, sorted(set(present) - set(done))
    assert 10 <= len(done) < len(expected_cells({**CONFIG, **TINY_GRID})), len(done)

    assert snakemake(tmp_path, "--unlock", config=TINY_PER_CELL).returncode == 0
    proc = snakemake(tmp_path, *targets, config=TINY_PER_CELL, timeout=600)
    assert proc.returncode == 0, proc.output
    after = _cell_state(tmp_path)
    assert {p: after[p] for p in done} == done  # completed cells were not recomputed
    for name in done:
        assert f"output: {Path(name).relative_to(tmp_path)}" not in proc.output

    expected, got = read_tables(tiny_run), read_tables(tmp_path)
    expected = {k: v for k, v in expected.items() if k.removesuffix(".csv") not in FILTER_TABLES}
    expected.pop("fig6_23.csv")
    expected.pop("fig6_23_speedups.csv")
    assert set(got) == set(expected)
    assert_same_tables(got, expected)

    # A truncated cell and a truncated weight dataset are detected and regenerated.
    cell = tmp_path / "results" / "resample" / "uphill" / "eq233-y4.npz"
    data = tmp_path / "results" / "weights" / "eq233-y4" / "64.npz"
    for path in (cell, data):
        with open(path, "r+b") as fh:
            fh.truncate(path.stat().st_size // 2)
    # Found (and deleted) when the workflow starts, also on a dry run; target `all`
    # asks for them again (DISCARDED), so they are rebuilt with what read them.
    proc = snakemake(tmp_path, "-n", config=TINY_PER_CELL)
    assert proc.returncode == 0, proc.output
    assert "deleted corrupt artifact results/resample/uphill/eq233-y4.npz" in proc.output
    assert "deleted corrupt artifact results/weights/eq233-y4/64.npz" in proc.output
    assert re.search(r"output: [^\n]*results/resample/uphill/eq233-y4\.npz", proc.output)
    assert re.search(r"output: [^\n]*results/weights/eq233-y4/64\.npz", proc.output)
    # Rebuilt for real (the resampling targets only: all would run the filter too).
    lost = [str(p.relative_to(tmp_path)) for p in (cell, data)]
    proc = snakemake(tmp_path, *targets, *lost, config=TINY_PER_CELL, timeout=600)
    assert proc.returncode == 0, proc.output
    io.load_npz(cell), io.load_npz(data)
    assert_same_tables(read_tables(tmp_path), expected)


@pytest.mark.parametrize(
    ("override", "named", "why"),
    [
        ("sequence=4", "sequence", "Additional properties are not allowed"),
        ("sequences=-1", "sequences", "less than the minimum"),
        ("scale=huge", "scale", "is not one of"),
        ("segment_bytes=[128,130]", "segment_bytes", "not a multiple of 4"),
        ("gamma_distributions=[gamma-k1]", "gamma_distributions", "does not match"),
        ("log2_n_min=8", "log2_n_min", "must be <= log2_n_max"),
        ("segment_bytes=[128]", "metropolis-c1-ss2048", "is not defined"),
        ("backend=gpu", "backend", "is not one of"),
        ("timing_repeats=0", "timing_repeats", "less than the minimum"),
        ("filter_jobs=some", "filter_jobs", "is not one of"),
        ("filter_runs=0", "filter_runs", "less than the minimum"),
        ("filter_log2_n=[0,8]", "filter_log2_n", "less than the minimum"),
        ("guldas2015_radix2_replicates=1", "guldas2015_radix2_replicates", "less than the"),
        ("guldas2015_sweep_log2_radix=[5]", "guldas2015_sweep_log2_radix", "do not divide"),
    ],
)
def test_invalid_config_names_the_key(tmp_path, override, named, why):
    proc = snakemake(tmp_path, "-n", config=[override, "log2_n_max=6"])
    assert proc.returncode != 0
    assert named in proc.output and why in proc.output, proc.output
    assert not (tmp_path / "results").exists()


def test_corrupt_weights_are_detected(tmp_path):
    target = "results/weights/gamma-k1-s2/1024.npz"
    proc = snakemake(tmp_path, target, config=["sequences=2"])
    assert proc.returncode == 0, proc.output
    path = tmp_path / target
    arrays, _ = io.load_npz(path)
    assert arrays["weights"].shape == (2, 1024)

    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    with pytest.raises(io.CorruptArtifact, match="1024.npz"):
        io.load_npz(path)


def test_overhead_report_reads_every_job(tiny_run):
    from pfresample_studies.pipeline import overhead

    jobs = overhead.job_overheads(tiny_run / "results")
    benchmarks = list((tiny_run / "results" / "benchmarks").glob("**/*.tsv"))
    assert len(jobs) == len(benchmarks) > 100
    assert set(jobs["kind"]) == {
        "weights", "tuning", "resample", "tables", "figures", "trajectories", "filter",
        "filter_speedup", "filter_best_cpu", "guldas2015", "cpf2013", "d3_2014", "moazeni2013",
    }  # fmt: skip
    # The log span lies inside the job's wall time, up to the logs' millisecond stamps
    # and the benchmark's 10 ms resolution.
    assert jobs["work_s"].notna().all() and (jobs["startup_s"] > -0.05).all()
    total = overhead.summary(jobs).set_index("kind").loc["all"]
    assert total["jobs"] == len(jobs) and 0 < total["overhead_pct"] < 100
    # Every job's log names its rule; the per-rule table adds up to the jobs.
    assert (jobs["rule"] != "").all() and "filter_cells" in set(jobs["rule"])
    rules = overhead.per_rule(jobs)
    assert rules["jobs"].sum() == len(jobs)
    assert rules["job_s"].sum() == pytest.approx(jobs["job_s"].sum())
    assert rules["share_pct"].sum() == pytest.approx(100)
    assert rules["job_s"].is_monotonic_decreasing
    one = rules.set_index("rule").loc["filter_cells"]
    cells = jobs[jobs["rule"] == "filter_cells"]
    assert one["longest_s"] == cells["job_s"].max() and one["cpu_s"] == pytest.approx(
        cells["cpu_s"].sum()
    )
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "overhead_report.py"), str(tiny_run / "results")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "overhead_pct" in out.stdout and "resample" in out.stdout
    assert "share_pct" in out.stdout and "filter_cells" in out.stdout
