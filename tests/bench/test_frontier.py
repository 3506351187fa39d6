"""CPU checks of the quality-time frontier: bench/frontier.py's CSV on the CPU
backend at a small N, its MSE/N against an independent computation and
against theory, the peer's rows through a stand-in for its binary, the
figure of bench/frontier_figure.py, and its Pareto frontier."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import pfresample as pr
from pfresample_studies.dulger2017 import weights

BENCH = Path(__file__).resolve().parents[2] / "bench"
N = 2**10


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def frontier():
    return _load("frontier", BENCH / "frontier.py")


@pytest.fixture(scope="module")
def figure():
    return _load("frontier_figure", BENCH / "frontier_figure.py")


@pytest.fixture(scope="module")
def peer():
    sys.path.insert(0, str(BENCH))  # the script imports the bench folder's _common
    return _load("megopolis_repo_for_frontier", BENCH / "peers" / "megopolis_repo.py")


@pytest.fixture(scope="module")
def run_csv(frontier, tmp_path_factory):
    path = tmp_path_factory.mktemp("frontier") / "frontier.csv"
    argv = ["--backend", "cpu", "--sizes", f"2^{int(math.log2(N))}", "--repeats", "2",
            "--warmup", "1", "--mse-calls", "3", "--methods", "systematic", "metropolis",
            "--commit", "abc1234", "--csv", str(path)]  # fmt: skip
    assert frontier.main(argv) == 0
    return path


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_one_row_a_cell_with_every_column(frontier, run_csv):
    rows = _rows(run_csv)
    with open(run_csv, newline="") as f:
        assert next(csv.reader(f)) == frontier.FIELDS
    cells = {(r["method"], r["distribution"], r["precision"]) for r in rows}
    assert cells == {
        (m, d, p)
        for m in ("systematic", "metropolis")
        for d in ("eq233-y4", "gamma-k1-s2")
        for p in ("float32", "float64")
    }
    assert len(rows) == len(cells)
    for r in rows:
        assert (r["library"], r["backend"], r["clock"], r["commit"]) == (
            "pfresample",
            "cpu",
            "host",
            "abc1234",
        )
        assert (int(r["n"]), int(r["repeats"]), int(r["mse_calls"])) == (N, 2, 3)
        assert float(r["time_ms"]) > 0 and r["date"] and r["device"]
        # B as the library chooses it: none for systematic, Murray's rule for Metropolis
        w = weights.generate(r["distribution"], N, 0, seed=0, dtype=r["precision"])
        expected_B = pr.choose_B(w, "metropolis") if r["method"] == "metropolis" else None
        assert (int(r["B"]) if r["B"] else None) == expected_B


def test_mse_per_n_equals_an_independent_computation(run_csv, peer):
    """The CSV's MSE/N is the mean over the calls with seeds 1..3 of
    bench/peers/megopolis_repo.py's mse_per_n (host bincount, float64)."""
    for r in _rows(run_csv):
        w = weights.generate(r["distribution"], N, 0, seed=0, dtype=r["precision"])
        by_hand = np.mean(
            [peer.mse_per_n(pr.resample(w, r["method"], seed=s), w) for s in (1, 2, 3)]
        )
        assert float(r["mse_per_n"]) == pytest.approx(by_hand, rel=1e-12)


def test_mse_per_n_on_equal_weights_matches_theory(frontier):
    n, calls = 2**12, 8
    w = np.ones(n, dtype=np.float32)
    # Systematic on equal weights gives every particle exactly one offspring.
    assert frontier.mse_per_n_of_calls(w, "systematic", range(1, calls + 1), "cpu", {}) == 0.0
    # Multinomial: o_i ~ Binomial(N, 1/N), so E[(o_i - 1)^2] = 1 - 1/N. Per
    # call, SE/N is a mean of N such terms of variance about mu_4 - 1 = 3
    # (Poisson(1): mu_4 = 1 + 3), so the mean of `calls` calls has standard
    # deviation about sqrt(3 / (N calls)); allow five of them.
    mse = frontier.mse_per_n_of_calls(w, "multinomial", range(1, calls + 1), "cpu", {})
    assert mse == pytest.approx(1 - 1 / n, abs=5 * math.sqrt(3 / (n * calls)))


def _stand_in_peer(folder: Path) -> Path:
    """An executable that answers a peer configuration as resample_test does:
    one CSV a method type (particles, mse, time in s) at the config's prefix."""
    script = folder / "resample_test"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        "config = json.load(open(sys.argv[1]))\n"
        "n = config['particle_values'][0][0]\n"
        "for k, m in enumerate(config['resample_methods']):\n"
        "    tail = ''.join(f\"_{m[key]}\" for key in ('iters', 'segment_size') if key in m)\n"
        "    with open(config['output_prefix'] + m['type'] + tail + '.csv', 'w') as f:\n"
        '        f.write(f"particles,mse,time\\n{n},{0.5 + k},{0.001 * (k + 1)}\\n")\n'
        f"json.dump(config, open({str(folder / 'seen.json')!r}, 'w'))\n"
    )
    script.chmod(0o755)
    return script


def test_peer_rows_from_the_peers_files(frontier, peer, tmp_path):
    binary = _stand_in_peer(tmp_path)
    args = frontier.parse_args(["--backend", "cpu", "--repeats", "4"])
    args.peer_binary = binary  # parse_args allows the peer with a CUDA device only
    rows = frontier.peer_rows(args, N)
    B = pr.choose_B(weights.generate("eq233-y4", N, 0, seed=0), "metropolis")
    assert [r["method"] for r in rows] == list(peer.METHODS)
    for k, r in enumerate(rows):
        assert (r["library"], r["distribution"], r["precision"], r["n"]) == (
            "megopolis-repo",
            "eq233-y4",
            "float32",
            N,
        )
        assert r["B"] == ("" if r["method"] == "systematic" else B)
        assert r["segment_bytes"] == (128 if r["method"] in peer.SEGMENTED else None)
        assert r["mse_per_n"] == pytest.approx(0.5 + k)
        assert r["time_ms"] == pytest.approx(1.0 * (k + 1))  # the file's seconds, in ms
        assert (r["time_stat"], r["clock"], r["repeats"]) == ("mean", "host", 4)
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["particle_values"] == [[N, N]]
    assert (seen["iters"], seen["weight_sequences"]) == (4, 1)  # --repeats calls, one sequence
    assert seen["weight_params"] == [{"method": "RelativeVar", "y": 4.0}]
    c1 = next(m for m in seen["resample_methods"] if m["type"] == "MetropolisC1")
    assert c1 == {"type": "MetropolisC1", "mode": "Constant", "iters": B, "segment_size": 32}


def test_peer_needs_a_cuda_run(frontier, tmp_path):
    binary = _stand_in_peer(tmp_path)
    with pytest.raises(SystemExit):
        frontier.parse_args(["--backend", "cpu", "--peer-binary", str(binary)])


@pytest.mark.slow
def test_figure_of_the_run(figure, run_csv, tmp_path):
    rows = _rows(run_csv)
    # The peer's rows as the run would add them, to draw its style too.
    peer_rows = [
        {**r, "library": "megopolis-repo", "time_stat": "mean", "first_call_ms": ""}
        for r in rows
        if r["distribution"] == "eq233-y4" and r["precision"] == "float32"
    ]
    path = tmp_path / "with_peer.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows + peer_rows)
    out = tmp_path / "figure" / "frontier.png"
    assert figure.main(["--csv", str(path), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000


def test_pareto_front_by_hand(figure):
    points = [
        (1.0, 5.0),  # 0: fastest
        (2.0, 3.0),  # 1
        (3.0, 4.0),  # 2: dominated by 1
        (4.0, 1.0),  # 3: most accurate
        (2.0, 3.0),  # 4: a duplicate of 1: neither beats the other
        (5.0, 1.0),  # 5: as accurate as 3, slower
        (1.0, 6.0),  # 6: as fast as 0, less accurate
        (0.5, 9.0),  # 7: faster than all, least accurate
    ]
    times, errors = zip(*points, strict=True)
    assert figure.pareto_front(times, errors) == [7, 0, 1, 4, 3]
    assert figure.pareto_front([1.0], [2.0]) == [0]


def test_log_limits_span_a_decade(figure):
    assert figure.at_least_a_decade(0.1, 5.0) == (0.1, 5.0)
    low, high = figure.at_least_a_decade(2.0, 3.0)
    assert high / low == pytest.approx(10.0)
    assert low * high == pytest.approx(6.0)
