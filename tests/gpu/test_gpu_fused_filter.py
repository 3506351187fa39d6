"""The fused GPU filter run (filters/sir_fused.py, gpu_kernels/fused.cu) against the graph.

Run on a GPU: ``pytest -m gpu``.

The fused run computes the numbers of the graph (filters/sir_gpu.py) in one
kernel -- the same noise, float64 sums over the graph's blocks, prefix sum and
ancestors -- so the tests are exact: its estimates equal the graph's bit for bit
at every N (one particle, partial Philox blocks, partial and several scan
tiles, more virtual blocks than resident ones), for every grid size, over
repeated runs; and its RMSE agrees with the CPU filter's as the graph's does.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfresample.cuda import geometry
from pfresample.filters import SIR_OPTIONS, rmse, run_filter, sir_fused
from pfresample.filters.graph import GRAPHS, clear_graphs
from pfresample.filters.sir_gpu import run_sir_gpu
from pfresample.models import SCENARIOS, GrowthModel, RadarModel, truth_trajectory
from pfresample.resampling.registry import get_method

cupy = pytest.importorskip("cupy")


def run_sir(model, y, n, method, seed, **kw):
    """Dülger's Algorithm 2.4 through the engine (``run_filter`` with
    ``SIR_OPTIONS``), on the CPU unless told."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


pytestmark = pytest.mark.gpu

GROWTH = GrowthModel()
SYSTEMATIC = get_method("systematic")


def _run(model, y, n, seed, method=SYSTEMATIC, **kw):
    return run_sir_gpu(model, y, n, method, seed, stage_times=False, **kw)


@pytest.mark.parametrize(
    "n", [1, 2, 5, 1000, 4095, 4096, 4097, 3 * 4096 + 17, 2**14, 2**16 + 3, 2**18, 2**20]
)
def test_fused_run_equals_the_graph_bit_for_bit(n):
    _, y = GROWTH.simulate(60, np.random.default_rng(n))
    for seed in (0, 1):
        fused = _run(GROWTH, y, n, seed, fused=True)
        graph = _run(GROWTH, y, n, seed, fused=False)
        np.testing.assert_array_equal(fused.estimates, graph.estimates)
        assert fused.backend == "cuda" and fused.method == "systematic" and fused.n == n
        assert fused.stage_seconds.shape == (60, 4) and np.all(fused.stage_seconds > 0)
        assert fused.total_seconds == pytest.approx(fused.stage_seconds.sum(), rel=1e-12)
        assert fused.wall_seconds >= fused.total_seconds
        assert np.all(fused.B == -1)


@pytest.mark.parametrize("n", [3 * 4096 + 17, 2**18 - 5, 2**20 - 5])
def test_every_grid_gives_the_same_run(n):
    # A resident block takes virtual blocks b, b + G, ...: the sums' order is
    # the graph's whatever G is, down to one block doing everything. Phase
    # 4's slices are a tile each on the small grids, 1024 particles on the
    # large ones (geometry.fused_slice_items): the same ancestors.
    _, y = GROWTH.simulate(25, np.random.default_rng(7))
    reference = _run(GROWTH, y, n, 3, fused=False).estimates
    resident = sir_fused.resident_blocks()
    sizes = set()
    for blocks in (1, 2, 7, None, resident):
        fused = sir_fused.FusedRun(GROWTH, n, y.shape[0], blocks=blocks)
        sizes.add(fused.function)
        run = fused.run(y, 3)
        np.testing.assert_array_equal(run.estimates, reference, err_msg=f"blocks={blocks}")
    assert len(sizes) == (2 if n <= 2**18 else 1)  # above 2^18 every grid takes tiles


@pytest.mark.parametrize("cluster", geometry.FUSED_CLUSTERS)
@pytest.mark.parametrize("n", [5, 3 * 4096 + 17, 2**14, 2**16 + 3, 2**18 - 5])
def test_a_grid_of_one_cluster_gives_the_same_run(n, cluster):
    # The cluster's hardware barrier in place of the grid barrier: the same
    # virtual blocks, so the graph's estimates and log-likelihoods bit for bit,
    # with the blocks wherever the driver puts them and one an SM (spread),
    # and over a second run; the grid barrier's count is never touched.
    if int(cupy.cuda.Device().compute_capability) < 90:
        pytest.skip("thread block clusters need compute capability 9.0")
    _, y = GROWTH.simulate(25, np.random.default_rng(n))
    graph = [_run(GROWTH, y, n, seed, fused=False).estimates for seed in (3, 4)]
    grid = sir_fused.FusedRun(GROWTH, n, y.shape[0])
    log_z = [grid.run(y, seed).log_likelihood_steps for seed in (3, 4)]
    for spread in (False, True):
        run = sir_fused.FusedRun(GROWTH, n, y.shape[0], cluster=cluster, spread=spread)
        assert run.blocks == cluster and "cluster" in run.function
        for seed, estimates, steps in zip((3, 4), graph, log_z, strict=True):
            result = run.run(y, seed)
            np.testing.assert_array_equal(result.estimates, estimates)
            np.testing.assert_array_equal(result.log_likelihood_steps, steps)
        assert int(run.bar[0].get()) == 0
    with pytest.raises(ValueError, match="cluster must be one of"):
        sir_fused.FusedRun(GROWTH, n, 5, cluster=cluster + 1)
    with pytest.raises(ValueError, match="a run on one cluster has"):
        sir_fused.FusedRun(GROWTH, n, 5, cluster=cluster, blocks=cluster // 2)


def test_the_default_run_up_to_2_14_is_one_cluster_and_falls_back(monkeypatch):
    # run_filter's fused run at N <= geometry.FUSED_CLUSTER_N is one cluster
    # (where clusters exist), the graph's estimates bit for bit; where the
    # cluster does not launch, the cooperative grid with a warning, from then on.
    _, y = GROWTH.simulate(20, np.random.default_rng(12))
    n = 2**14
    clusters = int(cupy.cuda.Device().compute_capability) >= 90
    clear_graphs("fused")
    fast = run_sir(GROWTH, y, n, "systematic", 2, backend="cuda", stage_times=False)
    (state,) = GRAPHS.entries("fused")
    assert state.cluster == (geometry.FUSED_CLUSTER if clusters else 0)
    np.testing.assert_array_equal(fast.estimates, _run(GROWTH, y, n, 2, fused=False).estimates)
    clear_graphs("fused")
    made = sir_fused.FusedRun

    def refuse(*args, cluster=0, **kw):
        if cluster:
            raise cupy.cuda.driver.CUDADriverError(912)  # CUDA_ERROR_INVALID_CLUSTER_SIZE
        return made(*args, **kw)

    monkeypatch.setattr(sir_fused, "FusedRun", refuse)
    monkeypatch.setattr(sir_fused, "_NO_CLUSTERS", set())
    with pytest.warns(RuntimeWarning, match="did not launch"):
        fallback = run_sir(GROWTH, y, n, "systematic", 2, backend="cuda", stage_times=False)
    np.testing.assert_array_equal(fallback.estimates, fast.estimates)
    (state,) = GRAPHS.entries("fused")
    assert state.cluster == 0 and state.blocks == sir_fused.default_blocks(n)
    assert sir_fused.default_cluster(n) == 0  # not tried again
    clear_graphs("fused")


def test_long_runs_repeat_and_count_every_barrier():
    _, y = GROWTH.simulate(400, np.random.default_rng(11))
    n = 2**14 + 5
    a = _run(GROWTH, y, n, 21, fused=True)
    b = _run(GROWTH, y, n, 22, fused=True)
    c = _run(GROWTH, y, n, 21, fused=True)  # after another run
    np.testing.assert_array_equal(a.estimates, c.estimates)
    assert not np.array_equal(a.estimates, b.estimates)
    np.testing.assert_array_equal(a.estimates, _run(GROWTH, y, n, 21, fused=False).estimates)
    state = sir_fused.fused_run(GROWTH, n, y.shape[0])
    barriers = 1 + 4 * y.shape[0]  # after the initial particles, then four a step
    assert int(state.bar[0].get()) == barriers * state.blocks


def test_run_sir_without_stage_times_takes_the_fused_run():
    _, y = GROWTH.simulate(30, np.random.default_rng(5))
    n = 2**12 + 1
    clear_graphs("fused")
    fast = run_sir(GROWTH, y, n, "systematic", 4, backend="cuda", stage_times=False)
    assert len(GRAPHS.entries("fused")) == 1 and GRAPHS.entries("fused")[0].n == n
    timed = run_sir(GROWTH, y, n, "systematic", 4, backend="cuda")
    np.testing.assert_array_equal(fast.estimates, timed.estimates)
    assert np.all(timed.stage_seconds > 0)
    run_sir(GROWTH, y, n, "metropolis", 4, backend="cuda", stage_times=False)
    assert len(GRAPHS.entries("fused")) == 1  # metropolis took the graph
    large = geometry.FUSED_DEFAULT_MAX_N + 1  # the graph is the faster there
    run_sir(GROWTH, y, large, "systematic", 4, backend="cuda", stage_times=False)
    assert [r.n for r in GRAPHS.entries("fused")] == [n]


def test_rmse_agrees_with_the_cpu_filter():
    # Paired, trajectory by trajectory, as tests/gpu/test_gpu_filter.py: E[d] = 0
    # for d = RMSE_fused - RMSE_cpu, and |mean d| < 4 standard errors of the
    # mean fails a correct filter with probability ~6e-5.
    d = []
    for j in range(16):
        truth, y = GROWTH.simulate(100, np.random.default_rng(2000 + j))
        for r in range(2):
            seed = 1000 * j + r
            gpu = run_sir(GROWTH, y, 2**10, "systematic", seed, backend="cuda", stage_times=False)
            cpu = run_sir(GROWTH, y, 2**10, "systematic", seed, backend="cpu")
            d.append(rmse(gpu.estimates, truth[1:]) - rmse(cpu.estimates, truth[1:]))
    d = np.array(d)
    assert abs(d.mean()) < 4 * d.std(ddof=1) / math.sqrt(d.size)


def test_a_nan_measurement_stops_the_run_at_its_step():
    _, y = GROWTH.simulate(10, np.random.default_rng(3))
    y = y.copy()
    y[3] = np.nan
    with pytest.raises(FloatingPointError, match="from step 4 on"):
        _run(GROWTH, y, 256, 1, fused=True)


def test_what_the_fused_run_does_not_cover_is_refused():
    _, y = GROWTH.simulate(5, np.random.default_rng(1))
    with pytest.raises(NotImplementedError, match="'metropolis'"):
        _run(GROWTH, y, 256, 1, method=get_method("metropolis"), fused=True)
    radar = RadarModel()
    truth = truth_trajectory(SCENARIOS["scenario1"], radar)[:6]
    z = radar.simulate_measurements(truth[1:], np.random.default_rng(1))
    with pytest.raises(NotImplementedError, match="RadarModel"):
        _run(radar, z, 256, 1, fused=True)
    with pytest.raises(ValueError, match="N <= "):
        sir_fused.FusedRun(GROWTH, geometry.FUSED_MAX_N + 1, 5)
    with pytest.raises(ValueError, match="blocks must be in"):
        sir_fused.FusedRun(GROWTH, 256, 5, blocks=sir_fused.resident_blocks() + 1)


@pytest.mark.parametrize("n", [5, 2**14, 2**18 - 5])
def test_the_replayed_run_equals_the_enqueued_one_bit_for_bit(n):
    # A run replays one captured graph (pinned inputs up, the kernel, out back)
    # where the driver captures the cooperative launch, else enqueues the three;
    # both give the graph's estimates, the same log-likelihoods, and the
    # barrier's count, zeroed by each upload, ends every run at the same value.
    _, y = GROWTH.simulate(30, np.random.default_rng(9))
    reference = _run(GROWTH, y, n, 6, fused=False).estimates
    first, counts = {}, set()
    for replay in (True, False):
        run = sir_fused.FusedRun(GROWTH, n, y.shape[0], replay=replay)
        if not replay:
            assert run.graph is None
        runs = [run.run(y, seed) for seed in (6, 7, 6)]
        counts.add(int(run.bar[0].get()))
        np.testing.assert_array_equal(runs[0].estimates, reference)
        np.testing.assert_array_equal(runs[2].estimates, reference)  # after another seed's run
        assert not np.array_equal(runs[1].estimates, reference)
        assert runs[0].wall_seconds >= runs[0].total_seconds > 0
        first[replay] = runs[0]
    np.testing.assert_array_equal(
        first[True].log_likelihood_steps, first[False].log_likelihood_steps
    )
    assert counts == {(1 + 4 * y.shape[0]) * sir_fused.default_blocks(n)}
