"""Fig 6.23 against the best CPU code: the best-CPU cell, the table
fig6_23_speedups (ratios 1 and 2 from its own columns), its GPU rows from committed
evidence where none ran here (labelled, one_host False) and through the pipeline."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pfresample_studies.dulger2017 import best_cpu
from pfresample_studies.dulger2017.trajectories import growth_trajectories
from pfresample_studies.pipeline import evidence
from snake_tools import snakemake

ROOT = Path(__file__).resolve().parents[3]
FOLDER = "2026-11-28-h200-45f3754"
COMMITTED = ROOT / "evidence" / FOLDER / best_cpu.EVIDENCE_TABLE
LABEL = f"evidence/{FOLDER} (H200, 2026-11-28)"


def fake_cell(n_values=(2**14, 2**16), numpy_repeats=(1, 0)) -> tuple[dict, dict]:
    """A cell as measure_cell writes it, with made-up seconds."""
    n = np.array(n_values)
    arrays = {"n": n}
    for k, side in enumerate(best_cpu.SIDES):
        arrays[f"{side}_s"] = 0.01 * (k + 1) * n / 2**14
        arrays[f"{side}_resampling_s"] = arrays[f"{side}_s"] / 3
        arrays[f"{side}_repeats"] = np.full(n.size, 3)
        arrays[f"{side}_rmse"] = np.full(n.size, 4.0)
    arrays["numpy_repeats"] = np.array(numpy_repeats)
    arrays["numpy_s"] = np.where(arrays["numpy_repeats"] > 0, arrays["numpy_s"], np.nan)
    arrays["numpy_resampling_s"] = np.where(arrays["numpy_repeats"] > 0,
                                            arrays["numpy_resampling_s"], np.nan)  # fmt: skip
    meta = {"cpu": "Test CPU", "threads": 2, "codes": best_cpu.CODES}
    return arrays, meta


def assert_ratios_from_columns(frame: pd.DataFrame) -> None:
    np.testing.assert_allclose(frame["over_document"], frame["doc_cpu_s"] / frame["gpu_s"])
    np.testing.assert_allclose(frame["over_best_cpu"], frame["best_cpu_s"] / frame["gpu_s"])
    np.testing.assert_allclose(frame["over_uphill_cpu"], frame["uphill_cpu_s"] / frame["gpu_s"])


def test_the_committed_bench_run_gives_its_gpu_rows():
    gpu = best_cpu.evidence_gpu_rows(COMMITTED)
    assert list(gpu["n"]) == [2**e for e in (14, 16, 18, 20, 22)]
    row = gpu.set_index("n").loc[2**14]
    assert row["gpu_s"] == pytest.approx(0.0024068479989655315)
    assert row["gpu_resampling_s"] == pytest.approx(0.0012996160024777062)
    assert row["device"] == "NVIDIA H200"


def test_a_bench_run_without_a_gpu_is_passed_over(tmp_path):
    """find_gpu_evidence takes the newest folder whose timings have GPU rows: a newer
    CPU-only run of the bench is skipped, and none is found where no folder has any."""
    tmp_path = tmp_path / "evidence"
    old = tmp_path / FOLDER / "dulger2017"
    old.mkdir(parents=True)
    shutil.copy(COMMITTED, old / "timings.csv")
    frame = pd.read_csv(COMMITTED)
    new = tmp_path / "2026-12-01-xeon2-abcdef0" / "dulger2017"
    new.mkdir(parents=True)
    frame[frame["code"] != best_cpu.EVIDENCE_GPU_CODE].to_csv(new / "timings.csv", index=False)
    assert best_cpu.evidence_gpu_rows(new / "timings.csv").empty
    found = best_cpu.find_gpu_evidence(tmp_path)
    assert found.folder == FOLDER and best_cpu.evidence_source(found) == LABEL
    shutil.rmtree(tmp_path / FOLDER)
    assert best_cpu.find_gpu_evidence(tmp_path) is None


def test_evidence_fallback_is_labelled_and_not_one_host():
    committed = evidence.describe(COMMITTED)
    cell = fake_cell()
    doc = None  # neither N in Fig 6.23's CPU grid: the cell measured the NumPy side at 2^14
    frame = best_cpu.speedups_frame(cell, doc, None, committed)
    assert list(frame.columns) == best_cpu.COLUMNS
    assert list(frame["stage"]) == ["whole filter", "resampling"] * 2
    assert (frame["gpu_source"] == LABEL).all() and not frame["one_host"].any()
    assert_ratios_from_columns(frame)
    first = frame.iloc[0]
    assert first["gpu_s"] == pytest.approx(0.0024068479989655315)
    assert first["best_cpu_s"] == pytest.approx(0.01)  # Systematic: the best CPU code
    assert first["best_cpu_code"] == best_cpu.CODES["systematic"]
    assert first["best_cpu_threads"] == 2 and first["cpu"] == "Test CPU"
    assert first["doc_cpu_source"] == "this cell, this run (median of 1)"
    assert frame["doc_cpu_s"].iloc[2:].isna().all()  # 2^16: no NumPy side, no ratio 1
    assert frame["over_best_cpu"].iloc[2:].notna().all()
    md = best_cpu.speedups_markdown(frame)
    assert "**Not the headline.**" in md and LABEL in md and "another host" in md


def test_gpu_rows_of_this_run_make_one_host_rows():
    """With this run's Fig 6.23 cells at an N, both sides come from them (means of their
    runs) and the row is one host; an N with no GPU anywhere has no ratios."""
    cell = fake_cell(n_values=(2**7, 2**9), numpy_repeats=(0, 1))
    doc = pd.DataFrame({"n": [2**7], "exec_s": [0.5], "resampling_s": [0.2]})
    gpu = pd.DataFrame({"n": [2**7], "exec_s": [0.001], "resampling_s": [0.0004],
                        "device": ["Some GPU"]})  # fmt: skip
    frame = best_cpu.speedups_frame(cell, doc, gpu, None)
    assert_ratios_from_columns(frame)
    here = frame[frame["n"] == 2**7]
    assert (here["gpu_source"] == "this run").all() and here["one_host"].all()
    assert list(here["over_document"]) == pytest.approx([500.0, 500.0])
    assert (here["doc_cpu_source"] == "fig6_23 CPU cell, this run (mean of its runs)").all()
    far = frame[frame["n"] == 2**9]
    assert (far["gpu_source"] == "none").all() and not far["one_host"].any()
    assert far["over_best_cpu"].isna().all()
    assert "Not the headline" not in best_cpu.speedups_markdown(frame)


def test_the_cell_measures_the_three_sides(native_build):
    traj = growth_trajectories(2, 100, 2017)
    arrays, meta = best_cpu.measure_cell(traj, [64, 128], [128], threads=2, repeats=2,
                                         numpy_repeats=1, warmup=1, seed=2017)  # fmt: skip
    assert list(arrays["n"]) == [64, 128]
    for side in ("systematic", "uphill"):
        assert (arrays[f"{side}_s"] > 0).all() and (arrays[f"{side}_repeats"] == 2).all()
        assert (arrays[f"{side}_resampling_s"] < arrays[f"{side}_s"]).all()
        assert np.all((arrays[f"{side}_rmse"] > 1) & (arrays[f"{side}_rmse"] < 10))
    assert list(arrays["numpy_repeats"]) == [0, 1] and np.isnan(arrays["numpy_s"][0])
    assert arrays["numpy_s"][1] > 0
    assert meta["threads"] == 2 and meta["cpu"] and meta["best_cpu_error"] is None
    assert meta["codes"]["systematic"].startswith("sir_growth.c")


@pytest.mark.slow
def test_the_table_through_the_pipeline(tmp_path, native_build):
    """The target on a tiny grid for real: 2^7 from Fig 6.23's CPU cell, 2^14 from the
    best-CPU cell's own NumPy run; the GPU rows at 2^14 from the committed run."""
    config = ["scale=quick", "backend=cpu", "filter_log2_n=[7]", "filter_trajectories=2",
              "filter_speedup_runs=1", "filter_best_cpu_log2_n=[7,14]", "timing_repeats=1",
              "timing_warmup=0", "filter_best_cpu_numpy_repeats=1",
              "filter_best_cpu_threads=2"]  # fmt: skip
    target = "results/tables/dulger2017/fig6_23_speedups.csv"
    proc = snakemake(tmp_path, target, config=config, timeout=300)
    assert proc.returncode == 0, proc.output
    frame = pd.read_csv(tmp_path / target)
    assert_ratios_from_columns(frame.dropna(subset=["gpu_s"]))
    assert list(frame["n"]) == [2**7, 2**7, 2**14, 2**14]
    assert (frame["best_cpu_s"] > 0).all() and (frame["best_cpu_threads"] == 2).all()
    assert (frame["doc_cpu_s"] > 0).all()
    small, large = frame[frame["n"] == 2**7], frame[frame["n"] == 2**14]
    assert (small["gpu_source"] == "none").all()
    assert small["doc_cpu_source"].str.startswith("fig6_23 CPU cell").all()
    newest = best_cpu.evidence_source(best_cpu.find_gpu_evidence(ROOT / "evidence"))
    assert (large["gpu_source"] == newest).all() and not frame["one_host"].any()
    assert (large["doc_cpu_source"] == "this cell, this run (median of 1)").all()
    md = (tmp_path / target.replace(".csv", ".md")).read_text()
    assert "**Not the headline.**" in md and "| 2^14 | whole filter |" in md
