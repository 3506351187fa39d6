"""Moazeni (2013) chapter 3: the cells -- timed runs of the decompositions
(``dp``) and of the compiled baseline (``native``) on random weights, each
checked equal, bit for bit, to the NumPy reference before it is kept.

Weights: a(i) ~ Gamma(2, 1) in float32, or integers in [0, 2**10) in int32,
seeded by (seed, n); every other entry starts at "no value yet" (the thesis
gives no initial values), so the answer is also checked to be sum(a). Times
are the minimum over ``repeats`` runs, as the thesis reports them (§3.6)."""

from __future__ import annotations

import os
import time

import numpy as np

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


def _check(result, reference, a, where: str) -> None:
    """Equal to the reference bit for bit; in int32 (exact sums) the answer is sum(a)."""
    if not np.array_equal(result, reference):
        raise AssertionError(f"{where}: the matrix differs from the NumPy reference")
    if a.dtype == np.int32 and int(dp.answer(result)) != int(a.astype(np.int64).sum()):
        raise AssertionError(f"{where}: the answer is not the sum of a")


def order_cell(order: str, sizes, block_sizes, dtypes, *, seed: int, repeats: int,
               base: int, log=None) -> tuple[dict, dict]:  # fmt: skip
    """Every (n, block size, dtype) of one order: time (min over repeats) in
    all and per call type, the calls, each result checked against
    ``dp.solve_diagonals``. Returns (arrays, metadata), one row per run."""
    rows = {k: [] for k in ("n", "block", "dtype", "seconds", "diagonal_s", "triangular_s",
                            "rectangular_s", "diagonal", "triangular", "rectangular")}  # fmt: skip
    for n in sizes:
        for dtype in dtypes:
            a = weights(n, dtype, seed)
            m = dp.transformed(a, dtype=dtype)
            reference = dp.solve_diagonals(m.copy())
            for s in block_sizes:
                best = None
                for _ in range(repeats):
                    start = time.perf_counter()
                    result, calls = SOLVERS[order](m.copy(), s, base)
                    total = time.perf_counter() - start
                    if best is None or total < best[0]:
                        best = (total, calls.seconds, calls)
                _check(result, reference, a, f"{order} n={n} s={s} {dtype}")
                total, parts, calls = best
                for key, value in (("n", n), ("block", s), ("dtype", dtype), ("seconds", total),
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


def native_cell(sizes, dtypes, *, seed: int, repeats: int, threads: int | None = None,
                check_n_max: int = 1024, log=None) -> tuple[dict, dict]:  # fmt: skip
    """The compiled baseline (eq. 2 by diagonals in C) on one thread and on
    ``threads`` (default: every CPU of the machine), min over repeats; checked
    against the NumPy reference up to ``check_n_max`` and the two thread
    counts against each other everywhere."""
    from . import native

    threads = int(threads or os.cpu_count() or 1)
    rows = {k: [] for k in ("n", "dtype", "threads", "seconds")}
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
    for n in sizes:
        for dtype in dtypes:
            a = weights(n, dtype, seed)
            m = dp.transformed(a, dtype=dtype)
            results = {}
            for t in sorted({1, threads}):
                best = np.inf
                for _ in range(repeats):
                    work = m.copy()
                    start = time.perf_counter()
                    native.solve(work, t)
                    best = min(best, time.perf_counter() - start)
                results[t] = work
                for key, value in (("n", n), ("dtype", dtype), ("threads", t), ("seconds", best)):
                    rows[key].append(value)
                if log:
                    log.info("C n=%d %s %d thread(s): %.4f s", n, dtype, t, best)
            if not np.array_equal(results[1], results[threads]):
                raise AssertionError(f"C n={n} {dtype}: {threads} threads differ from one")
            if n <= check_n_max:
                _check(results[1], dp.solve_diagonals(m.copy()), a, f"C n={n} {dtype}")
    arrays = {k: np.asarray(v) for k, v in rows.items()}
    metadata = {"study": "moazeni2013", "experiment": "ch3_native", "backend": "cpu",
                "implementation": implementation,
                "device": "CPU", "cpu_count": os.cpu_count(), "threads": threads,
                "seed": int(seed), "repeats": int(repeats)}  # fmt: skip
    return arrays, metadata
