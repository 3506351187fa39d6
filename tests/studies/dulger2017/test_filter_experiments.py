"""Filter cells and their tables (studies/dulger2017: filter_experiments, filter_tables):
the seeds, the RMSE of a run, a small cell end to end, and the aggregation and 99% CI
formula against a hand computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pfresample.constants import CONFIDENCE_Z
from pfresample.filters import SIR_OPTIONS, rmse, run_filter, run_filters
from pfresample.models import GrowthModel, RadarModel
from pfresample_studies.dulger2017 import filter_experiments as fe
from pfresample_studies.dulger2017 import filter_tables as ft
from pfresample_studies.dulger2017.experiments import Variant

GROWTH = {"model": "growth", "steps": 100}
SETTINGS = fe.FilterSettings(runs=2, seed=7, backend="cpu")


def test_confidence_z_is_the_99_percent_quantile():
    assert CONFIDENCE_Z == pytest.approx(2.5758293035489, abs=1e-12)


def test_runs_half_width_by_hand():
    # J = 2 trajectories x R = 3 runs.
    values = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 9.0]])
    # Sample variances (divisor R - 1): row 0: ((1-2)^2 + 0 + (3-2)^2) / 2 = 1;
    # row 1: mean 5, ((2-5)^2 + (4-5)^2 + (9-5)^2) / 2 = 26 / 2 = 13.
    # Mean of the per-trajectory means (2 and 5) = 3.5, its variance
    # (1 + 13) / 3 / 2^2 = 7/6, half-width z * sqrt(14 / 3) / 2.
    assert ft.mean_of_means(values) == 3.5
    assert ft.runs_half_width(values) == pytest.approx(CONFIDENCE_Z * math.sqrt(14 / 3) / 2)
    assert ft.runs_half_width(values, z=1.0) == pytest.approx(math.sqrt(7 / 6))
    assert math.isnan(ft.runs_half_width(values[:, :1]))  # one run: no spread to estimate
    with pytest.raises(ValueError, match="trajectories, runs"):
        ft.runs_half_width(values.ravel())


def test_half_width_matches_a_simulation():
    """The formula is the standard error of the mean of the means when the
    trajectories are fixed and the runs random."""
    rng = np.random.default_rng(0)
    J, R = 4, 10
    centres, spreads = np.array([1.0, 3.0, 5.0, 7.0]), np.array([0.5, 1.0, 2.0, 0.1])
    means = [
        ft.mean_of_means(centres[:, None] + spreads[:, None] * rng.standard_normal((J, R)))
        for _ in range(4000)
    ]
    sd = math.sqrt((spreads**2).sum() / R) / J
    assert np.std(means) == pytest.approx(sd, rel=0.05)


def _fake_cell(name="metropolis", n=64, J=2, R=3, seed=0):
    rng = np.random.default_rng(seed)
    stages = rng.uniform(0.001, 0.01, (J, R, 4))
    arrays = {
        "rmse": rng.uniform(4, 5, (J, R)),
        "stage_seconds": stages,
        "total_seconds": stages.sum(axis=2),
        "wall_seconds": stages.sum(axis=2) * 1.01,
        "B": np.full((J, R, 5), 12, dtype=np.int32),
    }
    meta = {
        "model": "growth",
        "variant": Variant(name, name.split("-ss")[0]).as_dict(),
        "n": n,
        "steps": 5,
        "backend": "cpu",
        "device": "test CPU",
    }
    return arrays, meta


def test_cell_row_shares_and_means():
    arrays, meta = _fake_cell()
    row = ft.cell_row(arrays, meta)
    shares = [row[f"stage{s}_pct"] for s in range(1, 5)]
    assert sum(shares) == pytest.approx(100.0, abs=1e-9)
    stages = arrays["stage_seconds"]
    assert row["stage4_pct"] == pytest.approx(100 * stages[..., 3].mean() / stages.sum(2).mean())
    assert row["exec_s"] == pytest.approx(arrays["total_seconds"].mean())
    assert row["rmse"] == pytest.approx(arrays["rmse"].mean(axis=1).mean())
    assert row["rmse_ci"] == pytest.approx(ft.runs_half_width(arrays["rmse"]))
    assert row["exec_s_ci"] == pytest.approx(ft.runs_half_width(arrays["total_seconds"]))
    assert row["resampling_s"] == pytest.approx(stages[..., 3].mean())
    assert (row["trajectories"], row["runs"], row["log2_n"], row["B_mean"]) == (2, 3, 6, 12)


def test_filter_table_order_labels_and_markdown():
    spec = {
        "variants": ["metropolis-c1-ss128", "metropolis"],
        "labels": {"metropolis": "M", "metropolis-c1-ss128": "C1-128"},
        "layout": "stages",
        "title": "The ratio of times",
    }
    cells = [_fake_cell(v, n, seed=i) for i, (v, n) in
             enumerate([("metropolis", 128), ("metropolis", 64), ("metropolis-c1-ss128", 64),
                        ("metropolis-c1-ss128", 128)])]  # fmt: skip
    table = ft.filter_table(cells, spec)
    assert list(zip(table["label"], table["n"], strict=True)) == [
        ("C1-128", 64), ("C1-128", 128), ("M", 64), ("M", 128),
    ]  # fmt: skip
    md = ft.table_markdown(table, spec, "table5_1", "Backend: test")
    assert md.startswith("# Table 5.1: The ratio of times")
    assert "| log2 N = 6 (N = 64) | C1-128 | M |" in md
    assert "| log2 N = 7 (N = 128) | C1-128 | M |" in md
    assert md.count("| Stage4 |") == 2 and md.count("| Exec. Time (s) |") == 2
    md = ft.table_markdown(table, {**spec, "layout": "rmse"}, "table5_2", "Backend: test")
    assert "| Method \\ N | 64 | 128 |" in md
    row = next(line for line in md.splitlines() if line.startswith("| M |"))
    m64 = table[(table["label"] == "M") & (table["n"] == 64)].iloc[0]
    assert f"{m64['rmse']:.5f} ± {m64['rmse_ci']:.5f}" in row


def test_speedup_frame_with_and_without_gpu():
    spec = {"variants": ["uphill"]}
    cpu = ft.filter_table([_fake_cell("uphill", n, seed=n) for n in (64, 128)], spec)
    out = ft.speedup_frame(cpu, None)
    assert out["speedup_total"].isna().all() and (out["cpu_exec_s"] > 0).all()
    gpu = cpu.assign(exec_s=cpu["exec_s"] / 4, resampling_s=cpu["resampling_s"] / 8)
    out = ft.speedup_frame(cpu, gpu)
    assert np.allclose(out["speedup_total"], 4) and np.allclose(out["speedup_resampling"], 8)


def test_run_seed_is_common_to_methods_and_distinct_per_run():
    seeds = {fe.run_seed(2017, "growth", 64, j, r) for j in range(4) for r in range(4)}
    assert len(seeds) == 16
    assert fe.run_seed(2017, "growth", 64, 1, 2) == fe.run_seed(2017, "growth", 64, 1, 2)
    assert fe.run_seed(2017, "growth", 64, 1, 2) != fe.run_seed(2017, "growth", 128, 1, 2)
    assert fe.run_seed(2017, "growth", 64, 1, 2) != fe.run_seed(2017, "radar-scenario1", 64, 1, 2)
    assert fe.run_seed(2017, "growth", 64, 1, 2) != fe.run_seed(2018, "growth", 64, 1, 2)


def test_run_rmse_growth_and_radar_position():
    truth = np.arange(6.0)
    est = truth[1:] + np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    assert fe.run_rmse("growth", est, truth) == pytest.approx(1.0)
    truth = np.zeros((4, 4))
    est = np.zeros((3, 4))
    est[:, 0], est[:, 1], est[:, 2:] = 3.0, 4.0, 100.0  # velocity errors do not count
    assert fe.run_rmse("radar", est, truth) == pytest.approx(5.0)
    assert fe.run_rmse("radar", est, truth) == rmse(est[:, :2], truth[1:, :2])


def test_run_filter_cell_small_growth_cell():
    arrays, _ = fe.make_trajectories({**GROWTH, "steps": 20}, 2, seed=3)
    variant = Variant("systematic", "systematic")
    cell, meta = fe.run_filter_cell("growth", GROWTH, variant, 32, arrays, SETTINGS)
    assert cell["rmse"].shape == cell["total_seconds"].shape == (2, 2)
    assert cell["stage_seconds"].shape == (2, 2, 4) and cell["B"].shape == (2, 2, 20)
    assert cell["estimates"].shape == (20,)
    assert np.allclose(cell["stage_seconds"].sum(axis=2), cell["total_seconds"])
    assert (cell["B"] == -1).all()  # Systematic has no B
    assert np.isfinite(cell["rmse"]).all() and (cell["rmse"] > 0).all()
    assert meta["backend"] == "cpu" and meta["runs"] == 2 and meta["trajectories"] == 2
    # Run (j, r) is Algorithm 2.4 with run_seed(seed, model, N, j, r): rebuild run (1, 1).
    seed = fe.run_seed(7, "growth", 32, 1, 1)
    assert cell["seeds"][1, 1] == seed
    again = run_filter(GrowthModel(), arrays["y"][1], 32, "systematic", seed=seed, backend="cpu",
                       **SIR_OPTIONS)  # fmt: skip
    assert cell["rmse"][1, 1] == fe.run_rmse("growth", again.estimates, arrays["truth"][1])
    # A cell with fewer runs holds the first runs of a larger one (same seeds).
    fewer = fe.FilterSettings(runs=1, seed=7, backend="cpu")
    small, _ = fe.run_filter_cell("growth", GROWTH, variant, 32, arrays, fewer)
    assert np.array_equal(small["rmse"][:, 0], cell["rmse"][:, 0])


def test_timed_runs_leave_the_other_runs_untimed_and_equal():
    """``timed_runs``: the first runs of each trajectory keep their times, the
    others have NaN times and the same RMSE, B and seeds as an all-timed cell;
    the table's times come from the timed runs alone (a planted slow untimed
    run would otherwise move them)."""
    arrays, _ = fe.make_trajectories({**GROWTH, "steps": 10}, 2, seed=3)
    variant = Variant("metropolis", "metropolis")
    every = fe.FilterSettings(runs=3, seed=7, backend="cpu")
    some = fe.FilterSettings(runs=3, seed=7, backend="cpu", timed_runs=1)
    whole, _ = fe.run_filter_cell("growth", GROWTH, variant, 32, arrays, every)
    cell, meta = fe.run_filter_cell("growth", GROWTH, variant, 32, arrays, some)
    assert meta["timed_runs"] == 1
    for key in ("rmse", "B", "seeds", "estimates"):
        assert np.array_equal(cell[key], whole[key]), key
    assert np.isfinite(cell["total_seconds"][:, 0]).all()
    assert np.isnan(cell["total_seconds"][:, 1:]).all()
    assert (
        np.isnan(cell["stage_seconds"][:, 1:]).all() and np.isnan(cell["wall_seconds"][:, 1:]).all()
    )
    row = ft.cell_row(cell, meta)
    assert row["timed_runs"] == 1 and row["runs"] == 3
    assert row["exec_s"] == pytest.approx(cell["total_seconds"][:, 0].mean())
    assert row["rmse"] == pytest.approx(whole["rmse"].mean())
    untimed = {k: np.array(v, copy=True) for k, v in cell.items()}
    untimed["total_seconds"][:, 1:] = np.nan
    untimed["total_seconds"][0, 2] = 1e6  # one run without stage times: not a timed column
    assert ft.cell_row(untimed, meta)["exec_s"] == row["exec_s"]
    nothing = {**cell, "total_seconds": np.full_like(cell["total_seconds"], np.nan)}
    with pytest.raises(ValueError, match="no run was timed"):
        ft.cell_row(nothing, meta)


def test_run_filters_equals_run_filter_run_by_run():
    model = GrowthModel()
    ys = [model.simulate(8, np.random.default_rng(s))[1] for s in (1, 2, 1)]
    seeds = [5, 6, 7]
    runs = run_filters(model, ys, 64, "uphill", seeds=seeds, backend="cpu", **SIR_OPTIONS)
    for y, s, got in zip(ys, seeds, runs, strict=True):
        want = run_filter(model, y, 64, "uphill", seed=s, backend="cpu", **SIR_OPTIONS)
        assert np.array_equal(got.estimates, want.estimates) and np.array_equal(got.B, want.B)
        assert got.log_likelihood == want.log_likelihood
    assert runs[0].seed == 5 and runs[2].seed == 7
    assert run_filters(model, [], 64, "uphill", seeds=[], backend="cpu") == []
    mixed = run_filters(model, [ys[0], ys[1][:5]], 64, "uphill", seeds=[5, 6], backend="cpu")
    assert [len(r.estimates) for r in mixed] == [8, 5]  # runs of other lengths: one by one
    with pytest.raises(ValueError, match="2 seeds for 3 measurement sets"):
        run_filters(model, ys, 64, "uphill", seeds=[1, 2], backend="cpu")


def test_part_runs_cover_each_run_once():
    for parts in (1, 2, 5, 7, 12):
        runs = [run for p in range(parts) for run in fe.part_runs(3, 4, p, parts)]
        assert runs == [(j, r) for j in range(3) for r in range(4)]
    assert [len(fe.part_runs(3, 4, p, 5)) for p in range(5)] == [2, 2, 3, 2, 3]
    with pytest.raises(ValueError, match="parts must be 1 ... 12"):
        fe.part_runs(3, 4, 0, 13)
    with pytest.raises(ValueError, match="part must be 0 ... 4"):
        fe.part_runs(3, 4, 5, 5)
    # One job per 2^15 particles of N, at least one, at most one per run.
    assert [fe.cpu_cell_parts(2**e, 16, 10, 2**15) for e in (10, 15, 18, 22, 24)] == [
        1,
        1,
        8,
        128,
        160,
    ]


def test_cell_in_parts_equals_the_whole_cell():
    """A CPU cell run as P parts and merged holds the same runs as the cell run
    whole: every array but the timings is identical."""
    arrays, _ = fe.make_trajectories({**GROWTH, "steps": 12}, 3, seed=5)
    variant = Variant("uphill", "uphill")
    settings = fe.FilterSettings(runs=3, seed=7, backend="cpu")
    whole, meta = fe.run_filter_cell("growth", GROWTH, variant, 64, arrays, settings)
    parts = [
        fe.run_filter_cell("growth", GROWTH, variant, 64, arrays, settings, part=(p, 4))
        for p in (2, 0, 3, 1)  # any order
    ]
    assert [len(a["rmse"]) for a, _ in parts] == [2, 2, 3, 2]
    merged, merged_meta = fe.merge_filter_parts(parts)
    for key in ("rmse", "B", "seeds", "estimates"):
        assert np.array_equal(merged[key], whole[key]), key
    for key in ("stage_seconds", "total_seconds", "wall_seconds"):
        assert merged[key].shape == whole[key].shape and (merged[key] > 0).all()
    assert merged_meta["parts"] == 4 and len(merged_meta["warmup_seconds"]) == 4
    assert "part" not in merged_meta and merged_meta["runs"] == meta["runs"]
    # Negative controls: a part missing, a part twice, a part of another cell.
    with pytest.raises(ValueError, match="expected parts 0 ... 3 of 4"):
        fe.merge_filter_parts(parts[:3])
    with pytest.raises(ValueError, match="expected parts 0 ... 3 of 4"):
        fe.merge_filter_parts(parts[:3] + parts[:1])
    other = fe.run_filter_cell("growth", GROWTH, variant, 32, arrays, settings, part=(1, 4))
    with pytest.raises(ValueError, match=r"differ in \['n'\]"):
        fe.merge_filter_parts([*parts[:3], other])  # other replaces part 1


def test_run_filter_cell_radar_and_common_random_numbers():
    spec = {
        "model": "radar",
        "scenario": {
            "steps": 10,
            "segments": [
                {"kind": "accelerate", "seconds": 5, "accel": [1.0, 0.0]},
                {"kind": "straight", "seconds": 5},
            ],
        },
    }
    arrays, meta = fe.make_trajectories(spec, 2, seed=1)
    assert arrays["truth"].shape == (2, 11, 4) and arrays["y"].shape == (2, 10, 2)
    assert fe.model_steps(spec) == 10 and meta["count"] == 2
    cells = {
        name: fe.run_filter_cell("radar-x", spec, Variant(name, method, ss), 64, arrays, SETTINGS)[
            0
        ]
        for name, method, ss in [("uphill", "uphill", None), ("uphill-ca-ss128", "uphill-ca", 128)]
    }
    assert np.array_equal(cells["uphill"]["seeds"], cells["uphill-ca-ss128"]["seeds"])
    assert cells["uphill"]["estimates"].shape == (10, 4)
    assert (cells["uphill"]["B"] >= 0).all()
    assert np.isfinite(cells["uphill"]["rmse"]).all() and (cells["uphill"]["rmse"] < 100).all()


def test_make_model_and_backends():
    assert isinstance(fe.make_model(GROWTH), GrowthModel)
    assert isinstance(fe.make_model({"model": "radar"}), RadarModel)
    with pytest.raises(ValueError, match="unknown filter model"):
        fe.make_model({"model": "sonar"})
    assert fe.resolve_backend("cpu") == "cpu"
    with pytest.raises(ValueError):
        fe.resolve_backend("gpu")


def test_derived_B_variants_are_refused():
    arrays, _ = fe.make_trajectories({**GROWTH, "steps": 5}, 1, seed=3)
    v = Variant("metropolis-bx0.5", "metropolis", B_scale=0.5)
    with pytest.raises(ValueError, match="own B"):
        fe.run_filter_cell("growth", GROWTH, v, 32, arrays, SETTINGS)


def test_trajectory_and_speedup_figures_draw():
    from pfresample_studies.dulger2017 import filter_figures

    truth = np.cumsum(np.ones((11, 4)), axis=0) + 1000.0
    y = np.stack([np.hypot(truth[1:, 0], truth[1:, 1]), np.arctan2(truth[1:, 1], truth[1:, 0])], 1)
    assert np.allclose(filter_figures.measurements_xy(y), truth[1:, :2])
    fig = filter_figures.trajectory_figure(truth, y, truth[1:], title="t", caption="c")
    assert len(fig.axes) == 1
    frame = pd.DataFrame(
        {"n": [64, 128], "cpu_exec_s": [1.0, 2.0], "cpu_resampling_s": [0.5, 1.0],
         "gpu_exec_s": [np.nan] * 2, "gpu_resampling_s": [np.nan] * 2,
         "speedup_total": [np.nan] * 2, "speedup_resampling": [np.nan] * 2}
    )  # fmt: skip
    assert len(filter_figures.speedup_figure(frame).axes) == 1  # CPU times only
    frame = frame.assign(gpu_exec_s=[0.1, 0.1], gpu_resampling_s=[0.05, 0.05])
    frame = frame.assign(speedup_total=[10.0, 20.0], speedup_resampling=[10.0, 20.0])
    assert len(filter_figures.speedup_figure(frame).axes) == 2
