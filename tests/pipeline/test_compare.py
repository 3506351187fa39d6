"""scripts/compare_results.py and pipeline.compare: every study's catalog declares
its measured columns (and Güldaş the radix its timings pick); a planted change in
a column that is not measured is reported, one in a measured column is not; and
the rules cover every column that differed between two quick-grid runs of one
configuration (evidence/2026-11-28-epyc2-854dce4/compare_classified.txt)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from pfresample_studies.pipeline.claims import STUDIES
from pfresample_studies.pipeline.compare import Picked, TableRules, compare_trees, study_rules

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config" / "studies"
CLASSIFIED = ROOT / "evidence" / "2026-11-28-epyc2-854dce4" / "compare_classified.txt"
CATALOGS = {s: importlib.import_module(f"pfresample_studies.{s}.catalog") for s in STUDIES}
RULES = study_rules(CATALOGS, CONFIG)


def write_trees(tmp_path: Path, name: str, before: pd.DataFrame, after: pd.DataFrame):
    """Two results/ trees that hold one table, ``tables/<name>.csv``."""
    roots = [tmp_path / "before", tmp_path / "after"]
    for root, frame in zip(roots, (before, after), strict=True):
        path = root / "tables" / f"{name}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(path, index=False)
    return roots


def test_every_study_declares_rules():
    assert set(RULES) == set(STUDIES) == {"cpf2013", "d3_2014", "dulger2017", "guldas2015",
                                           "moazeni2013"}  # fmt: skip
    for study, rules in RULES.items():
        assert rules.measured, study
        assert tuple(rules.measured) == tuple(CATALOGS[study].MEASURED_COLUMNS)


@pytest.mark.parametrize("study", STUDIES)
def test_a_change_in_a_measured_column_is_not_reported(study, tmp_path):
    measured = RULES[study].measured[0]
    before = pd.DataFrame({"n": [1, 2], measured: [0.5, 0.25]})
    after = before.assign(**{measured: [0.75, 0.125]})
    assert compare_trees(*write_trees(tmp_path, f"{study}/table", before, after), RULES) == []


@pytest.mark.parametrize("study", STUDIES)
def test_a_change_in_a_column_that_is_not_measured_is_reported(study, tmp_path):
    measured = RULES[study].measured[0]
    before = pd.DataFrame({"n": [1, 2], "rmse": [0.5, 0.25], measured: [0.5, 0.25]})
    after = before.assign(rmse=[0.5, 0.26], **{measured: [0.75, 0.125]})
    problems = compare_trees(*write_trees(tmp_path, f"{study}/table", before, after), RULES)
    assert len(problems) == 1 and problems[0].startswith(f"{study}/table.csv:")
    assert "rmse" in problems[0]


def test_a_study_s_measured_columns_do_not_cover_another_study_s_tables(tmp_path):
    """``mops`` is measured in moazeni2013's tables, not in cpf2013's."""
    assert "mops" in RULES["moazeni2013"].measured
    assert "mops" not in RULES["cpf2013"].measured
    before = pd.DataFrame({"n": [1], "mops": [10.0]})
    after = before.assign(mops=[11.0])
    assert compare_trees(*write_trees(tmp_path, "moazeni2013/a", before, after), RULES) == []
    assert len(compare_trees(*write_trees(tmp_path, "cpf2013/a", before, after), RULES)) == 1


def test_missing_and_extra_tables_are_reported(tmp_path):
    frame = pd.DataFrame({"n": [1]})
    before, after = write_trees(tmp_path, "d3_2014/regimes/summary", frame, frame)
    (after / "tables" / "d3_2014" / "extra.csv").write_text("n\n1\n")
    assert compare_trees(before, after, RULES) == [f"only in {after / 'tables'}: d3_2014/extra.csv"]


def speed_rows(radix, mse, particle_sets=(100, 100)) -> pd.DataFrame:
    """Rows of a Güldaş Fig 4.5-4.8 table: the standard method and the butterfly."""
    return pd.DataFrame({
        "n": [1024, 1024], "precision": ["float32", "float32"],
        "scheme": ["standard", "butterfly"], "method": ["multinomial", "butterfly-multinomial"],
        "radix": radix, "depth": [1, len(radix[1].split("x"))],
        "first_order_factor": [1.0, 1.5], "particle_sets": list(particle_sets),
        "time_ms": [1.0, 2.0], "mse": mse, "mse_x_time": [1.0, 2.0],
    })  # fmt: skip


@pytest.mark.parametrize("figure", ["fig4_5", "fig4_6", "fig4_7", "fig4_8"])
def test_guldas_errors_are_compared_where_the_picked_radix_agrees(figure, tmp_path):
    name = f"guldas2015/{figure}"
    before = speed_rows(["", "32x32"], [0.10, 0.20])

    # the timing picked another radix: its row's errors follow it, not reported
    after = speed_rows(["", "4x256"], [0.10, 0.30])
    assert compare_trees(*write_trees(tmp_path / "a", name, before, after), RULES) == []
    # the same radix picked, the error changed: reported
    after = speed_rows(["", "32x32"], [0.10, 0.30])
    problems = compare_trees(*write_trees(tmp_path / "b", name, before, after), RULES)
    assert len(problems) == 1 and "rows of the same radix" in problems[0] and "mse" in problems[0]
    # the standard method's error (no radix picked) changed: reported
    after = speed_rows(["", "4x256"], [0.11, 0.30])
    assert len(compare_trees(*write_trees(tmp_path / "c", name, before, after), RULES)) == 1
    # another radix, and a column that does not follow the radix changed: reported
    after = speed_rows(["", "4x256"], [0.10, 0.30], particle_sets=(100, 99))
    problems = compare_trees(*write_trees(tmp_path / "d", name, before, after), RULES)
    assert len(problems) == 1 and "rows of another radix" in problems[0]
    assert "particle_sets" in problems[0]


def test_guldas_radix_timings_compared_in_the_order_of_their_keys(tmp_path):
    """radix_timings lists the candidates fastest first: another order, the same
    candidates, is not a difference; another candidate is."""
    before = pd.DataFrame({"target": ["g"] * 3, "n": [64] * 3, "method": ["b"] * 3,
                           "precision": ["float32"] * 3, "radix": ["8x8", "4x16", "2x32"],
                           "depth": [2, 2, 2], "time_ms": [1.0, 2.0, 3.0],
                           "chosen": [True, False, False]})  # fmt: skip
    after = before.iloc[[2, 0, 1]].assign(time_ms=[0.5, 1.0, 2.0], chosen=[True, False, False])
    name = "guldas2015/radix_timings"
    assert compare_trees(*write_trees(tmp_path / "a", name, before, after), RULES) == []
    after = after.assign(radix=["2x32", "8x8", "16x4"])
    assert len(compare_trees(*write_trees(tmp_path / "b", name, before, after), RULES)) == 1


def test_dulger_time_matched_rows_compare_the_target_only(tmp_path):
    """Figs 5.13-5.14: the reduced-B Metropolis rows are picked by their time."""
    rows = RULES["dulger2017"].rows
    assert rows, "no time-matched table in dulger2017's catalog"
    table, (column, target) = next(iter(rows.items()))
    before = pd.DataFrame({column: [target, "other"], "mse_per_n": [0.1, 0.2]})
    after = before.assign(mse_per_n=[0.1, 0.3])
    assert compare_trees(*write_trees(tmp_path / "a", f"dulger2017/{table}", before, after),
                         RULES) == []  # fmt: skip
    after = before.assign(mse_per_n=[0.2, 0.2])
    assert len(compare_trees(*write_trees(tmp_path / "b", f"dulger2017/{table}", before, after),
                             RULES)) == 1  # fmt: skip


def test_a_catalog_without_rules_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="nostudy: its catalog declares no compare_rules"):
        study_rules({"nostudy": object()}, CONFIG)

    class Catalog:
        compare_rules = staticmethod(lambda cfg: TableRules())

    with pytest.raises(ValueError, match="no configuration"):
        study_rules({"nostudy": Catalog}, tmp_path)


def test_picked_rows_need_the_same_row_count(tmp_path):
    rules = {"s": TableRules(picked={"t": Picked("radix", ("mse",))})}
    before = pd.DataFrame({"radix": ["a", "b"], "mse": [1.0, 2.0]})
    roots = write_trees(tmp_path, "s/t", before, before.iloc[:1])
    assert compare_trees(*roots, rules) == ["s/t.csv: 2 rows vs 1"]


def classified_evidence() -> dict[str, tuple[set[str], set[str]]]:
    """compare_classified.txt: table -> (columns that differed, not timing-named;
    timing-named columns that differed)."""
    out = {}
    for line in CLASSIFIED.read_text().splitlines()[1:]:
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3:
            break
        other, timing = ({c for c in p.split() if c != "-"} for p in parts[1:])
        out[parts[0]] = (other, timing)
    return out


def test_the_rules_cover_every_column_that_differed_between_two_runs():
    """Every column that differed between two quick-grid runs of one configuration
    (the committed evidence) is measured, orders rows by a measurement, or is the
    radix Güldaş's timings pick and the errors that follow it."""
    evidence = classified_evidence()
    assert len(evidence) == 47
    uncovered = []
    for name, (other, timing) in evidence.items():
        study, _, table = name.removesuffix(".csv").partition("/")
        rules = RULES[study]
        covered = set(rules.measured) | set(rules.order.get(table, ()))
        picked = rules.picked.get(table)
        if picked is not None:
            covered |= {picked.column, *picked.dependent}
        uncovered += [f"{name}: {c}" for c in sorted((other | timing) - covered)]
    assert uncovered == []


def test_compare_results_script(tmp_path):
    """The script: rc 0 where only measured columns changed, 1 and the table's
    name where another did."""
    before = pd.DataFrame({"n": [1, 2], "seconds": [0.5, 0.25], "tensor_rmse": [0.1, 0.2]})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "studies")])}
    script = [sys.executable, str(ROOT / "scripts" / "compare_results.py")]
    for sub, after, rc in (("a", before.assign(seconds=[0.6, 0.3]), 0),
                           ("b", before.assign(tensor_rmse=[0.1, 0.3]), 1)):  # fmt: skip
        roots = write_trees(tmp_path / sub, "moazeni2013/ch6_peer", before, after)
        done = subprocess.run([*script, *map(str, roots)], capture_output=True, text=True,
                              env=env, check=False)  # fmt: skip
        assert done.returncode == rc, done.stderr
        assert ("moazeni2013/ch6_peer.csv" in done.stdout) == bool(rc)
        assert f"1 tables compared, {rc} differ" in done.stdout
