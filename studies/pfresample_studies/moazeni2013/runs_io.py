"""What the study's one-host experiments (chapter 3's real instances, Fig 63 end to end,
chapter 4's fair peers) share: their CSV rows written as they go, the host's description
every row carries, and the GPU if there is one."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

from pfresample.timing import cpu_name
from pfresample_studies.pipeline.jobs import git_revision
from pfresample_studies.pipeline.tables import Rows, write_rows  # noqa: F401 -- the experiments take them from here

REPO = Path(__file__).resolve().parents[3]


def host() -> dict:
    """CPU model, cores, commit (``pipeline.jobs.git_revision``: $PFRESAMPLE_COMMIT where
    set), date: the columns every row carries."""
    return {"cpu": cpu_name(), "cores": os.cpu_count(),
            "commit": (git_revision(REPO) or "unknown")[:7],
            "date": datetime.date.today().isoformat()}  # fmt: skip
