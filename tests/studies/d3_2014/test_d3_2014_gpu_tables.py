"""pfresample_studies.d3_2014.gpu_tables on a synthetic timing.csv whose answers are
known: the window-paired ratio against 160 TPB, Table 5's speed-up over the
same steps (the windows' mean, not their median), the TPB-independence flag,
§4.3's CPM, and Spearman's rho with its permutation p-value (a monotone
sequence must give rho = 1 and a small p; a negative control with no order
must not)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.d3_2014 import catalog
from pfresample_studies.d3_2014 import gpu_tables as tables

THREADS = (160, 520, 556, 592, 628, 736, 772, 1024)


def _timing(n=50000) -> pd.DataFrame:
    """Ours: windows 1, 2, 3, 4, 10 ms times (1 + TPB/1000) and one RMSE;
    the paper's: windows 5 ms times the same factor, RMSE rising with TPB."""
    rows = []
    for algorithm, base, rmse in (("ours", np.array([1.0, 2, 3, 4, 10]), None),
                                  ("paper", np.full(5, 5.0), 0.1)):  # fmt: skip
        for t in THREADS:
            w = base * (1 + t / 1000)
            rx = 0.3 if rmse is None else rmse + t / 1e4
            rows.append({
                "device": "test GPU", "algorithm": algorithm, "n": n, "threads": t,
                "window_last": 502, "ms_per_step_median": float(np.median(w)),
                "ms_per_step_min": w.min(), "ms_per_step_max": w.max(),
                "ms_per_step_repeats": " ".join(f"{v:.9g}" for v in w),
                "rmse_x": rx, "rmse_y": rx, "occupancy": 0.5, "kernel": "k",
            })  # fmt: skip
    return pd.DataFrame(rows)


def test_paired_ratio_and_speedup():
    timing = _timing()
    t6 = tables.table6(timing)
    row = t6[(t6["algorithm"] == "ours") & (t6["threads"] == 1024)].iloc[0]
    # every window scales by the same factor, so the paired ratios are all 2.024 / 1.16
    assert row["ratio_vs_160_min"] == pytest.approx(2.024 / 1.16)
    assert row["ratio_vs_160_max"] == pytest.approx(2.024 / 1.16)
    cpu = pd.DataFrame([{"filter": f, "n": 50000, "wall_ms_median": 40.0, "wall_ms_min": 32.0,
                         "wall_ms_max": 48.0, "cpu_ms_median": 20.0, "cpu": "test CPU"}
                        for f in ("systematic", "d3-table", "d3-loop")])  # fmt: skip
    t5 = tables.table5(timing, cpu)
    ours = t5[(t5["gpu_algorithm"] == "ours") & (t5["cpu_filter"] == "systematic")].iloc[0]
    gpu = 4.0 * 1.16  # the windows' mean (1+2+3+4+10)/5, not their median 3
    assert ours["gpu_ms_window"] == pytest.approx(gpu)
    assert ours["speedup_wall"] == pytest.approx(40 / gpu)
    assert (ours["speedup_wall_lo"], ours["speedup_wall_hi"]) == pytest.approx((32 / gpu, 48 / gpu))
    paper = t5[(t5["gpu_algorithm"] == "paper") & (t5["cpu_filter"] == "d3-loop")].iloc[0]
    printed = catalog.PUBLISHED_TABLE5[50000]
    assert paper["paper_speedup"] == pytest.approx(printed[1] / printed[2])


@pytest.mark.slow
def test_table7_flags_cpm_and_trend():
    rows, summary = tables.table7(_timing(), 50000)
    s = summary.set_index("algorithm")
    assert bool(s.loc["ours", "identical_across_tpb"])
    assert not bool(s.loc["paper", "identical_across_tpb"])
    # the paper's RMSE rises with TPB here: rho = 1, and no permutation reaches it often
    assert s.loc["paper", "spearman_rho_rmse_norm_vs_tpb"] == pytest.approx(1.0)
    assert s.loc["paper", "spearman_permutation_p"] < 0.01
    r = rows[(rows["algorithm"] == "paper") & (rows["threads"] == 556)].iloc[0]
    ref = rows[(rows["algorithm"] == "paper") & (rows["threads"] == 160)].iloc[0]
    expected = (ref["rmse_norm"] / r["rmse_norm"]) * (ref["ms_median"] / r["ms_median"])
    assert r["cpm_vs_160"] == pytest.approx(expected)
    assert r["paper_cpm_recomputed"] == pytest.approx(catalog.published_cpm(556))


def test_spearman_negative_control(monkeypatch):
    monkeypatch.setattr(tables, "PERMUTATIONS", 2000)
    rng = np.random.default_rng(1)
    x = np.arange(25.0)
    y = np.random.default_rng(7).permutation(25).astype(float)  # no order with x
    rho, p = tables.spearman(x, y, rng)
    assert abs(rho) < 0.5 and p > 0.01
    rho, p = tables.spearman(x, -x, rng)
    assert rho == pytest.approx(-1.0) and p < 0.01
    assert not math.isnan(rho)


def test_f_statistic_matches_the_hand_computed_anova():
    """Groups (1, 2, 3) and (4, 5, 6): between MS 13.5 / 1, within MS 4 / 4."""
    values = np.array([1.0, 2, 3, 4, 5, 6])
    groups = np.array([0, 0, 0, 1, 1, 1])
    assert tables.f_statistic(values, groups) == pytest.approx(13.5)


def _spread(shift: float) -> pd.DataFrame:
    """8 runs at each of 4 TPB: ours the same RMSE at every TPB of a run; the
    paper's with noise (fixed seed) plus ``shift`` times the TPB's index."""
    rng = np.random.default_rng(7)
    rows = []
    for t_index, t in enumerate((160, 556, 736, 1024)):
        for r in range(8):
            rows.append(
                {
                    "algorithm": "ours",
                    "n": 50000,
                    "threads": t,
                    "run": r,
                    "rmse_x": 0.3 + 0.01 * r,
                    "rmse_y": 0.3,
                    "ms_per_step_median": 0.07,
                }
            )
            rows.append({"algorithm": "paper", "n": 50000, "threads": t, "run": r,
                         "rmse_x": 0.3 + rng.normal(0, 0.01) + shift * t_index, "rmse_y": 0.3,
                         "ms_per_step_median": 2.7 + 0.001 * t})  # fmt: skip
    return pd.DataFrame(rows)


def test_spread_finds_a_tpb_effect_only_where_there_is_one():
    rows, summary = tables.spread_tables(_spread(shift=0.05))
    s = summary.set_index("algorithm")
    assert bool(s.loc["ours", "identical_across_tpb_per_run"])
    assert math.isnan(s.loc["ours", "f_tpb"])
    assert s.loc["paper", "f_permutation_p"] < 0.01  # a shift of 5 noise sds per TPB step
    assert set(rows["runs"]) == {8}
    # negative control: no shift, no effect found at the 1 % level
    _, null = tables.spread_tables(_spread(shift=0.0))
    assert null.set_index("algorithm").loc["paper", "f_permutation_p"] > 0.01


def test_components_pairs_each_with_joint_by_trajectory():
    cells = pd.DataFrame({
        "regime": ["ours"] * 6, "n": [1000] * 6, "trajectory": [0, 1, 2, 0, 1, 2],
        "filter": ["d3"] * 3 + ["d3-each"] * 3,
        "rmse_norm": [0.40, 0.41, 0.39, 0.30, 0.32, 0.28],
    })  # fmt: skip
    row = tables.components(cells).iloc[0]
    assert row["d_each_minus_joint"] == pytest.approx(-0.1)
    assert row["each_lower_in"] == 3 and row["trajectories"] == 3
    half = tables.regimes.t_quantile(0.995, 2) * np.std([-0.1, -0.09, -0.11], ddof=1) / np.sqrt(3)
    assert row["ci"] == pytest.approx(half)
