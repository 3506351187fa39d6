"""What every study's speed-up table says about where its sides ran: ``THIS_RUN`` is a
row's ``gpu_source`` when this run's GPU cells measured it, and :func:`source_sentence` is
the caption's last sentence (no GPU time; one host; or, plainly, not one host and so not the
headline, which is the committed one-host run's columns named by ``evidence_columns``)."""

from __future__ import annotations

import pandas as pd

THIS_RUN = "this run"


def source_sentence(frame: pd.DataFrame, evidence_columns: str) -> str:
    """The caption's sentence on the GPU side's source (``gpu_source``, ``gpu_device`` and
    ``one_host`` columns of ``frame``), beginning with a space."""
    sources = sorted({s for s in frame["gpu_source"].dropna() if s})
    if not sources:
        return " No GPU time: no GPU ran here and evidence/ holds no committed run."
    if frame["one_host"].all():
        return (f" GPU: {', '.join(sorted(set(frame['gpu_device'])))} in this run, on "
                "the same host: every ratio is a one-host figure.")  # fmt: skip
    committed = [s for s in sources if s != THIS_RUN]
    where = f"committed evidence ({'; '.join(committed)})" if committed else "this run"
    return (
        f" **Not a one-host ratio.** The GPU times are {where}; the CPU times are this "
        "machine's. Ratios 1 and 2 here set this machine's CPU against a GPU run on another "
        "host: they are not the headline. The headline is the committed one-host run (its "
        f"best CPU code on all its cores against its own GPU): {evidence_columns}."
    )
