"""What every study's tables share: CSV and Markdown written atomically, and the
row-by-row CSV of a long measurement (:class:`Rows`)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .artifacts import write_atomically


def write_csv(frame: pd.DataFrame, path) -> Path:
    """Write ``frame`` as CSV atomically (``io.write_atomically``), with a
    fixed float format so that equal numbers give equal bytes."""
    return write_atomically(path, lambda tmp: frame.to_csv(tmp, index=False, float_format="%.12g"))


def write_text(text: str, path) -> Path:
    """Write ``text`` atomically (``io.write_atomically``)."""
    return write_atomically(path, lambda tmp: Path(tmp).write_text(text))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def write_rows(path, rows: list[dict], fields=None) -> Path:
    """``rows`` (dicts) as a CSV file at ``path``, written atomically (its folder made);
    columns ``fields`` (default: the first row's keys; keys not among them left out)."""

    def write(tmp):
        with open(tmp, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields or list(rows[0]), extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)

    return write_atomically(path, write)


class Rows:
    """A CSV written a row at a time (the header once, each row appended and closed), so
    that a killed run keeps what it measured; ``fresh=False`` appends to an existing file.
    ``count``: the rows this object added."""

    def __init__(self, path, fields: list[str], fresh: bool = True):
        self.path, self.fields, self.count = Path(path), list(fields), 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fresh or not self.path.exists():
            with open(self.path, "w", newline="") as f:
                csv.DictWriter(f, fieldnames=self.fields).writeheader()

    def add(self, row: dict) -> None:
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=self.fields, extrasaction="ignore").writerow(row)
        self.count += 1
