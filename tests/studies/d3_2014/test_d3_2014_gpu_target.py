"""Das et al. (2014)'s GPU experiment as a pipeline target (`d3_2014_gpu`): its rules in a
dry run with and without a GPU, not in `all`; and, without a GPU, its files drawn from the
committed run with their labels and its derived tables the committed run's tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pfresample_studies.d3_2014 import gpu_runs, gpu_tables
from pfresample_studies.pipeline import evidence
from pfresample_studies.pipeline.gpu_runs import SOURCE_COLUMN, read_sources
from snake_tools import csv_text, gpu_target_dry_run, snakemake

REPO = Path(__file__).resolve().parents[3]
JOBS = {"d3_2014_gpu_runs": 1, "d3_2014_gpu_tables": 1, "d3_2014_gpu": 1}


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_dry_run(tmp_path, backend):
    """Two jobs and the target; with cells on a GPU (backend=cuda) the runs' job asks
    for one, without none."""
    counts, job = gpu_target_dry_run(tmp_path, "d3_2014_gpu", backend)
    assert counts == JOBS
    assert ("gpu=1" in job) == (backend == "cuda"), job


@pytest.mark.slow
def test_drawn_from_the_committed_run(tmp_path):
    """Without a GPU every file is the committed run's, labelled as such, and every derived
    table, its labels aside, is the committed run's table byte for byte."""
    proc = snakemake(tmp_path, "d3_2014_gpu", config=["scale=quick", "backend=cpu"])
    assert proc.returncode == 0, proc.output
    found = evidence.find(gpu_tables.GPU_RUN, REPO / "evidence")
    runs = tmp_path / "results" / "d3_2014" / "gpu_runs"
    sources = read_sources(runs / "sources.csv")
    assert sorted(sources) == sorted(gpu_runs.NAMES)
    assert set(sources.values()) == {found.label}
    committed = found.path.parent / "tables"
    for name in gpu_tables.TABLES:
        frame = pd.read_csv(tmp_path / "results" / "tables" / "d3_2014" / "gpu" / f"{name}.csv")
        if name != "components_n1000":  # the CPU regime cells alone
            assert set(frame[SOURCE_COLUMN]) == {found.label}, name
        frame = frame.drop(columns=[SOURCE_COLUMN, "cpu_source"], errors="ignore")
        assert csv_text(frame) == (committed / f"{name}.csv").read_text(), name
