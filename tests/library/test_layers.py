"""The layers of DESIGN.md hold, read from the imports of both packages (src/pfresample,
the library, and studies/pfresample_studies, the pipeline and the studies; every import,
also those inside functions): the library imports neither the pipeline nor a study, the
pipeline imports no study, and no module imports itself back through others (no cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC, STUDIES = ROOT / "src", ROOT / "studies"


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(p, root): p
    for root, package in ((SRC, "pfresample"), (STUDIES, "pfresample_studies"))
    for p in (root / package).rglob("*.py")
}


def imported_names(name: str) -> set[str]:
    """Every module name that module ``name`` imports (resolved to absolute)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from package import module` imports the module itself
            targets = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            targets = targets or [base]
        else:
            continue
        found |= set(targets)
    return found


def imports(name: str) -> set[str]:
    """The project modules that module ``name`` imports."""
    return {t for t in imported_names(name) if t in MODULES and t != name}


GRAPH = {name: imports(name) for name in MODULES}


def layer(name: str) -> str:
    if name.startswith("pfresample_studies.pipeline"):
        return "pipeline"
    if name.startswith("pfresample_studies"):
        return "study"
    return "library"


def test_the_graph_is_read():
    assert len(MODULES) > 40
    assert "pfresample.cuda.run" in GRAPH["pfresample.api"]
    assert (
        "pfresample_studies.pipeline.artifacts"
        in GRAPH["pfresample_studies.dulger2017.trajectories"]
    )


def test_every_project_import_names_a_module_of_the_packages():
    """A stale import (a moved module) fails here, not only when its code runs."""
    bad = [
        f"{name} -> {target}"
        for name in MODULES
        for target in imported_names(name)
        if target.split(".")[0] in ("pfresample", "pfresample_studies") and target not in MODULES
    ]
    assert not bad, bad


def imports_into(source: str, forbidden: set[str]) -> list[str]:
    """Every import from a module of layer ``source`` into a ``forbidden`` layer."""
    return [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        for target in targets
        if layer(name) == source and layer(target) in forbidden
    ]


def test_the_library_imports_no_pipeline_and_no_study():
    bad = imports_into("library", {"pipeline", "study"})
    assert not bad, bad


def test_the_pipeline_imports_no_study():
    bad = imports_into("pipeline", {"study"})
    assert not bad, bad


def test_no_import_cycle():
    done, stack = set(), []

    def visit(name):
        if name in stack:
            cycle = stack[stack.index(name) :] + [name]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if name in done:
            return
        stack.append(name)
        for target in sorted(GRAPH[name]):
            visit(target)
        stack.pop()
        done.add(name)

    for name in sorted(GRAPH):
        visit(name)


# The library's own layers, lowest first (docs/DESIGN.md, "Layers of the library"): the
# contracts both backends share; host arithmetic and checks; the two backends, side by
# side; the registry above both; the public calls; the models; the filters; the package.
LIBRARY_LEVELS = (
    ("contracts", ("constants", "contracts", "rng", "radix", "backend", "interop")),
    ("host", ("sums", "tuning", "logweights", "validation", "expectation", "timing")),
    ("backends", ("resampling", "cuda")),
    ("registry", ("resampling.registry",)),
    ("calls", ("api", "metrics")),
    ("models", ("models",)),
    ("filters", ("filters",)),
)


def library_level(name: str) -> tuple[int, str]:
    """(the level of a library module, the part it belongs to); the package
    itself is the top."""
    rest = name.removeprefix("pfresample").removeprefix(".")
    best = None
    for i, (_, parts) in enumerate(LIBRARY_LEVELS):
        for part in parts:
            if rest == part or rest.startswith(part + "."):
                if best is None or len(part) > len(best[1]):
                    best = (i, part)
    if best is None:
        assert rest == "", f"{name} is in no level of LIBRARY_LEVELS: add it"
        return len(LIBRARY_LEVELS), ""
    return best


def test_the_library_imports_only_downward():
    """No library module imports one of a higher level, and neither backend
    imports the other (the CPU reference and the CUDA launchers share only
    the contracts below them)."""
    bad = []
    for name, targets in GRAPH.items():
        if layer(name) != "library":
            continue
        level, part = library_level(name)
        for target in targets:
            t_level, t_part = library_level(target)
            sideways = level == t_level == 2 and part != t_part
            if t_level > level or sideways:
                bad.append(f"{name} -> {target}")
    assert not bad, bad


def test_negative_control_an_upward_import_is_seen():
    assert library_level("pfresample.sums")[0] < library_level("pfresample.cuda.geometry")[0]
    assert library_level("pfresample.resampling.registry") == (3, "resampling.registry")
    assert library_level("pfresample.resampling.d3") == (2, "resampling")
    assert library_level("pfresample") == (len(LIBRARY_LEVELS), "")
