"""filters/sir_fused.py's FusedRun.result on the CPU: the run's one copy back
(``out``: the estimates, the sums of w~, each step's maximum log-weight key,
the phase marks) read into a FilterResult. No GPU: the object is made without
its device buffers, its pinned ``out`` a NumPy array laid out as fused.cu
writes it; tests/gpu/test_gpu_fused_filter.py checks the run itself."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample.filters.graph import log_z_steps
from pfresample.filters.sir_fused import FusedRun


def _run(estimates, sums, tops, marks, n=1000, constant=-0.9):
    steps = len(estimates)
    top_words = (steps + 1) // 2
    out = np.zeros(2 * steps + top_words + len(marks), np.uint64)
    out[:steps] = np.asarray(estimates, np.float64).view(np.uint64)
    out[steps : 2 * steps] = np.asarray(sums, np.float64).view(np.uint64)
    out[2 * steps : 2 * steps + top_words].view(np.uint32)[:steps] = tops
    out[2 * steps + top_words :] = np.asarray(marks, np.int64).view(np.uint64)
    run = object.__new__(FusedRun)
    run.host_out, run.steps, run.n, run.constant = out, steps, n, constant
    return run


def test_the_result_reads_each_part_of_the_copy_back():
    rng = np.random.default_rng(3)
    steps = 5  # odd: the maximum keys fill half a word of their last slot
    estimates = np.array([-0.0, -2.5, 3.25, 1e-300, -7.0])
    sums = rng.uniform(1.0, 50.0, steps)
    tops = rng.integers(0, 2**32, steps, dtype=np.uint64).astype(np.uint32)
    marks = np.cumsum(rng.integers(100, 10_000, 1 + 4 * steps))  # distinct phase lengths
    run = _run(estimates, sums, tops, marks)
    r = run.result(11, 0.25)
    np.testing.assert_array_equal(r.estimates.view(np.uint64), estimates.view(np.uint64))
    np.testing.assert_array_equal(r.stage_seconds, 1e-9 * np.diff(marks).reshape(steps, 4))
    assert r.total_seconds == pytest.approx(1e-9 * (marks[-1] - marks[0]), rel=1e-12)
    want = log_z_steps(tops, sums, 1000, -0.9)
    np.testing.assert_array_equal(r.log_likelihood_steps, want)
    assert not np.array_equal(want, log_z_steps(tops[::-1], sums, 1000, -0.9))  # order counts
    assert r.seed == 11 and r.wall_seconds == 0.25 and r.n == 1000 and r.method == "systematic"
    run.host_out[0] = np.float64(np.nan).view(np.uint64)  # a later run's copy is not this one's
    np.testing.assert_array_equal(r.estimates[:1].view(np.uint64), estimates[:1].view(np.uint64))


def test_a_non_finite_estimate_names_its_step():
    marks = np.arange(1 + 4 * 3) * 10
    run = _run([1.0, 2.0, np.inf], [1.0, 1.0, 1.0], [0x80000000] * 3, marks)
    with pytest.raises(FloatingPointError, match="from step 3 on"):
        run.result(0, 0.0)
