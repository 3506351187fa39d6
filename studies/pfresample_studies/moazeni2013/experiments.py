"""Moazeni (2013) chapter 3: the cells -- timed runs of the decompositions
(``dp``) and of the compiled baseline (``native``) on random weights, each
checked equal, bit for bit, to the NumPy reference before it is kept.

Weights: a(i) ~ Gamma(2, 1) in float32, or integers in [0, 2**10) in int32,
seeded by (seed, n); every other entry starts at "no value yet" (the thesis
gives no initial values), so the answer is also checked to be sum(a). Times
are the median over ``repeats`` runs (the minimum, which the thesis reports
(§3.6), beside it in ``seconds_min``), each cell's after an untimed warm-up call
of each solver and thread count on a small matrix (the compiled library's build
and load, OpenMP's threads' start), so that no first-call cost enters a time or
a speed-up (tests/studies/moazeni2013: a planted slow first call changes nothing)."""

from __future__ import annotations

import os
import platform
import time
from functools import partial

import numpy as np

from pfresample.backend import cuda_device
from pfresample.timing import cpu_name

from . import dp

SOLVERS = {
    "bottom_up": lambda m, s, base: dp.solve_bottom_up(m, s),
    "divide_and_conquer": lambda m, s, base: dp.solve_divide_and_conquer(m, s),
    "recursive": lambda m, s, base: dp.solve_recursive(m, s, min(base, s)),
}


def weights(n: int, dtype: str, seed: int) -> np.ndarray:
    """The n - 1 weights of a matrix of side n (Table 1's problem size)."""
    rng = np.random.default_rng([int(seed), int(n)])
    if dtype == "float32":
        return rng.gamma(2.0, 1.0, n - 1).astype(np.float32)
    return rng.integers(0, 2**10, n - 1).astype(np.int32)


def checked_matrix(n: int, dtype: str, seed: int) -> np.ndarray:
    """The second matrix every GPU run is checked on. The thesis's (``weights``, no
    initial values) has one answer a split -- every partition of an interval costs
    the sum of its weights -- so a kernel that dropped a term, a block or a strip
    would still give the reference's matrix. This one has an initial value in every
    entry, (j - i) x U(0.6, 1.4), against weights of mean 1 (float32: N(1, 1), a
    sixth of them negative; int32: both x 512, integers in [0, 1,024)), so that the
    best split of an interval is its own and a dropped candidate changes the matrix
    (tests/studies/moazeni2013: a NumPy order without one product differs here, not
    on the thesis's matrix)."""
    rng = np.random.default_rng([int(seed), int(n), 3])
    span = np.arange(n, dtype=np.float32)[None, :] - np.arange(n, dtype=np.float32)[:, None]
    init = np.maximum(span, 0) * (0.6 + 0.8 * rng.random((n, n), dtype=np.float32))
    if dtype == "float32":
        return dp.transformed(rng.normal(1.0, 1.0, n - 1).astype(np.float32), init, dtype)
    a = rng.integers(0, 2**10, n - 1)
    return dp.transformed(a, (init * 512).astype(np.int64), dtype)


WARM_N = 64  # the side of the warm-up matrix


def median_run(call, repeats: int, setup=None):
    """``call(setup())`` ``repeats`` times (``setup``, e.g. a fresh copy of the input,
    untimed), each by the wall clock: (the median seconds, the fastest seconds, the
    result of the run at the median: the lower middle one of an even count)."""
    runs = []
    for _ in range(max(1, int(repeats))):
        arg = setup() if setup is not None else None
        start = time.perf_counter()
        result = call(arg) if setup is not None else call()
        runs.append((time.perf_counter() - start, result))
    times = sorted(seconds for seconds, _ in runs)
    middle = sorted(runs, key=lambda run: run[0])[(len(runs) - 1) // 2][1]
    return float(np.median(times)), times[0], middle


def _check(result, reference, a, where: str, against: str = "NumPy") -> None:
    """Equal to the reference bit for bit; in int32 (exact sums) the answer is sum(a)."""
    if not np.array_equal(result, reference):
        raise AssertionError(f"{where}: the matrix differs from the {against} reference")
    if a.dtype == np.int32 and int(dp.answer(result)) != int(a.astype(np.int64).sum()):
        raise AssertionError(f"{where}: the answer is not the sum of a")


def order_cell(order: str, sizes, block_sizes, dtypes, *, seed: int, repeats: int,
               base: int, log=None) -> tuple[dict, dict]:  # fmt: skip
    """Every (n, block size, dtype) of one order: time (the median over repeats,
    after a warm-up call) in all and per call type (the median run's), the calls,
    each result checked against ``dp.solve_diagonals``. Returns (arrays,
    metadata), one row per run."""
    rows = {k: [] for k in ("n", "block", "dtype", "seconds", "seconds_min", "diagonal_s",
                            "triangular_s", "rectangular_s", "diagonal", "triangular",
                            "rectangular")}  # fmt: skip
    for dtype in dtypes:  # the warm-up: every solver's first call, untimed
        SOLVERS[order](dp.transformed(weights(WARM_N, dtype, seed), dtype=dtype),
                       min(block_sizes), base)  # fmt: skip
    for n in sizes:
        for dtype in dtypes:
            a = weights(n, dtype, seed)
            m = dp.transformed(a, dtype=dtype)
            reference = dp.solve_diagonals(m.copy())
            for s in block_sizes:
                total, fastest, (result, calls) = median_run(
                    lambda work, s=s: SOLVERS[order](work, s, base), repeats, m.copy
                )
                _check(result, reference, a, f"{order} n={n} s={s} {dtype}")
                parts = calls.seconds
                for key, value in (("n", n), ("block", s), ("dtype", dtype), ("seconds", total),
                                   ("seconds_min", fastest),
                                   ("diagonal_s", parts["diagonal"]),
                                   ("triangular_s", parts["triangular"]),
                                   ("rectangular_s", parts["rectangular"]),
                                   ("diagonal", calls.diagonal), ("triangular", calls.triangular),
                                   ("rectangular", calls.rectangular)):  # fmt: skip
                    rows[key].append(value)
                if log:
                    log.info("%s n=%d s=%d %s: %.4f s (%d tri, %d rect)", order, n, s, dtype,
                             total, calls.triangular, calls.rectangular)  # fmt: skip
    arrays = {k: np.asarray(v) for k, v in rows.items()}
    metadata = {"study": "moazeni2013", "experiment": "ch3_order", "order": order,
                "implementation": "NumPy (dp.py)", "backend": "cpu", "device": "CPU",
                "seed": int(seed), "repeats": int(repeats), "base": int(base)}  # fmt: skip
    return arrays, metadata


def host() -> dict:
    """The machine a cell ran on: its name and CPU model, the logical CPUs (every cell's
    metadata, so that a table can tell whether its GPU and CPU sides shared a host)."""
    return {"host": platform.node(), "cpu": cpu_name(), "cpu_count": os.cpu_count()}


def native_cell(sizes, dtypes, *, seed: int, repeats: int, threads: int | None = None,
                check_n_max: int = 512, log=None) -> tuple[dict, dict]:  # fmt: skip
    """The compiled baseline (eq. 2 by diagonals in C) on one thread and on
    ``threads`` (default: every CPU of the machine), the median over repeats after
    a warm-up call of each thread count (the library's build and load, OpenMP's
    threads' start: at n = 128 a first call took 600x the time of the next);
    checked against the NumPy reference up to ``check_n_max`` (2.6 s at n = 1,024 on
    a laptop core, more than the cell), above it against the best CPU code
    (``native.solve_blocked``, itself checked bit for bit against NumPy and dp.c in
    tests/studies/moazeni2013), and the two thread counts against each other everywhere."""
    from . import native

    threads = int(threads or os.cpu_count() or 1)
    rows = {k: [] for k in ("n", "dtype", "threads", "seconds", "seconds_min")}
    try:
        implementation = f"C, OpenMP ({native.compiler()} {' '.join(native.FLAGS)})"
    except RuntimeError as error:  # no compiler: the cell says so, the figures omit C
        if log:
            log.warning("%s", error)
        arrays = {k: np.asarray(v, dtype=np.float64 if k == "seconds" else None)
                  for k, v in rows.items()}  # fmt: skip
        metadata = {"study": "moazeni2013", "experiment": "ch3_native", "backend": "cpu",
                    "implementation": f"not run: {error}", "device": "CPU",
                    "cpu_count": os.cpu_count(), "threads": threads, "seed": int(seed),
                    "repeats": int(repeats)}  # fmt: skip
        return arrays, metadata
    for dtype in dtypes:  # the warm-up: each thread count's first call, untimed
        for t in sorted({1, threads}):
            native.solve(dp.transformed(weights(WARM_N, dtype, seed), dtype=dtype), t)
    for n in sizes:
        for dtype in dtypes:
            a = weights(n, dtype, seed)
            m = dp.transformed(a, dtype=dtype)
            results = {}
            for t in sorted({1, threads}):
                median, fastest, work = median_run(lambda work, t=t: native.solve(work, t),
                                                   repeats, m.copy)  # fmt: skip
                results[t] = work
                for key, value in (("n", n), ("dtype", dtype), ("threads", t),
                                   ("seconds", median), ("seconds_min", fastest)):  # fmt: skip
                    rows[key].append(value)
                if log:
                    log.info("C n=%d %s %d thread(s): %.4f s (median of %d)", n, dtype, t,
                             median, repeats)  # fmt: skip
            if not np.array_equal(results[1], results[threads]):
                raise AssertionError(f"C n={n} {dtype}: {threads} threads differ from one")
            if n <= check_n_max:
                _check(results[1], dp.solve_diagonals(m.copy()), a, f"C n={n} {dtype}")
            else:
                best = native.solve_blocked(m.copy(), threads)
                _check(results[1], best, a, f"C n={n} {dtype}", "dp_blocked.c")
    arrays = {k: np.asarray(v) for k, v in rows.items()}
    metadata = {"study": "moazeni2013", "experiment": "ch3_native", "backend": "cpu",
                "implementation": implementation,
                "device": "CPU", **host(), "threads": threads,
                "seed": int(seed), "repeats": int(repeats)}  # fmt: skip
    return arrays, metadata


BEST_CPU_CODE = "dp_blocked.c"  # chapter 3's best CPU code (native.solve_blocked)


def best_cpu_cell(sizes, dtypes, *, seed: int, repeats: int, threads: int | None = None,
                  check_n_max: int = 2048, log=None) -> tuple[dict, dict]:  # fmt: skip
    """Chapter 3's best CPU code (``native.solve_blocked``, native/dp_blocked.c: 64 x 64
    blocks in the GPU's strip order, register-tiled min-plus, OpenMP) on ``threads``
    (default: every CPU), the median over ``repeats`` after a warm-up call (the
    library's build and load, OpenMP's threads' start), G min-plus/s beside it; each
    matrix checked equal bit for bit to the document's baseline (dp.c on the same
    threads) up to ``check_n_max`` (above it dp.c takes seconds; the tests compare the
    two at random sizes). The metadata names the host and its CPU, as every cell's."""
    from . import native

    threads = int(threads or os.cpu_count() or 1)
    rows = {k: [] for k in ("n", "dtype", "threads", "seconds", "seconds_min", "gop_per_s")}
    metadata = {"study": "moazeni2013", "experiment": "ch3_best_cpu", "backend": "cpu",
                "device": "CPU", **host(), "threads": threads, "seed": int(seed),
                "repeats": int(repeats), "code": BEST_CPU_CODE}  # fmt: skip
    try:
        native.blocked_library()
        metadata["implementation"] = (f"{BEST_CPU_CODE}, OpenMP ({native.compiler()} "
                                      f"{' '.join(native.BEST_FLAGS)})")  # fmt: skip
    except RuntimeError as error:  # no compiler: the cell says so, the table has no rows
        if log:
            log.warning("%s", error)
        metadata["implementation"] = f"not run: {error}"
        return {k: np.asarray(v, dtype=np.float64) for k, v in rows.items()}, metadata
    for dtype in dtypes:  # the warm-up, untimed
        native.solve_blocked(dp.transformed(weights(WARM_N, dtype, seed), dtype=dtype), threads)
    for n in sizes:
        for dtype in dtypes:
            a = weights(n, dtype, seed)
            m = dp.transformed(a, dtype=dtype)
            median, fastest, work = median_run(
                lambda work: native.solve_blocked(work, threads), repeats, m.copy)  # fmt: skip
            if n <= check_n_max:
                _check(work, native.solve(m.copy(), threads), a, f"{BEST_CPU_CODE} n={n} {dtype}",
                       "dp.c")  # fmt: skip
            for key, value in (("n", n), ("dtype", dtype), ("threads", threads),
                               ("seconds", median), ("seconds_min", fastest),
                               ("gop_per_s", dp.operations(n) / median / 1e9)):  # fmt: skip
                rows[key].append(value)
            if log:
                log.info("%s n=%d %s %d thread(s): %.4f s (median of %d)", BEST_CPU_CODE, n,
                         dtype, threads, median, repeats)  # fmt: skip
    return {k: np.asarray(v) for k, v in rows.items()}, metadata


# The orders a GPU cell runs: the thesis's final implementation (one launch a
# block-diagonal, ``dp_gpu.solve_bottom_up``) at every block size, and Table 1's
# two orders one launch a block operation (``dp_gpu.GpuBlocked``, the calls it
# counts) at Table 1's block size alone (at s = 16 and n = 8,192 the bottom-up
# order is 22 million launches).
GPU_ORDERS = ("bottom_up_strips", "bottom_up", "divide_and_conquer")
GPU_BLOCKED_SOLVERS = {"bottom_up": dp.solve_bottom_up,
                       "divide_and_conquer": dp.solve_divide_and_conquer}  # fmt: skip


def _gpu_reference(m, a, n: int, dtype: str, log):
    """The matrix a GPU run must equal: the best compiled code on every CPU
    (``native/dp_blocked.c``, bit for bit ``native/dp.c``'s and 10x faster:
    tests/studies/moazeni2013/test_moazeni2013_native_best.py), else (no
    compiler) NumPy's up to n = 1,024, else None (the run is not checked, and
    the cell says so)."""
    from . import native

    try:
        work = m.copy()
        native.solve_blocked(work, os.cpu_count() or 1)
        return work, "C"
    except RuntimeError as error:
        if n <= 1024:
            return dp.solve_diagonals(m.copy()), "NumPy"
        if log:
            log.warning("n=%d %s: not checked (%s)", n, dtype, error)
        return None, "none"


def _check_on_the_gpu(order: str, m: np.ndarray, s: int, reference, where: str) -> None:
    """``order`` solves ``m`` on the GPU once more, untimed: equal to ``reference``."""
    import cupy

    from . import dp_gpu

    if order == "bottom_up_strips":
        result = dp_gpu.solve_bottom_up(cupy.asarray(m), s)[0]
    else:
        result = GPU_BLOCKED_SOLVERS[order](m, s, engine=dp_gpu.GpuBlocked)[0]
    if not np.array_equal(cupy.asnumpy(result), reference):
        raise AssertionError(f"{where}: the matrix differs from the reference")


def gpu_cell(sizes, block_sizes, dtypes, *, seed: int, repeats: int, log=None) -> tuple[dict, dict]:
    """Chapter 3 on the GPU: every (order, n, block size, dtype) of GPU_ORDERS,
    the time (CUDA events, the median over ``repeats``, their minimum in
    ``seconds_min``, after the compiling warm-up call; the upload beside it
    in ``upload_s``, which the thesis counts in), each kind's device time from
    one run more (``profile``), the calls, and each result checked equal bit for
    bit to the compiled CPU code's, on the timed matrix (the thesis's: no initial
    values) and, one run more, on ``checked_matrix`` (initial values everywhere,
    float32 weights negative too), where a dropped term shows. Rows as
    ``order_cell``'s, with ``order``."""
    import cupy

    from . import catalog, dp_gpu

    rows = {k: [] for k in ("order", "n", "block", "dtype", "seconds", "seconds_min",
                            "upload_s", "diagonal_s", "triangular_s", "rectangular_s",
                            "diagonal", "triangular", "rectangular", "checked")}  # fmt: skip
    dp_gpu.solve_bottom_up(dp.transformed(weights(64, "float32", 0)), 16)  # compile, warm up
    for n in sizes:
        for dtype in dtypes:
            a = weights(n, dtype, seed)
            m = dp.transformed(a, dtype=dtype)
            reference, checker = _gpu_reference(m, a, n, dtype, log)
            hard = checked_matrix(n, dtype, seed)
            hard_reference, _ = _gpu_reference(hard, None, n, dtype, log)
            for order in GPU_ORDERS:
                for s in block_sizes if order == "bottom_up_strips" else [catalog.TABLE1_BLOCK]:
                    if order != "bottom_up_strips" and s > n:
                        continue
                    # Table 1's orders upload inside GpuBlocked, within their seconds: their
                    # upload_s is 0, since Fig 16 adds upload_s to a GPU's time
                    strips = order == "bottom_up_strips"
                    times, uploads = [], []
                    for _ in range(repeats):
                        start = time.perf_counter()
                        if strips:
                            device_m = cupy.asarray(m)
                            cupy.cuda.get_current_stream().synchronize()
                            uploads.append(time.perf_counter() - start)
                            result, calls, seconds = dp_gpu.solve_bottom_up(device_m, s)
                        else:
                            solve = GPU_BLOCKED_SOLVERS[order]
                            result, calls = solve(m, s, engine=dp_gpu.GpuBlocked)
                            seconds = time.perf_counter() - start
                        times.append(seconds)
                    # the median of the repeats, as the CPU cells', the minimum beside it
                    best = float(np.median(times))
                    upload_s = float(np.median(uploads)) if strips else 0.0
                    on_host = cupy.asnumpy(result)
                    where = f"GPU {order} n={n} s={s} {dtype}"
                    if reference is not None:
                        _check(on_host, reference, a, where, checker)
                    if hard_reference is not None:
                        _check_on_the_gpu(
                            order, hard, s, hard_reference, f"{where}, initial values"
                        )
                    if strips:
                        _, calls, _ = dp_gpu.solve_bottom_up(device_m, s, profile=True)
                    values = {"order": order, "n": n, "block": s, "dtype": dtype,
                              "seconds": best, "seconds_min": min(times),
                              "upload_s": upload_s,
                              **{f"{k}_s": calls.seconds[k] for k in dp.KINDS},
                              "diagonal": calls.diagonal, "triangular": calls.triangular,
                              "rectangular": calls.rectangular, "checked": checker}  # fmt: skip
                    for key, value in values.items():
                        rows[key].append(value)
                    if log:
                        log.info("GPU %s n=%d s=%d %s: %.4f s (checked against %s)", order, n,
                                 s, dtype, best, checker)  # fmt: skip
    device = cuda_device()
    arrays = {k: np.asarray(v) for k, v in rows.items()}
    metadata = {"study": "moazeni2013", "experiment": "ch3_gpu", "backend": "cuda",
                "implementation": f"CUDA (dp.cu), {device}", "device": device, **host(),
                "seed": int(seed), "repeats": int(repeats),
                "checked_on": "the timed matrix and checked_matrix (initial values)"}  # fmt: skip
    return arrays, metadata


FIG12_DELAY_NS = 200_000  # delay_ns before each timed launch: longer than the host's enqueue


def _event_median(call, repeats: int, delay=None) -> float:
    """The median device time of ``call`` in seconds (CUDA events), after one untimed call.
    ``delay``: launched before the start event, so that the host enqueues the events and
    ``call``'s launch while the device waits, and the events time the launch's work, not
    the host's launch latency (CuPy's, tens of microseconds: a floor under small launches)."""
    import cupy

    call()
    times = []
    for _ in range(repeats):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        if delay is not None:
            delay()
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return float(np.median(times))


def fig12_cell(sizes, *, repeats: int, log=None) -> tuple[dict, dict]:
    """Fig 12: one rectangular launch (a p x p min-plus product into C, float32,
    ``dp_gpu.launch_minplus``) against cuBLAS's dense p x p product
    (``cupy.matmul``, float32) of the same shape, the median of ``repeats``
    CUDA-event times each after one untimed call, each launch enqueued behind
    ``delay_ns`` (kernels/delay.cuh), so that no launch latency sets a floor under
    the small p."""
    import cupy

    from . import dp_gpu

    delay = partial(dp_gpu._module().get_function("delay_ns"), (1,), (1,),
                    (np.int64(FIG12_DELAY_NS),))  # fmt: skip

    rows = {k: [] for k in ("p", "minplus_s", "matmul_s")}
    rng = np.random.default_rng(12)
    for p in sizes:
        m = cupy.asarray(rng.gamma(2.0, 1.0, (3 * p, 3 * p)).astype(np.float32))
        jobs = cupy.asarray([[0, 2 * p, 0, p, p, 2 * p]], dtype=cupy.int32)  # C, A, B corners
        x, y = m[:p, p : 2 * p].copy(), m[p : 2 * p, 2 * p :].copy()
        rows["p"].append(p)
        product = partial(dp_gpu.launch_minplus, m, np.int64(3 * p), p, jobs, 1)
        rows["minplus_s"].append(_event_median(product, repeats, delay))
        rows["matmul_s"].append(_event_median(partial(cupy.matmul, x, y), repeats, delay))
        if log:
            log.info("Fig 12 p=%d: min-plus %.6f s, cuBLAS %.6f s", p, rows["minplus_s"][-1],
                     rows["matmul_s"][-1])  # fmt: skip
    device = cuda_device()
    arrays = {k: np.asarray(v) for k, v in rows.items()}
    metadata = {"study": "moazeni2013", "experiment": "ch3_fig12", "backend": "cuda",
                "device": device, "repeats": int(repeats), "delay_ns": FIG12_DELAY_NS,
                "implementation": f"dp_minplus(_rb), cuBLAS (cupy.matmul), {device}"}  # fmt: skip
    return arrays, metadata
