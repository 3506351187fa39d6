"""The committed-evidence overlay (pfresample_studies.pipeline.evidence): the newest folder
holding a table, its label, every figure's recorded source, and the run report that
flags a figure left blank although a committed table of it exists."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.figure import Figure

from pfresample_studies.pipeline import evidence, plots

REPO = Path(__file__).resolve().parents[2]


def table(root: Path, folder: str, rows: int, name="ch4_pipeline/tables/fig19.csv") -> Path:
    path = root / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("variance,speedup\n" + "".join(f"0.{i},{i}\n" for i in range(rows)))
    return path


def test_the_newest_folder_with_rows_is_found(tmp_path):
    root = tmp_path / "evidence"
    table(root, "2026-11-25-h200-aaaaaaa", 3)
    newest = table(root, "2026-11-27-h100-bbbbbbb", 2)
    table(root, "2026-11-28-h100-ccccccc", 0)  # a header alone: no rows
    table(root, "2026-11-29-xeon2-ddddddd", 2, "other/fig19.csv")  # another path
    found = evidence.find("ch4_pipeline/tables/fig19.csv", root)
    assert found.path == newest
    assert (found.device, found.date, found.commit) == ("H100", "2026-11-27", "bbbbbbb")
    assert found.label == ("H100, evidence/2026-11-27-h100-bbbbbbb, 2026-11-27, commit bbbbbbb, "
                           "not run on this machine")  # fmt: skip
    assert len(found.frame()) == 2
    assert evidence.find("ch4_pipeline/tables/fig20.csv", root) is None
    assert evidence.find("x.csv", tmp_path / "nowhere") is None


def test_this_checkouts_chapter_4_tables_come_from_the_newest_run():
    """Four H100 runs of chapter 4 on 2026-11-27 and the H200's full grid of
    2026-11-28 (both byte orders, the CPU sweep and the applications): the
    newest is drawn."""
    found = evidence.find("ch4_pipeline/tables/fig19.csv", REPO / "evidence")
    if not (REPO / ".git").exists():
        pytest.skip("no git history: the folders are ordered by date and name alone")
    assert found.folder == "2026-11-28-h200-5a52142"


def test_sources_and_their_kinds():
    e = evidence.describe(REPO / "evidence/2026-11-27-h100-9421e29/ch3_pipeline/tables/fig12.csv")
    assert evidence.kind(evidence.source(True)) == "this machine"
    assert evidence.kind(evidence.source(False, [e])) == "committed evidence"
    both = evidence.source(True, [e])
    assert evidence.kind(both) == "this machine + committed evidence" and e.label in both
    blank = evidence.source(False, [None], "run `snakemake x` on a GPU")
    assert evidence.kind(blank) == "none" and "snakemake x" in blank
    assert evidence.kind(None) == "this machine"  # a figure that records none


def test_the_report_flags_a_blank_figure_where_evidence_exists(tmp_path):
    """The negative control of the quick-grid test: a figure that drew nothing although
    a committed table of it exists is flagged; one with nothing anywhere is not."""
    committed = table(tmp_path / "evidence", "2026-11-27-h100-bbbbbbb", 2)
    pngs = {}
    for name, text in (("a", evidence.source(False, [], "fill")),
                       ("b", evidence.source(False, [], "fill")),
                       ("c", evidence.source(False, [evidence.describe(committed)])),
                       ("d", None)):  # fmt: skip
        pngs[name] = tmp_path / f"{name}.png"
        plots.save(Figure(), [pngs[name], tmp_path / f"{name}.pdf"], title=name, source=text)
        assert evidence.read_source(pngs[name]) == text
    held = {"a": committed, "b": "", "c": committed, "d": ""}
    frame = evidence.report([("s", name, pngs[name], held[name]) for name in "abcd"])
    assert frame["source"].tolist() == ["none", "none", "committed evidence", "this machine"]
    assert frame["blank_despite_evidence"].tolist() == [True, False, False, False]
    text = evidence.report_markdown(frame)
    assert "blank although committed evidence exists" in text and "| none | 2 |" in text
