"""Moazeni (2013) chapters 5 and 6: the runs behind their tables and figures. Each
cell returns ``(arrays, metadata)`` for ``artifacts.save_npz``; a cell holds several
tables, stored as ``<table>/<column>`` arrays (``pack``, ``unpack``).

* ``cpu_cell``: the NumPy solver's quality curves (every variant and tile) on a small
  phantom, and the sweep of lambda and eps behind the chosen values;
* ``native_cell``: the compiled single-thread solver's seconds an iteration (the
  speed-ups' denominator, §6.5's "CPU version");
* ``peer_cell``: scikit-image's ``denoise_tv_chambolle`` at several weights beside the
  compiled solver's quality against its time (time to the same RMSE);
* ``gpu_cell``: every variant and tile at every size: seconds an iteration, quality
  against iterations, Table 10's kernels (calls, time, registers, shared memory,
  blocks an SM), and the GPU against the NumPy reference at a small size;
* ``ch5_cell``: chapter 5's kernels with and without reuse, at each carve-out of the
  unified L1/shared memory: shared bytes, blocks an SM, seconds a launch.

Every phantom comes from (seed, size, directions, noise) alone, so runs of one size
share it (the speed-ups and quality differences are paired)."""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from pfresample.backend import cuda_device

from . import chanvese, tv

LOG = logging.getLogger(__name__)
B = 1.0  # ms/um^2: b = 1,000 s/mm^2, a clinical DTI b-value
# Table 10's kernels of each variant and their functions in tv.cu
KERNELS = {"global_sync": {"LLT": "tv_llt", "TVnorm": "tv_norm", "Reduction": "tv_reduce",
                           "P": "tv_p", "Solver": "tv_solver"},
           "thread_sync": {"Solver": "tv_threadsync"},
           "unsync": {"Solver": "tv_unsync"}}  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """The solver's choices the thesis leaves open (docs/moazeni2013.md, chapter 6)."""

    lam: float
    eps: float
    step: float
    iterations: int

    def solver(self) -> dict:
        return {"lam": self.lam, "eps": self.eps, "step": self.step}


@dataclass(frozen=True)
class Case:
    truth: np.ndarray
    d_hat: np.ndarray
    L0: np.ndarray


def make_case(size: int, seed: int, directions: int, noise: float) -> Case:
    """The phantom, its noisy signals' log-linear fit and the starting factor."""
    rng = np.random.default_rng([seed, size, directions, int(round(noise * 1e6))])
    truth = tv.phantom(size)
    g = tv.gradient_directions(directions, rng)
    d_hat = tv.log_linear_fit(tv.signals(truth, g, B, 1.0, noise, rng), g, B)
    return Case(truth, d_hat, tv.cholesky_start(d_hat))


def pack(tables: dict[str, Iterable[dict]]) -> dict[str, np.ndarray]:
    """Rows of each table -> ``<table>/<column>`` arrays (an empty table keeps no columns)."""
    arrays = {}
    for name, rows in tables.items():
        frame = pd.DataFrame(list(rows))
        arrays[f"{name}/"] = np.array(len(frame))
        for column in frame.columns:
            values = frame[column].to_numpy()
            # strings as a fixed-width text array: artifacts load without pickle
            arrays[f"{name}/{column}"] = values.astype(str) if values.dtype == object else values
    return arrays


def unpack(cells: Sequence[tuple[dict, dict]], table: str) -> pd.DataFrame:
    """One table of every cell, with each cell's device, concatenated."""
    frames = []
    for arrays, meta in cells:
        if f"{table}/" not in arrays:
            continue
        columns = {k.split("/", 1)[1]: v for k, v in arrays.items()
                   if k.startswith(f"{table}/") and k != f"{table}/"}  # fmt: skip
        frame = pd.DataFrame(columns)
        if len(frame):
            frames.append(frame.assign(device=meta.get("device", "CPU")))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _meta(experiment: str, **extra) -> dict:
    return {"study": "moazeni2013", "experiment": experiment, "backend": "cpu", "device": "CPU",
            **extra}  # fmt: skip


def _host() -> dict:
    """The machine a cell ran on (``experiments.host``): its name, CPU model and CPUs."""
    from .experiments import host

    return host()


def _quality_rows(history, **labels) -> list[dict]:
    return [{**labels, "iteration": h["iteration"], "tensor_rmse": h["tensor_rmse"],
             "fa_error": h["fa_error"]} for h in history]  # fmt: skip


def cpu_cell(size: int, tiles: Sequence[int], settings: Settings, lambdas: Sequence[float],
             epsilons: Sequence[float], steps: Sequence[float], *, every: int, seed: int,
             directions: int, noise: float, log=LOG):  # fmt: skip
    """NumPy (float64): every variant's quality curve at ``size``, and the final
    quality at each (lambda, eps, step) of the sweep (GlobalSync)."""
    case = make_case(size, seed, directions, noise)
    quality, sweep = [], []
    for variant in tv.VARIANTS:
        for tile in tiles if variant != "global_sync" else tiles[:1]:
            blocks = tv.variant_blocks(variant, tile)
            begin = time.perf_counter()
            _, history = tv.solve(case.L0, case.d_hat, iterations=settings.iterations,
                                  truth=case.truth, every=every, **settings.solver(),
                                  **blocks)  # fmt: skip
            quality += _quality_rows(history, size=size, variant=variant,
                                     tile=tile if variant != "global_sync" else 0)  # fmt: skip
            log.info("numpy %s tile %d at %d^3: RMSE %.4f -> %.4f (%.1f s)", variant, tile, size,
                     history[0]["tensor_rmse"], history[-1]["tensor_rmse"],
                     time.perf_counter() - begin)  # fmt: skip
    for lam, eps, step in itertools.product(lambdas, epsilons, steps):
        _, history = tv.solve(case.L0, case.d_hat, lam=lam, eps=eps, step=step,
                              iterations=settings.iterations, truth=case.truth,
                              every=settings.iterations)  # fmt: skip
        sweep.append({"size": size, "lam": lam, "eps": eps, "step": step,
                      "iterations": settings.iterations,
                      "energy": history[-1]["energy"],
                      "tensor_rmse": history[-1]["tensor_rmse"],
                      "fa_error": history[-1]["fa_error"]})  # fmt: skip
        log.info("sweep lambda %g eps %g step %g: RMSE %.4f", lam, eps, step,
                 history[-1]["tensor_rmse"])  # fmt: skip
    noisy = [{"size": size, "tensor_rmse": tv.tensor_rmse(case.d_hat, case.truth),
              "fa_error": tv.fa_error(case.d_hat, case.truth)}]  # fmt: skip
    return pack({"quality": quality, "sweep": sweep, "noisy": noisy}), _meta("ch6_cpu")


def native_cell(sizes: Sequence[int], settings: Settings, iterations: int, repeats: int, *,
                seed: int, directions: int, noise: float, log=LOG):  # fmt: skip
    """The compiled single-thread solver: seconds an iteration at each size (the
    median over ``repeats`` runs of ``iterations`` steps, as a wall clock, §6.5; the
    least beside it), after an untimed iteration at that size (the library's build
    and load, the first touch of the volume's pages)."""
    from . import native

    rows = []
    for size in sizes:
        case = make_case(size, seed, directions, noise)
        L0, d_hat = case.L0.astype(np.float32), case.d_hat.astype(np.float32)
        native.tv_solve(L0, d_hat, iterations=1, **settings.solver())  # the warm-up
        times = []
        for _ in range(repeats):
            begin = time.perf_counter()
            native.tv_solve(L0, d_hat, iterations=iterations, **settings.solver())
            times.append((time.perf_counter() - begin) / iterations)
        median = float(np.median(times))
        rows.append({"size": size, "seconds": median, "seconds_min": min(times),
                     "iterations": iterations, "repeats": repeats})  # fmt: skip
        log.info("compiled solver at %d^3: %.3f s an iteration (median of %d)", size, median,
                 repeats)  # fmt: skip
    return pack({"native": rows}), _meta("ch6_native", threads=1, **_host())


BEST_CPU_CODE = "tv_best.c"  # chapter 6's best CPU code (native.tv_best_solve)


def best_cpu_cell(sizes: Sequence[int], settings: Settings, iterations: int, repeats: int, *,
                  threads: int | None = None, seed: int, directions: int, noise: float,
                  log=LOG):  # fmt: skip
    """Chapter 6's best CPU code (native/tv_best.c: GlobalSync's iteration in two fused
    passes, OpenMP) on ``threads`` (default: every CPU): seconds an iteration at each
    size, the median over ``repeats`` runs of ``iterations`` steps after an untimed
    one, the C call alone on the channel-major arrays (as the one-host run,
    bench/moazeni2013_best_cpu.py: no layout copy in the clock); effective GB/s (144 bytes
    a voxel an iteration) beside it. Each size's L after the timed steps is checked
    against the document's baseline's (tv.c, ``native.tv_solve``) from the same start:
    the same float32 arithmetic, the TV sums' order aside (at most an ulp of a scale)."""
    import os

    from . import native

    threads = int(threads or os.cpu_count() or 1)
    meta = _meta("ch6_best_cpu", **_host(), threads=threads, code=BEST_CPU_CODE)
    rows = []
    for size in sizes:
        case = make_case(size, seed, directions, noise)
        L0, d_hat = case.L0.astype(np.float32), case.d_hat.astype(np.float32)
        cm0, dh = native._channel_major(L0, d_hat)
        args = (dh.ctypes.data, size, size, size, *settings.solver().values())

        def run(cm, steps, args=args):
            status = native.tv_best_library().tv_best_solve_f32(cm.ctypes.data, *args,
                                                                int(steps), threads)  # fmt: skip
            if status != 0:
                raise MemoryError("native tv_best_solve: could not allocate its work arrays")

        run(cm0.copy(), 1)  # the warm-up: the library's load, OpenMP's threads, first touch
        times, cm = [], None
        for _ in range(repeats):
            cm = cm0.copy()
            begin = time.perf_counter()
            run(cm, iterations)
            times.append((time.perf_counter() - begin) / iterations)
        want = native.tv_solve(L0, d_hat, iterations=iterations, **settings.solver())
        got = np.moveaxis(cm, 0, -1)
        if not np.allclose(got, want, rtol=1e-5, atol=1e-6 * float(np.abs(want).max())):
            raise AssertionError(f"{BEST_CPU_CODE} at {size}^3: L differs from tv.c's")
        median = float(np.median(times))
        rows.append({"size": size, "threads": threads, "seconds": median,
                     "seconds_min": min(times), "iterations": iterations, "repeats": repeats,
                     "gb_per_s": 144 * size**3 / median / 1e9})  # fmt: skip
        log.info("%s at %d^3 on %d threads: %.4f s an iteration (median of %d)", BEST_CPU_CODE,
                 size, threads, median, repeats)  # fmt: skip
    return pack({"best_cpu": rows}), meta


def peer_cell(size: int, weights: Sequence[float], settings: Settings, *, seed: int,
              directions: int, noise: float, log=LOG):  # fmt: skip
    """scikit-image's Chambolle TV (each of the six channels alone, its default 200
    iterations) at each weight, and the compiled solver one iteration at a time
    (its cumulative seconds and quality): where scikit-image is not installed the
    peer's table is empty and the metadata says so."""
    from . import native

    case = make_case(size, seed, directions, noise)
    peer, ours = [], []
    try:
        from skimage.restoration import denoise_tv_chambolle
    except ImportError:
        denoise_tv_chambolle = None
        log.warning("scikit-image is not installed: the peer's rows are empty")
    for weight in weights if denoise_tv_chambolle else ():
        begin = time.perf_counter()
        d = denoise_tv_chambolle(case.d_hat, weight=weight, channel_axis=-1)
        seconds = time.perf_counter() - begin
        peer.append({"size": size, "weight": weight, "seconds": seconds,
                     "tensor_rmse": tv.tensor_rmse(d, case.truth),
                     "fa_error": tv.fa_error(d, case.truth)})  # fmt: skip
        log.info("chambolle weight %g: RMSE %.4f in %.2f s", weight, peer[-1]["tensor_rmse"],
                 seconds)  # fmt: skip
    L, d_hat, elapsed = case.L0.astype(np.float32), case.d_hat.astype(np.float32), 0.0
    for it in range(settings.iterations + 1):
        d = tv.tensor(L.astype(np.float64))
        ours.append({"size": size, "iteration": it, "seconds": elapsed,
                     "tensor_rmse": tv.tensor_rmse(d, case.truth),
                     "fa_error": tv.fa_error(d, case.truth)})  # fmt: skip
        begin = time.perf_counter()
        L = native.tv_solve(L, d_hat, iterations=1, **settings.solver())
        elapsed += time.perf_counter() - begin
    version = None
    if denoise_tv_chambolle is not None:
        import skimage

        version = skimage.__version__
    return pack({"peer": peer, "ours": ours}), _meta("ch6_peer", skimage=version)


def gpu_cell(sizes: Sequence[int], tiles: Sequence[int], settings: Settings, *, repeats: int,
             every: int, check_size: int, check_iterations: int, seed: int, directions: int,
             noise: float, log=LOG):  # fmt: skip
    """Every variant and tile on the GPU at each size (see the module's docstring)."""
    import cupy

    from . import tv_gpu

    timing, quality, kernels, check = [], [], [], []
    case = make_case(check_size, seed, directions, noise)
    for variant in tv.VARIANTS:
        for tile in tiles:
            blocks = tv.variant_blocks(variant, tile)
            kw = {"iterations": check_iterations, **settings.solver(), **blocks}
            L64, _ = tv.solve(case.L0, case.d_hat, **kw)
            L32, _ = tv.solve(case.L0, case.d_hat, dtype=np.float32, **kw)
            solver = tv_gpu.Solver(case.L0, case.d_hat, variant, tile, **settings.solver())
            solver.iterate(check_iterations)
            L = solver.result()
            row = {"size": check_size, "variant": variant, "tile": tile,
                   "iterations": check_iterations, "max_diff": float(np.abs(L - L64).max()),
                   "float32_diff": float(np.abs(L32 - L64).max()),
                   "rmse_gpu": tv.tensor_rmse(tv.tensor(L.astype(np.float64)), case.truth),
                   "rmse_numpy": tv.tensor_rmse(tv.tensor(L64), case.truth)}  # fmt: skip
            row["bound"] = 4 * row["float32_diff"] + 1e-6
            if row["max_diff"] > row["bound"]:
                raise RuntimeError(f"{variant} (tile {tile}) differs from its NumPy reference "
                                   f"by {row['max_diff']:.3g} > {row['bound']:.3g}")  # fmt: skip
            check.append(row)
            log.info("check %s tile %d: %.3g <= %.3g", variant, tile, row["max_diff"], row["bound"])
    for size in sizes:
        case = make_case(size, seed, directions, noise)
        truth = tv_gpu.to_device(case.truth)
        for variant in tv.VARIANTS:
            for tile in tiles:
                solver = tv_gpu.Solver(case.L0, case.d_hat, variant, tile, **settings.solver())
                for it in range(0, settings.iterations + 1):
                    if it % every == 0 or it == settings.iterations:
                        rmse, fa = tv_gpu.quality(solver.tensor(), truth)
                        quality.append(
                            {
                                "size": size,
                                "variant": variant,
                                "tile": tile,
                                "iteration": it,
                                "tensor_rmse": rmse,
                                "fa_error": fa,
                            }
                        )
                    if it < settings.iterations:
                        solver.iterate(1)
                runs = []
                for _ in range(repeats):  # from the same start, so every run does the same work
                    solver = tv_gpu.Solver(case.L0, case.d_hat, variant, tile, **settings.solver())
                    runs.append(solver.iterate(settings.iterations) / settings.iterations)
                timing.append({"size": size, "variant": variant, "tile": tile,
                               "seconds": float(np.median(runs)), "seconds_min": min(runs),
                               "seconds_max": max(runs), "repeats": repeats,
                               "iterations": settings.iterations})  # fmt: skip
                log.info("%s tile %d at %d^3: %.3f ms an iteration, RMSE %.4f", variant, tile,
                         size, timing[-1]["seconds"] * 1e3, quality[-1]["tensor_rmse"])  # fmt: skip
                if variant == "global_sync":
                    solver = tv_gpu.Solver(case.L0, case.d_hat, variant, tile, **settings.solver())
                    profile = solver.profile(settings.iterations)
                for kernel, fn_name in KERNELS[variant].items():
                    threads = tv_gpu.REDUCE_THREADS if kernel == "Reduction" else (
                        tv_gpu.THREADS if kernel in ("LLT", "Solver") and variant == "global_sync"
                        else tile * tile)  # fmt: skip
                    attrs = tv_gpu.attributes(tv_gpu.function(fn_name, tile), threads, -1)
                    calls, seconds = (
                        profile[kernel]
                        if variant == "global_sync"
                        else (settings.iterations, timing[-1]["seconds"] * settings.iterations)
                    )
                    kernels.append({"size": size, "variant": variant, "tile": tile,
                                    "kernel": kernel, "calls": calls, "seconds": seconds,
                                    "threads": threads, **attrs})  # fmt: skip
        del truth, solver
        cupy.get_default_memory_pool().free_all_blocks()
    tables = {"timing": timing, "quality": quality, "kernels": kernels, "check": check}
    return pack(tables), _meta("ch6_gpu", backend="cuda", device=cuda_device(), **_host())


def _time_launches(launch, repeats: int) -> tuple[float, float, float]:
    """Median, least and most device seconds of one launch over ``repeats``
    (after one warm-up), each timed by CUDA events with the host's launch
    latency hidden behind ``delay_ns`` (delay.cuh)."""
    import cupy

    from . import tv_gpu
    from .hashtable_gpu import DELAY_NS

    launch()
    delay = tv_gpu.function("delay_ns", 8)
    times = []
    for _ in range(repeats):
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        delay((1,), (1,), (np.int64(DELAY_NS),))
        a.record()
        launch()
        b.record()
        b.synchronize()
        times.append(cupy.cuda.get_elapsed_time(a, b) / 1e3)
    return float(np.median(times)), min(times), max(times)


def ch5_cell(sizes_3d: Sequence[int], sizes_2d: Sequence[int], tiles: Sequence[int],
             carveouts: Sequence[int], *, repeats: int, seed: int, log=LOG):  # fmt: skip
    """Kernel P's Curvature3D (one channel's launch) and the Chan-Vese step, each
    straightforward and with reuse, at each size, tile and carve-out (per cent of
    the unified L1/shared memory the driver is asked to give to shared memory; -1
    its default)."""
    import cupy

    from . import tv_gpu

    rows = []
    for size in sizes_3d:
        rng = np.random.default_rng([seed, size])
        u = cupy.asarray(rng.normal(size=(size,) * 3).astype(np.float32))
        out = cupy.empty_like(u)
        scale = cupy.ones(6, dtype=cupy.float32)
        for tile in tiles:
            grid = (-(-size // (tile - 2)), -(-size // (tile - 2)), -(-size // tv_gpu.CHUNK))
            results = {}
            for reuse in (False, True):
                fn = tv_gpu.function("tv_p", tile, reuse)
                args = (u, out, scale, np.int32(0), *(np.int32(size),) * 3,
                        np.int32(tv_gpu.CHUNK), np.float32(0.01))  # fmt: skip
                for carveout in carveouts:
                    attrs = tv_gpu.attributes(fn, tile * tile, carveout)
                    launch = partial(fn, grid, (tile, tile), args)
                    median, low, high = _time_launches(launch, repeats)
                    rows.append({"kernel": "curvature3d", "size": size, "tile": tile,
                                 "reuse": reuse, "carveout": carveout, "seconds": median,
                                 "seconds_min": low, "seconds_max": high, **attrs})  # fmt: skip
                tv_gpu.attributes(fn, tile * tile, -1)  # the default carve-out again
                results[reuse] = out.get()
            if not np.array_equal(results[False], results[True]):
                raise RuntimeError(f"curvature3d tile {tile}: reuse changed the result")
        log.info("curvature3d at %d^3 timed", size)
    params = chanvese.Params()
    for size in sizes_2d:
        image, phi = chanvese.test_image(size, np.random.default_rng([seed, size]))
        c1, c2 = chanvese.means(phi, image)
        d_image, d_phi = cupy.asarray(image), cupy.asarray(phi)
        for tile in tiles:
            results = {}
            for reuse in (False, True):
                fn = tv_gpu.function("cv_step", tile, reuse)
                for carveout in carveouts:
                    attrs = tv_gpu.attributes(fn, tile * tile, carveout)
                    median, low, high = _time_launches(
                        partial(tv_gpu.chanvese_step, d_phi, d_image, c1, c2, params, tile, reuse),
                        repeats,
                    )
                    rows.append({"kernel": "chanvese", "size": size, "tile": tile, "reuse": reuse,
                                 "carveout": carveout, "seconds": median, "seconds_min": low,
                                 "seconds_max": high, **attrs})  # fmt: skip
                tv_gpu.attributes(fn, tile * tile, -1)
                results[reuse] = tv_gpu.chanvese_step(d_phi, d_image, c1, c2, params, tile,
                                                      reuse).get()  # fmt: skip
            if not np.array_equal(results[False], results[True]):
                raise RuntimeError(f"chanvese tile {tile}: reuse changed the result")
        log.info("chanvese at %d^2 timed", size)
    return pack({"ch5": rows}), _meta("ch5_gpu", backend="cuda", device=cuda_device())
