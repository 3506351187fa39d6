"""The Snakemake pipeline: lint, DAG, a tiny real run, config validation, corrupt artifacts.

Snakemake runs as a subprocess (`python -m snakemake`) on the repository's Snakefile with
`--directory` set to the test's own tmp_path, so every test writes its own results/.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from pfresample import io

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"
CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
QUICK = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())

# A grid small enough to run in seconds.
TINY = ["log2_n_min=4", "log2_n_max=6", "sequences=2", "fig2_3_n=4096"]
GAMMA = CONFIG["gamma_distributions"]


def snakemake(workdir: Path, *args: str, config: list[str] = (), timeout: float = 300):
    cmd = [
        sys.executable, "-m", "snakemake",
        "--snakefile", str(SNAKEFILE),
        "--directory", str(workdir),
        "--cores", "2",
        *args,
    ]  # fmt: skip
    if config:
        cmd += ["--config", *config]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir)
    proc.output = proc.stdout + proc.stderr
    return proc


def job_counts(output: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run as {rule: count}."""
    table = output.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def cuda_visible() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def test_lint_is_clean(tmp_path):
    proc = snakemake(tmp_path, "--lint")
    assert proc.returncode == 0, proc.output
    assert "Congratulations, your workflow is in a good condition!" in proc.output, proc.output


def test_dry_run_default_config_builds_the_dag(tmp_path):
    proc = snakemake(tmp_path, "-n")
    assert proc.returncode == 0, proc.output
    counts = job_counts(proc.output)
    scale = "thesis" if cuda_visible() else "quick"
    grid = {**CONFIG, **QUICK} if scale == "quick" else CONFIG
    assert f"pfresample: scale {scale}" in proc.output
    if scale == "quick":
        assert "no CUDA device visible" in proc.output
    assert counts["uphill_ssd_table"] == grid["log2_n_max"] - grid["log2_n_min"] + 1
    assert counts["weight_dataset"] == len(GAMMA)
    assert counts["dulger2017_fig2_3"] == 1
    assert counts["all"] == 1


def test_dry_run_thesis_scale_and_overrides(tmp_path):
    proc = snakemake(tmp_path, "-n", config=["scale=thesis"])
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output)["uphill_ssd_table"] == 19  # N = 2^4 ... 2^22
    # --config wins over config/quick.yaml
    proc = snakemake(tmp_path, "-n", config=["scale=quick", "log2_n_max=5"])
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output)["uphill_ssd_table"] == 2


def test_one_figure_builds_only_what_it_needs(tmp_path):
    proc = snakemake(tmp_path, "-n", "results/figures/dulger2017/fig2_3.png")
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output) == {"weight_dataset": len(GAMMA), "dulger2017_fig2_3": 1}


def test_tiny_grid_runs(tmp_path):
    proc = snakemake(tmp_path, config=TINY)
    assert proc.returncode == 0, proc.output
    results = tmp_path / "results"
    for ext in ("png", "pdf"):
        fig = results / "figures" / "dulger2017" / f"fig2_3.{ext}"
        assert fig.stat().st_size > 1000
    assert (results / "figures" / "dulger2017" / "fig2_3.png").read_bytes()[:4] == b"\x89PNG"
    log = (results / "logs" / "figures" / "dulger2017" / "fig2_3.log").read_text()
    assert "Backend: CPU (NumPy)" in log and "N = 4,096" in log

    for dist in GAMMA:
        arrays, meta = io.load_npz(results / "weights" / dist / "4096.npz")
        assert arrays["weights"].shape == (2, 4096)
        assert arrays["weights"].dtype == np.float32
        assert meta["distribution"] == dist and meta["n"] == 4096 and meta["sequences"] == 2
        assert meta["seed"] == CONFIG["seed"]
        assert meta["numpy_version"] == np.__version__
        assert (results / "benchmarks" / "weights" / dist / "4096.tsv").exists()
    for n in (16, 32, 64):
        arrays, meta = io.load_npz(results / "tuning" / "uphill_ssd" / f"{n}.npz")
        assert arrays["ssd"].shape == (8192,) and arrays["ssd"].dtype == np.float64
        assert meta["n"] == n
        assert (results / "logs" / "tuning" / "uphill_ssd" / f"{n}.log").exists()
        assert (results / "benchmarks" / "tuning" / "uphill_ssd" / f"{n}.tsv").exists()
    assert not (results / "tuning" / "uphill_ssd" / "128.npz").exists()

    # Nothing is redone when nothing changed; a changed parameter reruns what depends on it.
    proc = snakemake(tmp_path, "-n", config=TINY)
    assert "Nothing to be done" in proc.output, proc.output
    proc = snakemake(tmp_path, "-n", config=[*TINY, "fig2_3_bins=20"])
    assert job_counts(proc.output) == {"dulger2017_fig2_3": 1, "all": 1}


@pytest.mark.parametrize(
    ("override", "named", "why"),
    [
        ("sequence=4", "sequence", "Additional properties are not allowed"),
        ("sequences=-1", "sequences", "less than the minimum"),
        ("scale=huge", "scale", "is not one of"),
        ("segment_bytes=[128,130]", "segment_bytes", "not a multiple of 4"),
        ("gamma_distributions=[gamma-k1]", "gamma_distributions", "does not match"),
        ("log2_n_min=8", "log2_n_min", "must be <= log2_n_max"),
    ],
)
def test_invalid_config_names_the_key(tmp_path, override, named, why):
    proc = snakemake(tmp_path, "-n", config=[override, "log2_n_max=6"])
    assert proc.returncode != 0
    assert named in proc.output and why in proc.output, proc.output
    assert not (tmp_path / "results").exists()


def test_corrupt_weights_are_detected(tmp_path):
    target = "results/weights/gamma-k1-s2/1024.npz"
    proc = snakemake(tmp_path, target, config=["sequences=2"])
    assert proc.returncode == 0, proc.output
    path = tmp_path / target
    arrays, _ = io.load_npz(path)
    assert arrays["weights"].shape == (2, 1024)

    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    with pytest.raises(io.CorruptArtifact, match="1024.npz"):
        io.load_npz(path)
