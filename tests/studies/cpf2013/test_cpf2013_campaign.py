"""The paired campaign of cpf2013 (target cpf2013_campaign, issue 61): its cells from the
config, its checks, and the target on a tiny grid against the study's functions."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pfresample_studies.cpf2013 import campaign, catalog, experiments, targets
from snake_tools import job_counts, snakemake

REPO = Path(__file__).resolve().parents[3]
CONFIG = {
    **yaml.safe_load((REPO / "config" / "config.yaml").read_text()),
    **yaml.safe_load((REPO / "config" / "studies" / "cpf2013.yaml").read_text()),
}
TINY = {
    "cpf2013_growth_steps": 12, "cpf2013_bot_steps": 6,
    "cpf2013_campaign_growth_trajectories": 3, "cpf2013_campaign_bot_trajectories": 3,
    "cpf2013_campaign": [
        {"model": "growth", "n": [64], "radius": [4, 16]},
        {"model": "growth", "n": [64], "radius": [4], "setup": "thesis"},
        {"model": "growth", "n": [64], "method": ["systematic"]},
        {"model": "bot", "n": [64], "radius": [4, 63]},
        {"model": "bot", "n": [64], "method": ["multinomial"]},
    ],
}  # fmt: skip
TIME_COLUMNS = re.compile(r"step|wall|seconds|backend|device|scale|_us|_ms|ratio")


def test_default_campaign_is_the_cpu_campaign():
    cells = campaign.cells(CONFIG)
    assert len(cells) == 37
    assert "cpf-bot-n2048-r2047-paper-float64-search" in cells
    assert "cpf-growth-n2048-r256-thesis-float64-search" in cells
    assert "sir-growth-n4096-multinomial-paper" in cells
    assert campaign.models(CONFIG) == ["growth", "bot"]
    catalog.check_config(CONFIG)


@pytest.mark.parametrize(
    "group, message",
    [
        ({"model": "bot", "n": [64], "radius": [64]}, "needs 1 <= radius <= N - 1"),
        ({"model": "bot", "n": [64], "method": ["cellular"]}, "global resampler"),
        ({"model": "growth", "n": [64], "radius": [4], "setup": "both"}, "setup 'both'"),
        (
            {
                "model": "bot",
                "n": [64],
                "radius": [4],
                "precision": "float32",
                "neighbourhood": "search",
            },
            "float32-search",
        ),  # fmt: skip
    ],
)
def test_campaign_checks_name_the_key(group, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        catalog.check_config({**CONFIG, "cpf2013_campaign": [group]})


def _direct_tables():
    """The campaign's tables from cells computed here with the study's functions."""
    loaded = []
    for spec in campaign.cells({**CONFIG, **TINY}).values():
        name = spec["model"]
        data = targets.simulate(name, 3, TINY[f"cpf2013_{name}_steps"], CONFIG["seed"])
        kw = {"seed": CONFIG["seed"], "backend": "cpu", "setup": spec["setup"]}
        if spec["kind"] == "cpf":
            loaded.append(experiments.cpf_cell(name, data, spec["n"], spec["radius"], **kw))
        else:
            loaded.append(experiments.sir_cell(name, data, spec["n"], spec["method"], **kw))
    return campaign.campaign_tables(loaded)


def _same(a: pd.DataFrame, b: pd.DataFrame, what: str) -> None:
    assert list(a.columns) == list(b.columns) and len(a) == len(b), what
    for col in a.columns:
        if TIME_COLUMNS.search(col):
            continue
        x, y = a[col], b[col]
        if x.dtype.kind in "fi" and y.dtype.kind in "fi":
            assert np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True), (what, col)
        else:
            assert (x.fillna("").astype(str) == y.fillna("").astype(str)).all(), (what, col)


@pytest.mark.slow
def test_campaign_target_matches_the_study(tmp_path):
    override = tmp_path / "tiny.yaml"
    override.write_text(yaml.safe_dump(TINY))
    args = ("cpf2013_campaign", "--configfile", str(override))
    proc = snakemake(tmp_path, *args, config=["backend=cpu"])
    assert proc.returncode == 0, proc.output
    assert job_counts(proc.output) == {
        "cpf2013_campaign_trajectories": 2, "cpf2013_campaign_cell": 7,
        "cpf2013_campaign_tables": 1, "cpf2013_campaign": 1,
    }  # fmt: skip
    direct = _direct_tables()
    out = tmp_path / "results" / "tables" / "cpf2013" / "campaign"
    for name in campaign.TABLES:
        path = out / (f"{name}.csv.gz" if name == "runs" else f"{name}.csv")
        ours = pd.read_csv(path, keep_default_na=False, na_values=[""]).drop(columns="scale")
        digits = "%.6g" if name == "runs" else "%.12g"  # as the target writes them
        text = direct[name].to_csv(index=False, float_format=digits)
        theirs = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
        _same(ours, theirs, name)
    paired = pd.read_csv(out / "paired.csv")
    assert "setup" in set(paired["comparison"])  # the two starts side by side
    again = snakemake(tmp_path, *args, config=["backend=cpu"])
    assert again.returncode == 0 and "Nothing to be done" in again.output, again.output
