"""peers_tables: a fair peers run read cell by cell (the figures docs/moazeni2013.md
quotes), on planted cells whose answers are known, and the committed run's derived table
equal to what the module writes from its peers.csv."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import peers_tables as pt

ROOT = Path(__file__).resolve().parents[3]
RUN = ROOT / "evidence/2026-11-28-h200-c74151c/ch4_fair"


def planted(times: dict[str, tuple[float, float, float]], **cell) -> pd.DataFrame:
    """One cell: structure -> (median, lo, hi) in µs."""
    base = {"set": "thesis", "distribution": "normal", "batch": 4096, "mix": 33, "absent": 0.0}
    base.update(cell)
    return pd.DataFrame(
        [
            {
                **base,
                "structure": name,
                "ok": True,
                "seconds": m * 1e-6,
                "seconds_lo": lo * 1e-6,
                "seconds_hi": hi * 1e-6,
            }  # fmt: skip
            for name, (m, lo, hi) in times.items()
        ]
    )


TIMES = {
    "GPU_PH dek lsb": (30.0, 29.0, 31.0),
    "GPU_PH dek msb": (10.0, 9.0, 11.0),
    "GPU_PH mix": (12.0, 10.5, 13.0),
    "cuco static_set": (20.0, 19.0, 21.0),
    "cuco static_map": (25.0, 24.0, 26.0),
    "cuco dynamic_map": (60.0, 50.0, 70.0),
    "SlabHash": (15.0, 14.0, 16.0),
}


def test_a_planted_cell_reads_as_planted():
    row = pt.cells(planted(TIMES)).iloc[0]
    assert (row.fastest, row.second, row.ours, row.peer) == ("dek_msb", "mix", "dek_msb", "slab")
    assert not row.fastest_separated  # 11 against 10.5: the intervals overlap
    assert row.ours_over_peer == pytest.approx(1.5)
    assert row.ours_over_set == pytest.approx(2.0)
    assert row.msb_over_lsb == pytest.approx(3.0)
    assert (row.ours_vs_peer, row.ours_vs_set, row.msb_vs_mix) == ("faster", "faster", "overlap")
    assert row.static_set_lo_us == pytest.approx(19.0)


def test_a_separated_win_and_a_slower_side_are_seen():
    times = dict(TIMES, **{"GPU_PH mix": (14.0, 12.0, 14.5), "SlabHash": (8.0, 7.0, 8.5)})
    row = pt.cells(planted(times)).iloc[0]
    assert (row.fastest, row.fastest_separated) == ("slab", True)
    assert row.ours_vs_peer == "slower"


def test_a_missing_structure_or_a_failed_check_is_refused():
    frame = planted(TIMES)
    with pytest.raises(ValueError, match="missing"):
        pt.cells(frame[frame.structure != "SlabHash"])
    bad = frame.copy()
    bad.loc[0, "ok"] = False
    with pytest.raises(ValueError, match="failed"):
        pt.cells(bad)
    with pytest.raises(ValueError, match="not known"):
        pt.cells(frame.assign(structure=frame.structure.replace("SlabHash", "WarpCore")))


def test_the_committed_table_is_what_the_module_writes():
    written = pd.read_csv(RUN / "peers_cells.csv")
    again = pt.cells(pd.read_csv(RUN / "peers.csv"))
    assert list(written.columns) == list(again.columns)
    assert len(written) == len(again) == 36
    for column in written.columns:
        if written[column].dtype.kind == "f":
            assert written[column].to_numpy() == pytest.approx(again[column].to_numpy(), rel=1e-5)
        else:
            assert (written[column].astype(str) == again[column].astype(str)).all(), column
