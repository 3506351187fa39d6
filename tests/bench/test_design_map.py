"""bench/design_map.py's aggregation on tiny hand-made runs: the variance of
the log-likelihood estimate, the mean of Z^/Z and its standard error, the
paired differences from Systematic, the order-statistic interval of the
median, the bot's position RMSE; and one tiny end-to-end run."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "design_map.py"


@pytest.fixture(scope="module")
def dm():
    spec = importlib.util.spec_from_file_location("design_map", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LL = {"systematic": [-10.0, -11.0, -9.0, -10.5], "metropolis": [-10.0, -12.0, -8.0, -11.0]}
RMSE = {"systematic": [1.0, 2.0, 3.0, 4.0], "metropolis": [1.5, 2.0, 3.5, 5.0]}
EXACT = -10.0


def rows():
    out = []
    for method in LL:
        for seed in (3, 1, 0, 2):  # out of order: the summary matches runs by seed
            out.append({
                "model": "lg", "n": "8", "method": method, "seed": str(seed), "steps": "5",
                "rmse": RMSE[method][seed], "rmse_exact": 0.5 * RMSE[method][seed],
                "log_likelihood": LL[method][seed], "exact_log_likelihood": EXACT,
                "ess_mean": 4.0, "step_seconds": 1e-3 * (seed + 1),
                "resample_seconds": 1e-4 * (seed + 1),
            })  # fmt: skip
    return out


def test_summary_by_hand(dm):
    cells = {r["method"]: r for r in dm.summarise(rows())}
    met, sys_ = cells["metropolis"], cells["systematic"]
    # Var log Z^ with divisor R - 1: metropolis's mean is -10.25, squares 0.0625 + 3.0625
    # + 5.0625 + 0.5625 = 8.75, over 3.
    assert met["var_ll"] == pytest.approx(8.75 / 3, rel=1e-12)
    # systematic's mean -10.125: 0.015625 + 0.765625 + 1.265625 + 0.140625 = 2.1875, over 3.
    assert sys_["var_ll"] == pytest.approx(2.1875 / 3, rel=1e-12)
    assert met["var_ll_ratio_vs_systematic"] == pytest.approx(8.75 / 2.1875, rel=1e-12)
    # Z^/Z = exp(ll + 10): 1, e^-2, e^2, e^-1; its mean and sd / sqrt(4).
    ratio = [1.0, math.exp(-2), math.exp(2), math.exp(-1)]
    mean = sum(ratio) / 4
    sd = math.sqrt(sum((r - mean) ** 2 for r in ratio) / 3)
    assert met["z_ratio_mean"] == pytest.approx(mean, rel=1e-12)
    assert met["z_ratio_se"] == pytest.approx(sd / 2, rel=1e-12)
    # RMSE mean 3.0; paired differences from systematic 0.5, 0, 0.5, 1 -> 0.5.
    assert met["rmse"] == pytest.approx(3.0)
    assert met["rmse_exact"] == pytest.approx(1.5)
    assert met["rmse_diff_vs_systematic"] == pytest.approx(0.5)
    # t_{0.975, 3} = 3.182; the differences' sd is sqrt(0.5 / 3).
    half = 3.182446 * math.sqrt(0.5 / 3) / 2
    assert met["rmse_diff_hi"] - 0.5 == pytest.approx(half, rel=1e-4)
    assert "rmse_diff_vs_systematic" not in sys_  # no pair with itself
    assert met["var_ll_lo"] <= met["var_ll"] <= met["var_ll_hi"]
    assert met["step_ms"] == pytest.approx(2.5) and met["resample_ms"] == pytest.approx(0.25)
    assert met["runs"] == 4 and met["ess_mean"] == 4.0


def test_unpaired_cell_has_no_paired_columns(dm):
    """A cell whose seeds differ from Systematic's gets no paired column."""
    rs = [r for r in rows() if not (r["method"] == "systematic" and r["seed"] == "3")]
    met = next(r for r in dm.summarise(rs) if r["method"] == "metropolis")
    assert "rmse_diff_vs_systematic" not in met and "var_ll_ratio_vs_systematic" not in met


def test_median_interval_order_statistics(dm):
    """R = 24: P(Bin(24, 1/2) <= 6) = 0.0113 and <= 7 is 0.0320, so the 95 %
    interval is (x_(7), x_(18)), coverage 1 - 2 * 0.0113; R = 5 covers at most
    1 - 2 / 32 = 0.9375 < 0.95: no interval."""
    x = np.arange(24.0)[::-1]
    med, lo, hi = dm.median_interval(x)
    assert (med, lo, hi) == (11.5, 6.0, 17.0)
    assert sum(math.comb(24, k) for k in range(7)) / 2**24 == pytest.approx(0.01133, abs=1e-5)
    med, lo, hi = dm.median_interval([3.0, 1.0, 2.0, 5.0, 4.0])
    assert med == 3.0 and math.isnan(lo) and math.isnan(hi)


def test_bootstrap_interval_near_the_chi_square_one_for_normal_data(dm):
    """For 200 normal draws of variance 4 the bootstrap interval of the
    variance lies near the chi-square one (4 (R - 1) / chi2 quantiles,
    about [3.3, 4.9] for this sample's 4.0): a loose check of its scale."""
    x = np.random.default_rng(0).normal(0, 2, 200)
    lo, hi = dm.bootstrap_variance(x)
    v = x.var(ddof=1)
    assert lo < v < hi
    assert 0.75 * v < lo < 0.9 * v and 1.1 * v < hi < 1.3 * v


def test_bot_rmse_is_the_position_error(dm):
    est = np.zeros((2, 4))
    truth = np.array([[3.0, 100.0, 4.0, 100.0], [0.0, -50.0, 0.0, 7.0]])
    # position errors 5 and 0: sqrt((25 + 0) / 2); the velocities do not count.
    assert dm.rmse("bot", est, truth) == pytest.approx(math.sqrt(12.5))
    assert dm.rmse("growth", np.zeros(2), np.array([3.0, 4.0])) == pytest.approx(math.sqrt(12.5))


def test_tiny_end_to_end(dm, tmp_path):
    """Three runs of two resamplers at N = 64 on the linear-Gaussian model:
    runs.csv as written, the summary's variance from it, and the record's
    exact log-likelihood the Kalman filter's."""
    dm.measure(tmp_path, [64], 3, ["lg"], ["systematic", "cellular"])
    with open(tmp_path / "runs.csv", newline="") as f:
        runs = list(csv.DictReader(f))
    assert [(r["method"], r["seed"]) for r in runs[:4]] == [
        ("systematic", "0"), ("cellular", "0"), ("systematic", "1"), ("cellular", "1")]  # fmt: skip
    summary = dm.summarise(runs)
    assert [(r["method"], r["runs"]) for r in summary] == [("systematic", 3), ("cellular", 3)]
    ll = np.array([float(r["log_likelihood"]) for r in runs if r["method"] == "cellular"])
    assert summary[1]["var_ll"] == pytest.approx(ll.var(ddof=1), rel=1e-12)
    model, _, y, _, exact = dm.trajectory("lg")
    assert float(runs[0]["exact_log_likelihood"]) == pytest.approx(model.kalman(y)[2])
    assert exact == pytest.approx(model.kalman(y)[2])
