"""Moazeni (2013) chapter 6's CPU evidence beside the pipeline: the tuned comparison
over noise draws (tv_draws: the choice rule, the t interval, the paired difference, the
held-out draws) and Fig 53's phase split (tv_breakdown: the NumPy gradient timed step by
step equal to tv.gradient, tv.c's timed solver equal to the plain one)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.moazeni2013 import native, tv, tv_breakdown, tv_draws
from pfresample_studies.moazeni2013.tv_experiments import make_case

OURS, PEER = tv_draws.OURS, tv_draws.PEER


def _tuning(rows):
    return pd.DataFrame(rows)


def test_choose_takes_the_least_mean_not_the_least_single_draw():
    rows = [
        # lam 1 has the single best draw (0.01) but the worse mean (0.055 vs 0.04)
        {"method": OURS, "lam": 1.0, "eps": 0.01, "step": 0.003, "seed": 1, "tensor_rmse": 0.01},
        {"method": OURS, "lam": 1.0, "eps": 0.01, "step": 0.003, "seed": 2, "tensor_rmse": 0.10},
        {"method": OURS, "lam": 3.0, "eps": 0.01, "step": 0.003, "seed": 1, "tensor_rmse": 0.04},
        {"method": OURS, "lam": 3.0, "eps": 0.01, "step": 0.003, "seed": 2, "tensor_rmse": 0.04},
        {"method": PEER, "weight": 0.1, "seed": 1, "tensor_rmse": 0.05},
        {"method": PEER, "weight": 0.1, "seed": 2, "tensor_rmse": 0.05},
        {"method": PEER, "weight": 0.2, "seed": 1, "tensor_rmse": 0.03},
        {"method": PEER, "weight": 0.2, "seed": 2, "tensor_rmse": 0.06},
    ]
    chosen = tv_draws.choose(_tuning(rows))
    assert chosen[OURS] == {"lam": 3.0, "eps": 0.01, "step": 0.003}
    assert chosen[PEER] == {"weight": 0.2}  # mean 0.045 against 0.05


def test_choose_needs_both_methods():
    rows = [{"method": OURS, "lam": 1.0, "eps": 0.01, "step": 0.003, "tensor_rmse": 0.1}]
    with pytest.raises(ValueError, match="no tuning rows"):
        tv_draws.choose(_tuning(rows))


def test_t_interval_by_hand():
    # x = 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.302653, half-width 4.302653 / sqrt(3)
    mean, lo, hi = tv_draws.t_interval([1.0, 2.0, 3.0])
    half = 4.302652729749464 / np.sqrt(3)
    assert mean == 2.0
    assert lo == pytest.approx(2 - half, rel=1e-9) and hi == pytest.approx(2 + half, rel=1e-9)
    with pytest.raises(ValueError, match="two values"):
        tv_draws.t_interval([1.0])


def test_summarise_pairs_by_draw():
    # the peer is better by exactly 0.01 on every draw: the paired interval has zero width
    # while the unpaired spread between draws is wide
    seeds = [5, 6, 7, 8]
    base = [0.03, 0.06, 0.09, 0.05]
    rows = [
        {
            "method": OURS,
            "seed": s,
            "lam": 3.0,
            "eps": 0.01,
            "step": 0.003,
            "tensor_rmse": b + 0.01,
            "fa_error": b,
        }
        for s, b in zip(seeds, base, strict=True)
    ]
    rows += [{"method": PEER, "seed": s, "weight": 0.1, "tensor_rmse": b, "fa_error": b}
             for s, b in zip(seeds, base, strict=True)]  # fmt: skip
    summary = tv_draws.summarise(pd.DataFrame(rows)).set_index("method")
    diff = summary.loc["ours - peer (paired)"]
    assert diff["tensor_rmse"] == pytest.approx(0.01)
    assert diff["tensor_rmse_hi"] - diff["tensor_rmse_lo"] == pytest.approx(0, abs=1e-12)
    assert diff["tensor_rmse_ours_worse_draws"] == 4
    assert summary.loc[OURS, "tensor_rmse_hi"] - summary.loc[OURS, "tensor_rmse_lo"] > 0.05
    assert summary.loc[PEER, "params"] == "weight 0.1"


def test_run_rejects_overlapping_or_single_draws():
    with pytest.raises(ValueError, match="overlap"):
        tv_draws.run(8, [1, 2], [2, 3])
    with pytest.raises(ValueError, match="two draws"):
        tv_draws.run(8, [1], [2])


def test_run_end_to_end_on_a_small_phantom():
    pytest.importorskip("skimage")
    points = [(OURS, {"lam": lam, "eps": 0.01, "step": 0.003}) for lam in (1.0, 3.0)]
    points += [(PEER, {"weight": w}) for w in (0.05, 0.1)]
    tuning, evaluation, summary = tv_draws.run(8, [1, 2], [3, 4, 5], iterations=5,
                                               points=points)  # fmt: skip
    assert len(tuning) == 2 * len(points)
    assert sorted(set(evaluation["seed"])) == [3, 4, 5]  # only held-out draws scored
    assert len(evaluation) == 6 and len(summary) == 3
    chosen = tv_draws.choose(tuning)
    got = evaluation[evaluation["method"] == PEER]["weight"].unique()
    assert list(got) == [chosen[PEER]["weight"]]
    # each draw's scores are the methods' on that draw's phantom (re-derived here)
    case = make_case(8, 3, 12, 0.05)
    d = tv_draws._peer(case, chosen[PEER]["weight"])
    row = evaluation[(evaluation["method"] == PEER) & (evaluation["seed"] == 3)].iloc[0]
    assert row["tensor_rmse"] == pytest.approx(tv.tensor_rmse(d, case.truth), rel=1e-12)
    # distinct draws differ (a negative control on the seed reaching the noise)
    assert evaluation[evaluation["method"] == PEER]["tensor_rmse"].nunique() == 3


@pytest.mark.parametrize("variant", tv.VARIANTS)
def test_gradient_phases_is_tv_gradient(variant):
    case = make_case(8, 1, 12, 0.05)
    blocks = tv.variant_blocks(variant, 4)
    want = tv.gradient(case.L0, case.d_hat, 3.0, 0.01, **blocks)
    got, seconds = tv_breakdown.gradient_phases(case.L0, case.d_hat, 3.0, 0.01, **blocks)
    assert np.array_equal(got, want)
    assert set(seconds) == set(tv_breakdown.PHASES) and min(seconds.values()) >= 0
    # negative control: another lambda's gradient is not equal
    other = tv.gradient(case.L0, case.d_hat, 3.5, 0.01, **blocks)
    assert not np.array_equal(got, other)


def test_native_phases_solver_equals_the_plain_one():
    case = make_case(8, 1, 12, 0.05)
    L0, d_hat = case.L0.astype(np.float32), case.d_hat.astype(np.float32)
    kw = {"lam": 3.0, "eps": 0.01, "step": 0.003, "iterations": 4}
    want = native.tv_solve(L0, d_hat, **kw)
    got, phases = native.tv_solve_phases(L0, d_hat, **kw)
    assert np.array_equal(got, want)
    assert tuple(phases) == native.TV_PHASES and min(phases.values()) >= 0
    assert phases["TVnorm"] > 0 and phases["P"] > 0 and phases["Solver"] > 0
    fewer, _ = native.tv_solve_phases(L0, d_hat, **{**kw, "iterations": 3})
    assert not np.array_equal(fewer, want)  # negative control: the iterations count


def test_breakdown_rows_share_sums_to_one():
    table = tv_breakdown.run([8], [8], [4], iterations=1, repeats=3)
    assert set(table["source"]) == {"tv.c, 1 thread, float32", "numpy float64"}
    assert len(table) == len(tv_breakdown.PHASES) * (1 + 3)
    for _, part in table.groupby(["source", "variant", "tile", "size"]):
        assert part["share"].sum() == pytest.approx(1, rel=1e-12)
        assert (part["seconds_min"] <= part["seconds"]).all()
        assert (part["seconds"] <= part["seconds_max"]).all()
        assert part["iteration_seconds_min"].iloc[0] == pytest.approx(part["seconds_min"].sum())
