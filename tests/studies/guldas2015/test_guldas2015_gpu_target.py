"""Güldaş (2015)'s GPU experiment as a pipeline target (`guldas2015_gpu`): its rules in a
dry run with and without a GPU, not in `all`; and, without a GPU, its files drawn from the
committed run with their labels and its derived tables the committed run's tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from pfresample_studies.guldas2015 import gpu_runs, gpu_tables
from pfresample_studies.pipeline import evidence
from pfresample_studies.pipeline.gpu_runs import SOURCE_COLUMN, read_sources
from snake_tools import csv_text, gpu_target_dry_run, snakemake

REPO = Path(__file__).resolve().parents[3]
JOBS = {"guldas2015_gpu_runs": 1, "guldas2015_gpu_tables": 1, "guldas2015_gpu": 1}
# the committed derived tables: file inside the GPU run's folder, printed digits
COMMITTED = {"log32_summary": ("log32_gpu/summary.csv", "%.6g"),
             "smcem_summary": ("smcem_gpu/summary.csv", "%.6g"),
             "smcem_slopes": ("smcem_gpu/slopes.csv", "%.4g")}  # fmt: skip


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_dry_run(tmp_path, backend):
    """Two jobs and the target; with cells on a GPU (backend=cuda) the runs' job asks
    for one, without none."""
    counts, job = gpu_target_dry_run(tmp_path, "guldas2015_gpu", backend)
    assert counts == JOBS
    assert ("gpu=1" in job) == (backend == "cuda"), job


def test_an_n_the_committed_run_lacks_is_an_error(tmp_path):
    """Negative control: without a GPU, an SMC-EM N that no committed run holds cannot be
    drawn, and the run says which file is missing instead of writing a table without it."""
    config = ["scale=quick", "backend=cpu", "guldas2015_gpu_smcem_log2_n=[11,12]"]
    proc = snakemake(tmp_path, "guldas2015_gpu", config=config)
    assert proc.returncode != 0
    log = (tmp_path / "results" / "logs" / "guldas2015" / "gpu_runs.log").read_text()
    assert "lacks smcem_gpu/smcem_n4096.npz" in log, log


@pytest.mark.slow
def test_drawn_from_the_committed_run(tmp_path):
    """Without a GPU every file is the committed run's, labelled as such, and every derived
    table, its labels aside, is the committed run's table byte for byte."""
    proc = snakemake(tmp_path, "guldas2015_gpu", config=["scale=quick", "backend=cpu"])
    assert proc.returncode == 0, proc.output
    found = evidence.find(gpu_tables.GPU_RUN, REPO / "evidence")
    runs = tmp_path / "results" / "guldas2015" / "gpu_runs"
    sources = read_sources(runs / "sources.csv")
    cfg = yaml.safe_load((REPO / "config" / "studies" / "guldas2015.yaml").read_text())
    assert sorted(sources) == sorted(gpu_runs.names(cfg))
    assert set(sources.values()) == {found.label}
    folder = found.path.parents[1]
    for name, (committed, digits) in COMMITTED.items():
        frame = pd.read_csv(tmp_path / "results" / "tables" / "guldas2015" / "gpu" / f"{name}.csv")
        assert set(frame[SOURCE_COLUMN]) == {found.label}, name
        frame = frame.drop(columns=[SOURCE_COLUMN, "cpu_source"])
        assert csv_text(frame, digits) == (folder / committed).read_text(), name
    md = (tmp_path / "results" / "tables" / "guldas2015" / "gpu" / "smcem.md").read_text()
    assert md.startswith((folder / "smcem_gpu" / "tables.md").read_text())
    assert found.label in md


def _tiny() -> dict:
    cfg = {}
    for name in ("config.yaml", "studies/guldas2015.yaml"):
        cfg |= yaml.safe_load((REPO / "config" / name).read_text())
    return cfg | {"guldas2015_gpu_log32_log2_n": [6], "guldas2015_gpu_log32_replicates": 4,
                  "guldas2015_gpu_smcem_log2_n": [5, 6],
                  "guldas2015_gpu_smcem_iterations": 2}  # fmt: skip


def test_the_experiment_on_the_cpu(tmp_path):
    """The GPU experiment's code on the CPU backend at a tiny grid: every file of both
    sections; with a deadline already past, nothing (the rule then draws every file)."""
    reference = evidence.find(gpu_tables.CPU_EXACT, REPO / "evidence").path.parents[1]
    reference = reference / gpu_tables.CPU_REFERENCE.split("/", 1)[1]
    cfg = _tiny()
    produced = gpu_runs.run(cfg, reference, tmp_path / "all", log=lambda s: None, backend="cpu")
    assert produced == set(gpu_runs.names(cfg))
    assert all((tmp_path / "all" / name).is_file() for name in produced)
    fig = pd.read_csv(tmp_path / "all" / "smcem_gpu" / "fig4_12.csv")
    assert sorted(set(fig["n"])) == [32, 64]
    late = cfg | {"guldas2015_gpu_runs_deadline_s": 1e-9}
    assert gpu_runs.run(late, reference, tmp_path / "late", log=lambda s: None,
                        backend="cpu") == set()  # fmt: skip
