"""What every study's tables share: CSV and Markdown written atomically."""

from __future__ import annotations

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
