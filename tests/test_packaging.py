"""pyproject.toml and environment.yml must declare the same core dependencies, same bounds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]

# conda-forge name -> PyPI name, where they differ (none of ours do today; PyYAML is
# `pyyaml` on both sides once names are normalised).
CONDA_TO_PYPI: dict[str, str] = {}
# conda entries with no counterpart in [project].dependencies.
CONDA_ONLY = {"python", "pip"}

_CONDA_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<spec>[^\s]*)\s*$")


@pytest.fixture(scope="module")
def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def conda_env() -> dict:
    with open(ROOT / "environment.yml") as f:
        return yaml.safe_load(f)


def _pypi_requirements(strings) -> dict[str, SpecifierSet]:
    out = {}
    for s in strings:
        req = Requirement(s)
        name = canonicalize_name(req.name)
        assert name not in out, f"{name} listed twice in pyproject.toml"
        assert req.marker is None and not req.extras, f"unexpected marker/extras in {s!r}"
        out[name] = req.specifier
    return out


def _conda_requirements(env: dict) -> dict[str, SpecifierSet]:
    """Parse `name >=a,<b` entries (the conda match-spec subset we use) of environment.yml."""
    out = {}
    for entry in env["dependencies"]:
        if isinstance(entry, dict):  # the `pip:` section
            continue
        m = _CONDA_SPEC.match(entry)
        assert m, f"environment.yml: cannot parse dependency {entry!r} (use 'name >=a,<b')"
        name = canonicalize_name(m["name"])
        name = CONDA_TO_PYPI.get(name, name)
        assert name not in out, f"{name} listed twice in environment.yml"
        out[name] = SpecifierSet(m["spec"])  # raises on conda-only syntax such as `2.4.*`
    return out


def test_core_dependency_names_agree(pyproject, conda_env):
    pypi = _pypi_requirements(pyproject["project"]["dependencies"])
    conda = _conda_requirements(conda_env)
    assert set(pypi) == set(conda) - CONDA_ONLY


def test_core_dependency_bounds_agree(pyproject, conda_env):
    pypi = _pypi_requirements(pyproject["project"]["dependencies"])
    conda = _conda_requirements(conda_env)
    for name, spec in pypi.items():
        assert spec == conda[name], f"{name}: pyproject {spec} != environment.yml {conda[name]}"


def test_python_bound_agrees(pyproject, conda_env):
    conda = _conda_requirements(conda_env)
    assert SpecifierSet(pyproject["project"]["requires-python"]) == conda["python"]
    assert "3.11" in conda["python"]


def test_core_dependencies_are_bounded(pyproject):
    pypi = _pypi_requirements(pyproject["project"]["dependencies"])
    for name, spec in pypi.items():
        ops = {s.operator for s in spec}
        assert ">=" in ops and "<" in ops, f"{name} needs a lower and an upper bound: {spec}"
    assert "2.4.0" in pypi["numpy"] and "2.4.99" in pypi["numpy"]
    assert "2.3.5" not in pypi["numpy"] and "2.5.0" not in pypi["numpy"]
    assert "9.0.0" in pypi["snakemake"] and "10.0.0" not in pypi["snakemake"]


def test_cuda_extra_names_cupy(pyproject):
    extras = pyproject["project"]["optional-dependencies"]
    names = {canonicalize_name(Requirement(s).name) for s in extras["cuda"]}
    assert "cupy-cuda12x" in names


def test_heavy_packages_stay_out_of_core(pyproject):
    core = set(_pypi_requirements(pyproject["project"]["dependencies"]))
    extras = pyproject["project"]["optional-dependencies"]
    bench = {canonicalize_name(Requirement(s).name) for s in extras["bench"]}
    assert "particles" in bench
    assert not core & {"particles", "numba", "scipy", "cupy-cuda12x", "pytest", "ruff"}


def test_conda_env_installs_the_package(conda_env):
    assert conda_env["name"] == "pfresample"
    assert conda_env["channels"][0] == "conda-forge"
    pip_sections = [e["pip"] for e in conda_env["dependencies"] if isinstance(e, dict)]
    assert pip_sections == [["-e ."]]


def test_pytest_markers_registered(pyproject):
    markers = pyproject["tool"]["pytest"]["ini_options"]["markers"]
    assert {m.split(":")[0] for m in markers} >= {"gpu", "slow"}


def test_setuptools_lists_every_package(pyproject):
    """pyproject lists the packages by hand (gpu_kernels/ is mapped into the
    package): a package of src/ missing there would be missing in the wheel."""
    src = ROOT / "src"
    found = {".".join(p.parent.relative_to(src).parts) for p in src.rglob("__init__.py")} | {
        "pfresample.gpu_kernels"
    }
    assert set(pyproject["tool"]["setuptools"]["packages"]) == found


@pytest.mark.slow
def test_wheel_ships_every_kernel_source(tmp_path):
    """The wheel, installed into a fresh virtual environment and imported from
    another directory, finds every CUDA source, equal to the checkout's."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        timeout=600,
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    (wheel,) = wheels.glob("pfresample-*.whl")
    # numpy for `import pfresample`: the test's own, found through a .pth file.
    site = next((venv / "lib").glob("python*/site-packages"))
    numpy_home = Path(np.__file__).parents[1]
    (site / "outer.pth").write_text(f"{numpy_home}\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],  # fmt: skip
        check=True,
        timeout=300,
    )
    probe = (
        "import json, pfresample\n"
        "from pfresample.cuda.kernels import kernel_dir\n"
        "d = kernel_dir()\n"
        "files = {p.name: p.read_text() for p in d.iterdir() if p.suffix in ('.cu', '.cuh')}\n"
        "print(json.dumps({'module': pfresample.__file__, 'files': files}))\n"
    )
    out = subprocess.run(
        [str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert str(ROOT) not in found["module"], found["module"]  # the wheel, not the checkout
    expected = {p.name: p.read_text() for p in (ROOT / "gpu_kernels").iterdir()
                if p.suffix in (".cu", ".cuh")}  # fmt: skip
    assert found["files"] == expected
