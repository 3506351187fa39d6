"""profiles/slurm on a real one-node SLURM cluster (.ci/slurm-local.sh): the tiny grid's
tables through SLURM equal those of a local run, and a failing job fails the run.

Needs root (apt-get installs slurm-wlm and munge if missing) and the `cluster` extra
(`pip install -e './studies[cluster]'`, `make test-slurm`); skipped with the reason otherwise.
The daemons started here are stopped at the end.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from test_pipeline import REPO, assert_same_tables, read_tables, snakemake
from test_pipeline import TINY_PER_CELL as TINY  # one job per cell, as the profile sizes them

pytestmark = pytest.mark.slurm

SCRIPT = REPO / ".ci" / "slurm-local.sh"
# Two figures: every rule but the ladder (weights, Fig 2.3's N, SSD tables, cells, two
# figures, each writing its own table), 9 jobs, about 90 s through SLURM on 2 cores.
TARGETS = ["results/figures/dulger2017/fig6_27.png", "results/figures/dulger2017/fig2_3.png"]
PARTITION = "debug"


def _cannot_install() -> str | None:
    """Why the cluster cannot be set up here, or None."""
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm not installed (pip install -e './studies[cluster]')"
    if all(shutil.which(t) for t in ("slurmctld", "slurmd", "munged", "sinfo")):
        return None
    if os.geteuid() != 0:
        return "slurm-wlm/munge not installed and not root (cannot apt-get install them)"
    if shutil.which("apt-get") is None:
        return "slurm-wlm/munge not installed and no apt-get to install them"
    return None


@pytest.fixture(scope="module")
def cluster():
    reason = _cannot_install()
    if reason:
        pytest.skip(f"no local SLURM cluster: {reason}")
    # Not under pytest's tmp dirs: those are private to root, and munged and slurmctld
    # run as their own users.
    env = {**os.environ, "PFRESAMPLE_SLURM_DIR": tempfile.mkdtemp(prefix="pfresample-slurm-")}
    start = subprocess.run(
        [str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=600
    )
    try:
        # Installed but not started is a failure, not a skip.
        assert start.returncode == 0, start.stdout + start.stderr
        yield env
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, timeout=120)
        shutil.rmtree(env["PFRESAMPLE_SLURM_DIR"], ignore_errors=True)


def slurm_profile(directory: Path, **changes) -> Path:
    """profiles/slurm as a user edits it for this cluster: the partition, no account.
    Without slurmdbd sacct fails, so jobs are polled with squeue (MinJobAge=300 in the
    cluster's config is more than 3x the 5 s before the first poll)."""
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    profile["default-resources"]["slurm_partition"] = PARTITION
    profile.update(
        {
            "slurm-no-account": True,
            "slurm-status-command": "squeue",
            "slurm-init-seconds-before-status-checks": 5,
            "latency-wait": 5,  # one node, one filesystem
            "retries": 0,  # a failure fails at once
            **changes,
        }
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))
    return directory


def slurm_run(workdir: Path, profile: Path, env: dict, *targets: str, config=(), timeout=420):
    """snakemake as a user runs it on the cluster: the SLURM profile as workflow profile
    (in place of profiles/default), no --cores."""
    cmd = [
        sys.executable, "-m", "snakemake",
        "--snakefile", str(REPO / "Snakefile"),
        "--directory", str(workdir),
        "--workflow-profile", str(profile),
        *targets,
        "--config", *TINY, *config,
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir, env=env
    )
    proc.output = proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def slurm_tiny(cluster, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("slurm-tiny")
    profile = slurm_profile(workdir / "profile")
    started = time.monotonic()
    proc = slurm_run(workdir, profile, cluster, *TARGETS)
    print(f"tiny targets through SLURM: {time.monotonic() - started:.0f} s")
    assert proc.returncode == 0, proc.output
    # Every job went through SLURM: 9 submissions (the figure job writes its own table).
    assert len(re.findall(r"has been submitted with SLURM jobid", proc.output)) == 9, proc.output
    return workdir


def test_slurm_tables_equal_a_local_run(slurm_tiny, tmp_path):
    workdir = slurm_tiny
    local = snakemake(tmp_path, "--workflow-profile", "none", *TARGETS, config=TINY)
    assert local.returncode == 0, local.output
    got, expected = read_tables(workdir), read_tables(tmp_path)
    assert set(got) == set(expected) == {"fig6_27.csv", "fig6_27_sequences.csv"}
    assert_same_tables(got, expected)
    for target in TARGETS:
        assert (workdir / target).read_bytes()[:4] == b"\x89PNG"


def test_slurm_failing_job_fails_the_run(cluster, tmp_path):
    """A job that exits non-zero in SLURM: reported FAILED, its SLURM log kept, the run
    exits non-zero. (The pipeline's own jobs have no cheap way to fail: a corrupt input
    is caught and regenerated before any job starts.) Same profile, a one-rule Snakefile."""
    (tmp_path / "Snakefile").write_text(
        "rule fail:\n    output: 'failed.txt'\n    shell: 'echo failing on purpose >&2; exit 3'\n"
    )
    profile = slurm_profile(tmp_path / "profile")
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", str(profile), "failed.txt"]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=cluster
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "Error in rule fail" in output and "SLURM status is: 'FAILED'" in output, output
    logs = list((tmp_path / ".snakemake" / "slurm_logs").rglob("*.log"))
    assert any("failing on purpose" in p.read_text() for p in logs), output
    assert not (tmp_path / "failed.txt").exists()


def test_slurm_missing_partition_is_named(cluster, tmp_path):
    """A partition the cluster does not have: sbatch refuses, the error names it."""
    profile = slurm_profile(tmp_path / "profile")
    path = profile / "config.yaml"
    path.write_text(
        path.read_text().replace(f"slurm_partition: {PARTITION}", "slurm_partition: nope")
    )
    proc = slurm_run(tmp_path, profile, cluster, "results/weights/eq233-y4/16.npz", timeout=120)
    assert proc.returncode != 0
    assert "invalid partition specified: nope" in proc.output, proc.output


def test_slurm_gpu_job_without_gpus_is_refused(cluster, tmp_path):
    """backend=cuda makes cells ask for a GPU (sbatch --gpus=1); a cluster without GPUs
    refuses the submission, after the CPU job before it ran."""
    profile = slurm_profile(tmp_path / "profile")
    cell = "results/resample/systematic/eq233-y4.npz"
    proc = slurm_run(tmp_path, profile, cluster, cell, config=["backend=cuda"], timeout=180)
    assert proc.returncode != 0
    assert "Invalid generic resource (gres) specification" in proc.output, proc.output
    assert (tmp_path / "results" / "weights" / "eq233-y4" / "64.npz").exists()


def test_slurm_job_killed_mid_run_then_resume(cluster, tmp_path):
    """A SLURM job killed mid-run (scancel): reported CANCELLED, the run exits
    non-zero; run again, only the killed job reruns -- the finished output is
    kept as it was. A two-rule Snakefile, so that the kill lands in a job that
    is surely running (the slow one sleeps until its flag file is gone)."""
    (tmp_path / "Snakefile").write_text(
        "rule all:\n    input: 'fast.txt', 'slow.txt'\n"
        "rule fast:\n    output: 'fast.txt'\n    shell: 'echo fast > {output}'\n"
        "rule slow:\n    output: 'slow.txt'\n"
        "    shell: 'while [ -f slow.flag ]; do sleep 1; done; echo slow > {output}'\n"
    )
    (tmp_path / "slow.flag").touch()
    profile = slurm_profile(tmp_path / "profile")
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", str(profile)]
    run = subprocess.Popen(
        cmd, cwd=tmp_path, env=cluster, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + 120
    slow_job = None
    while slow_job is None and time.monotonic() < deadline:
        time.sleep(1)
        queue = subprocess.run(
            ["squeue", "-h", "-t", "R", "-o", "%i %j %k"],
            capture_output=True,
            text=True,
            env=cluster,
        ).stdout
        running = [line.split()[0] for line in queue.splitlines() if "slow" in line]
        if running and (tmp_path / "fast.txt").exists():
            slow_job = running[0]
    assert slow_job is not None, "the slow job never ran next to a finished fast job"
    subprocess.run(["scancel", slow_job], check=True, env=cluster)
    output = run.communicate(timeout=120)[0]
    assert run.returncode != 0, output
    assert "SLURM status is: 'CANCELLED'" in output, output
    assert not (tmp_path / "slow.txt").exists()
    kept = (tmp_path / "fast.txt").stat().st_mtime_ns
    (tmp_path / "slow.flag").unlink()
    again = subprocess.run(cmd, cwd=tmp_path, env=cluster, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (tmp_path / "slow.txt").read_text() == "slow\n"
    assert (tmp_path / "fast.txt").stat().st_mtime_ns == kept  # not recomputed
