"""The CUDA backend against the CPU reference (run on the H200: ``pytest -m gpu``).

* Philox: the device's draws equal NumPy's, bit for bit, over 2^22 draws.
* Parity: every comparison-based method returns the CPU reference's
  ancestors for the same seed (DESIGN.md, "Random numbers") -- N = 2^10,
  2^16, 2^20; gamma and eq. 2.33 weights; SS = 128 and 2048; B from the
  formulas and fixed; float64 weights; several seeds per launch; and the
  launch shapes where warps are not shared (N = 16, a block size that is not
  a multiple of 32); every number of threads a lane (1 to 32) for the kernels
  that split a lane's work; the Metropolis family's acceptance on both sides
  of its product test's floor (subnormal and zero weights).
* B: the device chooses the CPU's B (Metropolis formula, Uphill SSD + FIND-B).
* Bad input on device arrays raises the host's errors.
* Memory: repeated calls of the same size allocate nothing new.
* Cumulative family (Systematic, Stratified, Multinomial, Residual): with a
  float64 prefix sum the device's ancestors equal the CPU's (the summation
  orders differ, but not by enough to move a draw here); with float32 the
  mean offspring over K draws is N w_i / sum w (the tolerance of
  test_statistics.py); one particle with all the weight fills every slot.
"""

from __future__ import annotations

import numpy as np
import pytest

import pfresample as pr
from pfresample import expectation, rng
from pfresample.cuda import geometry, kernels
from pfresample.resampling.registry import REGISTRY, ancestor_methods
from pfresample_studies.dulger2017 import weights

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

COMPARISON = [name for name, m in ancestor_methods().items() if m.comparison_based]
SEGMENTED = [name for name, m in ancestor_methods().items() if m.segmented]
CUMULATIVE = [name for name, m in ancestor_methods().items() if "precision" in m.params]
SEED = 2**40 + 12345  # a seed with both key words non-zero


def weights_of(kind: str, n: int, dtype=np.float32) -> np.ndarray:
    name = "gamma-k1-s2" if kind == "gamma" else "eq233-y4"
    return weights.generate(name, n, 0, seed=7, dtype=dtype)


def test_cuda_backend_is_what_auto_picks_for_device_arrays():
    w = cupy.asarray(weights_of("gamma", 1024))
    a = pr.resample(w, "metropolis", seed=1)
    assert isinstance(a, cupy.ndarray) and a.dtype == np.int32 and a.shape == (1024,)


# ------------------------------------------------------------------ Philox


PHILOX_PROBE = r"""
#include "philox.cuh"
extern "C" __global__ void probe(unsigned long long seed, unsigned int domain,
                                 unsigned int streams, unsigned int* draws, float* f01,
                                 float* accept, unsigned int* ints, unsigned int n) {
    const unsigned int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= streams) return;
    pfr::PhiloxStream st = pfr::make_stream(pfr::split_seed(seed), domain, s);
    for (int c = 0; c < 4; ++c) {
        const unsigned int x = st.next();
        draws[4 * s + c] = x;
        f01[4 * s + c] = pfr::uniform_float(x);
        accept[4 * s + c] = pfr::uniform_accept(x);
        ints[4 * s + c] = pfr::uniform_int(x, n);
    }
}
"""


@pytest.mark.parametrize("domain", [rng.DOMAIN_PARTICLE, rng.DOMAIN_WARP, rng.DOMAIN_GLOBAL])
def test_philox_device_equals_numpy_over_millions_of_draws(domain, tmp_path):
    (tmp_path / "probe.cu").write_text(PHILOX_PROBE)
    code = PHILOX_PROBE.replace('#include "philox.cuh"', kernels.source("philox.cuh"))
    probe = kernels.Module(code).get_function("probe")
    streams, n = 1 << 20, 1_000_003  # 2^22 draws; a non-power-of-two n
    out = [cupy.empty(4 * streams, dtype=t) for t in (np.uint32, np.float32, np.float32, np.uint32)]
    probe(
        (streams // 256,),
        (256,),
        (np.uint64(SEED), np.uint32(domain), np.uint32(streams), *out, np.uint32(n)),
    )
    words = np.stack(rng.philox_block(rng.split_seed(SEED), np.arange(streams), 0, domain), axis=1)
    words = words.astype(np.uint32).ravel()
    draws, f01, accept, ints = (x.get() for x in out)
    np.testing.assert_array_equal(draws, words)
    np.testing.assert_array_equal(f01, rng.uniform_float(words))
    np.testing.assert_array_equal(accept, rng.uniform_accept(words))
    np.testing.assert_array_equal(ints, rng.uniform_int(words, n))


# ------------------------------------------------------------------ parity


def assert_same_ancestors(w: np.ndarray, method: str, seeds, **kw):
    cpu = pr.resample_many(w, method, seeds=seeds, backend="cpu", **kw)
    dev = pr.resample_many(cupy.asarray(w), method, seeds=seeds, backend="cuda", **kw)
    assert isinstance(dev, cupy.ndarray)
    dev = dev.get()
    mismatch = np.flatnonzero(cpu.ravel() != dev.ravel())
    assert mismatch.size == 0, (
        f"{mismatch.size} of {cpu.size} ancestors differ, first at {mismatch[:5]}"
    )


@pytest.mark.parametrize("log2n", [10, 16, 20])
@pytest.mark.parametrize("kind", ["gamma", "eq233"])
@pytest.mark.parametrize("method", COMPARISON)
def test_parity_with_the_cpu_reference_B_from_the_formulas(method, kind, log2n):
    w = weights_of(kind, 1 << log2n)
    ss_values = [128, 2048] if method in SEGMENTED else [None]
    for ss in ss_values:
        kw = {} if ss is None else {"segment_bytes": ss}
        assert_same_ancestors(w, method, [SEED], **kw)


@pytest.mark.parametrize("log2n", [10, 16])
@pytest.mark.parametrize("method", [m for m in COMPARISON if REGISTRY[m].B_rule])
def test_parity_with_fixed_B_and_several_seeds(method, log2n):
    w = weights_of("gamma", 1 << log2n)
    for B in (0, 1, 7, 130):  # 130: past one run of 128 shared warp draws
        kw = {"segment_bytes": 128} if method in SEGMENTED else {}
        assert_same_ancestors(w, method, [SEED, 1, 2, 3], B=B, **kw)


@pytest.mark.parametrize("method", COMPARISON)
def test_parity_with_float64_weights(method):
    w = weights_of("eq233", 1 << 12, dtype=np.float64)
    kw = {"segment_bytes": 256} if method in SEGMENTED else {}
    assert_same_ancestors(w, method, [SEED, 5], **kw)


@pytest.mark.parametrize("spread", ["mixed", "subnormal"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("method", ["metropolis", "metropolis-c1", "metropolis-c2", "megopolis"])
def test_parity_of_the_acceptance_products_at_zero_and_subnormal_weights(method, dtype, spread):
    # The Metropolis family tests fl(u * w_t) < w_j: zeros, subnormals and
    # normals under a maximum of 1 ("mixed"), and weights that are all
    # subnormal, which both backends scale by the same power of two first
    # (sums.ratio_scale).
    info = np.finfo(dtype)
    tiny, least = float(info.tiny), float(info.smallest_subnormal)
    if spread == "mixed":
        levels = [0.0, least, tiny / 8, tiny * 2.0**20, tiny * 2.0**30, 1.0]
    else:
        levels = [0.0, least, 2 * least, 7 * least, tiny / 8]
    w = np.resize(np.array(levels, dtype), 1 << 12)
    kw = {"segment_bytes": 32 * w.itemsize} if method in SEGMENTED else {}
    for B in (1, 2, 40):
        assert_same_ancestors(w, method, [SEED, 3], B=B, **kw)


@pytest.mark.parametrize("method", COMPARISON)
def test_parity_where_warps_are_not_shared(method, monkeypatch):
    # N = 16 (the thesis's smallest N: a warp is smaller than 32 lanes), and
    # a block size that is not a multiple of 32 (warps straddle blocks).
    kw = {"segment_bytes": 128} if method in SEGMENTED else {}
    assert_same_ancestors(weights_of("gamma", 16), method, [SEED, 9, 10], **kw)
    monkeypatch.setenv("PFRESAMPLE_BLOCK_SIZE", "48")
    if REGISTRY[method].B_rule:
        kw["B"] = 200
    assert_same_ancestors(weights_of("gamma", 1024), method, [SEED, 11], **kw)


@pytest.mark.parametrize("method", ["rejection", "uphill", "uphill-ca", "uphill-c1"])
def test_parity_for_every_lane_group(method, monkeypatch):
    # However many threads share a lane's work (geometry.lane_group: Rejection's
    # attempts, the Uphill family's B candidates), the ancestors are the
    # CPU's. B below, at and past four iterations a thread and past one run
    # of shared warp draws; for Rejection, one heavy particle among light
    # ones (about N / 2 attempts a particle: many rounds of 2 x 32 attempts).
    n = 1 << 10
    heavy = np.full(n, 1e-3, dtype=np.float32)
    heavy[5] = 1.0
    kw = {"segment_bytes": 128} if method in SEGMENTED else {}
    for group in (1, 2, 4, 8, 16, 32):
        monkeypatch.setattr(geometry, "lane_group", lambda *_, g=group: g)
        assert_same_ancestors(weights_of("eq233", n), method, [SEED, 3], **kw)
        if REGISTRY[method].B_rule:
            for B in (0, 1, 3, 5, 64, 130):
                assert_same_ancestors(weights_of("gamma", n), method, [SEED], B=B, **kw)
        else:
            assert_same_ancestors(heavy, method, [SEED, 4], **kw)


@pytest.mark.parametrize("block", [None, "48"])
def test_rejection_parity_for_any_queue_chunk(block, monkeypatch):
    # rejection_queued: however many lanes a warp works through, and however
    # often a thread moves on to a new lane, the ancestors are the CPU's.
    # Chunks below a warp (threads without a lane), not dividing N, and
    # spanning replicas (N = 1000, three seeds); blocks of 48 threads make
    # every second warp partial. One heavy particle makes attempts long and
    # uneven (about N / 2 a lane).
    monkeypatch.setattr(geometry, "lane_group", lambda *_: 1)
    if block:
        monkeypatch.setenv("PFRESAMPLE_BLOCK_SIZE", block)
    n = 1000
    heavy = np.full(n, 1e-3, dtype=np.float32)
    heavy[5] = 1.0
    for chunk in (1, 7, 32, 100, 256, 3 * n):
        monkeypatch.setattr(geometry, "queue_chunk", lambda *_, c=chunk: c)
        assert_same_ancestors(heavy, "rejection", [SEED, 4, 5])
        assert_same_ancestors(weights_of("eq233", n), "rejection", [SEED, 6, 7])


@pytest.mark.parametrize("group", [1, 2, 8, 32])
def test_rejection_parity_through_the_tail_pass(group, monkeypatch):
    # Lanes stopped at their cap (rejection.cu, cap_pairs) and finished by
    # the tail pass, a warp a lane, get the CPU's ancestors: a cap of a
    # quarter of the mean attempts sends most lanes there, 8 means few; group
    # 1 is the queued kernel's cap, the others the grouped kernel's; three
    # seeds make three replicas.
    monkeypatch.setattr(geometry, "lane_group", lambda *_, g=group: g)
    n = 1 << 10
    heavy = np.full(n, 1e-3, dtype=np.float32)
    heavy[5] = 1.0
    for factor in (0.25, 2.0, 8.0):
        monkeypatch.setattr(geometry, "tail_factor", lambda *_, f=factor: f)
        assert_same_ancestors(heavy, "rejection", [SEED, 4, 5])
        assert_same_ancestors(weights_of("eq233", n), "rejection", [SEED, 6])


@pytest.mark.parametrize("method", ["metropolis-c1", "metropolis-c2", "uphill-ca", "uphill-c1"])
def test_whole_array_segment_gives_the_parent(method):
    n = 1 << 12
    w = cupy.asarray(weights_of("eq233", n))
    parent = REGISTRY[method].name.split("-")[0]
    child = pr.resample(w, method, seed=SEED, B=50, segment_bytes=4 * n)
    np.testing.assert_array_equal(child.get(), pr.resample(w, parent, seed=SEED, B=50).get())


# ------------------------------------------------------------------ B


@pytest.mark.parametrize("log2n", [10, 16, 20])
@pytest.mark.parametrize(
    "name", ["gamma-k1-s2", "gamma-k9-s0.5", "eq233-y0", "eq233-y2", "eq233-y4", "eq233-y3.7"]
)
def test_device_B_equals_cpu_B(name, log2n):
    w = weights.generate(name, 1 << log2n, 3, seed=7)
    for method in ("metropolis", "uphill"):
        cpu_b = pr.choose_B(w, method)
        assert pr.choose_B(cupy.asarray(w), method) == cpu_b, (method, name)


def test_device_B_uses_a_given_ssd_table_and_epsilon():
    w = weights_of("eq233", 1 << 12)
    table = np.linspace(0.0, 1e9, 8192)
    assert pr.choose_B(cupy.asarray(w), "uphill", ssd_table=table) == pr.choose_B(
        w, "uphill", ssd_table=table
    )
    assert pr.choose_B(cupy.asarray(w), "metropolis", epsilon=0.1) == pr.choose_B(
        w, "metropolis", epsilon=0.1
    )


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "values",
    [[1.0, np.nan, 2.0], [1.0, 2.0, np.inf], [1.0, -0.5, 1.0], [0.0, 0.0, 0.0]],
)
@pytest.mark.parametrize("method", [m for m, e in ancestor_methods().items() if e.gpu is not None])
def test_bad_device_weights_raise_the_host_errors(values, method):
    w = np.asarray(values, dtype=np.float32)
    with pytest.raises(ValueError) as host:
        pr.resample(w, method, seed=1, backend="cpu")
    with pytest.raises(ValueError) as device:
        pr.resample(cupy.asarray(w), method, seed=1, backend="cuda")
    assert str(device.value) == str(host.value)


def test_bad_shapes_on_device_raise_the_host_errors():
    for bad in (cupy.ones((2, 2), dtype=np.float32), cupy.empty(0, dtype=np.float32)):
        with pytest.raises(ValueError) as device:
            pr.resample(bad, "uphill", seed=1)
        with pytest.raises(ValueError) as host:
            pr.resample(bad.get(), "uphill", seed=1, backend="cpu")
        assert str(device.value) == str(host.value)
    with pytest.raises(ValueError, match="multiple"):
        pr.resample(cupy.ones(48, dtype=np.float32), "uphill-ca", seed=1, segment_bytes=128)


# ------------------------------------------------------------------ memory


def test_repeated_calls_allocate_nothing_new():
    from pfresample.cuda import workspace

    n = 1 << 20
    pool = cupy.cuda.MemoryPool()
    workspace._WORKSPACES.clear()  # this pool holds every workspace, whatever ran before
    with cupy.cuda.using_allocator(pool.malloc):
        w = cupy.asarray(weights_of("eq233", n))
        for method in [m for m, e in ancestor_methods().items() if e.gpu is not None]:
            pr.resample(w, method, seed=1)  # first call: output and workspace
            before = pool.total_bytes()
            for seed in range(3):
                a = pr.resample(w, method, seed=seed)
                del a
            assert pool.total_bytes() == before, method
        # weights + one ancestor array + an O(1) workspace (and one SSD table)
        # + one array of N values in the weights' precision (float32 here):
        # r of Stratified and Multinomial, Residual's fractions; + the
        # butterfly's spare ancestor array (N int32, its stages alternate
        # between two) and its later stages' sums (N / 2 values)
        assert pool.total_bytes() <= w.nbytes + 4 * n + 4 * n + 4 * n + 2 * n + (1 << 20)


# ------------------------------------------------------------------ cumulative family


@pytest.mark.parametrize("n", [1 << 10, 1 << 16, 1 << 20, 3 * 4096 + 5])
@pytest.mark.parametrize("kind", ["gamma", "eq233"])
@pytest.mark.parametrize("method", CUMULATIVE)
def test_cumulative_float64_prefix_sum_matches_the_cpu(method, kind, n):
    """Offspring counts equal, and even the ancestors element by element
    (Multinomial's and Residual's draws are not sorted, so this is more)."""
    w = weights_of(kind, n)
    seeds = [SEED, 1, 2]
    cpu = pr.resample_many(w, method, seeds=seeds, backend="cpu", precision="float64")
    dev = pr.resample_many(cupy.asarray(w), method, seeds=seeds, precision="float64").get()
    np.testing.assert_array_equal(pr.offspring(dev, n), pr.offspring(cpu, n))
    np.testing.assert_array_equal(dev, cpu)


@pytest.mark.parametrize("method", CUMULATIVE)
def test_cumulative_float64_weights_match_the_cpu(method):
    w = weights_of("eq233", 3 * 4096 + 5, dtype=np.float64)  # precision: the weights' own
    assert_same_ancestors(w, method, [SEED, 5])


@pytest.mark.parametrize("family", ["gamma-k1-s2", "gamma-k9-s0.5", "eq233-y2", "eq233-y4"])
@pytest.mark.parametrize("method", CUMULATIVE)
def test_cumulative_float32_prefix_sum_is_unbiased(method, family):
    """test_statistics.py's test_unbiased_methods on the device: N = 256, K = 4000."""
    from stat_tools import Z_MAX, excess

    n, k = 256, 4000
    w = weights.generate(family, n, 0, 0)
    anc = pr.resample_many(cupy.asarray(w), method, seeds=range(1000, 1000 + k))
    assert excess(pr.offspring(anc, n), expectation.unbiased(w)) < Z_MAX


@pytest.mark.parametrize("method", CUMULATIVE)
def test_cumulative_float64_weights_float32_prefix_sum_is_unbiased(method):
    from stat_tools import Z_MAX, excess

    n, k = 256, 4000
    w = weights.generate("eq233-y4", n, 1, 0, dtype=np.float64)
    anc = pr.resample_many(
        cupy.asarray(w), method, seeds=range(1000, 1000 + k), precision="float32"
    )
    assert excess(pr.offspring(anc, n), expectation.unbiased(w)) < Z_MAX


@pytest.mark.parametrize("method", CUMULATIVE)
def test_one_heavy_particle_takes_every_slot(method):
    """All the weight on one particle of a middle tile: its N offspring are
    written by many tiles' worth of slots, and zero-weight particles after
    it are never chosen (the clamp to the last positive weight)."""
    n = 1 << 16
    w = np.zeros(n, dtype=np.float32)
    w[5000] = 3.0
    dev = pr.resample_many(cupy.asarray(w), method, seeds=[SEED, 4]).get()
    np.testing.assert_array_equal(dev, np.full((2, n), 5000, dtype=np.int32))


def test_offspring_summary_on_the_device_equals_the_host():
    from pfresample.expectation import unbiased
    from pfresample.metrics import OffspringStats

    def summarise(chunks, target):
        stats = OffspringStats(target=target)
        for c in chunks:
            stats.add(c)
        return stats

    n, seeds = 1 << 12, list(range(40))
    w = weights_of("eq233", n)
    chunks = [
        pr.resample_many(w, "metropolis", seeds=part, backend="cpu")
        for part in (seeds[:25], seeds[25:])
    ]
    host = summarise(chunks, unbiased(w))
    device = summarise([cupy.asarray(c) for c in chunks], unbiased(cupy.asarray(w)))
    np.testing.assert_allclose(device.squared_errors, host.squared_errors, rtol=1e-12)
    np.testing.assert_allclose(
        device.offspring_variance, host.offspring_variance, rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(device.mean_offspring, host.mean_offspring, rtol=1e-12, atol=1e-12)
    assert device.bias2 == pytest.approx(host.bias2, rel=1e-9)
    assert device.variance == pytest.approx(host.variance, rel=1e-12)


# ------------------------------------------------------- continued chains (ladders)

# B values out of order, repeated, odd, and across the 128-iteration runs of
# C2's shared warp draws (lanes.cuh): each continued launch starts mid-run.
LADDER_BS = [130, 0, 7, 7, 300, 1, 129, 64]


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("method", ["metropolis", "metropolis-c1", "metropolis-c2", "megopolis"])
def test_each_B_in_one_pass_equals_separate_runs(method, shared, monkeypatch):
    """resample_each_B continues the chains from one B to the next on the
    device; every B's ancestors equal the CPU's run with that B alone."""
    if not shared:
        monkeypatch.setenv("PFRESAMPLE_BLOCK_SIZE", "48")  # no warp-shared draws
    n = 1 << 12
    w = weights_of("eq233", n)
    seeds = [SEED, 3, 11]
    ss = 256 if REGISTRY[method].segmented else None
    dev = pr.resample_each_B(cupy.asarray(w), method, seeds=seeds, Bs=LADDER_BS, segment_bytes=ss)
    for B, got in zip(LADDER_BS, dev, strict=True):
        want = pr.resample_many(w, method, seeds=seeds, B=B, segment_bytes=ss, backend="cpu")
        np.testing.assert_array_equal(got.get(), want, err_msg=f"B = {B}")


def test_a_ladder_cell_on_the_device_equals_the_host():
    from pfresample_studies.dulger2017 import experiments

    spec = {"reduced": {"method": "metropolis", "B_scale": [0.75, 0.25, 0.0625]}}
    rungs = list(experiments.expand_variants(spec, [128]).values())
    w = {n: np.stack([weights.generate("eq233-y4", n, s, 7) for s in range(2)]) for n in (64, 4096)}
    settings = dict(draws=24, seed=5, timing_repeats=1, timing_warmup=0, chunk_elements=40_000)
    host = experiments.run_ladder(rungs, "eq233-y4", w, experiments.CellSettings(**settings))
    device = experiments.run_ladder(
        rungs, "eq233-y4", w, experiments.CellSettings(**settings, backend="cuda")
    )
    for (h, _), (d, meta) in zip(host, device, strict=True):
        assert meta["backend"] == "cuda"
        np.testing.assert_array_equal(d["B"], h["B"])
        np.testing.assert_allclose(d["squared_errors"], h["squared_errors"], rtol=1e-12)
        np.testing.assert_allclose(d["variance"], h["variance"], rtol=1e-12)
        np.testing.assert_allclose(d["bias2"], h["bias2"], rtol=1e-9)
