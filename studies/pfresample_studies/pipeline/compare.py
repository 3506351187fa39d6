"""Compare the tables of two ``results/`` trees: the same CSV files, and in
each the same values, measured columns (times, speed-ups) aside.

A study says which of its columns are measurements and which rows of a
table are chosen by a measurement (:class:`TableRules`);
``scripts/compare_results.py`` passes every study's rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class TableRules:
    """``measured``: columns left out of the comparison; ``rows``: table name
    (without .csv) -> (column, value): compare only the rows where the column
    has that value (a table whose other rows are picked by a measurement)."""

    measured: Sequence[str] = ()
    rows: Mapping[str, tuple[str, str]] = field(default_factory=dict)


def compare_trees(before, after, rules: TableRules) -> list[str]:
    """The differences between the CSV tables under ``before/tables`` and
    ``after/tables`` (``before`` and ``after`` are results/ folders); an empty
    list when every table is equal, measured columns aside."""
    roots = [Path(before) / "tables", Path(after) / "tables"]
    names = [{p.relative_to(r).as_posix() for p in r.rglob("*.csv")} for r in roots]
    problems = [f"only in {roots[0]}: {n}" for n in sorted(names[0] - names[1])]
    problems += [f"only in {roots[1]}: {n}" for n in sorted(names[1] - names[0])]
    for name in sorted(names[0] & names[1]):
        problem = compare_table(roots[0] / name, roots[1] / name, rules)
        if problem:
            problems.append(f"{name}: {problem}")
    return problems


def compare_table(before: Path, after: Path, rules: TableRules) -> str | None:
    """What differs between two CSV tables (None: equal), measured columns aside."""
    old, new = pd.read_csv(before), pd.read_csv(after)
    if list(old.columns) != list(new.columns):
        return f"columns differ: {list(old.columns)} vs {list(new.columns)}"
    selected = rules.rows.get(before.stem)
    if selected is not None:
        column, value = selected
        old, new = (t[t[column] == value] for t in (old, new))
    keep = [c for c in old.columns if c not in set(rules.measured)]
    old, new = (t[keep].reset_index(drop=True) for t in (old, new))
    if old.shape != new.shape:
        return f"{old.shape[0]} rows vs {new.shape[0]}"
    try:
        pd.testing.assert_frame_equal(old, new, check_exact=True)
    except AssertionError as exc:
        return " ".join(str(exc).split())[:300]
    return None
