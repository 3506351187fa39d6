"""Every claim a study page makes, traceable: one ``claims.csv`` a study, each row a claim
with its verdict, the statistic that resolves it, the number(s) the page quotes, and where
in a committed file those numbers come from; this module re-derives them.

Columns of ``studies/pfresample_studies/<study>/claims.csv``:

* ``id``: ``<study>.<slug>`` (slug of ``[a-z0-9-]``), cited on the page as ``[<id>]``;
* ``claim``: the document's statement, or our finding, in one sentence;
* ``verdict``: one of :data:`VERDICTS`;
* ``statistic``: what resolves it, in words (a paired difference with its interval, a test
  and its p, a ratio of medians and its spread, or "exact");
* ``quoted``: the number(s) exactly as the page quotes them; empty where none is quoted;
* ``evidence``: the repository-relative path of a committed CSV;
* ``rows``: a :meth:`pandas.DataFrame.query` expression (empty: every row);
* ``column``: a column, or a :meth:`pandas.DataFrame.eval` expression; several separated by
  ``;``, each giving one number;
* ``reduce``: one of :data:`REDUCERS` (``range`` gives the minimum and the maximum of one
  column; ``list`` every selected value in row order; ``value`` needs exactly one row).

A quoted number holds when the re-derived one, rounded to the decimals quoted, equals it.
The page check (:func:`uncited_verdicts`) finds each sentence, table row or bullet of the
page that carries a verdict word (:data:`VERDICT_WORDS`) but cites no claim.

``python -m pfresample_studies.pipeline.claims STUDY`` prints each claim with its numbers
and every problem found.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

STUDIES = ("cpf2013", "d3_2014", "dulger2017", "guldas2015", "moazeni2013")
VERDICTS = ("reproduced", "differs", "not resolved", "not testable here")
REDUCERS = ("value", "min", "max", "median", "mean", "sum", "count", "range", "list")
COLUMNS = ("id", "claim", "verdict", "statistic", "quoted", "evidence", "rows", "column", "reduce")
VERDICT_WORDS = re.compile(
    r"\b(reproduces|reproduced|holds|better|worse|agrees|differs|no difference|does not differ)\b",
    re.IGNORECASE,
)
CITATION = re.compile(r"\[((?:cpf2013|d3_2014|dulger2017|guldas2015|moazeni2013)\.[a-z0-9-]+)\]")
ID = re.compile(r"^(?P<study>[a-z0-9_]+)\.[a-z0-9-]+$")
# A number as a page writes it: an optional sign (hyphen or Unicode minus), digits with
# optional thousands commas, optional decimals, optional exponent.
NUMBER = re.compile(r"(?<![\w.])([-−]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([-+−]?\d+))?")

REPO = Path(__file__).resolve().parents[3]


def table_path(study: str) -> Path:
    return REPO / "studies" / "pfresample_studies" / study / "claims.csv"


def page_path(study: str) -> Path:
    return REPO / "docs" / f"{study}.md"


def load(study: str, path: Path | None = None) -> pd.DataFrame:
    """The claims table of ``study``, every cell a string (empty where blank)."""
    path = path or table_path(study)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: the claims table lacks the column(s) {missing}")
    return frame


@dataclass(frozen=True)
class Quoted:
    """One number as a page quotes it: its value and the decimals it is given to."""

    value: float
    decimals: int

    def matches(self, derived: float) -> bool:
        if not np.isfinite(derived):
            return False
        scale = 10.0**self.decimals
        # Half-up rounding of the derived value at the quoted precision, with a small slack
        # for binary representation (2.675 stored as 2.67499...).
        rounded = np.floor(abs(derived) * scale + 0.5 + 1e-9) / scale
        return bool(np.isclose(np.copysign(rounded, derived), self.value, rtol=0, atol=0.5e-12))


def parse_quoted(text: str) -> list[Quoted]:
    """The numbers in a quoted string, in order (``"0.052–0.079"`` gives two)."""
    found = []
    for match in NUMBER.finditer(text):
        sign, whole, frac, exponent = match.groups()
        digits = whole.replace(",", "") + (frac or "")
        value = float(digits) * (-1.0 if sign else 1.0)
        decimals = len(frac) - 1 if frac else 0
        if exponent:
            power = int(exponent.replace("−", "-"))
            value *= 10.0**power
            decimals = max(decimals - power, 0)
        found.append(Quoted(value, decimals))
    return found


@functools.lru_cache(maxsize=64)
def _evidence(path: str, mtime_ns: int) -> pd.DataFrame:
    """A committed CSV, read once for all the claims that cite it (keyed by its
    modification time too, so a rewritten file is read again); callers only query it."""
    return pd.read_csv(path)


def derive(row: pd.Series, repo: Path = REPO) -> list[float]:
    """The number(s) a claim's evidence gives, by its ``rows``, ``column`` and ``reduce``."""
    path = repo / row["evidence"]
    if not row["evidence"] or not path.is_file():
        raise FileNotFoundError(
            f"{row['id']}: evidence file {row['evidence']!r} is not in the repository"
        )
    frame = _evidence(str(path), path.stat().st_mtime_ns)
    if row["rows"].strip():
        frame = frame.query(row["rows"], engine="python")
    if frame.empty:
        raise ValueError(f"{row['id']}: rows {row['rows']!r} select nothing in {row['evidence']}")
    how = row["reduce"].strip()
    if how not in REDUCERS:
        raise ValueError(f"{row['id']}: reduce {how!r} is not one of {REDUCERS}")
    numbers: list[float] = []
    for expression in (e.strip() for e in row["column"].split(";")):
        series = frame[expression] if expression in frame.columns else frame.eval(expression)
        values = pd.to_numeric(pd.Series(series), errors="raise").to_numpy(dtype=float)
        if how == "value":
            if values.size != 1:
                raise ValueError(f"{row['id']}: 'value' needs one row, {values.size} selected")
            numbers.append(float(values[0]))
        elif how == "range":
            numbers += [float(np.min(values)), float(np.max(values))]
        elif how == "list":
            numbers += [float(v) for v in values]
        elif how == "count":
            numbers.append(float(values.size))
        else:
            numbers.append(float(getattr(np, how)(values)))
    return numbers


def problems(study: str, frame: pd.DataFrame | None = None, repo: Path = REPO) -> list[str]:
    """Every way the claims table of ``study`` fails: a malformed row, a stale number."""
    frame = load(study) if frame is None else frame
    found = []
    duplicated = sorted(set(frame["id"][frame["id"].duplicated()]))
    if duplicated:
        found.append(f"{study}: claim ids used twice: {duplicated}")
    for _, row in frame.iterrows():
        match = ID.match(row["id"])
        if not match or match["study"] != study:
            found.append(f"{row['id']!r}: an id is '{study}.<slug>' with a slug of [a-z0-9-]")
        if row["verdict"] not in VERDICTS:
            found.append(f"{row['id']}: verdict {row['verdict']!r} is not one of {VERDICTS}")
        if not row["statistic"].strip() and row["verdict"] != "not testable here":
            found.append(f"{row['id']}: no statistic says what resolves it")
        quoted = parse_quoted(row["quoted"])
        if not quoted:
            continue
        try:
            derived = derive(row, repo)
        except (
            OSError,
            ValueError,
            KeyError,
            SyntaxError,
            pd.errors.UndefinedVariableError,
        ) as err:
            found.append(f"{row['id']}: {err}")
            continue
        if len(derived) != len(quoted):
            found.append(
                f"{row['id']}: quotes {len(quoted)} number(s), the evidence gives {len(derived)}"
            )
            continue
        for q, d in zip(quoted, derived, strict=True):
            if not q.matches(d):
                found.append(
                    f"{row['id']}: quotes {row['quoted']!r} but {row['evidence']} gives "
                    f"{d:.{q.decimals + 2}f} where {q.value:.{q.decimals}f} is quoted"
                )
    return found


def _units(page: str) -> list[str]:
    """A page's sentences, table rows and bullets, code blocks and headings left out."""
    units: list[str] = []
    block: list[str] = []

    def flush():
        text = " ".join(block).strip()
        block.clear()
        if text:
            units.extend(re.split(r"(?<=[.!?])\s+(?=[A-Z(*\[`])", text))

    fenced = False
    for line in page.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            flush()
            continue
        if fenced or stripped.startswith("#"):
            flush()
            continue
        if not stripped:
            flush()
        elif stripped.startswith("|"):
            flush()
            units.append(stripped)
        elif re.match(r"([-*+]|\d+\.)\s", stripped):
            flush()
            block.append(stripped)
        else:
            block.append(stripped)
    flush()
    return units


def uncited_verdicts(page: str) -> list[str]:
    """The sentences, table rows and bullets of ``page`` with a verdict word and no claim id."""
    return [u for u in _units(page) if VERDICT_WORDS.search(u) and not CITATION.search(u)]


def citations(page: str) -> set[str]:
    return set(CITATION.findall(page))


def page_problems(
    study: str, page: str | None = None, frame: pd.DataFrame | None = None
) -> list[str]:
    """A verdict with no claim beside it, a cited id the table lacks, a claim never cited."""
    page = page_path(study).read_text() if page is None else page
    frame = load(study) if frame is None else frame
    ids = set(frame["id"])
    cited = citations(page)
    found = [f"{study} page: no claim id beside {u[:160]!r}" for u in uncited_verdicts(page)]
    found += [
        f"{study} page cites [{c}], which its claims table lacks" for c in sorted(cited - ids)
    ]
    found += [f"{study}: claim {c} is never cited on its page" for c in sorted(ids - cited)]
    return found


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    studies = argv or [s for s in STUDIES if table_path(s).is_file()]
    failed = False
    for study in studies:
        frame = load(study)
        for _, row in frame.iterrows():
            try:
                derived = derive(row) if parse_quoted(row["quoted"]) else []
            except Exception as err:  # noqa: BLE001 - a listing, the problems follow below
                derived = [f"error: {err}"]
            quoted = repr(row["quoted"])
            print(f"{row['id']:<40} {row['verdict']:<17} quoted {quoted:<24} derived {derived}")
        found = problems(study, frame) + page_problems(study, frame=frame)
        for line in found:
            print("  PROBLEM", line)
        failed |= bool(found)
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
