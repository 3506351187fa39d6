"""The Gelencsér-Horváth et al. (2013) study (pfresample_studies.cpf2013): the
configuration and its checks, the error measures of Figs 9-10 and the tables'
statistics against hand computations, the seeds, a tiny end-to-end run of the
study's cells, tables and figures on the CPU, and a dry run of target `cpf2013`.

The filter itself (run_filter with resampler "cellular") is tested in test_cellular.py and,
on a GPU, test_gpu_cellular.py; here it is only run."""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.figure import Figure

from pfresample.cuda.geometry import CPF_MAX_RADIUS
from pfresample.metrics import confidence_interval
from pfresample.timing import cpu_name
from pfresample_studies.cpf2013 import catalog, experiments, figures, paired, tables, targets
from snake_tools import csv_text, job_counts, snakemake

REPO = Path(__file__).resolve().parents[3]
CONFIG = {
    **yaml.safe_load((REPO / "config" / "config.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "studies" / "cpf2013.yaml").read_text()),
}
QUICK = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
SCHEMA = yaml.safe_load((REPO / "config" / "schemas" / "config.schema.yaml").read_text())
CPF_KEYS = [k for k in SCHEMA["properties"] if k.startswith("cpf2013_")]


# --- configuration --------------------------------------------------------------


def test_paper_grid():
    """ "Evaluation and results": N = 2,048 ... 16,384, r = 32 ... 256 (16 pairs), 1,000
    growth trajectories of 100 steps, 100 bearings-only trajectories of 24 steps."""
    assert catalog.n_grid(CONFIG) == [2048, 4096, 8192, 16384]
    assert catalog.radii(CONFIG) == [32, 64, 128, 256]
    assert len(catalog.configurations(CONFIG)) == 16
    assert (catalog.trajectories(CONFIG, "growth"), catalog.steps(CONFIG, "growth")) == (1000, 100)
    assert (catalog.trajectories(CONFIG, "bot"), catalog.steps(CONFIG, "bot")) == (100, 24)
    assert catalog.trajectory_configuration(CONFIG) == (16384, 256)
    # Beyond the paper: Fig 9's large N, Figs 11-12's N up to 2^22, the paper's start.
    assert catalog.large_n(CONFIG) == [65536, 262144, 1048576]
    assert len(catalog.growth_configurations(CONFIG)) == 16 + 12
    assert catalog.model_configurations(CONFIG, "bot") == catalog.configurations(CONFIG)
    assert catalog.timing_n_grid(CONFIG) == [2**k for k in range(11, 23)]
    assert catalog.timing_kernels(CONFIG) == [("float64", "search"), ("float32", "divide")]
    assert catalog.setup(CONFIG) == "paper"
    # Table 1 runs the paper's own configurations at paper scale ...
    assert [(c["model"], c["n"], c["radius"]) for c in catalog.table1_configurations(CONFIG)] == [
        ("bot", 2048, 256), ("bot", 16384, 256), ("growth", 16384, 256),
    ]  # fmt: skip
    catalog.check_config(CONFIG)
    # ... and the grid's nearest at quick scale.
    quick = {**CONFIG, **QUICK}
    catalog.check_config(quick)
    assert catalog.configurations(quick) == [(2048, 32), (2048, 64), (4096, 32), (4096, 64)]
    assert catalog.growth_configurations(quick) == catalog.configurations(quick)
    assert catalog.timing_n_grid(quick) == [2048, 4096]
    assert [(c["model"], c["n"], c["radius"]) for c in catalog.table1_configurations(quick)] == [
        ("bot", 2048, 64), ("bot", 4096, 64), ("growth", 4096, 64),
    ]  # fmt: skip
    assert catalog.nearest([32, 64], 48) == 64 and catalog.nearest([2048, 8192], 4096) == 8192


def test_schema_knows_every_key_and_requires_them():
    jsonschema = pytest.importorskip("jsonschema")  # the pipeline's dependency, not the library's
    assert set(CPF_KEYS) == {k for k in CONFIG if k.startswith("cpf2013_")}
    assert set(CPF_KEYS) <= set(SCHEMA["required"])
    cpf_schema = {"type": "object", "properties": {k: SCHEMA["properties"][k] for k in CPF_KEYS}}
    cpf_schema["$defs"] = SCHEMA["$defs"]
    for cfg in (CONFIG, {**CONFIG, **QUICK}):
        jsonschema.validate({k: cfg[k] for k in CPF_KEYS}, cpf_schema)
    for bad in ({"cpf2013_bot_trajectories": 1}, {"cpf2013_radii": [32, 32]},
                {"cpf2013_n": []}, {"cpf2013_fast_math": "yes"},
                {"cpf2013_growth_setup": "both"}, {"cpf2013_timing_kernels": ["float32-search"]},
                {"cpf2013_timing_n": []}, {"cpf2013_best_cpu_threads": 0},
                {"cpf2013_best_cpu_threads": "half"}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, cpf_schema)


@pytest.mark.parametrize(
    "override, message",
    [
        ({"cpf2013_radii": [32, 2048]}, "cpf2013_radii has [2048], wider than the ring"),
        ({"cpf2013_n": [2048, 4096], "cpf2013_radii": [4096]}, "cpf2013_radii has [4096]"),
        (
            {"cpf2013_n": [8192], "cpf2013_radii": [CPF_MAX_RADIUS + 1]},
            f"beyond the GPU CPF's largest radius {CPF_MAX_RADIUS}",
        ),
        ({"cpf2013_baselines": ["systematic", "cellular"]}, "cpf2013_baselines has ['cellular']"),
        ({"cpf2013_baselines": ["nonesuch"]}, "cpf2013_baselines has ['nonesuch']"),
        ({"cpf2013_timing_baselines": ["cellular"]}, "cpf2013_timing_baselines has ['cellular']"),
        ({"cpf2013_large_n": [128]}, "wider than the ring of the smallest cpf2013_large_n = 128"),
        ({"cpf2013_timing_n": [64]}, "wider than the ring of the smallest cpf2013_timing_n = 64"),
        ({"cpf2013_growth_setup": "both"}, "cpf2013_growth_setup must be one of"),
        ({"cpf2013_timing_kernels": ["float32-search"]}, "'float32-search': neighbourhood="),
        ({"cpf2013_timing_kernels": ["float16-scan"]}, "precision must be one of"),
    ],
)
def test_config_checks_name_the_key(override, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        catalog.check_config({**CONFIG, **override})


def test_wide_radius_is_fine_on_the_cpu():
    catalog.check_config(
        {**CONFIG, "backend": "cpu", "cpf2013_n": [8192], "cpf2013_radii": [CPF_MAX_RADIUS + 1]}
    )


def test_published_table1_is_transcribed():
    """Spot checks against the paper's text: Table 1's rows and the abstract's numbers."""
    rows = catalog.PUBLISHED_TABLE1
    ours = [r for r in rows if r["reference"].startswith("this paper")]
    assert [(r["particles"], r["time_ms"]) for r in ours] == [
        (2048, 77.0), (16384, 77.0), (16384, 77.0), (16384, 124.0),
    ]  # fmt: skip
    assert [r.get("kernel_us") for r in ours[2:]] == [411.0, 266.0]  # abstract
    chu = [r for r in rows if r["reference"].startswith("[12]")]
    assert [r["position_error"] for r in chu] == [(0.06245, 0.06245), (0.06226, 0.06226)]
    chao = [r for r in rows if r["reference"].startswith("[16]")]
    assert [r["position_error"] for r in chao] == [(0.078, 0.083), (0.077, 0.081)]


# --- error measures and seeds ---------------------------------------------------------


def test_growth_mse_by_hand():
    # (1/T) sum (x_t - x^_t)^2 with errors 1, 0, -2: (1 + 0 + 4) / 3.
    assert targets.trajectory_mse([1.0, 2.0, 3.0], [2.0, 2.0, 1.0]) == pytest.approx(5 / 3)
    assert targets.run_errors("growth", [0.0, 0.0], [3.0, 4.0]) == {"mse": 12.5}
    with pytest.raises(ValueError, match="must be equal"):
        targets.trajectory_mse([1.0, 2.0], [1.0, 2.0, 3.0])


def test_bot_position_errors_by_hand():
    """Positions are columns 0 and 2 (x, y); the velocities do not count."""
    truth = np.array([[3.0, 100.0, 4.0, -7.0], [0.0, 1.0, 0.0, 1.0]])
    est = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 9.0, 2.0, 9.0]])
    np.testing.assert_allclose(targets.position_errors(est, truth), [5.0, 2.0])
    assert targets.position_rmse(est, truth) == pytest.approx(math.sqrt((25 + 4) / 2))
    assert targets.mean_position_error(est, truth) == pytest.approx(3.5)
    assert targets.run_errors("bot", est, truth) == {
        "position_rmse": pytest.approx(math.sqrt(14.5)), "mean_position_error": 3.5,
    }  # fmt: skip
    with pytest.raises(ValueError, match=r"states \(T, 4\)"):
        targets.position_rmse(est[:, :2], truth[:, :2])


def test_trajectories_and_seeds_do_not_depend_on_the_count():
    """A quick set is the first rows of the paper-scale one; run seeds likewise."""
    for name, steps, shape in (("growth", 10, (4, 11)), ("bot", 6, (4, 7, 4))):
        big, small = targets.simulate(name, 4, steps, 7), targets.simulate(name, 2, steps, 7)
        assert big["truth"].shape == shape and big["y"].shape == (4, steps)
        np.testing.assert_array_equal(big["truth"][:2], small["truth"])
        np.testing.assert_array_equal(big["y"][:2], small["y"])
        targets.check_set(name, big, "test")
        assert not np.array_equal(targets.simulate(name, 2, steps, 8)["y"], small["y"])
    assert experiments.run_seeds(1, "bot", 64, 5)[:3] == experiments.run_seeds(1, "bot", 64, 3)
    assert experiments.run_seeds(1, "bot", 64, 3) != experiments.run_seeds(1, "bot", 128, 3)
    assert experiments.run_seeds(1, "bot", 64, 3) != experiments.run_seeds(1, "growth", 64, 3)
    with pytest.raises(ValueError, match="not a bot trajectory set"):
        targets.check_set("bot", targets.simulate("growth", 2, 5, 1), "x.npz")


def test_backend_resolution(caplog):
    """The study's cells resolve through the library's one resolver: "cuda"
    for a cell without GPU code runs on the CPU with a warning naming it."""
    log = logging.getLogger("test_cpf2013")
    assert experiments.resolve_backend("cpu", True, fallback="x") == "cpu"
    with caplog.at_level(logging.WARNING, logger="test_cpf2013"):
        assert experiments.resolve_backend("cuda", False, fallback="the x", log_to=log) == "cpu"
    assert "the x has no GPU code" in caplog.text
    assert experiments.resolve_backend("auto", False, fallback="x") == "cpu"
    with pytest.raises((NotImplementedError, RuntimeError), match="no CUDA"):
        experiments.resolve_backend("cuda", False)  # no fallback: a library call's error
    if experiments.cuda_device() is None:
        with pytest.raises(RuntimeError, match="no CUDA device is visible"):
            experiments.resolve_backend("cuda", True, fallback="x")


# --- tables against hand computations ------------------------------------------------


def _fake_cell(name, filt, n, radius, errors, steps_s, walls, method="cellular"):
    measure = targets.ERROR_MEASURES[name]
    arrays = {measure: np.array(errors), "step_seconds": np.array(steps_s),
              "wall_seconds": np.array(walls)}  # fmt: skip
    if name == "bot":
        arrays["mean_position_error"] = np.array(errors) / 2
    meta = {"model": name, "filter": filt, "method": method, "n": n, "radius": radius,
            "trajectories": len(errors), "steps": 24, "fast_math": False, "backend": "cpu",
            "device": "test CPU"}  # fmt: skip
    return arrays, meta


def test_error_and_baselines_tables_by_hand():
    cells = [
        _fake_cell("bot", "CPF", 64, 4, [1.0, 3.0, 5.0], [1e-6, 3e-6, 2e-6], [0.1, 0.3, 0.2]),
        _fake_cell("bot", "CPF", 64, 8, [1.0, 1.0, 1.0], [4e-6, 4e-6, 4e-6], [0.4, 0.4, 0.5]),
        _fake_cell(
            "bot",
            "SIR",
            64,
            None,
            [2.0, 2.0, 2.0],
            [1e-6] * 3,
            [0.1, 0.1, 0.1],
            method="systematic",
        ),  # fmt: skip
    ]
    t = tables.error_table(cells)
    r4 = t[(t["filter"] == "CPF") & (t["radius"] == 4)].iloc[0]
    mean, half = confidence_interval([1.0, 3.0, 5.0])
    assert (r4["error"], r4["error_ci"]) == (pytest.approx(3.0), pytest.approx(half)) and mean == 3
    assert r4["step_us"] == pytest.approx(2.0) and r4["wall_ms"] == pytest.approx(200.0)
    assert r4["mean_position_error"] == pytest.approx(1.5)
    assert list(t.loc[t["best_radius"], "radius"]) == [8]  # error 1 < 3
    b = tables.baselines_table(t).iloc[0]
    assert (b["method"], b["cpf_radius"], b["sir_error"]) == ("systematic", 8, 2.0)
    assert b["error_ratio"] == pytest.approx(0.5) and b["step_ratio"] == pytest.approx(4.0)
    assert b["wall_ratio"] == pytest.approx(4.0)


def test_timing_table_takes_medians_and_paired_fast_math_ratios():
    """Medians and quartiles per variant; a fast-math row's ratio is the
    geometric mean of its repeats' ratios to the default build's, by hand."""
    arrays = {"step_seconds": np.array([[2e-6, 4e-6, 8e-6], [1e-6, 4e-6, 2e-6]]),
              "wall_seconds": np.array([[1e-3, 3e-3, 2e-3], [1e-3, 1e-3, 1e-3]])}  # fmt: skip
    kernel = {"radius": 4, "precision": "float32", "neighbourhood": "divide"}
    meta = {"model": "growth", "n": 64, "repeats": 3, "steps": 100, "backend": "cuda",
            "device": "test GPU", "variants": [kernel | {"build": "default"},
                                               kernel | {"build": "fast-math"}]}  # fmt: skip
    t = tables.timing_table([(arrays, meta)])
    default = t[t["build"] == "default"].iloc[0]
    assert default["step_us"] == pytest.approx(4.0) and default["wall_ms"] == pytest.approx(2.0)
    assert default["step_us_q25"] == pytest.approx(3.0) and default["backend"] == "CUDA (CuPy)"
    assert default["kernel"] == "float32-divide" and np.isnan(default["fast_math_ratio"])
    fast = t[t["build"] == "fast-math"].iloc[0]
    assert fast["step_us"] == pytest.approx(2.0)
    ratios = np.log([0.5, 1.0, 0.25])  # repeat by repeat
    mean, half = confidence_interval(ratios)
    assert fast["fast_math_ratio"] == pytest.approx(math.exp(mean))
    assert fast["fast_math_ratio_low"] == pytest.approx(math.exp(mean - half))
    assert fast["fast_math_ratio_high"] == pytest.approx(math.exp(mean + half))


# --- the study end to end on the CPU ----------------------------------------------------


@pytest.fixture(scope="module")
def tiny_study():
    """Every cell kind on a tiny grid: N = 64, 128, r = 4, 8, 3 trajectories per model;
    the growth model also with the former start at N = 64."""
    sets = {"growth": targets.simulate("growth", 3, 12, 5), "bot": targets.simulate("bot", 3, 8, 5)}
    kw = {"seed": 5, "backend": "cpu"}
    cpf = {
        name: [experiments.cpf_cell(name, sets[name], n, r, fast_math=True, **kw)
               for n in (64, 128) for r in (4, 8)]
        for name in sets
    }  # fmt: skip
    thesis = [experiments.cpf_cell("growth", sets["growth"], 64, r, setup="thesis", **kw)
              for r in (4, 8)]  # fmt: skip
    sir = {
        name: [experiments.sir_cell(name, sets[name], n, m, **kw)
               for n in (64, 128) for m in ("systematic", "metropolis")]
        for name in sets
    }  # fmt: skip
    kernels = [("float64", "search"), ("float32", "divide")]
    timing = [experiments.timing_cell("growth", sets["growth"], n, (4, 8), repeats=2,
                                      kernels=kernels, baselines=["systematic"], **kw)
              for n in (64, 128)]  # fmt: skip
    for cells in (*cpf.values(), *sir.values(), timing, thesis):
        for _, meta in cells:
            meta["scale"] = "quick"
    return sets, cpf, sir, timing, thesis


@pytest.mark.slow
def test_cells_record_what_ran(tiny_study):
    sets, cpf, sir, timing, thesis = tiny_study
    arrays, meta = cpf["bot"][0]
    assert meta["backend"] == "cpu" and meta["device"] == cpu_name()
    assert meta["fast_math"] is False  # an option of the GPU kernels only
    assert (meta["setup"], meta["estimator"], meta["neighbourhood"]) == ("prior", "resampled",
                                                                         "scan")  # fmt: skip
    assert arrays["estimates"].shape == (8, 4) and arrays["position_rmse"].shape == (3,)
    assert (arrays["step_seconds"] > 0).all() and (arrays["wall_seconds"] > 0).all()
    # The estimates of trajectory 0 give its error back.
    est, truth = arrays["estimates"], sets["bot"]["truth"][0, 1:]
    assert arrays["position_rmse"][0] == pytest.approx(targets.position_rmse(est, truth))
    # Both estimators, and the distinct ancestors (the CPU measures them).
    np.testing.assert_array_equal(arrays["position_rmse_resampled"], arrays["position_rmse"])
    assert np.isfinite(arrays["position_rmse_weighted"]).all()
    for measure in ("distinct_fraction", "lineage_fraction", "coverage"):
        assert ((arrays[measure] >= 0) & (arrays[measure] <= 1)).all(), measure
    assert (arrays["lineage_fraction"] <= arrays["distinct_fraction"]).all()
    assert (arrays["spread"] > 0).all()
    sir_arrays = sir["bot"][0][0]
    np.testing.assert_array_equal(sir_arrays["position_rmse_weighted"], sir_arrays["position_rmse"])
    assert np.isfinite(sir_arrays["position_rmse_resampled"]).all()
    assert sir["bot"][0][1]["estimator"] == "weighted"
    # Common random numbers: every r, method and start at N runs the same seeds.
    np.testing.assert_array_equal(cpf["bot"][0][0]["seeds"], sir["bot"][0][0]["seeds"])
    np.testing.assert_array_equal(cpf["growth"][0][0]["seeds"], thesis[0][0]["seeds"])
    assert (cpf["growth"][0][1]["setup"], thesis[0][1]["setup"]) == ("paper", "thesis")
    assert not np.array_equal(cpf["growth"][0][0]["mse"], thesis[0][0]["mse"])
    assert np.isnan(sir["growth"][0][0]["mean_B"]).all()  # systematic has no B
    assert (sir["growth"][1][0]["mean_B"] >= 1).all()  # metropolis does
    # Timing: one cell per N, each radius with the CPU's kernel (the first; its search
    # scans), the default build; the SIR baseline beside it.
    t_arrays, t_meta = timing[0]
    assert t_meta["builds"] == ["default"] and t_arrays["step_seconds"].shape == (2, 2)
    assert [v["radius"] for v in t_meta["variants"]] == [4, 8]
    assert {v["precision"] + "-" + v["neighbourhood"] for v in t_meta["variants"]} == {
        "float64-scan"
    }
    assert t_arrays["sir_step_seconds"].shape == (1, 2) and (t_arrays["sir_wall_seconds"] > 0).all()
    # Rerunning a cell gives the same errors (seeded); its times are measurements.
    again, _ = experiments.cpf_cell("bot", sets["bot"], 64, 4, seed=5, backend="cpu")
    np.testing.assert_array_equal(again["position_rmse"], arrays["position_rmse"])


def test_tables_and_figures_of_the_tiny_study(tiny_study):
    sets, cpf, sir, timing, thesis = tiny_study
    frames = {}
    for figure in catalog.FIGURES:
        if figure in catalog.TRAJECTORY_FIGURES:
            name = catalog.TRAJECTORY_FIGURES[figure]
            cell = next(c for c in cpf[name] if (c[1]["n"], c[1]["radius"]) == (128, 8))
            frame = tables.figure_table(figure, trajectories=sets[name], cpf=[cell])
        elif figure in catalog.ERROR_FIGURES:
            name = catalog.ERROR_FIGURES[figure]
            frame = tables.figure_table(figure, cpf=cpf[name], sir=sir[name])
        else:
            frame = tables.figure_table(figure, cpf=timing)
        frames[figure] = frame
        fig = figures.draw(figure, frame.assign(scale="quick"), "quick (test)")
        assert isinstance(fig, Figure) and "Backend: CPU (NumPy)" in fig.texts[-1].get_text()
    assert len(frames["fig7"]) == 13 and np.isnan(frames["fig7"]["estimate"].iloc[0])
    assert len(frames["fig9"]) == 4 + 4 and frames["fig9"]["best_radius"].sum() == 2
    assert set(frames["fig10"]["error_measure"]) == {"position_rmse"}
    bot = frames["fig10"]
    assert bot["error_weighted"].notna().all() and bot["error_resampled"].notna().all()
    cpf_rows = bot[bot["filter"] == "CPF"]
    np.testing.assert_allclose(cpf_rows["error_resampled"], cpf_rows["error"])
    assert len(frames["fig11"]) == 4 and set(frames["fig11"]["build"]) == {"default"}
    assert set(frames["fig12"]["filter"]) == {"CPF", "SIR"} and len(frames["fig12"]) == 4 + 2
    configs = catalog.table1_configurations({"cpf2013_n": [64, 128], "cpf2013_radii": [4, 8]})
    t1 = tables.table1(catalog.PUBLISHED_TABLE1, cpf["growth"] + cpf["bot"], configs)
    measured = t1[t1["source"] == tables.MEASURED]
    assert len(t1) == len(catalog.PUBLISHED_TABLE1) + 2  # bot (128, 8) once, growth (128, 8)
    assert list(measured["particles"]) == [128, 128] and list(measured["radius"]) == [8, 8]
    bot = measured.iloc[0]
    bot_cell = next(a for a, m in cpf["bot"] if (m["n"], m["radius"]) == (128, 8))
    assert bot["position_rmse"] == pytest.approx(bot_cell["position_rmse"].mean())
    assert bot["position_error_low"] == pytest.approx(bot_cell["mean_position_error"].mean())
    assert bot["gpu"] == cpu_name() and "nearest" in bot["note"]
    markdown = tables.table1_markdown(t1)
    assert markdown.count("\n| published") == len(catalog.PUBLISHED_TABLE1)
    assert "0.078 - 0.083" in markdown
    errors = pd.concat([frames["fig9"], frames["fig10"]], ignore_index=True)
    base = tables.baselines_table(errors)
    assert len(base) == 2 * 2 * 2  # models x N x methods
    assert np.isfinite(base["error_ratio_weighted"]).all()
    assert np.isfinite(base["error_ratio_resampled"]).all()
    # Paired statistics over every cell, and the claims judged on them.
    cells = cpf["growth"] + cpf["bot"] + sir["growth"] + sir["bot"] + thesis
    p = paired.paired_table(cells)
    assert set(p["comparison"]) == {"radius", "N", "setup", "CPF - SIR"}
    radius = p[(p["comparison"] == "radius") & (p["model"] == "bot")]
    assert len(radius) == 2 and set(radius["pairing"]) == {"trajectory and run seed"}
    assert set(p.loc[p["comparison"] == "N", "pairing"]) == {"trajectory"}
    setup = p[p["comparison"] == "setup"]
    assert len(setup) == 2 and set(setup["setup_a"]) == {"thesis"}
    vs = p[(p["comparison"] == "CPF - SIR") & (p["model"] == "bot")]
    assert set(vs["estimator"]) == {"own", "weighted", "resampled", ""}
    assert len(vs) == 2 * 2 * 2 * (3 + len(targets.CLOUD_MEASURES))  # N x r x methods x ...
    c = paired.claims_table(p)
    assert set(c["claim"]) <= {claim for claim, *_ in paired.CLAIMS}
    assert set(c["verdict"]) <= {paired.REPRODUCED, paired.NOT_REPRODUCED, paired.NOT_RESOLVED}
    assert "cpf-vs-sir-bot" in set(c["claim"]) and "fig9-n" not in set(c["claim"])  # no N > 4096


# --- paired statistics by hand ----------------------------------------------------------


def test_cloud_measures_by_hand():
    """Two steps of a bearings-only run: the cloud's spread is sqrt(trace C) of
    the positions; the truth 1 sd off in x lies inside the 95 % ellipse
    (NEES 1 <= 5.99), 3 sd off outside (NEES 9)."""
    from types import SimpleNamespace

    cov = np.zeros((2, 4, 4))
    cov[:, 0, 0], cov[:, 2, 2] = 0.04, 0.09  # positions x, y: sd 0.2 and 0.3
    cov[:, 1, 1] = cov[:, 3, 3] = 1.0  # velocities: not counted
    means = np.zeros((2, 4))
    truth = np.array([[0.2, 5.0, 0.0, 5.0], [0.6, 0.0, 0.0, 0.0]])
    run = SimpleNamespace(distinct=np.array([10, 20]), lineages=np.array([4, 2]),
                          resampled_cov=cov, resampled_estimates=means)  # fmt: skip
    got = targets.cloud_measures("bot", 40, run, truth)
    assert got["distinct_fraction"] == pytest.approx(15 / 40)
    assert got["lineage_fraction"] == pytest.approx(3 / 40)
    assert got["spread"] == pytest.approx(math.sqrt(0.13))
    assert got["coverage"] == pytest.approx(0.5)
    assert targets.coverage_bound(2) == pytest.approx(5.991464547107979)
    assert targets.coverage_bound(1) == pytest.approx(3.841458820694124)
    none = targets.cloud_measures("bot", 40, SimpleNamespace(lineages=None), truth)
    assert all(math.isnan(v) for v in none.values())


def _paired_cell(name, n, radius, errors, seeds=None, filt="CPF", method="cellular", **extra):
    measure = targets.ERROR_MEASURES[name]
    errors = np.asarray(errors, dtype=np.float64)
    arrays = {measure: errors, f"{measure}_weighted": errors, f"{measure}_resampled": errors,
              "seeds": np.arange(len(errors)) if seeds is None else seeds,
              "distinct_fraction": np.full(len(errors), np.nan)}  # fmt: skip
    meta = {"model": name, "filter": filt, "method": method, "n": n, "radius": radius,
            "fast_math": False, "backend": "cpu", "setup": "paper", "precision": "float64",
            "neighbourhood": "scan"} | extra  # fmt: skip
    return arrays, meta


def test_paired_difference_by_hand():
    a, b = [1.0, 2.0, 3.0, 4.0], [1.5, 2.0, 3.5, 4.0]
    d = np.array(b) - np.array(a)  # 0.5, 0, 0.5, 0
    mean, half = confidence_interval(d)
    got = paired.paired_difference(a, b)
    assert got["difference"] == pytest.approx(0.25) == pytest.approx(mean)
    assert (got["ci_low"], got["ci_high"]) == (
        pytest.approx(mean - half),
        pytest.approx(mean + half),
    )
    assert got["verdict"] == paired.OPEN and got["relative"] == pytest.approx(0.25 / 2.5)
    assert paired.paired_difference([0.0, 1.0, 2.0], [1.0, 2.01, 3.0])["verdict"] == paired.HIGHER
    assert paired.paired_difference([1.0, 2.0, 3.0], [0.0, 0.99, 2.0])["verdict"] == paired.LOWER
    assert paired.paired_difference([1.0, np.nan], [1.0, 2.0]) == {}
    with pytest.raises(ValueError, match="two equal 1-d samples"):
        paired.paired_difference([1.0], [2.0])


def test_claims_by_hand():
    """A U at N = 64 (r = 8 below r = 4 and r = 16, tightly), a monotone rise at
    N = 128 (the negative control), and neither at N = 256 (noise only)."""
    rng = np.random.default_rng(0)
    base = rng.normal(1.0, 0.3, 200)  # the trajectories' difficulty, shared by every cell
    noise = lambda: rng.normal(0.0, 0.01, 200)  # noqa: E731 -- run-to-run, per cell
    cells = []
    for n, shape in ((64, (0.10, 0.0, 0.10)), (128, (0.0, 0.05, 0.10)), (256, (0.0, 0.0, 0.0))):
        for r, offset in zip((4, 8, 16), shape, strict=True):
            cells.append(_paired_cell("bot", n, r, base + offset + noise()))
        cells.append(_paired_cell("bot", n, None, base + 0.5 + noise(), filt="SIR",
                                  method="systematic"))  # fmt: skip
    p = paired.paired_table(cells)
    c = paired.claims_table(p).set_index(["claim", "n"])
    u = c.loc["fig10-u"]
    assert u.loc[64, "verdict"] == paired.REPRODUCED and int(u.loc[64, "radius"]) == 8
    assert u.loc[128, "verdict"] == paired.NOT_REPRODUCED and "rises" in u.loc[128, "evidence"]
    assert u.loc[256, "verdict"] == paired.NOT_RESOLVED
    vs = c.loc["cpf-vs-sir-bot"]
    assert set(vs["verdict"]) == {paired.REPRODUCED} and (vs["pairs"] == 200).all()
    assert "better at every r" in vs["evidence"].iloc[0]
    # Fig 9's claims: r improves at N = 4096, and N = 8192 improves on it at r = 4.
    growth = [_paired_cell("growth", 4096, r, base - 0.1 * k + noise())
              for k, r in enumerate((4, 8))]  # fmt: skip
    growth.append(_paired_cell("growth", 8192, 4, base - 0.05 + noise(), seeds=np.arange(200) + 1))
    c = paired.claims_table(paired.paired_table(growth))
    radius = c[c["claim"] == "fig9-radius"].iloc[0]
    assert radius["verdict"] == paired.REPRODUCED and radius["n"] == 4096
    more = c[c["claim"] == "fig9-n"].iloc[0]
    assert more["verdict"] == paired.REPRODUCED and (more["n"], more["radius"]) == (8192, 4)
    assert more["evidence"].startswith("N = 4,096 -> 8,192: -0.04"), more["evidence"]


# --- the pipeline ---------------------------------------------------------------------


@pytest.mark.parametrize("scale", ["quick", "thesis"])
@pytest.mark.slow
def test_dry_run_of_the_target(tmp_path, scale):
    proc = snakemake(tmp_path, "-n", "cpf2013", config=[f"scale={scale}"])
    assert proc.returncode == 0, proc.output
    grid = {**CONFIG, **QUICK} if scale == "quick" else CONFIG
    configs, ns = len(catalog.configurations(grid)), len(catalog.n_grid(grid))
    large = len(catalog.large_n(grid)) * len(catalog.radii(grid))
    assert job_counts(proc.output) == {
        "cpf2013_trajectories": 2,
        "cpf2013_cpf_cell": 2 * configs + large,
        "cpf2013_sir_cell": 2 * ns * len(grid["cpf2013_baselines"]),
        "cpf2013_timing_cell": len(catalog.timing_n_grid(grid)),
        "cpf2013_best_cpu_cell": len(catalog.timing_n_grid(grid)),
        "cpf2013_speedup": 1,
        "cpf2013_table": len(catalog.FIGURES),
        "cpf2013_figure": len(catalog.FIGURES),
        "cpf2013_table1": 1,
        "cpf2013_baselines": 1,
        "cpf2013_paired": 1,
        "cpf2013": 1,
    }
    top = catalog.n_grid(grid)[-1]
    assert f"results/cpf2013/cpf/bot/n{top}_r{catalog.radii(grid)[-1]}.npz" in proc.output


@pytest.mark.slow
def test_one_figure_builds_only_what_it_needs(tmp_path):
    proc = snakemake(tmp_path, "-n", "results/figures/cpf2013/fig11.png", config=["scale=quick"])
    assert proc.returncode == 0, proc.output
    cells = len(catalog.timing_n_grid({**CONFIG, **QUICK}))
    assert job_counts(proc.output) == {"cpf2013_trajectories": 1, "cpf2013_timing_cell": cells,
                                       "cpf2013_table": 1, "cpf2013_figure": 1}  # fmt: skip


@pytest.mark.slow
def test_bad_config_stops_the_run(tmp_path):
    proc = snakemake(tmp_path, "-n", "cpf2013", config=["scale=quick", "cpf2013_radii=[4096]"])
    assert proc.returncode != 0
    assert "cpf2013_radii has [4096], wider than the ring" in proc.output, proc.output


# --- the committed GPU run's derived tables -------------------------------------------

H100 = REPO / "evidence" / "2026-11-26-h100-804d6d3" / "cpf2013"


def test_the_h100_runs_derived_tables_come_from_its_tables(tmp_path):
    """docs/cpf2013.md quotes h100/derived/; rebuilt from h100/tables/ by
    pfresample_studies.cpf2013.gpu_tables (rule cpf2013_gpu_tables) they are the committed
    files, and their ratios are the raw tables' (checked here by hand on one row each)."""
    import shutil

    from pfresample_studies.cpf2013 import gpu_tables
    from pfresample_studies.pipeline import gpu_runs

    run = tmp_path / "h100"
    shutil.copytree(H100 / "tables", run / "tables")
    names = [f"tables/{p.name}" for p in (H100 / "tables").glob("*.csv")]
    gpu_runs.write_sources(run, dict.fromkeys(names, "committed"))
    derived = gpu_tables.tables(run)
    for committed in sorted((H100 / "derived").glob("*.csv")):
        frame = derived[committed.stem]
        assert set(frame.pop(gpu_runs.SOURCE_COLUMN)) == {"committed"}
        assert csv_text(frame) == committed.read_text(), committed.name
    timing = pd.read_csv(H100 / "tables" / "fig11.csv")
    cpu = pd.read_csv(H100 / "tables" / "cpu_reference.csv")
    speed = pd.read_csv(H100 / "derived" / "cpu_speedup.csv")
    assert speed.loc[speed["source"] == "published", "speedup"].item() == pytest.approx(164.17)
    search = (timing["kernel"] == "float64-search") & (timing["build"] == "default")
    gpu = timing[(timing["n"] == 4096) & (timing["radius"] == 256) & search]
    row = speed[(speed["radius"] == 256) & (speed["kernel"] == "float64-search")
                & (speed["build"] == "default")]  # fmt: skip
    cpu_s = cpu.loc[cpu["radius"] == 256, "wall_s_median"].item()
    assert row["speedup"].item() == pytest.approx(cpu_s / (gpu["wall_ms"].item() * 1e-3), rel=1e-5)
    fast = pd.read_csv(H100 / "derived" / "fast_math.csv")
    paper = timing[(timing["kernel"] == "float32-divide") & (timing["radius"] == 256)
                   & (timing["build"] == "fast-math") & (timing["n"] <= 16384)]  # fmt: skip
    best = fast[(fast["kernel"] == "float32-divide") & (fast["radius"] == 256)]
    assert best["paper_n_min"].item() == pytest.approx(paper["fast_math_ratio"].min(), rel=1e-5)
    scaling = pd.read_csv(H100 / "derived" / "scaling.csv")
    one = scaling[(scaling["kernel"] == "float64-search") & (scaling["build"] == "default")
                  & (scaling["radius"] == 32)].set_index("n")  # fmt: skip
    assert one.loc[4194304, "step_ratio_to_half_n"] == pytest.approx(
        one.loc[4194304, "step_us"] / one.loc[2097152, "step_us"], rel=1e-5
    )


# --- ratios 1 and 2: the best-CPU cells and the speed-up table ---------------------------

EVIDENCE = REPO / "evidence"


def _timing_cell(backend, host, walls, n=2048, radius=32):
    """A timing cell of one radius, the float64 search kernel, both builds on the GPU."""
    builds = ["default", "fast-math"] if backend == "cuda" else ["default"]
    variants = [{"radius": radius, "precision": "float64", "neighbourhood": "search",
                 "build": b} for b in builds]  # fmt: skip
    arrays = {"wall_seconds": np.array(walls[: len(builds)])}
    meta = {"model": "growth", "n": n, "backend": backend, "device": "test GPU", "host": host,
            "repeats": len(walls[0]), "variants": variants}  # fmt: skip
    return arrays, meta


def _best_cell(host, numpy_walls, best_walls, n=2048, radius=32, threads=2):
    arrays = {"numpy_wall_seconds": np.array([numpy_walls]),
              "best_wall_seconds": np.array([best_walls])}  # fmt: skip
    meta = {"model": "growth", "n": n, "radii": [radius], "numpy": True, "host": host,
            "cpu": "test CPU", "cores": 4, "threads": threads, "repeats": len(best_walls),
            "steps": 100}  # fmt: skip
    return arrays, meta


def test_speedup_table_ratios_by_hand():
    """Ratio 1 = the NumPy CPF's median / the GPU's, ratio 2 = the best CPU code's / the
    GPU's, each range from the sides' extremes; one host only where both ran here on it."""
    timing = _timing_cell("cuda", "h1", [[1e-3, 2e-3, 4e-3], [1e-3, 1e-3, 1e-3]])
    best = _best_cell("h1", [0.1, 0.3, 0.2], [4e-3, 6e-3, 5e-3])
    t = tables.speedup_table([timing], [best], "float64-search")
    assert list(t["gpu_build"]) == ["default", "fast-math"]
    d = t.iloc[0]
    assert (d["gpu_s"], d["doc_cpu_s"], d["best_cpu_s"]) == (2e-3, 0.2, 5e-3)
    assert d["over_document"] == pytest.approx(0.2 / 2e-3)
    assert d["over_best_cpu"] == pytest.approx(5e-3 / 2e-3)
    assert d["over_document_low"] == pytest.approx(0.1 / 4e-3)
    assert d["over_document_high"] == pytest.approx(0.3 / 1e-3)
    assert d["over_best_cpu_low"] == pytest.approx(4e-3 / 4e-3)
    assert d["over_best_cpu_high"] == pytest.approx(6.0)
    assert t.iloc[1]["over_best_cpu"] == pytest.approx(5.0)
    assert t["one_host"].all() and d["gpu_source"] == tables.THIS_RUN
    assert "one host: GPU (test GPU)" in d["note"] and d["best_cpu_threads"] == 2
    assert "every ratio is a one-host figure" in tables.speedup_markdown(t)
    # The GPU in this run but on another node: not one host, and said so.
    other = tables.speedup_table([timing], [_best_cell("h2", [0.1], [5e-3])], "float64-search")
    assert not other["one_host"].any() and other["note"].str.startswith("NOT one host").all()
    assert "Not a one-host ratio" in tables.speedup_markdown(other)
    # Another kernel's rows are not this one's GPU side.
    none = tables.speedup_table([timing], [best], "float32-divide")
    assert none["gpu_s"].isna().all() and none["over_best_cpu"].isna().all()


def test_speedup_table_draws_committed_evidence_labelled():
    """No GPU ran here: the GPU side is the newest committed best-CPU run, labelled with its
    device, folder and date; the table and its caption say the ratio spans two machines,
    and give the evidence host's own one-host ratio 2 beside it."""
    from pfresample_studies.pipeline import evidence

    found = evidence.find(catalog.EVIDENCE_TABLES["speedup"], EVIDENCE)
    assert found is not None
    timing = _timing_cell("cpu", "laptop", [[0.05, 0.05]], n=4096, radius=64)
    best = _best_cell("laptop", [0.07, 0.08, 0.09], [8e-3, 9e-3, 1e-2], n=4096, radius=64)
    t = tables.speedup_table([timing], [best], "float64-search", found)
    committed = found.frame()
    gpu = committed[(committed["section"] == "gpu") & (committed["n"] == 4096)
                    & (committed["radius"] == 64)].set_index("build")  # fmt: skip
    assert list(t["gpu_build"]) == ["default", "fast-math"]
    for row in t.itertuples():
        assert row.gpu_s == pytest.approx(gpu.loc[row.gpu_build, "seconds"])
        assert row.over_best_cpu == pytest.approx(9e-3 / row.gpu_s)
        assert row.over_document == pytest.approx(0.08 / row.gpu_s)
        assert row.gpu_source == found.label and not row.one_host
        assert found.folder in row.note and row.note.startswith("NOT one host")
    assert found.device in found.label and found.date in found.label
    # The evidence host's own ratio 2 (its cpf_best.c on all its cores over its GPU) is its
    # ratios.csv's.
    ratios = pd.read_csv(found.path.parent / "ratios.csv")
    own = ratios[(ratios["n"] == 4096) & (ratios["radius"] == 64) & (ratios["model"] == "growth")
                 & ratios["over"].str.startswith("best CPU")].set_index("gpu_build")  # fmt: skip
    for row in t.itertuples():
        assert row.evidence_over_best_cpu == pytest.approx(own.loc[row.gpu_build, "speedup"])
    md = tables.speedup_markdown(t)
    assert "**Not a one-host ratio.**" in md and found.label in md and "| **no** |" in md
    # Neither a GPU here nor evidence: no GPU time, said so.
    bare = tables.speedup_table([timing], [best], "float64-search", None)
    assert bare["over_document"].isna().all() and "No GPU time" in tables.speedup_caption(bare)
    assert bare["note"].str.startswith("no GPU time").all()
    # Evidence present, but not at this N (the tiny grid's): the row keeps its CPU sides, has
    # no GPU time, and its Markdown is written (a missing build is blank, not NaN).
    small_timing = _timing_cell("cpu", "laptop", [[0.05, 0.05]], n=64, radius=32)
    small_best = _best_cell("laptop", [0.07, 0.08, 0.09], [8e-3, 9e-3, 1e-2], n=64, radius=32)
    off = tables.speedup_table([small_timing], [small_best], "float64-search", found)
    assert off["gpu_s"].isna().all() and off["best_cpu_s"].notna().all()
    assert "| 64 | 32 |  |" in tables.speedup_markdown(off)


def test_best_cpu_cell_times_both_cpu_sides():
    native = pytest.importorskip("pfresample_studies.cpf2013.native")
    try:
        native.compiler()
    except RuntimeError as error:
        pytest.skip(str(error))
    data = targets.simulate("growth", 2, 10, 3)
    arrays, meta = experiments.best_cpu_cell("growth", data, 64, [4, 8], seed=3, repeats=2,
                                             threads=2)  # fmt: skip
    assert arrays["numpy_wall_seconds"].shape == arrays["best_wall_seconds"].shape == (2, 2)
    assert (arrays["best_wall_seconds"] > 0).all() and (arrays["numpy_wall_seconds"] > 0).all()
    assert (meta["threads"], meta["radii"], meta["code"]) == (2, [4, 8], "cpf_best.c")
    assert meta["host"] and meta["cpu"] == cpu_name() and meta["cores"] >= 1
    np.testing.assert_array_equal(arrays["seeds"], experiments.run_seeds(3, "growth", 64, 2,
                                                                          "timing"))  # fmt: skip
    bare, meta = experiments.best_cpu_cell("growth", data, 64, [4], seed=3, repeats=2,
                                           threads=1, numpy=False)  # fmt: skip
    assert bare["numpy_wall_seconds"].shape == (0, 2) and not meta["numpy"]
    t = tables.best_cpu_times([(bare, meta)])
    assert t["doc_cpu_s"].isna().all() and t["best_cpu_s"].notna().all()
    assert catalog.best_cpu_threads({"cpf2013_best_cpu_threads": 3}) == 3
    assert catalog.best_cpu_threads({"cpf2013_best_cpu_threads": "all"}) >= 1
    assert catalog.numpy_timing_n({**CONFIG, **QUICK}) == [2048, 4096]
    assert catalog.numpy_timing_n(CONFIG) == [2048, 4096, 8192, 16384]


@pytest.mark.slow
def test_pipeline_draws_ratios_1_and_2(tmp_path):
    """The speed-up table from the pipeline at one N of the quick grid: this machine's CPU
    sides; without a GPU here, the committed evidence's GPU side, labelled."""
    proc = snakemake(tmp_path, "results/tables/cpf2013/speedup.csv",
                     config=["scale=quick", "cpf2013_timing_n=[2048]", "cpf2013_timing_repeats=2",
                             "cpf2013_timing_baselines=[]", "cpf2013_growth_trajectories=2",
                             "cpf2013_best_cpu_threads=2"])  # fmt: skip
    assert proc.returncode == 0, proc.output
    t = pd.read_csv(tmp_path / "results" / "tables" / "cpf2013" / "speedup.csv")
    assert set(t["n"]) == {2048} and set(t["radius"]) == {32, 64}
    assert (t["best_cpu_threads"] == 2).all() and t["best_cpu_s"].notna().all()
    np.testing.assert_allclose(t["over_best_cpu"], t["best_cpu_s"] / t["gpu_s"])
    np.testing.assert_allclose(t["over_document"], t["doc_cpu_s"] / t["gpu_s"])
    md = (tmp_path / "results" / "tables" / "cpf2013" / "speedup.md").read_text()
    if experiments.cuda_device() is None:
        assert t["gpu_source"].str.contains("evidence/").all() and not t["one_host"].any()
        assert "**Not a one-host ratio.**" in md
    else:
        assert (t["gpu_source"] == tables.THIS_RUN).all() and t["one_host"].all()
