"""pfresample_studies.pipeline.gpu_runs: a GPU experiment's files from this run or, file
by file, from the newest committed run, each labelled; and the label a derived table
carries."""

from __future__ import annotations

import pandas as pd
import pytest

from pfresample_studies.pipeline import gpu_runs
from pfresample_studies.pipeline.speedups import THIS_RUN
from snake_tools import job_counts, snakemake


def _evidence(root, folder, files):
    for name, text in files.items():
        path = root / folder / "study" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_fill_draws_what_the_run_did_not_write(tmp_path):
    root = tmp_path / "evidence"
    _evidence(root, "2026-11-20-h100-aaaaaaa", {"a.csv": "x\n1\n", "sub/b.csv": "y\nold\n"})
    _evidence(root, "2026-11-26-h200-bbbbbbb", {"a.csv": "x\n2\n", "sub/b.csv": "y\n3\n"})
    found = gpu_runs.committed("study/a.csv", root)
    assert found.folder == "2026-11-26-h200-bbbbbbb"  # the newest
    out = tmp_path / "out"
    (out).mkdir()
    (out / "a.csv").write_text("x\nmine\n")
    sources = gpu_runs.fill(out, ["a.csv", "sub/b.csv"], {"a.csv"}, found, "study")
    assert sources["a.csv"] == THIS_RUN
    assert sources["sub/b.csv"] == found.label and "not run on this machine" in found.label
    assert (out / "a.csv").read_text() == "x\nmine\n"  # this run's file is kept
    assert (out / "sub/b.csv").read_text() == "y\n3\n"  # the newest folder's
    assert gpu_runs.read_sources(out / gpu_runs.SOURCES) == sources


def test_fill_refuses_a_missing_file(tmp_path):
    """Negative controls: a file the run claims but did not write, and a file the
    committed run lacks, are errors, never a silent gap."""
    root = tmp_path / "evidence"
    _evidence(root, "2026-11-26-h100-ccccccc", {"a.csv": "x\n1\n"})
    found = gpu_runs.committed("study/a.csv", root)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(FileNotFoundError, match="wrote no"):
        gpu_runs.fill(out, ["a.csv"], {"a.csv"}, found, "study")
    with pytest.raises(FileNotFoundError, match="lacks b.csv"):
        gpu_runs.fill(out, ["a.csv", "b.csv"], set(), found, "study")
    with pytest.raises(FileNotFoundError, match="run the experiment on a GPU"):
        gpu_runs.committed("study/none.csv", root)


def test_label_joins_each_source_once():
    sources = {"a.csv": THIS_RUN, "b.csv": "H100, evidence/x", "c.csv": THIS_RUN}
    assert gpu_runs.label(sources, ["a.csv", "c.csv"]) == THIS_RUN
    assert gpu_runs.label(sources, ["b.csv", "a.csv", "c.csv"]) == f"H100, evidence/x; {THIS_RUN}"
    frame = gpu_runs.labelled(pd.DataFrame({"v": [1, 2]}), sources, ["b.csv"])
    assert list(frame.columns) == ["v", gpu_runs.SOURCE_COLUMN]
    assert set(frame[gpu_runs.SOURCE_COLUMN]) == {"H100, evidence/x"}
    with pytest.raises(KeyError):
        gpu_runs.label(sources, ["d.csv"])


# the GPU targets' rules (tests/studies/<study>/test_<study>_gpu_target.py)
GPU_TARGET_RULES = {f"{study}_gpu{part}" for study in ("cpf2013", "d3_2014", "guldas2015")
                    for part in ("", "_runs", "_tables")} | {"cpf2013_gpu_figure"}  # fmt: skip


def test_no_gpu_target_is_in_all(tmp_path):
    """The quick grid runs none of the GPU experiments' rules (its budget holds)."""
    proc = snakemake(tmp_path, "-n", config=["scale=quick", "backend=cpu"])
    assert proc.returncode == 0, proc.output
    assert not set(job_counts(proc.output)) & GPU_TARGET_RULES
