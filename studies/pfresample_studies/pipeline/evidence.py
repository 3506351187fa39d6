"""Committed measurements drawn where this machine ran none (DESIGN.md: "committed-evidence
overlays for machines without a GPU"), and the source every figure records.

A study names, for a figure whose GPU rows did not run here, the path of its tidy table
inside an evidence folder (e.g. ``ch4_pipeline/tables/fig19.csv``); :func:`find` returns
the newest folder of ``evidence/`` that holds that table with at least one row, as an
:class:`Evidence` (its device, date and commit read from the folder's name, and a label
for the legend and the caption). "Newest": the date of the folder's name, then the commit
time of the tree it measured (``git``, where the checkout has its history), then the name.

Every figure says where its data came from (:data:`SOURCE_KEY` in the PNG's text chunks,
the PDF's keywords): ``this machine``, ``committed evidence`` (with the label),
``this machine + committed evidence``, or ``none`` with the command that would fill it
(:func:`source`). :func:`read_source` reads it back; the run report
(``results/report/figures.csv``) lists it for every figure."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SOURCE_KEY = "Source"  # the PNG text chunk (and PDF keyword prefix) a figure's source is in
KINDS = ("this machine", "committed evidence", "this machine + committed evidence", "none")
FOLDER = re.compile(r"^(\d{4}-\d{2}-\d{2})-([a-z0-9]+)-([0-9a-f]{7,40})$")
# Device words of the folder names (evidence/README.md) as a legend names them.
DEVICES = {"h100": "H100", "h200": "H200", "h100x4": "4x H100", "h200x2": "2x H200",
           "xeon2": "2-vCPU Xeon", "epyc2": "2-vCPU EPYC", "xeon": "Xeon"}  # fmt: skip


@dataclass(frozen=True)
class Evidence:
    """One committed table: ``path`` inside ``evidence/<folder>/``."""

    path: Path
    folder: str
    date: str
    device: str
    commit: str

    @property
    def label(self) -> str:
        """The caption's words, e.g. ``H100, evidence/2026-11-27-h100-38782e0, 2026-11-27,
        commit 38782e0, not run on this machine``."""
        return (f"{self.device}, evidence/{self.folder}, {self.date}, commit {self.commit}, "
                "not run on this machine")  # fmt: skip

    @property
    def legend(self) -> str:
        """The legend's words, e.g. ``H100 evidence 38782e0``."""
        return f"{self.device} evidence {self.commit}"

    def frame(self):
        """The committed table (pandas), without the run's ``scale`` column."""
        import pandas as pd

        frame = pd.read_csv(self.path)
        return frame.drop(columns=["scale"], errors="ignore")


def describe(path) -> Evidence:
    """The :class:`Evidence` of a committed table, from the folder it lies in
    (``.../evidence/<date>-<device>-<commit>/...``)."""
    path = Path(path)
    for folder in path.parents:
        match = FOLDER.match(folder.name)
        if match and folder.parent.name == "evidence":
            date, device, commit = match.groups()
            return Evidence(path, folder.name, date, DEVICES.get(device, device.upper()), commit)
    raise ValueError(f"{path} is not inside an evidence/<date>-<device>-<commit>/ folder")


def _rows(path: Path) -> int:
    """Data rows of a CSV (lines after the header that are not blank)."""
    with open(path) as f:
        return sum(1 for line in f if line.strip()) - 1


@cache
def _commit_times(root: str) -> dict[str, int]:
    """Commit time (Unix seconds) of each evidence folder's commit, from git; empty
    where the checkout has no history."""
    names = [p.name for p in Path(root).iterdir() if FOLDER.match(p.name)]
    commits = sorted({FOLDER.match(n).group(3) for n in names})
    if not commits:
        return {}
    try:
        done = subprocess.run(["git", "-C", root, "show", "-s", "--format=%h %H %ct", *commits],
                              capture_output=True, text=True, timeout=30)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {}
    times = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            short, full, when = parts
            for commit in commits:
                if full.startswith(commit) or commit.startswith(short):
                    times[commit] = int(when)
    return times


def candidates(relative: str, root) -> list[Evidence]:
    """Every evidence folder under ``root`` holding ``relative`` with at least one row,
    newest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = []
    for folder in root.iterdir():
        path = folder / relative
        if FOLDER.match(folder.name) and path.is_file() and _rows(path) > 0:
            found.append(describe(path))
    times = _commit_times(str(root))
    found.sort(key=lambda e: (e.date, times.get(e.commit, 0), e.folder), reverse=True)
    return found


def find(relative: str, root) -> Evidence | None:
    """The newest evidence folder under ``root`` holding ``relative`` (a table's path
    inside the folder) with at least one row; None where none does."""
    found = candidates(relative, root)
    return found[0] if found else None


def source(local: bool, evidence=(), fill: str = "") -> str:
    """A figure's source: what ran here (``local``: it has rows from this machine) and
    the committed tables drawn beside (``evidence``); with neither, ``none`` and the
    command that would fill it (``fill``)."""
    evidence = [e for e in evidence if e is not None]
    labels = "; ".join(e.label for e in evidence)
    if local and evidence:
        return f"this machine + committed evidence: {labels}"
    if evidence:
        return f"committed evidence: {labels}"
    if local:
        return "this machine"
    return f"none: nothing measured here or in evidence/; {fill}".rstrip("; ")


def kind(text: str | None) -> str:
    """The kind (KINDS) of a source text; a figure that records none drew this
    machine's data (the studies that never needed an overlay)."""
    if not text:
        return "this machine"
    for k in sorted(KINDS, key=len, reverse=True):
        if text.startswith(k):
            return k
    raise ValueError(f"not a figure source: {text!r}")


def read_source(png) -> str | None:
    """The source a PNG figure recorded (None where it recorded none)."""
    from PIL import Image

    with Image.open(png) as image:
        return image.text.get(SOURCE_KEY)


REPORT_COLUMNS = ("study", "figure", "source", "detail", "committed", "blank_despite_evidence")


def report(figures):
    """The run report's rows (pandas), one a figure: ``figures`` holds (study, figure,
    PNG path, the newest committed table of its GPU rows or "") tuples; ``source`` is
    the kind its PNG recorded (KINDS: ``none`` where it drew nothing) and ``detail``
    the rest of the text; ``blank_despite_evidence`` marks a figure that drew nothing
    although a committed table of it exists (a fault: tests fail on it)."""
    import pandas as pd

    rows = []
    for study, figure, png, committed in figures:
        text = read_source(png)
        what = kind(text)
        detail = (text or "")[len(what) :].lstrip(": ")
        rows.append({"study": study, "figure": figure, "source": what, "detail": detail,
                     "committed": str(committed or ""),
                     "blank_despite_evidence": what == "none" and bool(committed)})  # fmt: skip
    return pd.DataFrame(rows, columns=list(REPORT_COLUMNS))


def report_markdown(frame) -> str:
    """The run report as Markdown: the count of each kind of source, then every figure."""
    counts = frame["source"].value_counts()
    lines = ["# Figures and where their data came from", "",
             "| source | figures |", "|---|---:|"]  # fmt: skip
    lines += [f"| {k} | {int(counts.get(k, 0))} |" for k in KINDS]
    lines += ["", "| study | figure | source | detail |", "|---|---|---|---|"]
    for r in frame.itertuples(index=False):
        flag = " **(blank although committed evidence exists)**" if r.blank_despite_evidence \
            else ""  # fmt: skip
        lines.append(f"| {r.study} | {r.figure} | {r.source}{flag} | {r.detail} |")
    return "\n".join(lines) + "\n"
