"""pyproject.toml and environment.yml must declare the same core dependencies, same bounds."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

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
