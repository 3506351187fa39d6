"""Compare the tables of two ``results/`` trees: the same CSV files, and in
each the same values, measured columns (times, rates, ratios of times) aside.

Each study's catalog declares its rules (:class:`TableRules`: its measured
columns, and the tables whose rows, row order or a picked value depend on a
measurement) in ``compare_rules(cfg)``; :func:`study_rules` collects them,
and ``scripts/compare_results.py`` passes them to :func:`compare_trees`.
Tables are keyed by their path under ``results/tables/<study>/`` without
``.csv`` (``"fig4_5"``, ``"regimes/summary"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml


@dataclass(frozen=True)
class Picked:
    """A column whose value a measurement chooses (Güldaş's fastest radix),
    and the columns computed from that value: rows whose picked value is
    the same on both sides are compared in full; rows where it differs are
    compared without the picked column and its ``dependent`` ones."""

    column: str
    dependent: Sequence[str] = ()


@dataclass(frozen=True)
class TableRules:
    """One study's rules. ``measured``: columns left out of every table of
    the study; ``rows``: table -> (column, value): compare only the rows
    where the column has that value (the other rows are picked by a
    measurement); ``order``: table -> key columns: the row order follows a
    measurement, so both sides are sorted by these before comparing;
    ``picked``: table -> :class:`Picked`."""

    measured: Sequence[str] = ()
    rows: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    order: Mapping[str, Sequence[str]] = field(default_factory=dict)
    picked: Mapping[str, Picked] = field(default_factory=dict)


def study_rules(catalogs: Mapping[str, object], config_dir) -> dict[str, TableRules]:
    """Every study's :class:`TableRules` by study name: ``catalogs`` maps a
    study to its catalog module, whose ``compare_rules`` takes the study's
    configuration (``config_dir/<study>.yaml``). The caller imports the
    catalogs, so that this layer names no study."""
    rules = {}
    for study, catalog in catalogs.items():
        declare = getattr(catalog, "compare_rules", None)
        if declare is None:
            raise ValueError(f"{study}: its catalog declares no compare_rules(cfg)")
        path = Path(config_dir) / f"{study}.yaml"
        if not path.is_file():
            raise ValueError(f"{study}: no configuration at {path}")
        declared = declare(yaml.safe_load(path.read_text()))
        if not isinstance(declared, TableRules):
            raise ValueError(f"{study}: compare_rules returned {type(declared).__name__}")
        rules[study] = declared
    return rules


def compare_trees(before, after, rules: Mapping[str, TableRules]) -> list[str]:
    """The differences between the CSV tables under ``before/tables`` and
    ``after/tables`` (``before`` and ``after`` are results/ folders); an empty
    list when every table is equal, measured columns aside. ``rules`` maps a
    study (the first folder under ``tables/``) to its rules; a table outside
    every study's folder is compared in full."""
    roots = [Path(before) / "tables", Path(after) / "tables"]
    for root in roots:
        if not root.is_dir():
            raise ValueError(f"no tables folder: {root}")
    names = [{p.relative_to(r).as_posix() for p in r.rglob("*.csv")} for r in roots]
    problems = [f"only in {roots[0]}: {n}" for n in sorted(names[0] - names[1])]
    problems += [f"only in {roots[1]}: {n}" for n in sorted(names[1] - names[0])]
    for name in sorted(names[0] & names[1]):
        study, _, table = name.removesuffix(".csv").partition("/")
        study_rules_ = rules.get(study, TableRules()) if table else TableRules()
        problem = compare_table(roots[0] / name, roots[1] / name, study_rules_, table)
        if problem:
            problems.append(f"{name}: {problem}")
    return problems


def compare_table(before: Path, after: Path, rules: TableRules, table: str = "") -> str | None:
    """What differs between two CSV tables (None: equal), measured columns
    aside; ``table`` is its key in ``rules`` (its path under the study's
    folder without ``.csv``)."""
    old, new = pd.read_csv(before), pd.read_csv(after)
    if list(old.columns) != list(new.columns):
        return f"columns differ: {list(old.columns)} vs {list(new.columns)}"
    selected = rules.rows.get(table)
    if selected is not None:
        column, value = selected
        old, new = (t[t[column] == value] for t in (old, new))
    keys = rules.order.get(table)
    if keys is not None:
        old, new = (t.sort_values(list(keys), kind="stable") for t in (old, new))
    old, new = (t.reset_index(drop=True) for t in (old, new))
    if old.shape != new.shape:
        return f"{old.shape[0]} rows vs {new.shape[0]}"
    measured = set(rules.measured)
    picked = rules.picked.get(table)
    if picked is not None:
        same = _equal_cells(old[picked.column], new[picked.column])
        loose = {picked.column, *picked.dependent} | measured
        problem = _frame_problem(old[same], new[same], measured)
        if problem:
            return f"rows of the same {picked.column}: {problem}"
        problem = _frame_problem(old[~same], new[~same], loose)
        return f"rows of another {picked.column}: {problem}" if problem else None
    return _frame_problem(old, new, measured)


def _equal_cells(a: pd.Series, b: pd.Series) -> pd.Series:
    """Elementwise equality in which two missing values are equal."""
    return (a == b) | (a.isna() & b.isna())


def _frame_problem(old: pd.DataFrame, new: pd.DataFrame, leave_out) -> str | None:
    keep = [c for c in old.columns if c not in leave_out]
    old, new = (t[keep].reset_index(drop=True) for t in (old, new))
    try:
        pd.testing.assert_frame_equal(old, new, check_exact=True)
    except AssertionError as exc:
        return " ".join(str(exc).split())[:300]
    return None
