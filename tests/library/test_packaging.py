"""Packaging: two packages. The library's install needs NumPy alone (declared, and true of its
imports), and its wheel holds no study code; the studies package (studies/pyproject.toml) and
environment.yml declare the same dependencies, same bounds; each wheel ships every package and
source file it needs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ROOT / "studies"

# conda-forge name -> PyPI name, where they differ (none of ours do today; PyYAML is
# `pyyaml` on both sides once names are normalised).
CONDA_TO_PYPI: dict[str, str] = {}
# conda entries with no counterpart in pyproject's dependencies or pipeline extra.
CONDA_ONLY = {"python", "pip"}
# What a library user must not need: the pipeline's packages, the GPU's, the benchmarks'.
NOT_FOR_THE_LIBRARY = (
    "pandas", "yaml", "matplotlib", "seaborn", "snakemake", "scipy", "cupy", "numba",
    "particles", "torch", "jax", "skimage",
)  # fmt: skip

_CONDA_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<spec>[^\s]*)\s*$")


@pytest.fixture(scope="module")
def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def studies_pyproject() -> dict:
    with open(STUDIES / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def conda_env() -> dict:
    with open(ROOT / "environment.yml") as f:
        return yaml.safe_load(f)


def _pypi_requirements(strings) -> dict[str, SpecifierSet]:
    """Name -> bounds of ``strings``; ``pfresample[...]`` (an extra naming another) is skipped."""
    out = {}
    for s in strings:
        req = Requirement(s)
        name = canonicalize_name(req.name)
        if name == "pfresample":
            continue
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


def _extra(pyproject: dict, name: str) -> list[str]:
    return pyproject["project"]["optional-dependencies"][name]


def _pipeline_environment(pyproject: dict, studies_pyproject: dict) -> dict[str, SpecifierSet]:
    """What environment.yml must hold: the library's dependencies and the studies', the
    studies' bounds where both name a package (they narrow NumPy)."""
    return _pypi_requirements(pyproject["project"]["dependencies"]) | _pypi_requirements(
        studies_pyproject["project"]["dependencies"]
    )


def test_the_library_depends_on_numpy_alone(pyproject):
    core = _pypi_requirements(pyproject["project"]["dependencies"])
    assert set(core) == {"numpy"}, f"the library's install must need NumPy alone: {sorted(core)}"
    spec = core["numpy"]
    assert {s.operator for s in spec} == {">=", "<"}, f"numpy needs both bounds: {spec}"
    # The range the library was tested on (docs/library.md, "Install").
    assert {"2.0.2", "2.4.6"} <= set(spec.filter(["2.0.2", "2.4.6"]))


def test_the_studies_package_holds_the_pipeline_packages(pyproject, studies_pyproject):
    names = [Requirement(r).name for r in studies_pyproject["project"]["dependencies"]]
    assert "pfresample" in names, "the studies are built on the library"
    pipeline = _pypi_requirements(studies_pyproject["project"]["dependencies"])
    assert set(pipeline) >= {"snakemake", "pandas", "seaborn", "pyyaml"}
    core = _pypi_requirements(pyproject["project"]["dependencies"])
    for name, spec in pipeline.items():
        ops = {s.operator for s in spec}
        assert ">=" in ops and "<" in ops, f"{name} needs a lower and an upper bound: {spec}"
        if name in core:  # a narrower range, inside the library's
            assert all(s.version in core[name] for s in spec), f"{name}: {spec} vs {core[name]}"
    assert "9.0.0" in pipeline["snakemake"] and "10.0.0" not in pipeline["snakemake"]


def test_the_makefile_installs_both_packages_for_the_tests_and_the_figures():
    """The test suite, the figures and the SLURM profile run the pipeline: their
    environments hold the library and the studies."""
    make = (ROOT / "Makefile").read_text()
    for stamp in ("pipeline", "dev", "cluster"):
        rule = make.split(f"$(VENV)/.{stamp}-stamp:", 1)[1].split("touch $@", 1)[0]
        assert "-e ./studies" in rule or "-e './studies[" in rule, stamp


def test_conda_env_names_agree(pyproject, studies_pyproject, conda_env):
    expected = set(_pipeline_environment(pyproject, studies_pyproject))
    assert expected == set(_conda_requirements(conda_env)) - CONDA_ONLY


def test_conda_env_bounds_agree(pyproject, studies_pyproject, conda_env):
    conda = _conda_requirements(conda_env)
    for name, spec in _pipeline_environment(pyproject, studies_pyproject).items():
        assert spec == conda[name], f"{name}: pyproject {spec} != environment.yml {conda[name]}"


def test_python_bound_agrees(pyproject, conda_env):
    conda = _conda_requirements(conda_env)
    assert SpecifierSet(pyproject["project"]["requires-python"]) == conda["python"]
    assert "3.11" in conda["python"]


# Imports every library module (src/pfresample), resamples with
# every method and runs run_filter on the CPU, while a meta-path finder makes the packages of
# argv[1] (comma-separated) unimportable, as in an environment holding NumPy alone. argv[2:]:
# more modules to import (the negative control). Prints the packages from outside the standard
# library that the imports loaded.
LIBRARY_PROBE = """
import importlib, importlib.abc, json, sys
from pathlib import Path

BLOCKED = set(sys.argv[1].split(","))


class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"blocked: {name}", name=name)
        return None


sys.meta_path.insert(0, Block())
before = set(sys.modules)
import numpy as np
import pfresample as pr

src = Path(pr.__file__).parent
library = sorted(
    ".".join(("pfresample",) + p.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
    for p in src.rglob("*.py")
)
for name in library + sys.argv[2:]:
    importlib.import_module(name)
w = np.random.default_rng(1).gamma(1.0, 2.0, 4096).astype(np.float32)
ancestors = {m: pr.resample(w, m, seed=1) for m in pr.methods()}
model = pr.models.LinearGaussianModel()
truth, y = model.simulate(steps=20, seed=7)
run = pr.run_filter(model, y, 256, "systematic", seed=1)
# A package from outside the standard library, with a file (the runtime modules that Cython's
# extensions register have none, and are no package).
loaded = {m.partition(".")[0] for m in set(sys.modules) - before} - sys.stdlib_module_names
third_party = sorted(m for m in loaded if getattr(sys.modules.get(m), "__file__", None))
print(json.dumps({
    "modules": library,
    "methods": sorted(m for m, a in ancestors.items() if a.shape == w.shape),
    "log_likelihood": float(run.log_likelihood),
    "third_party": third_party,
}))
"""


def _run_library_probe(*extra_modules: str, python: str = sys.executable, cwd=None):
    return subprocess.run(
        [python, "-c", LIBRARY_PROBE, ",".join(NOT_FOR_THE_LIBRARY), *extra_modules],
        capture_output=True, text=True, timeout=300, cwd=cwd,
    )  # fmt: skip


def _check_library_probe(out: subprocess.CompletedProcess) -> dict:
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert len(found["modules"]) > 40 and "pfresample.filters.engine" in found["modules"]
    import pfresample as pr

    assert found["methods"] == sorted(pr.methods())
    assert np.isfinite(found["log_likelihood"])
    assert found["third_party"] == ["numpy", "pfresample"], found["third_party"]
    return found


@pytest.mark.slow
def test_the_library_imports_and_runs_with_numpy_alone():
    """Every library module imports, every method resamples and run_filter runs while the
    pipeline's, the GPU's and the benchmarks' packages cannot be imported, and nothing but
    NumPy is loaded: `pip install pfresample` (NumPy alone) is enough for the library."""
    _check_library_probe(_run_library_probe())


def test_the_library_probe_catches_a_pipeline_import():
    """Negative control: a module that imports pandas (the pipeline's tables) fails the
    probe, so a library module that did the same would too."""
    out = _run_library_probe("pfresample_studies.pipeline.tables")
    assert out.returncode != 0
    assert "ModuleNotFoundError: blocked: pandas" in out.stderr, out.stderr


def test_cuda_extra_names_cupy(pyproject):
    extras = pyproject["project"]["optional-dependencies"]
    names = {canonicalize_name(Requirement(s).name) for s in extras["cuda"]}
    assert "cupy-cuda12x" in names


def test_bench_extra_names_particles(pyproject):
    names = {canonicalize_name(Requirement(s).name) for s in _extra(pyproject, "bench")}
    assert "particles" in names


def test_conda_env_installs_the_package(conda_env):
    assert conda_env["name"] == "pfresample"
    assert conda_env["channels"][0] == "conda-forge"
    pip_sections = [e["pip"] for e in conda_env["dependencies"] if isinstance(e, dict)]
    assert pip_sections == [["-e .", "-e ./studies"]]


def test_pytest_markers_registered(pyproject):
    markers = pyproject["tool"]["pytest"]["ini_options"]["markers"]
    assert {m.split(":")[0] for m in markers} >= {"gpu", "slow"}


def _packages(folder: Path) -> set[str]:
    return {".".join(p.parent.relative_to(folder).parts) for p in folder.rglob("__init__.py")}


def test_setuptools_lists_every_package(pyproject, studies_pyproject):
    """Both pyprojects list their packages by hand (gpu_kernels/ is mapped into the
    library): a package missing there would be missing in its wheel."""
    library = _packages(ROOT / "src") | {"pfresample.gpu_kernels"}
    assert set(pyproject["tool"]["setuptools"]["packages"]) == library
    assert set(studies_pyproject["tool"]["setuptools"]["packages"]) == _packages(STUDIES)


def test_the_studies_package_data_covers_every_source_file(studies_pyproject):
    """The studies' CUDA, C and C++ sources and headers ship in their wheel: each is
    matched by a package-data pattern of its package."""
    data = studies_pyproject["tool"]["setuptools"]["package-data"]
    sources = [p for p in STUDIES.rglob("*") if p.suffix in (".cu", ".cuh", ".c", ".cpp", ".h")]
    assert len(sources) > 10
    for path in sources:
        owner = path.parent
        while not (owner / "__init__.py").exists():
            owner = owner.parent
        package = ".".join(owner.relative_to(STUDIES).parts)
        relative = path.relative_to(owner)
        assert any(relative.match(g) for g in data.get(package, [])), path


STUDY_PARTS = {"studies", "pfresample_studies", "pipeline", "native", "csrc", "dulger2017",
               "guldas2015", "cpf2013", "d3_2014", "moazeni2013"}  # fmt: skip


def study_code(names: list[str]) -> list[str]:
    """The files of a wheel's listing that belong to the studies: a folder named after the
    pipeline, a study or its sources, or a C or C++ source."""
    return [
        n
        for n in names
        if not n.startswith("pfresample-")  # the .dist-info folder
        and (STUDY_PARTS & set(Path(n).parts) or Path(n).suffix in (".c", ".cpp", ".h"))
    ]


def test_the_study_code_check_sees_study_files():
    """Negative control of the wheel's check: a study module, a study's CUDA or C source and
    the pipeline are seen; the library's own files are not."""
    planted = ["pfresample_studies/dulger2017/tables.py", "pfresample/studies/x.py",
               "pfresample/gpu_kernels/moazeni2013/dp.cu", "pfresample/native/tv.c",
               "pfresample/pipeline/artifacts.py"]  # fmt: skip
    library = ["pfresample/filters/engine.py", "pfresample/gpu_kernels/philox.cuh",
               "pfresample/cuda/kernels.py", "pfresample-0.1.0.dist-info/METADATA"]  # fmt: skip
    assert study_code(planted + library) == planted


@pytest.mark.slow
def test_wheel_needs_numpy_alone_and_ships_every_kernel_source(tmp_path):
    """The wheel requires NumPy alone and holds no study code; installed into a fresh
    virtual environment that holds NumPy and nothing else, and imported from another
    directory, the library runs
    (the probe above) and finds every CUDA source, equal to the checkout's."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("pfresample-*.whl")
    with zipfile.ZipFile(wheel) as z:
        (metadata,) = (n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [
            Requirement(line.partition(":")[2].strip())
            for line in z.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    assert [r.name for r in requires if r.marker is None] == ["numpy"], requires
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert any(n.startswith("pfresample/filters/") for n in names)
    assert not study_code(names), study_code(names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # NumPy, offline: the test's own, linked into a folder that holds it alone (and the
    # libraries its wheel bundles), found through a .pth file.
    site = next((venv / "lib").glob("python*/site-packages"))
    numpy_only = tmp_path / "numpy_only"
    numpy_only.mkdir()
    for p in Path(np.__file__).parents[1].iterdir():
        if p.name == "numpy" or p.name.startswith(("numpy.", "numpy-")):
            (numpy_only / p.name).symlink_to(p)
    (site / "numpy_only.pth").write_text(f"{numpy_only}\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--target", str(site), str(wheel)],
        check=True,
        timeout=300,
    )  # fmt: skip
    control = subprocess.run([str(python), "-c", "import pandas"], capture_output=True, text=True)
    assert control.returncode != 0, "the fresh environment must not hold pandas"

    found = _check_library_probe(_run_library_probe(python=str(python), cwd=tmp_path))
    assert len(found["modules"]) > 40
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
