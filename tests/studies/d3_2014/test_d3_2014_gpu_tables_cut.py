"""pfresample_studies.d3_2014.gpu_tables on a GPU run that a deadline cut: the tables still
come out, and a cell the run did not reach is absent (NaN, or no row), never a crash and
never a number from another cell. The real cut run is the H200 run of 2026-11-28
(evidence/2026-11-28-h200-5a52142/gpu_targets/, `bench/device/gpu_targets.sh`): its timing
stopped after the paper's algorithm at N = 50,000 and TPB 160 and 520."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.d3_2014 import gpu_tables as tables
from pfresample_studies.pipeline import evidence

REPO = Path(__file__).resolve().parents[3]
CUT_RUN = REPO / "evidence" / "2026-11-28-h200-5a52142" / "gpu_targets" / "d3_2014" / "gpu_runs"


@pytest.fixture
def few_permutations(monkeypatch):
    monkeypatch.setattr(tables, "PERMUTATIONS", 200)


def _committed(relative):
    found = evidence.find(relative, REPO / "evidence")
    assert found is not None, relative
    return pd.read_csv(found.path)


def test_the_cut_h200_run_derives_every_table(few_permutations):
    """Every table of the real cut run; the paper's N = 50,000 lacks 736 and 1024 TPB, so
    its Table 6 summary has NaN there, while every N the run finished keeps its numbers."""
    timing = pd.read_csv(CUT_RUN / "timing.csv")
    paper = timing[(timing["algorithm"] == "paper") & (timing["n"] == 50000)]
    assert sorted(paper["threads"]) == [160, 520]  # the cut this test is about
    frames = tables.tables(
        CUT_RUN,
        _committed(tables.CPU_BASELINES),
        _committed(tables.COMPONENT_CELLS),
        "committed CPU",
    )
    assert sorted(frames) == sorted(tables.TABLES)
    s = frames["table6_summary"].set_index(["algorithm", "n"])
    cut = s.loc[("paper", 50000)]
    for column in ("ratio_736_vs_160", "ratio_736_vs_160_min", "ratio_1024_vs_160",
                   "paper_ratio_736_vs_160"):  # fmt: skip
        assert math.isnan(cut[column]), column
    ms_160 = float(paper.set_index("threads").loc[160, "ms_per_step_median"])
    assert cut["ms_160"] == pytest.approx(ms_160)
    whole = s.loc[("paper", 20000)]
    assert not math.isnan(whole["ratio_736_vs_160"]) and not math.isnan(whole["ratio_1024_vs_160"])
    t7 = frames["table7_summary"].set_index("algorithm")
    assert t7.loc["paper", "threads_run"] == 2
    # 520 is the only CPM TPB the paper's algorithm reached: the best of those run, not 592
    assert t7.loc["paper", "cpm_best_of_520_628"] == 520
    assert len(tables.not_run(timing)) > 0


def _grid() -> pd.DataFrame:
    """Both algorithms at N = 50,000 and the first pass's TPB (160, 520, 556, 628, 736, 808,
    1024): windows of 1 ... 5 ms times (1 + TPB / 1000), RMSE rising with TPB."""
    rows = []
    for algorithm in ("ours", "paper"):
        for t in (160, 520, 556, 628, 736, 808, 1024):
            w = np.arange(1.0, 6.0) * (1 + t / 1000)
            rows.append({
                "device": "test GPU", "algorithm": algorithm, "n": 50000, "threads": t,
                "window_last": 502, "ms_per_step_median": float(np.median(w)),
                "ms_per_step_min": w.min(), "ms_per_step_max": w.max(),
                "ms_per_step_repeats": " ".join(f"{v:.9g}" for v in w),
                "rmse_x": 0.3 + t / 1e4, "rmse_y": 0.3, "occupancy": 0.5, "kernel": "k",
            })  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("dropped", [(736,), (1024,), (160,), (736, 808, 1024)])
def test_summary_has_nan_where_a_cell_was_not_run(dropped):
    timing = _grid()
    cut = timing[~((timing["algorithm"] == "paper") & timing["threads"].isin(dropped))]
    s = tables.table6_summary(tables.table6(cut)).set_index("algorithm")
    full = tables.table6_summary(tables.table6(timing)).set_index("algorithm")
    pd.testing.assert_series_equal(s.loc["ours"], full.loc["ours"])  # the uncut algorithm
    for t, column in ((736, "ratio_736_vs_160"), (1024, "ratio_1024_vs_160")):
        if t in dropped or 160 in dropped:
            assert pd.isna(s.loc["paper", column]), (dropped, column)
        else:
            assert s.loc["paper", column] == pytest.approx(full.loc["paper", column])
    if 160 in dropped:
        assert pd.isna(s.loc["paper", "ms_160"]) and pd.isna(s.loc["paper", "overlaps_fastest_160"])


@pytest.mark.parametrize("dropped", [(160,), (556, 628), (520, 556, 628)])
def test_table7_cpm_absent_without_its_cells(dropped, few_permutations):
    timing = _grid()
    cut = timing[~((timing["algorithm"] == "paper") & timing["threads"].isin(dropped))]
    rows, summary = tables.table7(cut, 50000)
    s = summary.set_index("algorithm").loc["paper"]
    cpm = rows[rows["algorithm"] == "paper"].set_index("threads")["cpm_vs_160"]
    if 160 in dropped:
        assert cpm.isna().all() and pd.isna(s["rmse_norm_160"])
        assert pd.isna(s["cpm_520_628_min"]) and pd.isna(s["cpm_best_of_520_628"])
        return
    left = [t for t in (520, 556, 628) if t not in dropped]
    if not left:
        assert pd.isna(s["cpm_520_628_max"]) and pd.isna(s["cpm_best_of_520_628"])
        return
    assert s["cpm_520_628_max"] == pytest.approx(cpm.loc[left].max())
    assert s["cpm_best_of_520_628"] == int(cpm.loc[left].idxmax())


def test_table7_360s_without_its_160_cell():
    timing = _grid()
    full = pd.DataFrame([
        {"algorithm": "ours", "n": 50000, "threads": t, "steps": 36000, "rmse_x": 1.0,
         "rmse_y": 1.0, "bias_x": 0.0, "bias_y": 0.0} for t in (520, 556)
    ])  # fmt: skip
    rows = tables.table7_full(full, timing)
    assert rows["cpm_vs_160"].isna().all() and not rows["ms_clean"].isna().any()


def test_spread_of_one_run_a_tpb_has_no_f():
    """A spread cut after its first run: one run a TPB, no within-group spread, so no F and
    no p-value (not F = inf with p = 1 / (permutations + 1))."""
    rows = [{"algorithm": "paper", "n": 50000, "threads": t, "run": 0, "rmse_x": 0.3 + t / 1e4,
             "rmse_y": 0.3, "ms_per_step_median": 2.7} for t in (160, 556, 736, 1024)]  # fmt: skip
    _, summary = tables.spread_tables(pd.DataFrame(rows))
    assert math.isnan(summary.iloc[0]["f_tpb"]) and math.isnan(summary.iloc[0]["f_permutation_p"])


def test_cpm_best_names_its_tpb_where_592_was_not_run(few_permutations):
    """The first pass runs 520, 556 and 628 of the CPM's 520 ... 628, not 592: the best is
    named by its TPB (628 here, the fastest by far), not by its place among those run."""
    timing = _grid()
    fast = (timing["algorithm"] == "paper") & (timing["threads"] == 628)
    timing.loc[fast, "ms_per_step_median"] = 0.01
    _, summary = tables.table7(timing, 50000)
    assert summary.set_index("algorithm").loc["paper", "cpm_best_of_520_628"] == 628
