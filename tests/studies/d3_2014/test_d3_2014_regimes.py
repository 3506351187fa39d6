"""Das et al. (2014)'s regime experiment as a pipeline target (`d3_2014_regimes`): a
tiny grid through Snakemake, its four tables against the study's functions called
directly (pfresample_studies.d3_2014.regimes), and its cells resume."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pfresample_studies.d3_2014 import catalog, experiments, regimes
from snake_tools import job_counts, snakemake

REPO = Path(__file__).resolve().parents[3]
CONFIG = {
    **yaml.safe_load((REPO / "config" / "config.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "studies" / "d3_2014.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "quick.yaml").read_text()),
}
# 2 s of the model, systematic and D3 (the quick grid's filters) at N = 64 in both regimes
# on 2 trajectories over their first 1.5 s (150 steps), bins of 0.5 s: 8 cells.
TINY = {"d3_2014_duration": 2.0, "d3_2014_snapshot_time": 1.0, "d3_2014_fig11_time": 0.5,
        "d3_2014_timing_duration": 1.0, "d3_2014_regime_n": [64],
        "d3_2014_regime_trajectories": 2, "d3_2014_regime_duration": 1.5,
        "d3_2014_regime_bin_seconds": 0.5}  # fmt: skip
MEASURED = ("seconds", "seconds_ci")  # times differ from run to run


def _config_args(cfg: dict) -> list[str]:
    return ["scale=quick", "backend=cpu"] + [
        f"{k}={str(v).replace(' ', '')}" for k, v in cfg.items()
    ]


@pytest.fixture(scope="module")
def regime_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("regimes")
    proc = snakemake(workdir, "d3_2014_regimes", config=_config_args(TINY), timeout=300)
    assert proc.returncode == 0, proc.output
    return workdir, proc


def _direct_tables(cfg: dict) -> dict[str, pd.DataFrame]:
    """The study's functions on the grid's cells, in the grid's order (filter, N,
    regime, trajectory), without Snakemake."""
    catalog.check_config(cfg)
    full, model = catalog.model(cfg), catalog.regime_model(cfg)
    trajs = {j: experiments.first_steps(experiments.trajectory(full, cfg["seed"], j)[0],
                                        model.steps)
             for j in catalog.regime_trajectories(cfg)}  # fmt: skip
    cells = [
        regimes.regime_cell(model, trajs[j], regime, sd, label, spec, n, j, seed=cfg["seed"],
                            snapshot_step=catalog.regime_snapshot_step(cfg),
                            bin_seconds=cfg["d3_2014_regime_bin_seconds"])
        for label, spec in catalog.regime_filters(cfg).items()
        for n in catalog.regime_n(cfg)
        for regime, sd in catalog.regimes(cfg).items()
        for j in catalog.regime_trajectories(cfg)
    ]  # fmt: skip
    return regimes.tables(cells, order=list(catalog.regime_filters(cfg)))


@pytest.mark.slow
def test_the_target_builds_the_tables_of_the_study(regime_run):
    workdir, proc = regime_run
    counts = job_counts(proc.output)
    assert counts["d3_2014_regime_cell"] == 8 and counts["d3_2014_regime_tables"] == 1
    assert counts["d3_2014_trajectory"] == 2
    out = workdir / "results" / "tables" / "d3_2014" / "regimes"
    expected = _direct_tables({**CONFIG, **TINY})
    assert set(expected) == set(catalog.REGIME_TABLES)
    for name, frame in expected.items():
        table = pd.read_csv(out / f"{name}.csv")
        assert (table.pop("scale") == "quick").all()
        # the direct frame through the same CSV round trip (floats as written)
        direct = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
        drop = [c for c in MEASURED if c in direct]
        pd.testing.assert_frame_equal(table.drop(columns=drop), direct.drop(columns=drop),
                                      check_dtype=False, rtol=1e-9)  # fmt: skip
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["filter"]) == ["systematic", "d3"] * 2
    assert list(summary["regime"]) == ["ours", "ours", "paper", "paper"]
    assert (summary["trajectories"] == 2).all() and (summary["paired_trajectories"] == 2).all()
    pairs = pd.read_csv(out / "regime_pairs.csv")
    assert list(pairs["filter"]) == ["systematic", "d3"] and (pairs["trajectories"] == 2).all()
    errors = pd.read_csv(out / "error_vs_time.csv")
    assert len(errors) == 4 * 3 and list(errors["t"].iloc[:3]) == [0.5, 1.0, 1.5]
    cell = workdir / "results" / "d3_2014" / "regimes" / "paper" / "d3" / "n64" / "t1.npz"
    assert cell.exists()


@pytest.mark.slow
def test_the_cells_resume(regime_run):
    """A second run does nothing; after a run stopped before its tables, only the cells
    it did not write run (here one), then the tables; a corrupt cell is deleted and
    rebuilt."""
    workdir, _ = regime_run
    args = _config_args(TINY)
    proc = snakemake(workdir, "d3_2014_regimes", config=args)
    assert proc.returncode == 0, proc.output
    assert "Nothing to be done" in proc.output, proc.output
    cells = workdir / "results" / "d3_2014" / "regimes"
    (workdir / "results" / "tables" / "d3_2014" / "regimes" / "summary.csv").unlink()
    (cells / "ours" / "systematic" / "n64" / "t0.npz").unlink()
    proc = snakemake(workdir, "-n", "d3_2014_regimes", config=args)
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output) == {"d3_2014_regime_cell": 1, "d3_2014_regime_tables": 1,
                                       "d3_2014_regimes": 1}  # fmt: skip
    assert "results/d3_2014/regimes/ours/systematic/n64/t0.npz" in proc.output
    (cells / "paper" / "d3" / "n64" / "t1.npz").write_bytes(b"not a cell")
    proc = snakemake(workdir, "-n", "d3_2014_regimes", config=args)
    assert proc.returncode == 0, proc.output
    assert "deleted corrupt artifact results/d3_2014/regimes/paper/d3/n64/t1.npz" in proc.output
    assert job_counts(proc.output)["d3_2014_regime_cell"] == 2
