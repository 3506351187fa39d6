"""Moazeni (2013): the speed-up tables (issue 62's ratios 1 and 2), one row a
configuration: the GPU's time over the document's baseline (``over_document``, as
the thesis measures it: one C thread) and over the best CPU code on every core
(``over_best_cpu``, the headline), with where each side came from.

The GPU's rows are this run's where a GPU ran here, else a committed evidence folder's
(``gpu_source`` names it); ``one_host`` is True only where the GPU and both CPU sides
ran on this machine in this run (their cells record one host name). Where it is False
the ratio sets this machine's CPU against a GPU run on another host: the Markdown twin
says so in its caption, and the headline stays the committed one-host run
(docs/moazeni2013.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..pipeline import speedups
from ..pipeline.tables import markdown_table

COLUMNS = ("gpu_s", "gpu_source", "doc_cpu_s", "best_cpu_s", "best_cpu_code",
           "best_cpu_threads", "cpu", "over_document", "over_best_cpu", "one_host")  # fmt: skip
THIS_RUN = speedups.THIS_RUN


def evidence_source(found) -> str:
    """``gpu_source`` of rows from a committed table (``pipeline.evidence.Evidence``)."""
    return f"evidence/{found.folder} ({found.device}, {found.date})"


def same_host(*metas: Mapping) -> bool:
    """Whether every cell's metadata names one host (False where one names none)."""
    hosts = {m.get("host") for m in metas}
    return len(hosts) == 1 and None not in hosts and "" not in hosts


def join(keys: Sequence[str], gpu: pd.DataFrame, doc: pd.DataFrame, best: pd.DataFrame, *,
         gpu_source: str, best_code: str, cpu: str, one_host: bool,
         extra: Mapping | None = None) -> pd.DataFrame:  # fmt: skip
    """The table: ``gpu`` (``keys`` and ``gpu_s``, any other ``gpu_*`` columns), ``doc``
    (``keys``, ``doc_cpu_s``) and ``best`` (``keys``, ``best_cpu_s``,
    ``best_cpu_threads``) joined on ``keys`` where all three have the configuration;
    the two ratios from the table's own columns. ``extra``: constant columns after."""
    keys = list(keys)
    frame = gpu.merge(doc, on=keys).merge(best, on=keys)
    frame = frame.sort_values(keys).reset_index(drop=True)
    frame["gpu_source"] = gpu_source
    frame["best_cpu_code"] = best_code
    frame["cpu"] = cpu
    frame["over_document"] = frame["doc_cpu_s"] / frame["gpu_s"]
    frame["over_best_cpu"] = frame["best_cpu_s"] / frame["gpu_s"]
    frame["one_host"] = bool(one_host) and gpu_source == THIS_RUN
    for key, value in (extra or {}).items():
        frame[key] = value
    rest = [c for c in frame.columns if c not in (*keys, *COLUMNS)]
    return frame[[*keys, *COLUMNS, *rest]]


def empty(keys: Sequence[str], extra: Sequence[str] = ()) -> pd.DataFrame:
    return pd.DataFrame(columns=[*keys, *COLUMNS, *extra])


def _number(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else f"{value:.4g}"
    return str(value)


def markdown(frame: pd.DataFrame, title: str, keys: Sequence[str], baseline: str,
             headline: str, notes: Sequence[str] = (), shown: Sequence[str] = ()
             ) -> str:  # fmt: skip
    """The table's Markdown twin: ``title``, a caption naming both baselines
    (``baseline``: the document's, in words) and, where a row is not from one host,
    that its ratio is not the headline (``headline``: where the one-host run is);
    ``notes``: a chapter's own paragraphs after it; ``shown``: columns of the table's
    beyond the convention's to show too."""
    lines = [f"# {title}", ""]
    lines.append(f"`over_document`: the GPU's time over the document's baseline ({baseline}); "
                 "`over_best_cpu`: over the best CPU code we can write, on the threads named "
                 "(`best_cpu_threads`), the headline ratio where `one_host` is True.")  # fmt: skip
    lines.append("")
    if frame.empty:
        lines.append("No configuration has all three sides here (the GPU's rows come from this "
                     "run or committed evidence at the same sizes).")  # fmt: skip
        return "\n".join(lines) + "\n"
    if not frame["one_host"].all():
        sources = ", ".join(sorted(set(frame.loc[~frame["one_host"], "gpu_source"])))
        lines.append(
            f"**Not one host.** The GPU's times here come from {sources}, a GPU run on "
            "another host, not this run: each ratio sets this machine's CPU "
            f"({frame['cpu'].iloc[0]}) against that committed GPU run, so it is not "
            f"the headline. The headline is the committed one-host run ({headline})."
        )
        lines.append("")
    for note in notes:
        lines += [note, ""]
    header = [*keys, *COLUMNS, *shown]
    rows = [[_number(v) for v in r] for r in frame[header].itertuples(index=False)]
    lines += markdown_table(header, rows)
    return "\n".join(lines) + "\n"
