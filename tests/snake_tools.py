"""Running the pipeline from the tests: ``snakemake(workdir, *args)`` runs this
checkout's Snakefile in ``workdir`` on 2 cores and returns the finished process
with its stdout and stderr joined as ``.output``; ``job_counts`` reads the
"Job stats" table of a run or a dry run; ``gpu_target_dry_run`` dry-runs a study's GPU
target; ``csv_text`` prints a derived table as the committed ones are printed."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

SNAKEFILE = Path(__file__).resolve().parents[1] / "Snakefile"


def snakemake(workdir: Path, *args: str, config=(), timeout: float = 300):
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE),
           "--directory", str(workdir), "--cores", "2", *args]  # fmt: skip
    if config:
        cmd += ["--config", *config]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir)
    proc.output = proc.stdout + proc.stderr
    return proc


def job_counts(output: str) -> dict[str, int]:
    """The 'Job stats' table of a run or dry run as {rule: count}."""
    table = output.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^([\w-]+)\s+(\d+)\s*$", table, re.M)}


def gpu_target_dry_run(workdir: Path, target: str, backend: str) -> tuple[dict[str, int], str]:
    """A dry run of the GPU target ``target`` (``<study>_gpu``) with cells on ``backend``:
    its job counts and the text of its ``<target>_runs`` job (which asks for a GPU where
    the cells have one)."""
    proc = snakemake(workdir, "-n", target, config=["scale=quick", f"backend={backend}"])
    assert proc.returncode == 0, proc.output
    job = proc.output.split(f"rule {target}_runs:", 1)[1].split("\n\n", 1)[0]
    return job_counts(proc.output), job


def csv_text(frame, float_format: str = "%.6g") -> str:
    """``frame`` as CSV text, as the committed derived tables are written (no index, six
    significant digits unless ``float_format``): what a drawn run's table is compared to."""
    text = io.StringIO()
    frame.to_csv(text, index=False, float_format=float_format)
    return text.getvalue()
