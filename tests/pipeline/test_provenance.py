"""The commit a result records: $PFRESAMPLE_COMMIT where a device script names it
(a copied tree's .git can be stale), else the checkout's HEAD."""

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from pfresample_studies.pipeline import jobs

ROOT = Path(__file__).resolve().parents[2]


def _head() -> str | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None


def _snakemake():
    return SimpleNamespace(scriptdir=str(ROOT), rule="a_rule")


def test_the_environment_names_the_commit_over_a_stale_git(monkeypatch):
    monkeypatch.setenv(jobs.COMMIT_ENV, "ABCDEF1234567")
    meta = jobs.provenance(_snakemake())
    assert meta["git_revision"] == "abcdef1234567"
    assert meta["git_revision_from"] == "environment"
    # the negative control: without the variable the record is git's HEAD, not the name
    monkeypatch.delenv(jobs.COMMIT_ENV)
    meta = jobs.provenance(_snakemake())
    assert meta["git_revision"] == _head() and meta["git_revision"] != "abcdef1234567"
    assert meta["git_revision_from"] == "git"


@pytest.mark.parametrize("bad", ["main", "abc12", "g" * 40, "1" * 41])
def test_a_value_that_is_no_commit_is_an_error(monkeypatch, bad):
    monkeypatch.setenv(jobs.COMMIT_ENV, bad)
    with pytest.raises(ValueError, match="PFRESAMPLE_COMMIT"):
        jobs.git_revision(ROOT)


def test_an_empty_value_falls_back_to_git(monkeypatch):
    monkeypatch.setenv(jobs.COMMIT_ENV, "  ")
    assert jobs.git_revision(ROOT) == _head()
