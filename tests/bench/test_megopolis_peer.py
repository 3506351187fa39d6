"""CPU checks of bench/peers/megopolis_repo.py on the peer's own output,
recorded on the H200 (evidence/2026-11-25-h200-2c810b3/megopolis/megopolis_repo_raw_*)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
RECORDED = BENCH.parent / "evidence" / "2026-11-25-h200-2c810b3" / "megopolis"


@pytest.fixture(scope="module")
def peer():
    sys.path.insert(0, str(BENCH))  # the script imports the bench folder's _common
    spec = importlib.util.spec_from_file_location(
        "megopolis_repo", BENCH / "peers" / "megopolis_repo.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reads_the_recorded_peer_csv(peer):
    rows = peer.read_peer_csv(RECORDED / "megopolis_repo_raw_n16777216_Megopolis_354.csv")
    assert len(rows) == 1
    r = rows[0]
    assert r["n"] == 2**24
    assert r["mse_per_n"] == pytest.approx(0.651, abs=5e-4)  # the run's printed MSE/N
    assert r["mean_ms"] == pytest.approx(19.166, abs=5e-3)  # printed in ms, stored in s


def test_finds_each_method_file_and_not_its_namesakes(peer, tmp_path):
    for name in ("Metropolis_354.csv", "MetropolisC1_354_32.csv", "MetropolisC2_354_32.csv"):
        (tmp_path / name).write_text("")
    assert peer.peer_file(tmp_path, "Metropolis").name == "Metropolis_354.csv"
    assert peer.peer_file(tmp_path, "MetropolisC1").name == "MetropolisC1_354_32.csv"
    with pytest.raises(FileNotFoundError, match="Megopolis"):
        peer.peer_file(tmp_path, "Megopolis")


def test_config_matches_the_recorded_run(peer):
    recorded = json.loads((RECORDED / "megopolis_repo_raw_n16777216_config.json").read_text())
    made = peer.peer_config(2**24, 354, 4.0, 8, 2, 32, 1234, recorded["output_prefix"])
    assert made == recorded
    c1 = next(m for m in made["resample_methods"] if m["type"] == "MetropolisC1")
    assert c1 == {"type": "MetropolisC1", "mode": "Constant", "iters": 354, "segment_size": 32}


def test_mse_per_n_by_hand(peer):
    w = np.array([1.0, 3.0])  # N w / sum w = (0.5, 1.5)
    # offspring (0, 2): ((0 - 0.5)^2 + (2 - 1.5)^2) / 2 = 0.25
    assert peer.mse_per_n(np.array([1, 1]), w) == pytest.approx(0.25)
