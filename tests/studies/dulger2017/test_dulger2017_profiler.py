"""The profiler target of Dülger (2017) on the CPU: the plan of cells, the
kernels' build options, ncu's CSV parser, the tables and figure, the missing-ncu
path, the configuration keys and the rule's dry run.

tests/studies/dulger2017/data/ncu_format_sample_{l2,l1,nc}.csv are written by hand after the
format Nsight Compute documents for ``ncu --csv --print-units base`` (the
details page: one row per kernel and metric, "ID", ..., "Kernel Name", ...,
"Metric Name", "Metric Unit", "Metric Value", thousands separators, "n/a",
``==PROF==`` lines around it). They show the format, not measured data: their
values are made up, and the device run's CSVs will replace them.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from pfresample.cuda import geometry, kernels
from pfresample.cuda.settings import launch_settings
from pfresample_studies.dulger2017 import catalog, profiler
from snake_tools import job_counts, snakemake

ROOT = Path(__file__).resolve().parents[3]
DATA = Path(__file__).resolve().parent / "data"
SCRIPT = ROOT / "scripts" / "dulger2017" / "profiler.py"


def _config(**overrides) -> dict:
    cfg = {}
    for path in sorted((ROOT / "config").glob("*.yaml")) + sorted(
        (ROOT / "config" / "studies").glob("*.yaml")
    ):
        if path.name != "quick.yaml":
            cfg.update(yaml.safe_load(path.read_text()))
    cfg.update(overrides)
    return cfg


# The small plan the format samples were written for.
SMALL = dict(
    profiler_sequences=1,
    profiler_table5_log2_n=[10, 11],
    profiler_table5_variants=["metropolis", "metropolis-c1-ss128"],
    profiler_carveouts=[100],
    profiler_fig6_log2_n=[4, 5],
    profiler_fig6_variants=["uphill", "uphill-ca-ss128"],
)


@pytest.fixture
def cells():
    return profiler.plan(_config(**SMALL))


def _sample(loads: str) -> str:
    return (DATA / f"ncu_format_sample_{loads}.csv").read_text()


def _measured(cells):
    import pandas as pd

    frames = [
        profiler.join(cells, profiler.parse_ncu_csv(_sample(b)), b) for b in profiler.builds(cells)
    ]
    return pd.concat(frames, ignore_index=True)


def test_plan_lists_every_cell_once_per_build(cells):
    assert profiler.builds(cells) == ["l2", "l1", "nc"]
    assert [len(profiler.cells_of(cells, b)) for b in ("l2", "l1", "nc")] == [4, 4, 10]
    fig6 = [c for c in cells if c.part == "fig6"]
    # Fig 6.26 keeps eq. 2.28's 16-thread blocks at N = 2^4 (§6.12), 32 from 2^5 up.
    assert {(c.n, c.block) for c in fig6} == {(16, None), (32, None), (32, 32)}
    assert {c.config for c in cells if c.part == "table5"} == {
        "L1 off (ld.global.cg)",
        "L1 on, carve-out 100%",
        "library (ld.global.nc)",
    }
    assert profiler.cells_from_json(profiler.cells_to_json(cells)) == cells


def test_build_options_choose_the_global_loads():
    assert kernels.build_options() == kernels.COMPILE_OPTIONS
    l2 = kernels.build_options(loads="l2")
    assert l2[: len(kernels.COMPILE_OPTIONS)] == kernels.COMPILE_OPTIONS
    assert "--ptxas-options=-dlcm=cg" in l2 and "-D__restrict__=" in l2
    assert "--ptxas-options=-dlcm=cg" not in kernels.build_options(loads="l1")
    assert kernels.build_options(True, "nc") == kernels.FAST_MATH_OPTIONS
    # The profiler's way: launch settings around the calls, restored after.
    with launch_settings(loads="l2"):
        assert kernels.build_options() == l2
        assert kernels.build_options(loads="nc") == kernels.COMPILE_OPTIONS  # an argument wins
        with launch_settings(loads="l1"):
            assert kernels.global_loads() == "l1"
        assert kernels.global_loads() == "l2"
    assert kernels.build_options() == kernels.COMPILE_OPTIONS
    with pytest.raises(ValueError, match="loads must be one of nc, l1, l2, got 'off'"):
        with launch_settings(loads="off"):
            pass
    with pytest.raises(ValueError, match="global loads must be one of nc, l1, l2, got 'off'"):
        kernels.build_options(loads="off")


def test_launch_settings_choose_the_block_size(monkeypatch):
    monkeypatch.delenv("PFRESAMPLE_BLOCK_SIZE", raising=False)
    assert geometry.block_size(2**14) == 512  # thesis eq. 2.28
    with launch_settings(block=96):
        assert geometry.block_size(2**14) == 96
        assert geometry.block_size(2**4) == 96
        with launch_settings(loads="l1"):  # a setting left None keeps the one around it
            assert geometry.block_size(2**14) == 96
    assert geometry.block_size(2**14) == 512
    try:  # restored when the block raises too
        with launch_settings(block=64):
            raise KeyError("inside")
    except KeyError:
        pass
    assert geometry.block_size(2**14) == 512
    monkeypatch.setenv("PFRESAMPLE_BLOCK_SIZE", "128")  # the user's override, under the settings
    assert geometry.block_size(2**14) == 128
    with launch_settings(block=32):
        assert geometry.block_size(2**14) == 32
    for bad in (0, 1025, 2.0, True, "64"):
        with pytest.raises(ValueError, match="block must be an integer in 1..1024"):
            with launch_settings(block=bad):
                pass


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["metropolis-c1", "uphill-c1"])
def test_launch_settings_keep_the_cpu_ancestors(method):
    # The profiler's builds and block sizes (launch_settings) change the
    # loads and the launch, never the draws: the ancestors stay the CPU's.
    import cupy
    import numpy as np

    import pfresample as pr

    w = np.random.default_rng(5).gamma(1.0, 2.0, 4096).astype(np.float32)
    cpu = pr.resample(w, method, seed=3, B=64, segment_bytes=128, backend="cpu")
    for block, loads in ((96, "l2"), (256, "l1"), (None, "nc")):
        with launch_settings(block=block, loads=loads):
            gpu = pr.resample(cupy.asarray(w), method, seed=3, B=64, segment_bytes=128)
        np.testing.assert_array_equal(cupy.asnumpy(gpu), cpu, err_msg=f"{block} {loads}")


def test_the_profiler_names_the_compiled_templates():
    names = profiler._family_functions("metropolis")
    assert names and all(n.startswith("metropolis<float,") for n in names)
    assert set(names) <= set(kernels.templates("metropolis.cu"))
    assert kernels.templates("no_such.cu") == ()


def test_parse_ncu_csv_reads_the_long_format():
    frame = profiler.parse_ncu_csv(_sample("nc"))
    assert list(frame["id"]) == list(range(10))
    assert frame["kernel"].iloc[0].startswith("void metropolis<float, 0, true>(")
    # "1,064" nsecond -> seconds; "128,000" sectors; "(64, 1, 1)" blocks read from the metric
    assert frame["duration"].iloc[0] == pytest.approx(1.064e-6)
    assert frame["ld_sectors"].iloc[0] == 128000
    assert frame["block_size"].iloc[0] == 64
    assert frame["shared_config"].iloc[0] == 32768
    l2 = profiler.parse_ncu_csv(_sample("l2"))
    assert math.isnan(l2["l1_hit_pct"].iloc[0])  # "n/a"
    with pytest.raises(ValueError, match="no ncu CSV header"):
        profiler.parse_ncu_csv("==PROF== nothing profiled\n")


def test_join_checks_the_launches_against_the_cells(cells):
    nc = profiler.parse_ncu_csv(_sample("nc"))
    with pytest.raises(ValueError, match="9 profiled kernels for 10 cells"):
        profiler.join(cells, nc.iloc[:9], "nc")
    wrong = nc.copy()
    wrong.loc[0, "kernel"] = "void uphill_b<float>(const float *)"
    with pytest.raises(ValueError, match="metropolis was expected"):
        profiler.join(cells, wrong, "nc")
    joined = profiler.join(cells, nc, "nc")
    assert joined["sectors_per_request"].iloc[0] == pytest.approx(10.0)
    assert joined["time_ms"].iloc[0] == pytest.approx(1.064e-3)


def test_tables_put_ours_beside_the_thesis(cells):
    measured = _measured(cells)
    tables = profiler.build_tables(measured)
    assert set(tables) == {"table5_3", "table5_4", "table5_5", "fig6_24_26"}
    t4 = tables["table5_4"]
    ours = t4[t4["source"] == "measured"].set_index(["label", "config", "n"])["time_ms"]
    t5 = tables["table5_5"]
    row = t5[(t5["source"] == "measured") & (t5["n"] == 1024)]
    row = row[row["config"] == "L1 off (ld.global.cg)"].iloc[0]
    cfg = ("L1 off (ld.global.cg)", 1024)
    assert row["label"] == "C1-128"
    assert row["speedup"] == pytest.approx(ours[("M", *cfg)] / ours[("C1-128", *cfg)])
    t3 = tables["table5_3"]
    thesis = t3[(t3["label"] == "M") & (t3["config"] == "thesis K40, 16 KB") & (t3["n"] == 1024)]
    assert thesis["l1_hit_pct"].tolist() == [99.72]
    fig = tables["fig6_24_26"]
    small = fig[(fig["config"] == "32-thread blocks") & (fig["source"] == "measured")]
    assert set(small["n"]) == {32} and set(small["block_size"]) == {32}
    assert "Uphill" in set(fig[fig["source"] != "measured"]["label"])
    md = profiler.markdown(tables, "header line")
    for title in ("Table 5.3", "Table 5.4", "Table 5.5", "Fig 6.24", "Figs 6.25-6.26"):
        assert f"## {title}" in md
    assert "| M | thesis K40, NO | 0.36 | 0.48 |" in md
    figure = profiler.profiler_figure(fig, "caption")
    assert len(figure.axes) == 3
    assert len(profiler.tidy(tables)) == sum(len(t) for t in tables.values())


@pytest.mark.slow
def test_tables_from_raw_files_on_the_command_line(tmp_path, cells):
    meta = {"device": "format sample", "ncu": "format sample", "distribution": "eq233-y4",
            "seed": 2017, "cells": profiler.cells_to_json(cells)}  # fmt: skip
    (tmp_path / profiler.PLAN).write_text(json.dumps(meta))
    for b in profiler.builds(cells):
        shutil.copy(DATA / f"ncu_format_sample_{b}.csv", tmp_path / profiler.raw_name(b))
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path), "--from-raw"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in tmp_path.iterdir()} == set(profiler.OUTPUTS)


@pytest.mark.slow
def test_missing_ncu_says_so_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(profiler.NcuMissing, match="needs Nsight Compute"):
        profiler.find_ncu()
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
        # no ncu on PATH; PYTHONPATH kept where the library runs from a source tree
        env={"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path),
             **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}},
    )  # fmt: skip
    assert proc.returncode != 0
    assert "dulger2017_profiler needs Nsight Compute (ncu) on PATH" in proc.stderr
    assert not out.exists()


@pytest.mark.slow
def test_schema_and_catalog_take_the_profiler_keys():
    schema = yaml.safe_load((ROOT / "config" / "schemas" / "config.schema.yaml").read_text())
    cfg = _config()
    jsonschema.validate(cfg, schema)
    catalog.check_config(cfg)
    with pytest.raises(jsonschema.ValidationError, match="101"):
        jsonschema.validate(_config(profiler_carveouts=[101]), schema)
    with pytest.raises(ValueError, match="profiler_table5_variants"):
        catalog.check_config(_config(profiler_table5_variants=["uphill"]))
    with pytest.raises(ValueError, match="is not defined"):
        catalog.check_config(_config(profiler_fig6_variants=["uphill-ca-ss64"]))


@pytest.mark.slow
def test_dry_run_of_the_rule_and_not_in_all(tmp_path):
    proc = snakemake(tmp_path, "-n", "dulger2017_profiler")
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output) == {"dulger2017_profiler": 1}
    proc = snakemake(tmp_path, "-n")
    assert proc.returncode == 0, proc.output
    assert "dulger2017_profiler" not in job_counts(proc.output)


RECORDED = ROOT / "evidence" / "2026-11-25-h100-8b42d82" / "dulger2017_profiler"


def test_the_recorded_h100_run_gives_its_tables():
    """ncu 2025.3's own report (H100, bench/device/profiler.sh), not a
    hand-written sample: it writes durations in "ns", which must come out in
    seconds, and every profiled kernel must meet its cell."""
    import pandas as pd

    meta = json.loads((RECORDED / profiler.PLAN).read_text())
    cells = profiler.cells_from_json(meta["cells"])
    l2 = profiler.parse_ncu_csv((RECORDED / profiler.raw_name("l2")).read_text())
    assert l2["duration"].iloc[0] == pytest.approx(21.12e-6)  # "21,120" ns
    assert (l2["duration"] > 0).all() and (l2["duration"] < 1.0).all()
    frames = [
        profiler.join(
            cells, profiler.parse_ncu_csv((RECORDED / profiler.raw_name(b)).read_text()), b
        )
        for b in profiler.builds(cells)
    ]
    tables = profiler.build_tables(pd.concat(frames, ignore_index=True))
    t54 = tables["table5_4"]
    first = t54[(t54["label"] == "M") & (t54["n"] == 1024) & (t54["source"] == "measured")]
    assert first.set_index("config").loc["L1 off (ld.global.cg)", "time_ms"] == pytest.approx(
        0.02112
    )


def test_an_unknown_time_unit_is_an_error():
    text = _sample("nc").replace('"nsecond"', '"fortnight"')
    with pytest.raises(ValueError, match="fortnight"):
        profiler.parse_ncu_csv(text)
