"""Every ``from <sibling> import names`` in a bench script names something the
sibling module defines, and every ``from pfresample... import names`` something
the library has. The GPU benches run only on a CUDA host, so a name moved in the
library or between bench modules breaks them where no CPU test imports them; this
check reads the sources and needs neither CuPy nor a GPU."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _defined(module: Path) -> set[str]:
    """Top-level names a module binds: functions, classes, assignments, imports."""
    names: set[str] = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _library_has(module: str, name: str) -> bool:
    """Whether ``from module import name`` works: an attribute or a submodule."""
    if hasattr(importlib.import_module(module), name):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
    except ModuleNotFoundError:
        return False
    return True


def missing_names(script: Path, root: Path = BENCH) -> list[str]:
    """``module.name`` for each name ``script`` imports from a sibling module of
    ``root`` that the sibling does not define, or from the library that it lacks."""
    tree = ast.parse(script.read_text())
    fallbacks = {  # imports in `except ImportError:`, for an older library on purpose
        id(n)
        for t in ast.walk(tree)
        if isinstance(t, ast.Try)
        for h in t.handlers
        if isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
        for n in ast.walk(h)
    }
    missing = []
    for node in ast.walk(tree):
        if id(node) in fallbacks:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "pfresample":
                missing += [f"{node.module}.{a.name}" for a in node.names
                            if not _library_has(node.module, a.name)]  # fmt: skip
                continue
            sibling = root / f"{node.module}.py"
            if "." in node.module or not sibling.exists():
                continue  # a package or a third-party module, not a bench sibling
            defined = _defined(sibling)
            missing += [f"{node.module}.{a.name}" for a in node.names
                        if a.name != "*" and a.name not in defined]  # fmt: skip
    return missing


SCRIPTS = sorted(BENCH.glob("*.py")) + sorted(BENCH.glob("device/*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(BENCH)))
def test_sibling_imports_resolve(script):
    assert not missing_names(script)


def test_negative_control_a_moved_name_is_caught(tmp_path):
    (tmp_path / "lib.py").write_text("import os\nX = 1\n\n\ndef present():\n    pass\n")
    (tmp_path / "user.py").write_text(
        "from lib import X, absent, os, present\nfrom numpy import nothing\n"
    )
    assert missing_names(tmp_path / "user.py", tmp_path) == ["lib.absent"]
