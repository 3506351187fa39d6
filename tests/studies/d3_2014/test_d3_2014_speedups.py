"""Ratios 1 and 2 of Das et al.'s Table 5 in the pipeline: the best-CPU cell
(native/d3_best.c on every core), the speed-up table against hand computations and
recomputed from its own columns, the committed evidence's GPU side where no GPU ran here
(labelled, not one host), and the table from a tiny run of the pipeline."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pfresample.timing import cpu_name
from pfresample_studies.d3_2014 import catalog, experiments, tables
from pfresample_studies.pipeline import evidence
from snake_tools import snakemake

REPO = Path(__file__).resolve().parents[3]
EVIDENCE = REPO / "evidence"
CONFIG = {
    **yaml.safe_load((REPO / "config" / "config.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "studies" / "d3_2014.yaml").read_text()),
}
QUICK = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())


def _timing(label, n, seconds, host="h1", steps=100):
    arrays = {"wall_seconds": np.float64(seconds), "steps": np.int64(steps)}
    return arrays, {"filter": label, "n": n, "host": host, "device": "test CPU"}


def _best(n, per_step, host="h1", threads=4):
    """A best-CPU cell: ``per_step`` maps a filter to its repeats' seconds a step."""
    labels = list(per_step)
    options = [experiments.native_options(catalog.all_filters(CONFIG)[x]) for x in labels]
    arrays = {"seconds_per_step": np.array([per_step[x] for x in labels], dtype=float)}
    meta = {"n": n, "filters": labels, "options": options, "threads": threads,
            "window_steps": 98, "repeats": len(per_step[labels[0]]), "cpu": "test CPU",
            "host": host, "cores": 8}  # fmt: skip
    return arrays, meta


def _gpu(n, algorithm, window_ms, host="h1", lo=0.8, hi=1.2):
    arrays = {"threads": np.array([160, 196]), "rmse": np.zeros((2, 2)), "bias": np.zeros((2, 2)),
              "device_seconds": np.array([1.0, 1.0]), "wall_seconds": np.array([1.0, 1.0]),
              "steps": np.array([100, 100]), "occupancy": np.array([1.0, 1.0]),
              "chunk_ms_median": np.array([window_ms, 9.0]),
              "chunk_ms_min": np.array([lo * window_ms, 9.0]),
              "chunk_ms_max": np.array([hi * window_ms, 9.0]),
              "window_ms_per_step": np.array([window_ms, 9.0]),
              "window_steps": np.int64(52)}  # fmt: skip
    return arrays, {"n": n, "algorithm": algorithm, "threads": [160, 196], "device": "test GPU",
                    "host": host}  # fmt: skip


def _cells(host_gpu="h1"):
    timing = [_timing("systematic", 500, 0.2), _timing("d3", 500, 0.4)]  # 2 and 4 ms a step
    best = [_best(500, {"systematic": [1e-5, 3e-5, 2e-5], "d3": [4e-5, 5e-5, 6e-5],
                        "d3-paper": [8e-5, 9e-5, 1e-4]})]  # fmt: skip
    gpu = [_gpu(500, "d3", 0.01, host_gpu), _gpu(500, "d3-paper", 0.05, host_gpu)]
    return timing, best, gpu


def _check_ratios(t: pd.DataFrame) -> None:
    """Ratios 1 and 2 recomputed from the table's own columns."""
    np.testing.assert_allclose(t["over_document"], t["doc_cpu_s"] / t["gpu_s"])
    np.testing.assert_allclose(t["over_best_cpu"], t["best_cpu_s"] / t["gpu_s"])
    np.testing.assert_allclose(t["over_best_cpu_low"], t["best_cpu_s_min"] / t["gpu_s_max"])
    np.testing.assert_allclose(t["over_best_cpu_high"], t["best_cpu_s_max"] / t["gpu_s_min"])


def test_speedup_table_by_hand_on_one_host():
    t = tables.speedup_table(*_cells(), [500], ["d3-paper", "d3"])
    assert list(t.columns[: len(tables.SPEEDUP_COLUMNS)]) == list(tables.SPEEDUP_COLUMNS)
    assert list(zip(t["gpu_algorithm"], t["baseline"], strict=True)) == [
        ("d3-paper", "systematic"),
        ("d3-paper", "d3"),
        ("d3", "systematic"),
        ("d3", "d3"),
    ]
    _check_ratios(t)
    r = t.set_index(["gpu_algorithm", "baseline"])
    one = r.loc[("d3", "systematic")]
    assert (one["gpu_s"], one["doc_cpu_s"], one["best_cpu_s"]) == pytest.approx((1e-5, 2e-3, 2e-5))
    assert one["over_document"] == pytest.approx(200.0)
    assert one["over_best_cpu"] == pytest.approx(2.0)
    assert one["over_best_cpu_low"] == pytest.approx(1e-5 / 1.2e-5)
    assert one["over_best_cpu_high"] == pytest.approx(3e-5 / 0.8e-5)
    assert r.loc[("d3", "d3"), "over_best_cpu"] == pytest.approx(5.0)
    # The paper's algorithm: over the best CPU D3 of the baseline (eq. 5) and of its own.
    paper = r.loc[("d3-paper", "d3")]
    assert paper["over_best_cpu"] == pytest.approx(5e-5 / 5e-5)
    assert paper["over_best_cpu_own_algorithm"] == pytest.approx(9e-5 / 5e-5)
    assert r.loc[("d3", "d3"), "over_best_cpu_own_algorithm"] == pytest.approx(5.0)
    assert paper["paper_printed"] == pytest.approx(2.8468 / 0.58757)
    assert math.isnan(r.loc[("d3", "d3"), "paper_printed"])
    assert one["best_cpu_code"] == "d3_best.c systematic"
    assert paper["best_cpu_code"] == "d3_best.c d3 (noise eq5, cdf prefix)"
    assert (t["best_cpu_threads"] == 4).all() and (t["cpu"] == "test CPU").all()
    assert (t["gpu_source"] == tables.THIS_RUN).all() and t["one_host"].all()
    assert t["note"].str.startswith("one host").all()
    assert "every ratio is a one-host figure" in tables.speedup_markdown(t)
    # The GPU in this run but on another node: not one host, and said so.
    other = tables.speedup_table(*_cells(host_gpu="h2"), [500], ["d3"])
    assert not other["one_host"].any() and other["note"].str.startswith("NOT one host").all()
    assert "**Not a one-host ratio.**" in tables.speedup_markdown(other)
    # A timing cell of an older run, with no host: not claimed as one host.
    timing, best, gpu = _cells()
    timing = [(a, {k: v for k, v in m.items() if k != "host"}) for a, m in timing]
    assert not tables.speedup_table(timing, best, gpu, [500], ["d3"])["one_host"].any()


def test_speedup_table_draws_committed_evidence_labelled():
    """No GPU ran here: the GPU side is the newest committed run of bench/d3_best_cpu.py,
    labelled with its folder, device and date; not one host, and the caption says that the
    headline is the evidence host's own ratio, which the table gives beside."""
    found = evidence.find(catalog.EVIDENCE_TABLES[catalog.SPEEDUP_TABLE], EVIDENCE)
    assert found is not None
    timing, best, _ = _cells()
    t = tables.speedup_table(timing, best, [], [500], ["d3-paper", "d3"], found)
    _check_ratios(t)
    assert (t["gpu_source"] == f"evidence/{found.folder} ({found.device}, {found.date})").all()
    assert not t["one_host"].any() and t["note"].str.startswith("NOT one host").all()
    assert t["note"].str.contains(found.folder).all()
    times = pd.read_csv(found.path).set_index(["what", "n"])
    ratios = pd.read_csv(found.path.parent / "ratios.csv").set_index(["gpu", "cpu", "n"])
    for r in t.itertuples():
        gpu = f"gpu/{r.gpu_algorithm}"
        assert r.gpu_s == pytest.approx(1e-3 * times.loc[(gpu, 500), "ms_median"])
        assert r.gpu_s_max == pytest.approx(1e-3 * times.loc[(gpu, 500), "ms_max"])
        assert r.gpu_device == times.loc[(gpu, 500), "device"]
        seq, best_code = tables.EVIDENCE_CODES[r.baseline]
        # the evidence host's own one-host ratios are its ratios.csv's
        assert r.evidence_over_best_cpu == pytest.approx(
            ratios.loc[(gpu, best_code, 500), "ratio"], rel=1e-4
        )
        assert r.evidence_over_document == pytest.approx(
            ratios.loc[(gpu, seq, 500), "ratio"], rel=1e-4
        )
        # this machine's CPU sides over the committed GPU
        assert r.best_cpu_s == pytest.approx({"systematic": 2e-5, "d3": 5e-5}[r.baseline])
    md = tables.speedup_markdown(t)
    assert "**Not a one-host ratio.**" in md and "not the headline" in md
    assert found.folder in md and "| **no** |" in md
    # Neither a GPU here nor evidence (or evidence without this N): no GPU time, said so.
    for source in (None, found):
        bare = tables.speedup_table(timing, best, [], [64], ["d3"], source)
        assert bare["gpu_s"].isna().all() and bare["over_best_cpu"].isna().all()
        assert bare["note"].str.startswith("no GPU time").all()
    assert "No GPU time" in tables.speedup_caption(
        tables.speedup_table(timing, best, [], [500], ["d3"], None)
    )


def test_best_cpu_config_keys():
    assert catalog.best_cpu_threads({"d3_2014_best_cpu_threads": 3}) == 3
    assert catalog.best_cpu_threads({"d3_2014_best_cpu_threads": "all"}) >= 1
    assert catalog.best_cpu_threads(CONFIG) >= 1 and catalog.best_cpu_repeats(CONFIG) == 5
    assert catalog.best_cpu_repeats({**CONFIG, **QUICK}) == 3
    for bad in ({"d3_2014_best_cpu_threads": 0}, {"d3_2014_best_cpu_threads": "half"},
                {"d3_2014_best_cpu_repeats": 0}):  # fmt: skip
        with pytest.raises(ValueError, match=next(iter(bad))):
            catalog.check_config({**CONFIG, **bad})
    assert list(catalog.best_cpu_filters(CONFIG)) == ["systematic", "d3", "d3-paper"]
    local = {**CONFIG["d3_2014_filters"], "d3": {"method": "d3", "cdf": "local"}}
    with pytest.raises(ValueError, match="best CPU code"):
        catalog.check_config({**CONFIG, "d3_2014_filters": local})


@pytest.mark.usefixtures("native_build")
def test_best_cpu_cell_times_every_filter():
    cfg = {**CONFIG, "d3_2014_duration": 1.0, "d3_2014_timing_duration": 0.6,
           "d3_2014_snapshot_time": 0.5, "d3_2014_fig11_time": 0.5}  # fmt: skip
    traj, _ = experiments.trajectory(catalog.model(cfg), 5, 0)
    specs = catalog.best_cpu_filters(cfg)
    arrays, meta = experiments.best_cpu_cell(catalog.timing_model(cfg), traj, specs, 64, seed=5,
                                             repeats=2, threads=2)  # fmt: skip
    assert arrays["seconds_per_step"].shape == arrays["window_seconds"].shape == (3, 2)
    assert (arrays["seconds_per_step"] > 0).all()
    np.testing.assert_allclose(arrays["seconds_per_step"], arrays["window_seconds"] / 58)
    assert (meta["steps"], meta["skip"], meta["window_steps"]) == (60, 2, 58)
    assert meta["filters"] == ["systematic", "d3", "d3-paper"]
    assert meta["options"][2] == {"kind": "d3", "cdf": "paper", "noise": "fig9", "block": 160}
    assert (meta["threads"], meta["repeats"], meta["code"]) == (2, 2, "d3_best.c")
    assert meta["host"] and meta["cpu"] == cpu_name() and meta["cores"] >= 1
    assert int(arrays["seed"]) == experiments.run_seed(5, 64, 0, 0)
    # The same filters as the NumPy ones: errors of a working filter, not of a broken one.
    assert (arrays["rmse"] > 0).all() and (arrays["rmse"] < 2.0).all()
    t = tables.best_cpu_times([(arrays, meta)])
    assert list(t["filter"]) == ["systematic", "d3", "d3-paper"] and (t["best_cpu_s"] > 0).all()


@pytest.mark.slow
@pytest.mark.usefixtures("native_build")
def test_pipeline_draws_ratios_1_and_2(tmp_path):
    """The speed-up table from the pipeline at N = 500 over 102 steps: this machine's CPU
    sides; without a GPU here, the committed evidence's GPU side, labelled."""
    proc = snakemake(tmp_path, f"results/tables/d3_2014/{catalog.SPEEDUP_TABLE}.csv",
                     config=["scale=quick", "d3_2014_duration=2.5", "d3_2014_snapshot_time=2.0",
                             "d3_2014_fig11_time=0.5", "d3_2014_timing_duration=1.02",
                             "d3_2014_regime_duration=1.0", "d3_2014_regime_bin_seconds=0.5",
                             "d3_2014_table5_n=[500]", "d3_2014_table6_n=[500]",
                             "d3_2014_best_cpu_repeats=2",
                             "d3_2014_best_cpu_threads=2"])  # fmt: skip
    assert proc.returncode == 0, proc.output
    out = tmp_path / "results" / "tables" / "d3_2014"
    t = pd.read_csv(out / f"{catalog.SPEEDUP_TABLE}.csv")
    assert set(t["n"]) == {500} and len(t) == 4
    assert (t["best_cpu_threads"] == 2).all() and (t["best_cpu_steps"] == 100).all()
    assert (t["doc_cpu_steps"] == 102).all() and t["best_cpu_s"].notna().all()
    assert (t["cpu"] == cpu_name()).all()
    _check_ratios(t)
    md = (out / f"{catalog.SPEEDUP_TABLE}.md").read_text()
    if experiments.cuda_device() is None:
        assert t["gpu_source"].str.startswith("evidence/").all() and not t["one_host"].any()
        assert t["gpu_s"].notna().all() and "**Not a one-host ratio.**" in md
    else:
        assert (t["gpu_source"] == tables.THIS_RUN).all() and t["one_host"].all()
