"""What the study's one-host experiments (chapter 3's real instances, Fig 63 end to end,
chapter 4's fair peers) share: their CSV rows written as they go, the host's description
every row carries, and the GPU if there is one."""

from __future__ import annotations

import csv
import datetime
import os
from pathlib import Path

from pfresample.timing import cpu_name
from pfresample_studies.pipeline.jobs import git_revision

REPO = Path(__file__).resolve().parents[3]


def write_rows(path: Path, rows: list[dict], fields=None) -> None:
    """``rows`` as a CSV file at ``path`` (its folder made), columns ``fields`` (default:
    the first row's keys; keys not among them are left out)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields or list(rows[0]), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


class Rows:
    """A CSV written a row at a time (the header once, each row appended and closed), so a
    killed run keeps what it measured."""

    def __init__(self, path: Path, fields: list[str]):
        self.path, self.fields, self.count = Path(path), list(fields), 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "w", newline="") as f:
            csv.DictWriter(f, fieldnames=self.fields).writeheader()

    def add(self, row: dict) -> None:
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=self.fields, extrasaction="ignore").writerow(row)
        self.count += 1


def host() -> dict:
    """CPU model, cores, commit (``pipeline.jobs.git_revision``: $PFRESAMPLE_COMMIT where
    set), date: the columns every row carries."""
    return {"cpu": cpu_name(), "cores": os.cpu_count(),
            "commit": (git_revision(REPO) or "unknown")[:7],
            "date": datetime.date.today().isoformat()}  # fmt: skip
