"""B selection: Murray et al.'s formula and the Uphill SSD match (§6.4)."""

import math

import numpy as np
import pytest

from pfresample import expectation, tuning
from pfresample.constants import UPHILL_B_MAX
from pfresample_studies.dulger2017.weights import generate
from pfresample_studies.pipeline import artifacts
from pfresample_studies.pipeline.artifacts import save_npz


def test_metropolis_B_formula():
    w = np.array([1.0, 1.0, 2.0, 4.0])  # beta = 2/4
    assert tuning.metropolis_B(w, 0.01) == math.ceil(math.log(0.01) / math.log(0.5)) == 7
    assert tuning.metropolis_B(w, 0.1) == 4
    assert tuning.metropolis_B(np.ones(10)) == 0


def test_metropolis_B_for_eq233_y4_is_about_350():
    """The thesis's y = 4 weights need B of about 350 for eps = 1/100 (§6.5)."""
    bs = [tuning.metropolis_B(generate("eq233-y4", 1 << 16, s, 0)) for s in range(4)]
    assert all(250 < b < 450 for b in bs), bs


@pytest.mark.parametrize("eps", [0.0, 1.0, -0.1])
def test_metropolis_B_rejects_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        tuning.metropolis_B(np.ones(4), eps)


def test_ssd_of_a_sequence():
    """Eq. 6.5 by hand: P = (1, 3): N P / sum P = (0.5, 1.5) -> 0.25 + 0.25."""
    assert tuning.ssd([1.0, 3.0]) == pytest.approx(0.5)
    assert tuning.ssd(np.full(7, 2.5)) == 0.0


@pytest.mark.parametrize("n", [4, 37, 256, 1024])
def test_ssd_table_equals_ssd_of_the_uphill_expectation(n):
    table = tuning.ssd_table(n, b_max=600)
    w = np.arange(1, n + 1, dtype=np.float64)  # distinct, sorted: ranks 1..N
    for b in (0, 1, 2, 7, 50, 600):
        assert table[b] == pytest.approx(tuning.ssd(expectation.uphill(w, b)), rel=1e-9, abs=1e-12)
    assert table[0] == pytest.approx(0.0, abs=1e-20)
    # FIND-B needs a monotone table; it rises strictly until it saturates at
    # N(N-1) (all offspring on the heaviest particle), which small N reach
    assert np.all(np.diff(table) >= 0)
    rising = table[:-1] < n * (n - 1) * (1 - 1e-12)
    assert np.all(np.diff(table)[rising] > 0)
    assert table[-1] <= n * (n - 1)  # all offspring on one particle: (N-1)^2 + (N-1)


def test_ssd_table_default_length():
    assert tuning.ssd_table(64).shape == (UPHILL_B_MAX + 1,)


def test_find_B_is_algorithm_6_5():
    table = np.array([0.0, 1.0, 3.0, 6.0])
    # B = 0 when value <= table[0]; B = i when table[i-1] < value <= table[i]
    assert [tuning.find_B(table, v) for v in (-1, 0, 0.5, 1, 2.9, 3, 5, 6)] == [
        0,
        0,
        1,
        1,
        2,
        2,
        3,
        3,
    ]
    assert tuning.find_B(table, 100.0) == 3  # beyond the table: its largest B


def test_uphill_B_grows_with_weight_variance():
    n = 1 << 12
    table = tuning.ssd_table(n)
    bs = [tuning.uphill_B(generate(f"eq233-y{y}", n, 0, 0), table) for y in range(5)]
    assert bs == sorted(bs) and bs[0] < bs[-1], bs
    assert tuning.uphill_B(np.ones(n), table) == 0


def test_ssd_table_artifact_is_cached_and_regenerated_when_corrupt(tmp_path):
    path = tmp_path / "ssd" / "64.npz"
    table = artifacts.load_or_compute_ssd_table(path, 64)
    np.testing.assert_array_equal(table, tuning.ssd_table(64))
    stamp = path.stat().st_mtime_ns
    np.testing.assert_array_equal(artifacts.load_or_compute_ssd_table(path, 64), table)
    assert path.stat().st_mtime_ns == stamp  # read, not recomputed
    path.write_bytes(path.read_bytes()[:50])  # truncate
    np.testing.assert_array_equal(artifacts.load_or_compute_ssd_table(path, 64), table)
    save_npz(path, {"ssd": np.zeros(3)}, {"n": 64})  # wrong shape: recomputed
    np.testing.assert_array_equal(artifacts.load_or_compute_ssd_table(path, 64), table)
