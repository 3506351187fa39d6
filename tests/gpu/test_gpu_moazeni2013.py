"""Moazeni (2013) chapter 3 on the GPU (pfresample_studies.moazeni2013.dp_gpu): every
order's result equal, bit for bit, to the CPU reference (dp.solve_diagonals), float32
and int32, with the block operations one launch each (GpuBlocked) and with the
thesis's one launch a block-diagonal (solve_bottom_up); the kernel source compiles
with nvcc where it is present (no GPU needed)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from pfresample.cuda import kernels
from pfresample_studies.moazeni2013 import cuda_source, dp, dp_gpu

NVCC = shutil.which("nvcc")
SEED = 2013


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH: cannot compile the kernels")
def test_the_source_compiles_to_ptx(tmp_path):
    """dp_gpu's instantiations, compiled by nvcc with the backend's options."""
    text = cuda_source(dp_gpu.SOURCE)
    for name in dp_gpu.KERNELS:
        assert f"void {name}(" in text
    signatures = {
        "dp_diagonal": "({t}*, long long, int, int)",
        "dp_minplus": "({t}*, long long, int, const int*, int, int)",
        "dp_minplus_rb": "({t}*, long long, int, const int*, int, int)",
        "dp_triangular": "({t}*, long long, int, const int*)",
        "dp_triangular_shared": "({t}*, long long, int, const int*)",
    }
    lines = [f"template __global__ void {k}<{t}>{sig.format(t=t)};"
             for k, sig in signatures.items() for t in dp_gpu.CTYPES.values()]  # fmt: skip
    (tmp_path / "dp.cu").write_text(text + "\n" + "\n".join(lines) + "\n")
    out = subprocess.run([NVCC, "-ptx", "-arch=sm_90", *kernels.COMPILE_OPTIONS,
                          str(tmp_path / "dp.cu"), "-o", str(tmp_path / "dp.ptx")],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr
    # and delay_ns (delay.cuh), Fig 12's
    assert (tmp_path / "dp.ptx").read_text().count(".entry") == 2 * len(signatures) + 1


def _matrix(n, dtype):
    rng = np.random.default_rng([SEED, n])
    if dtype == "float32":
        a = rng.gamma(2.0, 1.0, n - 1).astype(np.float32)
        init = rng.gamma(2.0, 5.0, (n, n)).astype(np.float32)
    else:
        a = rng.integers(0, 2**10, n - 1).astype(np.int32)
        init = rng.integers(0, 2**12, (n, n)).astype(np.int32)
    return dp.transformed(a, init, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", dp.DTYPES)
@pytest.mark.parametrize("n,s", [(40, 8), (100, 16), (130, 32), (257, 64), (520, 128), (700, 256)])
def test_every_order_on_the_gpu_equals_the_cpu(dtype, n, s):
    pytest.importorskip("cupy")
    m = _matrix(n, dtype)
    reference = dp.solve_diagonals(m.copy())
    solvers = {
        "bottom_up": lambda: dp.solve_bottom_up(m, s, engine=dp_gpu.GpuBlocked),
        "divide_and_conquer": lambda: dp.solve_divide_and_conquer(m, s, engine=dp_gpu.GpuBlocked),
        "recursive": lambda: dp.solve_recursive(m, s, 8, engine=dp_gpu.GpuBlocked),
        "bottom_up_strips": lambda: dp_gpu.solve_bottom_up(m, s)[:2],
    }
    for name, solve in solvers.items():
        result, calls = solve()
        assert np.array_equal(result.get(), reference), name
    # a launch a strip: one min-plus and one triangular launch a block-diagonal
    _, calls, seconds = dp_gpu.solve_bottom_up(m, s)
    blocks = -(-n // s)
    assert calls.triangular == blocks - 1 and calls.rectangular == max(0, blocks - 2)
    assert seconds > 0


@pytest.mark.gpu
def test_the_gpu_check_can_fail():
    """Negative control: a matrix solved without eq. 5 differs from the reference."""
    cupy = pytest.importorskip("cupy")
    m = _matrix(100, "float32")
    g = dp_gpu.GpuBlocked(m, 16)
    for i in range(g.blocks):
        g.diagonal(i)
    assert not np.array_equal(cupy.asnumpy(g.result()), dp.solve_diagonals(m.copy()))


@pytest.mark.gpu
def test_the_gpu_cell_checks_every_run_against_the_compiled_code(monkeypatch):
    """The pipeline's GPU cell: every order's rows, each checked equal to the
    compiled CPU code's matrix (or NumPy's without a compiler); a run that drops
    eq. 5 makes the cell fail (negative control)."""
    pytest.importorskip("cupy")
    from pfresample_studies.moazeni2013 import experiments

    arrays, meta = experiments.gpu_cell([64, 300], [16, 64], ["float32", "int32"], seed=1,
                                        repeats=1)  # fmt: skip
    orders = list(arrays["order"])
    # strips at both n and blocks; Table 1's orders at s = 256 only where n >= 256
    assert orders.count("bottom_up_strips") == 2 * 2 * 2
    assert orders.count("bottom_up") == orders.count("divide_and_conquer") == 2
    assert set(arrays["checked"]) <= {"C", "NumPy"} and (arrays["seconds"] > 0).all()
    assert meta["backend"] == "cuda"
    assert "checked_matrix" in meta["checked_on"]
    monkeypatch.setattr(dp_gpu, "launch_triangular", lambda *args: None)
    with pytest.raises(AssertionError, match="differs"):
        experiments.gpu_cell([100], [16], ["float32"], seed=1, repeats=1)


@pytest.mark.gpu
def test_the_gpu_cell_sees_a_dropped_term_through_its_initial_values(monkeypatch):
    """Negative control of the cell's second matrix: strips whose min-plus launches
    drop each job's last product (a K of the strip) still give the thesis's int32
    matrix (no initial values: every split costs sum(a), and another K is left),
    but not experiments.checked_matrix's, and the cell fails on it."""
    cupy = pytest.importorskip("cupy")
    from pfresample_studies.moazeni2013 import experiments

    real = dp_gpu.launch_minplus

    def dropping(m, ld, p, jobs, terms):
        if terms >= 2:  # one product fewer a job, the rest of each job kept in place
            jobs, terms = cupy.ascontiguousarray(jobs[:, :-4]), terms - 1
        real(m, ld, p, jobs, terms)

    monkeypatch.setattr(dp_gpu, "launch_minplus", dropping)
    thesis = dp.transformed(experiments.weights(300, "int32", 1), dtype="int32")
    got = dp_gpu.solve_bottom_up(thesis, 16)[0].get()
    assert np.array_equal(got, dp.solve_diagonals(thesis.copy()))  # unseen here
    with pytest.raises(AssertionError, match="initial values"):
        experiments.gpu_cell([300], [16], ["int32"], seed=1, repeats=1)


@pytest.mark.gpu
def test_fig12_times_both_products():
    pytest.importorskip("cupy")
    from pfresample_studies.moazeni2013 import experiments

    arrays, meta = experiments.fig12_cell([64, 100], repeats=3)
    assert list(arrays["p"]) == [64, 100]
    assert (arrays["minplus_s"] > 0).all() and (arrays["matmul_s"] > 0).all()


def _signed_zero_matrix(n, seed):
    """A float32 matrix of side n whose weights and initial values mix -0.0, +0.0 and
    negatives: weights -0.0 (+0.0 at 2 %, -1.0 at both ends), initial values +inf
    ("no value"), -0.0, +0.0 and 1.0, and 32 planted negative pieces [i, v] 32 to 160
    long. A piece is seen only through splits outside (i, v), so the min-plus parts of
    a strip whose K lie inside it find -0.0 and the others the negative value: the case
    where a -0.0 read as a signed int (INT_MIN) overwrote the negative minimum
    another thread block had written."""
    rng = np.random.default_rng([SEED, 56, n, seed])
    a = np.where(rng.random(n - 1) < 0.02, np.float32(0.0), np.float32(-0.0))
    a[[0, -1]] = -1.0
    values = np.array([np.inf, -0.0, 0.0, 1.0], np.float32)
    init = values[rng.choice(4, (n, n), p=[0.95, 0.03, 0.01, 0.01])]
    i = rng.integers(0, n - 48, 32)
    v = np.minimum(i + rng.integers(32, 160, 32), n - 1)
    init[i, v] = rng.choice(np.array([-1.0, -2.0, -0.5], np.float32), 32)
    return dp.transformed(a, init, "float32")


@pytest.mark.gpu
@pytest.mark.parametrize("n,s", [(257, 16), (257, 24), (520, 16), (520, 24)])
def test_the_strips_lower_negative_and_signed_zero_minima_atomically(n, s):
    """The strip solver's split min-plus launches (several thread blocks lower one
    entry through dp_atomic_min) equal the recurrence on matrices with negative
    values, -0.0 and +0.0: four matrices, each solved three times, since which block
    writes last depends on the schedule. Equal as values (np.array_equal: bit for bit
    but for the sign of a zero where -0.0 and +0.0 tie, which NumPy's minima leave to
    their order too); the matrices hold negative minima (the case is exercised) and
    the launches do split their terms."""
    pytest.importorskip("cupy")
    blocks = -(-n // s)
    assert dp_gpu.minplus_launch(s, 1, blocks - 2)[3] > 1  # the last strip's terms split
    for seed in range(4):
        m = _signed_zero_matrix(n, seed)
        reference = dp.solve_diagonals(m.copy())
        assert (reference < 0).sum() > n and (np.signbit(reference) & (reference == 0)).any()
        for run in range(3):
            result = dp_gpu.solve_bottom_up(m, s)[0].get()
            wrong = np.flatnonzero(result != reference)
            assert wrong.size == 0, (
                f"seed {seed} run {run}: {wrong.size} entries differ, e.g. "
                f"{result.flat[wrong[0]]} where {reference.flat[wrong[0]]} is right"
            )
