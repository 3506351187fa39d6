"""The paper's printed GPU thresholds on the CPU reference as a pipeline target
(`d3_2014_thresholds`): a tiny grid through Snakemake, its two tables against the
study's functions called directly (pfresample_studies.d3_2014.thresholds), and its cells
resume."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pfresample_studies.d3_2014 import catalog, experiments, thresholds
from snake_tools import job_counts, snakemake

REPO = Path(__file__).resolve().parents[3]
CONFIG = {
    **yaml.safe_load((REPO / "config" / "config.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "studies" / "d3_2014.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "quick.yaml").read_text()),
}
# 1 s of the model; the D3 filter's step at 0.5 s (50 steps) at N = 48 in both regimes,
# and gamma(2) weights, over 20 draws: 3 cells.
TINY = {"d3_2014_duration": 1.0, "d3_2014_snapshot_time": 0.5, "d3_2014_fig11_time": 0.5,
        "d3_2014_timing_duration": 0.5, "d3_2014_regime_duration": 1.0,
        "d3_2014_thresholds_n": 48, "d3_2014_thresholds_time": 0.5,
        "d3_2014_thresholds_draws": 20}  # fmt: skip


def _config_args(cfg: dict) -> list[str]:
    return ["scale=quick", "backend=cpu"] + [
        f"{k}={str(v).replace(' ', '')}" for k, v in cfg.items()
    ]


@pytest.fixture(scope="module")
def threshold_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("thresholds")
    proc = snakemake(workdir, "d3_2014_thresholds", config=_config_args(TINY), timeout=300)
    assert proc.returncode == 0, proc.output
    return workdir, proc


def _direct_tables(cfg: dict) -> dict[str, pd.DataFrame]:
    """The study's functions, without Snakemake: the regimes' cells in their order, then
    the gamma cell."""
    catalog.check_config(cfg)
    model = catalog.model(cfg)
    traj, _ = experiments.trajectory(model, cfg["seed"], 0)
    spec = catalog.all_filters(cfg)[catalog.D3_FILTER]
    n, step, draws = (catalog.thresholds_n(cfg), catalog.thresholds_step(cfg),
                      catalog.thresholds_draws(cfg))  # fmt: skip
    steps = [thresholds.step_cell(model, traj, regime, sd, spec, n, step, seed=cfg["seed"],
                                  draws=draws)
             for regime, sd in catalog.regimes(cfg).items()]  # fmt: skip
    return thresholds.tables(steps, thresholds.gamma_cell(n, draws=draws))


@pytest.mark.slow
def test_the_target_builds_the_tables_of_the_study(threshold_run):
    workdir, proc = threshold_run
    counts = job_counts(proc.output)
    assert counts["d3_2014_threshold_cell"] == 2 and counts["d3_2014_threshold_gamma_cell"] == 1
    assert counts["d3_2014_threshold_tables"] == 1 and counts["d3_2014_trajectory"] == 1
    out = workdir / "results" / "tables" / "d3_2014" / "thresholds"
    expected = _direct_tables({**CONFIG, **TINY})
    assert set(expected) == set(thresholds.TABLES)
    for name, frame in expected.items():
        table = pd.read_csv(out / f"{name}.csv")
        assert (table.pop("scale") == "quick").all()
        direct = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
        pd.testing.assert_frame_equal(table, direct, check_dtype=False, rtol=1e-12)
    bias = pd.read_csv(out / "bias.csv")
    assert list(bias["cdf"]) == ["prefix", "paper"] * 3
    assert list(bias["weights"].iloc[::2]) == ["D3 filter step at t = 0.5 s, regime paper",
                                               "D3 filter step at t = 0.5 s, regime ours",
                                               thresholds.GAMMA_LABEL]  # fmt: skip
    # the printed thresholds cover the first half of the mass only; the stride is fixed
    paper = bias[bias["cdf"] == "paper"]
    assert (paper["first_half_share"] > 0.9).all() and (paper["mc_part_per_n"] == 0).all()
    assert (paper["threads"] == 160).all()
    assert bias.loc[bias["cdf"] == "prefix", "threads"].isna().all()
    fig11 = pd.read_csv(out / "fig11.csv")
    assert list(fig11["regime"]) == ["paper", "ours"] and (fig11["step"] == 50).all()
    ratio = fig11["mean_iterations_paper_thresholds"] / fig11["mean_iterations_local"]
    assert np.all((ratio > 0.3) & (ratio < 0.7))  # halved thresholds, about half the search


@pytest.mark.slow
def test_the_cells_resume(threshold_run):
    """A second run does nothing; after a run stopped before its tables, only the cell it
    did not write runs, then the tables; a corrupt cell is deleted and rebuilt."""
    workdir, _ = threshold_run
    args = _config_args(TINY)
    proc = snakemake(workdir, "d3_2014_thresholds", config=args)
    assert proc.returncode == 0, proc.output
    assert "Nothing to be done" in proc.output, proc.output
    cells = workdir / "results" / "d3_2014" / "thresholds"
    (workdir / "results" / "tables" / "d3_2014" / "thresholds" / "bias.csv").unlink()
    (cells / "ours.npz").unlink()
    proc = snakemake(workdir, "-n", "d3_2014_thresholds", config=args)
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output) == {"d3_2014_threshold_cell": 1,
                                       "d3_2014_threshold_tables": 1,
                                       "d3_2014_thresholds": 1}  # fmt: skip
    assert "results/d3_2014/thresholds/ours.npz" in proc.output
    (cells / "gamma.npz").write_bytes(b"not a cell")
    proc = snakemake(workdir, "-n", "d3_2014_thresholds", config=args)
    assert proc.returncode == 0, proc.output
    assert "deleted corrupt artifact results/d3_2014/thresholds/gamma.npz" in proc.output
    assert job_counts(proc.output) == {"d3_2014_threshold_cell": 1,
                                       "d3_2014_threshold_gamma_cell": 1,
                                       "d3_2014_threshold_tables": 1,
                                       "d3_2014_thresholds": 1}  # fmt: skip
