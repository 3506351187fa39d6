"""Every CUDA source of gpu_kernels/ compiles for the H200's sm_90 (no GPU needed).

Each ``.cu`` is compiled by ``nvcc -ptx -arch=sm_90`` together with a pointer
to every template instantiation the CUDA backend asks NVRTC for
(``kernels._TEMPLATES``), so that the templates are compiled, not just parsed.
The source is the one NVRTC gets (local includes pasted in by ``kernels.source``)
and is compiled with the backend's own options. Skipped where nvcc is absent.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from pfresample.cuda import geometry, kernels

pytestmark = pytest.mark.slow  # make test-fast leaves this module out (docs/testing.md)

NVCC = shutil.which("nvcc")
SOURCES = sorted(p.name for p in kernels.kernel_dir().glob("*.cu"))


def test_every_family_has_a_source():
    assert set(kernels._TEMPLATES) <= set(SOURCES)


def test_sources_paste_each_header_once():
    text = kernels.source("metropolis.cu")
    assert '#include "' not in text
    assert text.count("struct PhiloxKey {") == 1


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH: cannot compile the kernels")
@pytest.mark.parametrize("name", SOURCES)
def test_source_compiles_to_ptx(name, tmp_path):
    refs = "\n".join(
        f"void* const pfr_instance_{k} = (void*)&{expr};"
        for k, expr in enumerate(kernels._TEMPLATES.get(name, []))
    )
    src = tmp_path / name
    src.write_text(kernels.source(name) + "\n" + refs + "\n")
    ptx = tmp_path / "out.ptx"
    opts = [o for o in kernels.COMPILE_OPTIONS if o != "-std=c++17"]
    cmd = [NVCC, "-std=c++17", *opts, "-ptx", "-arch=sm_90", str(src), "-o", str(ptx)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    entries = ptx.read_text().count(".entry")
    assert entries >= max(1, len(kernels._TEMPLATES.get(name, [])))


def test_cumulative_tile_geometry_is_the_one_gpu_py_launches():
    """scan.cuh and cumulative.cu repeat pfresample.cuda.geometry's tile sizes as compile-time
    constants."""
    text = "".join((kernels.kernel_dir() / f).read_text() for f in ("scan.cuh", "cumulative.cu"))
    for name in ("SCAN_THREADS", "SCAN_ITEMS", "TILE_SUMS_THREADS"):
        found = re.search(rf"constexpr int {name} = (\d+);", text)
        assert found is not None and int(found.group(1)) == getattr(geometry, name), name


def test_filter_constants_are_the_ones_sir_gpu_launches():
    """reduce.cuh and models.cuh repeat constants of pfresample.cuda.geometry and sir_gpu.py:
    the reduction blocks' threads, and the particles a Philox block serves."""
    from pfresample.filters import sir_gpu
    from pfresample.models.growth import GrowthTwin
    from pfresample.models.radar import RadarTwin

    def constant(header, name):
        found = re.search(
            rf"constexpr int {name} = (\d+);", (kernels.kernel_dir() / header).read_text()
        )
        assert found is not None, name
        return int(found.group(1))

    assert constant("reduce.cuh", "REDUCE_THREADS") == geometry.REDUCE_THREADS == sir_gpu.THREADS
    assert constant("models.cuh", "GROWTH_PER_BLOCK") == GrowthTwin.per_block
    assert constant("models.cuh", "RADAR_PER_BLOCK") == RadarTwin.per_block


def test_fused_constants_are_the_ones_sir_fused_launches():
    """fused.cu repeats geometry's block size, and holds the scan of at most
    FUSED_MAX_N / SCAN_TILE tile sums in shared memory."""
    text = (kernels.kernel_dir() / "fused.cu").read_text()
    threads = re.search(r"constexpr int FUSED_THREADS = (\d+);", text)
    tiles = re.search(r"constexpr int FUSED_MAX_TILES = (\d+);", text)
    assert int(threads.group(1)) == geometry.FUSED_THREADS == geometry.REDUCE_THREADS
    assert int(tiles.group(1)) == geometry.FUSED_MAX_N // geometry.SCAN_TILE
    from pfresample.filters import sir_fused

    sizes = {geometry.fused_slice_items(n, g) for n in (1, 2**14, 2**20) for g in (1, 264)}
    assert sizes == {geometry.FUSED_SLICE_ITEMS, geometry.SCAN_ITEMS}
    on_clusters = [sir_fused.function(k, c) for k in sorted(sizes) for c in geometry.FUSED_CLUSTERS]
    assert kernels._TEMPLATES["fused.cu"] == [sir_fused.function(k) for k in sorted(sizes)] + (
        on_clusters
    )


def test_fused_grid_and_slices_on_an_h200_sized_device():
    """132 SMs holding two blocks each: one block an SM up to FUSED_SPREAD_N, every resident
    block above (never more than the virtual blocks); phase 4 in slices of 1,024 particles
    while each has a block, in tiles of 4,096 above."""
    assert geometry.fused_blocks(2**10, 264, 132) == 4 + 1  # reduction blocks + tiles
    assert geometry.fused_blocks(2**14, 264, 132) == 64 + 4
    assert geometry.fused_blocks(2**16, 264, 132) == 132
    assert geometry.fused_blocks(2**18, 264, 132) == 264
    assert geometry.fused_slice_items(2**18, 264) == 4  # 256 slices
    assert geometry.fused_slice_items(2**18 + 1, 256) == 16  # 257 slices
    assert geometry.fused_slice_items(2**20, 264) == 16
    # one cluster of 16 up to 2^14 where clusters exist (compute capability 9.0)
    assert geometry.fused_cluster(2**14, 90) == geometry.FUSED_CLUSTER == 16
    assert geometry.fused_cluster(1, 100) == 16
    assert geometry.fused_cluster(2**14 + 1, 90) == 0
    assert geometry.fused_cluster(2**10, 89) == 0


def test_weight_contract_constants_are_the_ones_python_uses():
    """logweights.cu repeats the exponential's constants of pfresample.logweights, and
    stats.cuh the statistics record's layout and NO_EXPONENT: the same bits on both sides."""
    from pfresample import logweights
    from pfresample.cuda import workspace
    from pfresample.resampling import prefix_sum

    text = (kernels.kernel_dir() / "logexp.cuh").read_text()
    for name in ("LOG2_E", "LN2_HI", "LN2_LO", "EXP_ZERO_BELOW"):
        found = re.search(rf"constexpr double {name} = ([-0-9.e]+);", text)
        assert found is not None and float(found.group(1)) == getattr(logweights, name), name
    stats = (kernels.kernel_dir() / "stats.cuh").read_text()
    for name in ("STAT_SUM", "STAT_MAX", "STAT_BAD", "STAT_SSD", "STAT_SCALE", "STAT_COUNT"):
        found = re.search(rf"constexpr int {name} = (\d+);", stats)
        assert found is not None and int(found.group(1)) == getattr(workspace, name), name
    assert "NO_EXPONENT = -(1 << 20);" in stats and prefix_sum.NO_EXPONENT == -(1 << 20)


def test_butterfly_constants_are_the_ones_python_uses():
    from pfresample.constants import BUTTERFLY_RUNS
    from pfresample.resampling.butterfly import DRAWS

    text = (kernels.kernel_dir() / "butterfly.cu").read_text()
    assert re.search(r"constexpr int BUTTERFLY_RUNS = (\d+);", text).group(1) == str(BUTTERFLY_RUNS)
    found = re.search(r"constexpr int SUMS_WARPS = (\d+);", text)
    assert int(found.group(1)) == geometry.BUTTERFLY_SUMS_WARPS
    found = re.search(r"constexpr int SEGMENT_MAX = (\d+);", text)
    assert int(found.group(1)) == geometry.BUTTERFLY_SEGMENT_MAX
    for index, draw in enumerate(DRAWS):
        found = re.search(rf"constexpr int DRAW_{draw.upper()} = (\d+);", text)
        assert found and int(found.group(1)) == index, draw


def test_d3_noise_codes_are_the_ones_the_launcher_passes():
    """d3.cu numbers the noise variants as pfresample.cuda.d3 passes them:
    their index in resampling.d3.NOISES."""
    from pfresample.resampling.d3 import NOISES

    text = (kernels.kernel_dir() / "d3.cu").read_text()
    for index, noise in enumerate(NOISES):
        found = re.search(rf"constexpr int NOISE_{noise.upper()} = (\d+);", text)
        assert found and int(found.group(1)) == index, noise


def test_lane_group_fills_the_device_once_and_divides_the_block():
    h200 = 132 * 2048  # resident threads of an H200
    assert geometry.lane_group(2**14, 512, h200) == 16  # 2^18 threads: one wave
    assert geometry.lane_group(2**16, 512, h200) == 4
    assert geometry.lane_group(2**18, 512, h200) == 1
    assert geometry.lane_group(2**10, 64, h200) == 32  # at most a warp
    assert geometry.lane_group(1024, 48, h200) == 16  # divides the block: groups stay in a warp
    assert geometry.lane_group(16, 16, h200) == 16


def test_rejection_tail_pass_only_where_a_lane_has_one_or_two_threads_and_fits():
    device = 132 * 3 * 512  # resident threads of the first pass
    factor = geometry.REJECTION_TAIL_FACTOR
    assert geometry.tail_factor(2**18, device, 1) == factor  # about one wave: the tail waits
    assert geometry.tail_factor(2**16, device, 2) == factor
    assert geometry.tail_factor(2**14, device, 8) == 0.0  # 8 threads a lane: no gain measured
    assert geometry.tail_factor(2**20, device, 1) == 0.0  # 5 waves: throughput-bound
    assert geometry.tail_factor(2 * device, device, 1) == factor
    assert geometry.tail_factor(2 * device + 1, device, 1) == 0.0


def test_queue_chunk_shares_the_lanes_among_the_resident_warps():
    h200 = 132 * 2 * 512  # SMs x blocks of 512 an SM holds x 512: 4224 warps
    assert geometry.queue_chunk(2**22, 512, h200) == 993  # ceil(2^22 / 4224)
    assert geometry.queue_chunk(2**20, 512, h200) == 249
    assert geometry.queue_chunk(2**10, 512, h200) == 32  # at least a warp's worth
    # Blocks of 48 threads hold two warps, one of them partial: 200 warps.
    assert geometry.queue_chunk(9600, 48, 100 * 48) == 48
