"""Moazeni (2013)'s one-host experiments as pipeline targets (`moazeni2013_ch3_real`,
`moazeni2013_ch7_fig63`, `moazeni2013_ch4_peers`, and `moazeni2013_ch6_tv_draws` on the CPU):
their rules in a dry run with and without a GPU, their keys checked by the schema; without a
GPU the files drawn from the committed runs with their labels, and the derived tables those
of the committed files byte for byte (the committed derived ones where the run has them:
ch4_fair/peers_cells.csv, fig63_ratios.csv, ch6_draws/summary.csv); a planted change in a
committed file changes the derived table."""

from __future__ import annotations

import io
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import fair_peers, fig63_end_to_end, real_instances, tv_draws
from pfresample_studies.pipeline import evidence
from pfresample_studies.pipeline.gpu_runs import SOURCE_COLUMN, read_sources
from snake_tools import csv_text, gpu_target_dry_run, job_counts, snakemake

REPO = Path(__file__).resolve().parents[3]
EXPERIMENTS = {"ch3_real": real_instances, "ch7_fig63": fig63_end_to_end,
               "ch4_peers": fair_peers}  # fmt: skip
DRAWS = REPO / "evidence" / "2026-11-28-epyc2-78bc97b" / "ch6_draws"


def _derived(module, folder) -> dict[str, str]:
    """The experiment's derived tables of the files in ``folder``, as the rule prints them
    (its labels aside)."""
    return {name: csv_text(frame) for name, frame in module.tables(folder).items()}


@pytest.mark.parametrize("experiment", sorted(EXPERIMENTS))
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_dry_run(tmp_path, experiment, backend):
    """Two jobs and the target; with cells on a GPU (backend=cuda) the runs' job asks for
    one, without none."""
    target = f"moazeni2013_{experiment}"
    counts, job = gpu_target_dry_run(tmp_path, target, backend)
    assert counts == {f"{target}_runs": 1, f"{target}_tables": 1, target: 1}
    assert ("gpu=1" in job) == (backend == "cuda"), job


def test_tv_draws_dry_run(tmp_path):
    proc = snakemake(tmp_path, "-n", "moazeni2013_ch6_tv_draws", config=["scale=quick"])
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output) == {"moazeni2013_ch6_tv_draws_runs": 1,
                                       "moazeni2013_ch6_tv_draws_summary": 1,
                                       "moazeni2013_ch6_tv_draws": 1}  # fmt: skip


@pytest.mark.parametrize("key", ["moazeni2013_ch4_peers_repeats=5",
                                 "moazeni2013_ch7_fig63_cases=[99-16384-32]",
                                 "moazeni2013_ch3_real_sections=[real,timing]",
                                 "moazeni2013_ch6_tv_draws_evaluation=1"])  # fmt: skip
def test_a_bad_key_stops_the_run(tmp_path, key):
    proc = snakemake(tmp_path, "-n", "moazeni2013_ch3_real", config=["scale=quick", key])
    assert proc.returncode != 0
    assert key.split("=")[0] in proc.output, proc.output[-2000:]


@pytest.mark.slow
def test_drawn_from_the_committed_runs(tmp_path):
    """Without a GPU every file is the newest committed run's, byte for byte and labelled so,
    and every derived table, its label aside, is the same table derived from the committed
    files."""
    targets = [f"moazeni2013_{e}" for e in EXPERIMENTS]
    proc = snakemake(tmp_path, *targets, config=["scale=quick", "backend=cpu"])
    assert proc.returncode == 0, proc.output
    for experiment, module in EXPERIMENTS.items():
        found = evidence.find(module.MARKER, REPO / "evidence")
        folder = found.path.parent
        runs = tmp_path / "results" / "moazeni2013" / "gpu_runs" / experiment
        sources = read_sources(runs / "sources.csv")
        assert sorted(sources) == sorted(module.NAMES), experiment
        assert set(sources.values()) == {found.label}, experiment
        for name in module.NAMES:
            assert (runs / name).read_bytes() == (folder / name).read_bytes(), name
        expected = _derived(module, folder)
        assert sorted(expected) == sorted(module.TABLES)
        for name, text in expected.items():
            path = tmp_path / "results" / "tables" / "moazeni2013" / experiment / f"{name}.csv"
            frame = pd.read_csv(path)
            assert set(frame[SOURCE_COLUMN]) == {found.label}, name
            assert csv_text(frame.drop(columns=[SOURCE_COLUMN])) == text, name


def test_peers_cells_are_the_committed_ones():
    """The tables rule's peers_cells.csv of the committed peers run is the one committed
    beside it (peers_tables' command line wrote that), byte for byte."""
    folder = evidence.find(fair_peers.MARKER, REPO / "evidence").path.parent
    derived = _derived(fair_peers, folder)["peers_cells"]
    assert derived == (folder / "peers_cells.csv").read_text()


def test_fig63_table_has_the_committed_ratios():
    """Fig 63's table recomputes the run's own ratios (fig63_ratios.csv) from its stages."""
    folder = evidence.find(fig63_end_to_end.MARKER, REPO / "evidence").path.parent
    table = fig63_end_to_end.tables(folder)["fig63_end_to_end"].set_index("case")
    ratios = pd.read_csv(folder / "fig63_ratios.csv").set_index("case")
    for column in ("speedup", "speedup_low", "speedup_high", "gpu_matching_share"):
        pd.testing.assert_series_equal(table.loc[ratios.index, column], ratios[column],
                                       rtol=1e-12, check_names=False)  # fmt: skip


def test_fig63_case_without_gpu_rows_has_no_ratio():
    folder = evidence.find(fig63_end_to_end.MARKER, REPO / "evidence").path.parent
    stages = pd.read_csv(folder / "fig63_end_to_end.csv")
    cpu_only = fig63_end_to_end.end_to_end(stages[stages["side"] == "cpu"])
    assert cpu_only["speedup"].isna().all() and cpu_only["cpu_total_s"].notna().all()


@pytest.mark.parametrize(
    ("experiment", "file", "column", "table"),
    [("ch3_real", "real.csv", "seconds", "real_speedups"),
     ("ch7_fig63", "fig63_end_to_end.csv", "seconds", "fig63_end_to_end"),
     ("ch4_peers", "peers.csv", "seconds", "peers_cells")],
)  # fmt: skip
def test_a_planted_change_changes_the_derived_table(tmp_path, experiment, file, column, table):
    """Negative control: one time in a copy of the committed run, doubled, and the derived
    table no longer matches the committed run's."""
    module = EXPERIMENTS[experiment]
    folder = evidence.find(module.MARKER, REPO / "evidence").path.parent
    for name in module.NAMES:
        shutil.copy(folder / name, tmp_path / name)
    frame = pd.read_csv(tmp_path / file)
    frame.loc[frame.index[-1], column] *= 2
    frame.to_csv(tmp_path / file, index=False)
    assert _derived(module, tmp_path)[table] != _derived(module, folder)[table]


def test_real_speedups_mark_a_gpu_answer_that_differs(tmp_path):
    folder = evidence.find(real_instances.MARKER, REPO / "evidence").path.parent
    real = pd.read_csv(folder / "real.csv")
    gpu = real.index[real["side"] == "gpu"][0]
    real.loc[gpu, "checked"] = "DIFFERS"
    table = real_instances.real_speedups(real)
    assert table["equal_to_c"].tolist().count(False) == 1
    c = real[real["side"] == "cpu"].set_index("family")["seconds"]
    row = table.iloc[0]
    assert math.isclose(row["speedup"], c[row["family"]] / row["gpu_s"])


def test_tv_draws_summary_is_the_committed_one():
    """The summary rule's table of the committed draws is the committed summary byte for
    byte; a planted change in one draw changes it."""
    draws = pd.read_csv(DRAWS / "draws.csv")
    text = io.StringIO()
    tv_draws.summarise(draws).to_csv(text, index=False)
    assert text.getvalue() == (DRAWS / "summary.csv").read_text()
    draws.loc[0, "tensor_rmse"] += 0.01
    planted = io.StringIO()
    tv_draws.summarise(draws).to_csv(planted, index=False)
    assert planted.getvalue() != text.getvalue()


def test_tv_draws_target_runs_small(tmp_path):
    """The CPU target end to end on a 16^3 volume, 1 tuning and 2 evaluation draws."""
    key = "moazeni2013_ch6_tv_draws"
    config = ["scale=quick", f"{key}_size=16", f"{key}_tuning=1", f"{key}_evaluation=2"]
    proc = snakemake(tmp_path, "moazeni2013_ch6_tv_draws", config=config)
    assert proc.returncode == 0, proc.output
    out = tmp_path / "results"
    draws = pd.read_csv(out / "moazeni2013" / "ch6_tv_draws" / "draws.csv")
    assert sorted(draws["seed"].unique()) == [2018, 2019]  # seed 2017 tuned, never scored
    summary = pd.read_csv(out / "tables" / "moazeni2013" / "ch6_tv_draws" / "summary.csv")
    assert summary["draws"].tolist() == [2, 2, 2]
