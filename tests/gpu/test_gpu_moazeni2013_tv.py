"""Moazeni (2013) chapters 5 and 6 on the GPU (pfresample_studies.moazeni2013.tv_gpu):
each solver against the NumPy reference of the energy it minimises (tv.variant_blocks)
within a bound set by float32 rounding itself, chapter 5's reuse equal bit for bit to
the straightforward kernel, the kernels' shared memory equal to the colouring's, and
the Chan-Vese step against its NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import chanvese, sharedmem, tv

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu
if not cupy.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from pfresample_studies.moazeni2013 import tv_gpu  # noqa: E402

SEED = 2013
SETTINGS = {"lam": 3.0, "eps": 0.01, "step": 0.01}
ITERATIONS = 20


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(SEED)
    truth = tv.phantom(32)
    g = tv.gradient_directions(12, rng)
    d_hat = tv.log_linear_fit(tv.signals(truth, g, 1.0, 1.0, 0.05, rng), g, 1.0)
    return truth, d_hat, tv.cholesky_start(d_hat)


def _reference(case, variant, tile):
    """L after ITERATIONS steps in float64 and in float32 (NumPy)."""
    _, d_hat, L0 = case
    blocks = tv.variant_blocks(variant, tile)
    L64, _ = tv.solve(L0, d_hat, iterations=ITERATIONS, **SETTINGS, **blocks)
    L32, _ = tv.solve(L0, d_hat, iterations=ITERATIONS, dtype=np.float32, **SETTINGS, **blocks)
    return L64, L32


@pytest.mark.parametrize("tile", tv_gpu.TILES)
@pytest.mark.parametrize("variant", tv.VARIANTS)
def test_each_solver_agrees_with_its_reference(case, variant, tile):
    """The bound: the GPU runs in float32 with its own order of sums, so it differs
    from the float64 reference by about what NumPy's float32 run does; 4 times that
    (plus 1e-6) is the bound. The negative control: GlobalSync's reference is
    outside the bound of a secondary approach's run, and the reverse."""
    _, d_hat, L0 = case
    L64, L32 = _reference(case, variant, tile)
    solver = tv_gpu.Solver(L0, d_hat, variant, tile, **SETTINGS)
    solver.iterate(ITERATIONS)
    L = solver.result()
    bound = 4 * np.abs(L32 - L64).max() + 1e-6
    assert np.abs(L - L64).max() <= bound
    other = "thread_sync" if variant == "global_sync" else "global_sync"
    wrong, _ = _reference(case, other, tile)
    assert np.abs(L - wrong).max() > bound


@pytest.mark.parametrize("tile", tv_gpu.TILES)
def test_reuse_is_bit_for_bit_the_straightforward_kernel(case, tile):
    _, d_hat, L0 = case
    out = []
    for reuse in (False, True):
        solver = tv_gpu.Solver(L0, d_hat, "global_sync", tile, reuse=reuse, **SETTINGS)
        solver.iterate(5)
        out.append(solver.result())
    assert np.array_equal(out[0], out[1])


@pytest.mark.parametrize("tile", tv_gpu.TILES)
def test_the_kernels_shared_memory_is_the_colourings(tile):
    for name, shape in (("tv_p", sharedmem.curvature3d(tile)),
                        ("cv_step", sharedmem.curvature2d(tile))):  # fmt: skip
        for reuse, plan in ((False, sharedmem.identity(shape)), (True, sharedmem.plan(shape))):
            attrs = tv_gpu.attributes(tv_gpu.function(name, tile, reuse), tile * tile, -1)
            assert attrs["shared_bytes"] == plan.bytes_after, (name, reuse)


@pytest.mark.parametrize("tile", tv_gpu.TILES)
def test_the_chanvese_step_agrees_with_numpy(tile):
    """float32 on both sides, the same operations but the GPU's own division and
    square root (IEEE, --fmad=false): within a few ulps of a value of order 1."""
    rng = np.random.default_rng(SEED)
    image, phi = chanvese.test_image(100, rng)
    c1, c2 = chanvese.means(phi, image)
    p = chanvese.Params()
    want = chanvese.step(phi, image, c1, c2, p)
    got = [tv_gpu.chanvese_step(cupy.asarray(phi), cupy.asarray(image), c1, c2, p, tile,
                                reuse).get() for reuse in (False, True)]  # fmt: skip
    assert np.array_equal(got[0], got[1])
    assert np.allclose(got[0], want, rtol=1e-5, atol=1e-5)
    # negative control: without the curvature term the step differs
    assert not np.allclose(got[0], chanvese.step(phi, image, c1, c2, chanvese.Params(mu=0.0)),
                           rtol=1e-5, atol=1e-5)  # fmt: skip


def test_a_volume_the_blocks_do_not_tile_is_refused(case):
    _, d_hat, L0 = case
    with pytest.raises(ValueError, match="whole number of blocks"):
        tv_gpu.Solver(L0[:24, :24, :24], d_hat[:24, :24, :24], "unsync", 16, **SETTINGS)


@pytest.mark.parametrize("variant", ["thread_sync", "unsync"])
def test_p_only_leaves_the_state_and_the_full_launch_moves_it(case, variant):
    """Fig 53's function P alone (tv.cu's P_ONLY) stores nothing: L and ThreadSync's D
    are as the full launch left them; the full launch (the negative control) moves L."""
    _, d_hat, L0 = case
    solver = tv_gpu.Solver(L0, d_hat, variant, 8, **SETTINGS)
    solver.iterate(1)
    L, D = solver.L.copy(), getattr(solver, "D", solver.L).copy()
    ((_, alone),) = solver.launches(p_only=True)
    for _ in range(3):
        alone()
    cupy.cuda.Device().synchronize()
    assert bool((solver.L == L).all()) and bool((getattr(solver, "D", solver.L) == D).all())
    ((_, whole),) = solver.launches()
    whole()
    assert not bool((solver.L == L).all())
    with pytest.raises(ValueError, match="one-kernel"):
        tv_gpu.Solver(L0, d_hat, "global_sync", 8, **SETTINGS).launches(p_only=True)


def test_fig53_gpu_rows():
    from pfresample_studies.moazeni2013 import tv_breakdown

    rows = tv_breakdown.measure_gpu(32, [8], 3, 2017)
    import pandas as pd

    table = pd.DataFrame(rows)
    assert set(table["variant"]) == set(tv.VARIANTS)
    for _, part in table.groupby(["variant", "tile"]):
        assert part["share"].sum() == pytest.approx(1)
        assert part[part["phase"] == "P"]["seconds_min"].iloc[0] > 0
