"""Moazeni (2013) chapter 3's real instances on the GPU (dp_weighted_gpu: matrix-chain
order and least-perimeter triangulation, w(i, k, j) in every candidate): equal bit for
bit to the NumPy reference and the textbook loops, with ties and zero weights, at every
block size; planted flaws caught. The sources compile with nvcc where it is present (no
GPU needed)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from pfresample.cuda import kernels
from pfresample_studies.moazeni2013 import cuda_source, dp_weighted, dp_weighted_gpu

NVCC = shutil.which("nvcc")
INSTANCES = {
    "chain": lambda n: dp_weighted.random_chain(n, 5),
    "chain_zeros": lambda n: dp_weighted.random_chain(n, 5, zeros=True),
    "perimeter": lambda n: dp_weighted.random_polygon(n, 5),
    "perimeter_regular": lambda n: dp_weighted.random_polygon(n, 5, regular=True),
    "perimeter_repeats": lambda n: dp_weighted.random_polygon(n, 5, repeats=True),
}


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH: cannot compile the kernels")
@pytest.mark.parametrize("family", sorted(dp_weighted_gpu.SOURCES))
def test_the_sources_compile_to_ptx(tmp_path, family):
    source, struct = dp_weighted_gpu.SOURCES[family]
    t = f"{struct}::T"
    signatures = {
        "wdp_diagonal": f"({t}*, long long, int, const {t}*)",
        "wdp_minplus": f"({t}*, long long, int, const int*, int, int, const {t}*)",
        "wdp_minplus_rb": f"({t}*, long long, int, const int*, int, int, const {t}*)",
        "wdp_triangular_shared": f"({t}*, long long, int, const int*, const {t}*)",
    }
    assert set(signatures) == set(dp_weighted_gpu.KERNELS)
    lines = [f"template __global__ void {k}<{struct}>{sig};" for k, sig in signatures.items()]
    (tmp_path / source).write_text(cuda_source(source) + "\n" + "\n".join(lines) + "\n")
    out = subprocess.run([NVCC, "-ptx", "-arch=sm_90", *kernels.COMPILE_OPTIONS,
                          str(tmp_path / source), "-o", str(tmp_path / "w.ptx")],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "w.ptx").read_text().count(".entry") == len(signatures) + 1  # delay_ns


def _same(x, y) -> bool:
    return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("kind", sorted(INSTANCES))
@pytest.mark.parametrize("n,s", [(3, 8), (45, 8), (100, 16), (130, 32), (257, 64), (300, 128)])
def test_the_gpu_equals_the_reference(kind, n, s):
    inst = INSTANCES[kind](n)
    reference = dp_weighted.solve_textbook(inst) if n <= 45 else dp_weighted.solve_diagonals(inst)
    result, times, _ = dp_weighted_gpu.solve(inst, s)
    assert _same(result, reference), (kind, n, s)
    assert len(times) == 1 and times[0] > 0


@pytest.mark.gpu
@pytest.mark.parametrize("flaw", ["drop_last_product", "drop_weight"])
@pytest.mark.parametrize("kind", ["chain", "perimeter"])
def test_the_gpu_check_can_fail(kind, flaw):
    inst = INSTANCES[kind](257)
    result, _, _ = dp_weighted_gpu.solve(inst, 32, flaw=flaw)
    assert not np.array_equal(result, dp_weighted.solve_diagonals(inst))


def test_bad_arguments_are_refused():
    inst = INSTANCES["chain"](10)
    with pytest.raises(ValueError, match="flaw"):
        dp_weighted_gpu.solve(inst, 32, flaw="typo")
    with pytest.raises(ValueError, match="block size"):
        dp_weighted_gpu.solve(inst, 256)
