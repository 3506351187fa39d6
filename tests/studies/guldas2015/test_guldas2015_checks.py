"""Güldaş (2015)'s CPU checks as pipeline targets (`guldas2015_log32`, float32
stability on the thesis's kernel, and `guldas2015_exact_em`, EM's convergence):
a tiny grid through Snakemake, their tables against the study's functions called
directly (pfresample_studies.guldas2015.log32, .exact_em), and their cells resume."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pfresample_studies.guldas2015 import catalog, exact_em, filter_experiments, log32
from snake_tools import job_counts, snakemake

REPO = Path(__file__).resolve().parents[3]
CONFIG = {
    **yaml.safe_load((REPO / "config" / "config.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "studies" / "guldas2015.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "quick.yaml").read_text()),
}
# float32 stability at N = 2^6, 2^7 (exact: 256 // N sets, within [2, 3]) and 2^6 (draws, 5
# sets): 6 cells; exact EM on 2 sequences of n = 10, 20 iterations from both starts: 2
# cells, the ML points from a reference cell of 2 EM iterations from the ML point.
TINY = {"guldas2015_log32_log2_n_min": 6, "guldas2015_log32_exact_log2_n_max": 7,
        "guldas2015_log32_draws_log2_n_max": 6, "guldas2015_log32_draws_replicates": 5,
        "guldas2015_log32_exact_weights": 256, "guldas2015_log32_exact_sets_min": 2,
        "guldas2015_log32_exact_sets_max": 3, "guldas2015_smcem_sequences": 2,
        "guldas2015_smcem_length": 10, "guldas2015_smcem_iterations": 2,
        "guldas2015_smcem_starts": ["ml"], "guldas2015_exact_em_iterations": 20}  # fmt: skip
TARGETS = ("guldas2015_log32", "guldas2015_exact_em")
MEASURED = ("seconds",)


def _config_args(cfg: dict) -> list[str]:
    return ["scale=quick", "backend=cpu"] + [
        f"{k}={str(v).replace(' ', '')}" for k, v in cfg.items()
    ]


@pytest.fixture(scope="module")
def checks_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("guldas2015_checks")
    proc = snakemake(workdir, *TARGETS, config=_config_args(TINY), timeout=300)
    assert proc.returncode == 0, proc.output
    return workdir, proc


def _direct_tables(cfg: dict) -> dict[str, pd.DataFrame]:
    """The study's functions on the tiny grid, in the grid's order, without Snakemake."""
    catalog.check_config(cfg)
    sets = catalog.targets(cfg)
    exact = [log32.exact_cell(name, sets[name], n, sets=catalog.log32_exact_sets(cfg, n),
                              seed=cfg["seed"])
             for name in ("gaussian", "poisson") for n in catalog.log32_exact_n(cfg)]  # fmt: skip
    draws = [log32.draws_cell(name, sets[name], n, seed=cfg["seed"],
                              replicates=cfg["guldas2015_log32_draws_replicates"])
             for name in ("gaussian", "poisson") for n in catalog.log32_draws_n(cfg)]  # fmt: skip
    reference = filter_experiments.smcem_reference_cell(
        sequences=cfg["guldas2015_smcem_sequences"], length=cfg["guldas2015_smcem_length"],
        iterations=cfg["guldas2015_smcem_iterations"], starts=cfg["guldas2015_smcem_starts"],
        seed=cfg["seed"],
    )  # fmt: skip
    cells = [exact_em.exact_em_cell(reference, m, starts=cfg["guldas2015_exact_em_starts"],
                                    iterations=cfg["guldas2015_exact_em_iterations"],
                                    settled=cfg["guldas2015_exact_em_settled"])
             for m in catalog.exact_em_sequences(cfg)]  # fmt: skip
    frames = {f"log32/{k}": v for k, v in log32.tables(exact, draws).items()}
    em = exact_em.tables(reference, cells, window=cfg["guldas2015_exact_em_stop_window"],
                         tolerance=cfg["guldas2015_exact_em_stop_tolerance"])  # fmt: skip
    return frames | {f"exact_em/{k}": v for k, v in em.items()}


@pytest.mark.slow
def test_the_targets_build_the_tables_of_the_study(checks_run):
    workdir, proc = checks_run
    counts = job_counts(proc.output)
    assert counts["guldas2015_log32_cell"] == 6 and counts["guldas2015_log32_tables"] == 1
    assert counts["guldas2015_exact_em_cell"] == 2 and counts["guldas2015_exact_em_tables"] == 1
    assert counts["guldas2015_smcem_reference"] == 1 and "guldas2015_smcem_cell" not in counts
    out = workdir / "results" / "tables" / "guldas2015"
    expected = _direct_tables({**CONFIG, **TINY})
    names = {f"log32/{t}" for t in catalog.LOG32_TABLES}
    assert set(expected) == names | {f"exact_em/{t}" for t in catalog.EXACT_EM_TABLES}
    for name, frame in expected.items():
        table = pd.read_csv(out / f"{name}.csv")
        assert (table.pop("scale") == "quick").all()
        direct = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
        drop = [c for c in MEASURED if c in direct]
        pd.testing.assert_frame_equal(table.drop(columns=drop), direct.drop(columns=drop),
                                      check_dtype=False, rtol=1e-9)  # fmt: skip
    exact = pd.read_csv(out / "log32" / "exact.csv")
    assert list(exact["sets"]) == [3] * 4 + [2] * 4 + [3] * 4 + [2] * 4
    assert set(exact["kernel"]) == set(log32.KERNELS)
    assert (exact.loc[exact.kernel == "float64", "lmse_ratio_to_float64"] == 1).all()
    draws = pd.read_csv(out / "log32" / "draws.csv")
    assert len(draws) == 2 * 6 and (draws["particle_sets"] == 5).all()
    convergence = pd.read_csv(out / "exact_em" / "exact_em_convergence.csv")
    assert list(convergence["start"]) == ["guess", "truth"] * 2
    assert (convergence["iterations_run"] <= 20).all()
    trace = pd.read_csv(out / "exact_em" / "exact_em.csv")
    assert set(trace["iteration"]) <= set(range(21)) and 0 in set(trace["iteration"])


@pytest.mark.slow
def test_the_cells_resume(checks_run):
    """A second run does nothing; after a run stopped before its tables, only the cells
    it did not write run (one of each target), then the tables; a corrupt cell is
    deleted and rebuilt."""
    workdir, _ = checks_run
    args = _config_args(TINY)
    proc = snakemake(workdir, *TARGETS, config=args)
    assert proc.returncode == 0, proc.output
    assert "Nothing to be done" in proc.output, proc.output
    results = workdir / "results"
    (results / "tables" / "guldas2015" / "log32" / "exact.csv").unlink()
    (results / "guldas2015" / "log32" / "exact" / "poisson" / "n128.npz").unlink()
    (results / "tables" / "guldas2015" / "exact_em" / "ml_points.csv").unlink()
    (results / "guldas2015" / "exact_em" / "s1.npz").unlink()
    corrupt = "results/guldas2015/log32/draws/gaussian/n64.npz"
    (workdir / corrupt).write_bytes(b"not a cell")
    proc = snakemake(workdir, "-n", *TARGETS, config=args)
    assert proc.returncode == 0, proc.output
    assert f"deleted corrupt artifact {corrupt}" in proc.output
    assert job_counts(proc.output) == {
        "guldas2015_log32_cell": 2, "guldas2015_log32_tables": 1, "guldas2015_log32": 1,
        "guldas2015_exact_em_cell": 1, "guldas2015_exact_em_tables": 1,
        "guldas2015_exact_em": 1,
    }  # fmt: skip
    assert "results/guldas2015/log32/exact/poisson/n128.npz" in proc.output
