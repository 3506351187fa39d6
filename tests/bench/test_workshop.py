"""The workshop's rules (bench/, evidence/, docs/performance.md), read from the
tracked files (``git ls-files``), so untracked scratch does not count:

(a) no file or folder under ``bench/`` or ``evidence/``, and no file under
    ``tests/``, carries an issue number in its name (``issue39``, ``issue_42``,
    ``Issue40_x``): a name says what it measures; the issue is in the commit;
(b) every bench script (``bench/*.py``, ``bench/device/*``, ``bench/peers/*``)
    is named, by its path from the repository's root, in the Makefile or in
    docs/performance.md (the ``_`` helpers too: performance.md names them);
(c) every measurement file (``MEASUREMENT_SUFFIXES``) lies in an evidence
    folder ``evidence/<YYYY-MM-DD>-<device>-<7 hex>/``; test fixtures under a
    ``data/`` folder of ``tests/`` are exempt;
(d) every folder directly under ``evidence/`` has that name and a MANIFEST.md,
    and nothing but README.md lies directly in ``evidence/``.

Each rule is a function of a list of paths (and, for (b), of the texts that
may name the scripts); each has a negative control that plants bad names in a
list and checks that the rule flags them and passes the good ones beside them.
"""

from __future__ import annotations

import datetime
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ISSUE_NAME = re.compile(r"(?<![a-z])issue[_-]?\d+", re.IGNORECASE)
EVIDENCE_FOLDER = re.compile(r"^(\d{4}-\d{2}-\d{2})-([a-z][a-z0-9]*)-([0-9a-f]{7})$")
# What a run writes: tables (CSV/TSV), arrays (NumPy), logs, run records and
# plans (JSON: nothing else in the repository is JSON), packed outputs
# (tarballs), data frames and pickles, and the profilers' reports. Not PNG
# (a doc may carry a drawn figure) and not TXT (a text file is as often a
# note or a requirements list as a measurement).
MEASUREMENT_SUFFIXES = (
    ".csv",
    ".tsv",
    ".npz",
    ".npy",
    ".log",
    ".json",
    ".tar.gz",
    ".tgz",
    ".parquet",
    ".h5",
    ".hdf5",
    ".pkl",
    ".pickle",
    ".ncu-rep",
    ".nsys-rep",
    ".qdrep",
    ".sqlite",
)


def tracked() -> list[str]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the rules read `git ls-files`")
    out = subprocess.run(
        [git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [p for p in out.split("\0") if p]


# -- the rules, each a function of a list of paths --------------------------------------


def issue_named(paths: list[str]) -> list[str]:
    """(a) Paths under bench/, evidence/ or tests/ with a component named after an issue."""
    bad = []
    for path in paths:
        parts = path.split("/")
        if parts[0] not in ("bench", "evidence", "tests"):
            continue
        if any(ISSUE_NAME.search(part) for part in parts[1:]):
            bad.append(path)
    return bad


def bench_scripts(paths: list[str]) -> list[str]:
    """bench/*.py, bench/device/*, bench/peers/*: what rule (b) asks to be named."""
    out = []
    for path in paths:
        parts = path.split("/")
        if parts[0] != "bench":
            continue
        if (len(parts) == 2 and parts[1].endswith(".py")) or (
            len(parts) == 3 and parts[1] in ("device", "peers")
        ):
            out.append(path)
    return out


def unnamed_scripts(paths: list[str], texts: list[str]) -> list[str]:
    """(b) Bench scripts whose path from the root appears in none of the texts."""
    return [
        path
        for path in bench_scripts(paths)
        if not any(re.search(re.escape(path) + r"(?![\w.-])", text) for text in texts)
    ]


def is_measurement(path: str) -> bool:
    return path.lower().endswith(MEASUREMENT_SUFFIXES)


def evidence_folder_ok(name: str) -> bool:
    match = EVIDENCE_FOLDER.match(name)
    if match is None:
        return False
    try:
        datetime.date.fromisoformat(match.group(1))
    except ValueError:
        return False
    return True


def stray_measurements(paths: list[str]) -> list[str]:
    """(c) Measurement files outside evidence/<date>-<device>-<commit>/."""
    bad = []
    for path in paths:
        if not is_measurement(path):
            continue
        parts = path.split("/")
        if parts[0] == "tests" and "data" in parts[1:-1]:
            continue  # a test's fixture
        if re.fullmatch(r"studies/pfresample_studies/[a-z0-9_]+/claims\.csv", path):
            continue  # a study's claims table (pipeline.claims): claims, not a measurement
        if parts[0] == "evidence" and len(parts) > 2 and evidence_folder_ok(parts[1]):
            continue
        bad.append(path)
    return bad


def bad_evidence_folders(paths: list[str]) -> list[str]:
    """(d) Folders of evidence/ misnamed or without MANIFEST.md, and stray files there."""
    folders: dict[str, set[str]] = {}
    bad = []
    for path in paths:
        parts = path.split("/")
        if parts[0] != "evidence":
            continue
        if len(parts) == 2:
            if parts[1] != "README.md":
                bad.append(path)
            continue
        folders.setdefault(parts[1], set()).add("/".join(parts[2:]))
    for name, files in sorted(folders.items()):
        if not evidence_folder_ok(name):
            bad.append(f"evidence/{name}/ (name)")
        if "MANIFEST.md" not in files:
            bad.append(f"evidence/{name}/ (no MANIFEST.md)")
    return bad


# -- the tree ---------------------------------------------------------------------------


def test_no_name_carries_an_issue_number():
    assert issue_named(tracked()) == []


def test_every_bench_script_is_named_in_the_makefile_or_performance_md():
    texts = [(ROOT / "Makefile").read_text(), (ROOT / "docs" / "performance.md").read_text()]
    paths = tracked()
    assert bench_scripts(paths), "no bench script found: the rule reads nothing"
    assert unnamed_scripts(paths, texts) == []


def test_every_measurement_lies_in_an_evidence_folder():
    paths = tracked()
    assert any(is_measurement(p) for p in paths), "no measurement found: the rule reads nothing"
    assert stray_measurements(paths) == []


def test_every_evidence_folder_is_named_and_has_its_manifest():
    paths = tracked()
    assert any(p.startswith("evidence/") for p in paths)
    assert bad_evidence_folders(paths) == []


# -- negative controls: planted names must be flagged, good ones passed ------------------


def test_negative_control_issue_names():
    good = [
        "bench/d3_2014_gpu_runs.py",
        "bench/device/d3_2014_gpu.sh",
        "evidence/2026-11-26-h100-fe3755d/engine/tests.log",
        "tests/studies/d3_2014/test_d3_2014_gpu_tables.py",
        "tests/library/test_tissue42.py",  # "tissue", not "issue"
        "docs/issue39_notes.md",  # outside the rule's folders
    ]
    bad = [
        "bench/d3_issue39_gpu.py",
        "bench/device/issue42_gpu.sh",
        "bench/guldas_Issue_40_tables.py",
        "evidence/2026-11-26-h100-a6b5be7/issue42_suite/tests.log",
        "evidence/2026-11-26-h100-804d6d3/guldas2015/log32_gpu/ISSUE40_log32_gpu.csv",
        "evidence/2026-11-26-h100-fe3755d/issue-42/x.csv",
        "tests/studies/d3_2014/test_d3_issue39_gpu_tables.py",
    ]
    assert issue_named(good + bad) == bad


def test_negative_control_unnamed_scripts():
    texts = [
        "bench: ; python bench/cpu_resamplers.py",
        "| `bench/device/gpu_check.sh` | ... | `bench/_common.py` | `bench/peers/slab_hash.cu`",
    ]
    good = [
        "bench/cpu_resamplers.py",
        "bench/device/gpu_check.sh",
        "bench/_common.py",
        "bench/peers/slab_hash.cu",
        "bench/README.md",  # not a script
        "bench/lib/deep/helper.py",  # not at a level the rule reads
    ]
    bad = [
        "bench/gpu_resamplers.py",
        "bench/device/gpu_check.sh.bak",  # a longer name is not named by its prefix
        "bench/_timing.py",
        "bench/peers/cuco_hash.cu",
        "bench/cpu.py",  # named only as part of a longer name (cpu_resamplers.py)
    ]
    assert unnamed_scripts(good + bad, texts) == bad


def test_negative_control_stray_measurements():
    good = [
        "evidence/2026-11-26-h100-804d6d3/d3_2014/timing.csv",
        "evidence/2026-11-26-h100x4-45fdae3/run/plan.json",
        "evidence/2026-11-26-xeon2-ba6cc49/d3_2014/regimes_n1000/cells/ours/d3/n1000/t0.npz",
        "tests/studies/dulger2017/data/ncu_format_sample_l1.csv",
        "docs/figures/frontier.png",
        "config/quick.yaml",
        "studies/pfresample_studies/d3_2014/claims.csv",
    ]
    bad = [
        "bench/results/d3_2014_issue39/gpu/timing.csv",
        "studies/pfresample_studies/d3_2014/timing.csv",
        "bench/results/x/bench.log",
        "results/bench/frontier.CSV",
        "evidence/loose.csv",
        "evidence/2026-11-26-h100/notes.json",  # no commit in the folder's name
        "evidence/26-11-2026-h100-804d6d3/a.npz",
        "scripts/out.tar.gz",
        "tests/studies/d3_2014/timing.csv",  # not under a data/ folder
    ]
    assert stray_measurements(good + bad) == bad


def test_negative_control_evidence_folders():
    paths = [
        "evidence/README.md",
        "evidence/2026-11-26-h100-804d6d3/MANIFEST.md",
        "evidence/2026-11-26-h100-804d6d3/d3_2014/timing.csv",
        "evidence/2026-11-26-xeon2-ba6cc49/d3_2014/cpu_baselines.csv",  # no MANIFEST.md
        "evidence/2026-11-26-xeon2-ba6cc49/d3_2014/MANIFEST.md",  # not at the folder's top
        "evidence/2026-13-40-h100-804d6d3/MANIFEST.md",  # no such date
        "evidence/2026-11-26-H100-804d6d3/MANIFEST.md",  # device in capitals
        "evidence/2026-11-26-h100-804d6d3x/MANIFEST.md",  # 8 characters of commit
        "evidence/d3_2014_issue39/README.md",  # name and manifest
        "evidence/stray.csv",
    ]
    assert bad_evidence_folders(paths) == [
        "evidence/stray.csv",
        "evidence/2026-11-26-H100-804d6d3/ (name)",
        "evidence/2026-11-26-h100-804d6d3x/ (name)",
        "evidence/2026-11-26-xeon2-ba6cc49/ (no MANIFEST.md)",
        "evidence/2026-13-40-h100-804d6d3/ (name)",
        "evidence/d3_2014_issue39/ (name)",
        "evidence/d3_2014_issue39/ (no MANIFEST.md)",
    ]


PERFORMANCE_MAX_LINES = 400  # docs/performance.md holds the present; history is the archive's


def too_long(text: str, limit: int = PERFORMANCE_MAX_LINES) -> bool:
    """Whether a page has ``limit`` lines or more."""
    return len(text.splitlines()) >= limit


def test_performance_md_holds_the_present_in_under_400_lines():
    assert not too_long((ROOT / "docs" / "performance.md").read_text())


def test_a_page_of_400_lines_is_too_long():
    assert too_long("x\n" * PERFORMANCE_MAX_LINES) and not too_long("x\n" * 399)
