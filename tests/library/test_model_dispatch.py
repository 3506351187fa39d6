"""The GPU filters choose by what a model answers, not by its class
(docs/DESIGN.md, "Models and their CUDA twins"): no module of
src/pfresample/filters/ calls ``isinstance`` (or ``type(...) is``) on a class
of ``pfresample.models``; a model names its device code itself
(``cuda_twin(graph)``, ``cuda.twin``). The negative control plants such a
check in a source text and the same reading must find it."""

from __future__ import annotations

import ast
from pathlib import Path

import pfresample.models as models
from pfresample.filters.graph import cuda_twin

FILTERS = Path(__file__).resolve().parents[2] / "src" / "pfresample" / "filters"
MODEL_CLASSES = {
    name for name in dir(models) if isinstance(getattr(models, name), type) and name[0].isupper()
}


def _names(node) -> set[str]:
    """The class names a type argument spells: Name, module.Name, a tuple or a union of them."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(e) for e in node.elts))
    if isinstance(node, ast.BinOp):
        return _names(node.left) | _names(node.right)
    return set()


def model_class_checks(source: str) -> list[str]:
    """Every ``isinstance(_, ModelClass)`` and ``type(_) is ModelClass`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            hit = _names(node.args[1]) & MODEL_CLASSES if len(node.args) == 2 else set()
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            is_type = getattr(node.left.func, "id", None) == "type"
            hit = set().union(*(_names(c) for c in node.comparators)) & MODEL_CLASSES
            hit = hit if is_type else set()
        else:
            continue
        found += [f"line {node.lineno}: {name}" for name in sorted(hit)]
    return found


def test_the_model_classes_are_read():
    assert {"GrowthModel", "UuvModel", "BimodalModel", "LinearGaussianModel"} <= MODEL_CLASSES


def test_no_filter_dispatches_on_a_model_class():
    bad = {}
    for path in sorted(FILTERS.glob("*.py")):
        if hits := model_class_checks(path.read_text()):
            bad[path.name] = hits
    assert not bad, bad


def test_negative_control_a_planted_check_is_found():
    planted = (
        "from ..models import UuvModel, GrowthModel\n"
        "def pick(model):\n"
        "    if isinstance(model, (UuvModel, models.BimodalModel)):\n"
        "        return 1\n"
        "    return type(model) is GrowthModel\n"
    )
    assert model_class_checks(planted) == [
        "line 3: BimodalModel",
        "line 3: UuvModel",
        "line 5: GrowthModel",
    ]
    assert model_class_checks("isinstance(v, np.ndarray)\n") == []


def test_each_built_in_model_names_its_twins():
    """The graphs each built-in model has device code for, and none for a user's model."""
    from pfresample.models import (
        BearingsOnlyModel,
        BimodalModel,
        GrowthModel,
        LinearGaussianModel,
        RadarModel,
        UuvModel,
    )

    def graphs(model):
        return {g for g in ("sir", "cpf", "d3", "guldas") if cuda_twin(model, g) is not None}

    assert graphs(GrowthModel()) == {"sir", "cpf"}
    assert graphs(RadarModel()) == {"sir"}
    assert graphs(BearingsOnlyModel()) == {"sir", "cpf"}
    assert graphs(UuvModel(duration=1.0)) == {"d3"}
    assert graphs(BimodalModel()) == {"guldas"}
    assert graphs(LinearGaussianModel()) == set()
    assert cuda_twin(BimodalModel(), "guldas", carry=True).carry
    assert cuda_twin(GrowthModel(), "sir").fused and not getattr(
        cuda_twin(BearingsOnlyModel(), "sir"), "fused", False
    )
