"""Gelencsér-Horváth et al. (2013)'s GPU experiment as a pipeline target (`cpf2013_gpu`): its
rules in a dry run with and without a GPU, not in `all`; without a GPU its files drawn from
the committed run with their labels, its derived tables the committed run's, its figures
labelled; and the experiment's study section on the CPU, on a tiny grid, writing every table
the rule declares."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from pfresample_studies.cpf2013 import gpu_runs, gpu_tables
from pfresample_studies.pipeline import evidence
from pfresample_studies.pipeline.gpu_runs import SOURCE_COLUMN, read_sources
from snake_tools import csv_text, gpu_target_dry_run, snakemake

REPO = Path(__file__).resolve().parents[3]
JOBS = {"cpf2013_gpu_runs": 1, "cpf2013_gpu_tables": 1, "cpf2013_gpu_figure": 6, "cpf2013_gpu": 1}


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_dry_run(tmp_path, backend):
    """The runs, the tables, six figures and the target; with cells on a GPU
    (backend=cuda) the runs' job asks for one, without none."""
    counts, job = gpu_target_dry_run(tmp_path, "cpf2013_gpu", backend)
    assert counts == JOBS
    assert ("gpu=1" in job) == (backend == "cuda"), job


@pytest.mark.slow
def test_drawn_from_the_committed_run(tmp_path):
    proc = snakemake(tmp_path, "cpf2013_gpu", config=["scale=quick", "backend=cpu"])
    assert proc.returncode == 0, proc.output
    found = evidence.find(gpu_tables.GPU_RUN, REPO / "evidence")
    sources = read_sources(tmp_path / "results" / "cpf2013" / "gpu_runs" / "sources.csv")
    assert sorted(sources) == sorted(gpu_runs.NAMES)
    assert set(sources.values()) == {found.label}
    derived = found.path.parents[1] / "derived"
    for name in gpu_tables.TABLES:
        frame = pd.read_csv(tmp_path / "results" / "tables" / "cpf2013" / "gpu" / f"{name}.csv")
        assert set(frame.pop(SOURCE_COLUMN)) == {found.label}, name
        assert csv_text(frame) == (derived / f"{name}.csv").read_text(), name
    png = tmp_path / "results" / "figures" / "cpf2013" / "gpu" / "fig11.png"
    assert evidence.read_source(png) == f"committed evidence: {found.label}"


@pytest.mark.slow
def test_the_study_section_writes_every_table(tmp_path):
    """The device's study on the CPU at a tiny grid (no extras: the deadline has passed
    before them) writes every table the rule declares; the study.json log says what ran."""
    cfg = {}
    for name in ("config.yaml", "studies/cpf2013.yaml", "quick.yaml"):
        cfg |= yaml.safe_load((REPO / "config" / name).read_text())
    cfg |= {"cpf2013_gpu_runs_deadline_s": 1e-3, "cpf2013_gpu_runs_part": 4,
            "cpf2013_growth_trajectories": 4, "cpf2013_bot_trajectories": 4,
            "cpf2013_timing_n": [2048], "cpf2013_n": [2048],
            "cpf2013_timing_repeats": 1}  # fmt: skip
    gpu_runs.study(cfg, tmp_path, tmp_path / "cache", "quick", backend="cpu", say=lambda s: None)
    for name in gpu_runs.FILES["study"]:
        assert (tmp_path / name).is_file(), name
    assert "left out" in (tmp_path / "study.json").read_text()  # the extras, by the deadline
