"""The cells of Das, Mazumdar & Banerjee (2014) on the library's D3 filter
(``pfresample.run_filter`` with ``D3_OPTIONS``: the SIR filter with any registry method, or
D3 resampling with the prior weights of eqs. 1-4) and the UUV model of §3.2.

* :func:`trajectory` (every cell): one simulated trajectory (truth, DVL
  readings) and the Kalman filter's RMSE and bias on it, the exact floor;
* :func:`filter_cell` (Figs 3-6, the methods table): one run of one filter
  at N on one trajectory: RMSE and bias per velocity component, the run's
  seconds (per stage and whole), every ``estimate_every``-th estimate, and
  the particles right after the resampling at the snapshot step (at most
  ``snapshot_particles`` of them, the first by index, and the number of
  distinct values over all N);
* :func:`timing_cell` (Table 5's CPU columns): one CPU run of the SIR or the
  D3 filter at N over the timing window (the first seconds of trajectory 0);
* :func:`gpu_cell` (Tables 5-7, Fig 10): the GPU D3 filter at N, one run on
  trajectory 0 per number of threads per block, with the occupancy of the
  main D3 kernel at that block size;
* :func:`best_cpu_cell` (ratio 2 of Table 5): the best CPU code (``native/d3_best.c``)
  of Table 5's filters and the paper's GPU algorithm at N on every core over the timing
  window, the median of repeated runs;
* :func:`fig11_cell` (Fig 11): the iterations per thread of the paper's
  local-CDF search on the weights of one D3 filter step.

Randomness. Trajectory j draws from ``SeedSequence(seed, spawn_key=
(crc32("d3_2014-trajectory"), j))``; run r of trajectory j at N from
``(crc32("d3_2014-run"), N, j, r)``: the same for every filter and every
threads-per-block (common random numbers: one initial particle set for all
filters), and independent of how many trajectories and runs the grid has.

Timing. ``wall_seconds`` is the filter's own clock around its loop over the
T steps (``FilterResult.wall_seconds``), ``device_seconds`` on the GPU the CUDA
events around the steps (``FilterResult.device_seconds``: the GPU's time of the
run, the capture of the run's CUDA graph included). The tables divide them
by the steps: milliseconds per filter step, since the paper's unit is not
stated and the runs' lengths differ (Table 5's CPU runs and the GPU runs at
every N but the figure N cover only the timing window). Before a run on the
GPU, the cell runs ``WARMUP_STEPS`` steps untimed (NVRTC compile or cache
load, CuPy's first calls); a CPU run needs none. Every cell records the
backend that ran it and the device.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import time
import zlib

import numpy as np

from pfresample.backend import cuda_device, resolve_backend
from pfresample.filters import D3_OPTIONS, run_filter
from pfresample.filters.d3 import prior_log_weights, velocity_errors
from pfresample.filters.sir import weights_from_log
from pfresample.models.uuv import kalman_filter
from pfresample.resampling import d3_loop
from pfresample.resampling.d3 import plan
from pfresample.resampling.registry import get_method
from pfresample.rng import seed_keys
from pfresample.timing import cpu_name

from ..pipeline import artifacts
from .catalog import BEST_CPU_CODE

WARMUP_STEPS = 50  # untimed steps before the timed runs of a GPU cell
FIG11_THREADS = 160  # the paper's thresholds of Fig 11 at Table 5's block size
LOG_EVERY_S = 30.0


def _seed_word(*words) -> int:
    tag = zlib.crc32(words[0].encode())
    state = np.random.SeedSequence(int(words[1]), spawn_key=(tag, *map(int, words[2:])))
    return int(state.generate_state(1, np.uint64)[0])


def trajectory_seed(seed: int, j: int) -> int:
    """The seed of trajectory j (module docstring)."""
    return _seed_word("d3_2014-trajectory", seed, j)


def run_seed(seed: int, n: int, j: int, r: int) -> int:
    """The seed of run r on trajectory j at N (module docstring)."""
    return _seed_word("d3_2014-run", seed, n, j, r)


def warmup_seed(seed: int, n: int) -> int:
    """The seed of a GPU cell's untimed warm-up run at N."""
    return _seed_word("d3_2014-warmup", seed, n)


def device_name(where: str) -> str:
    return cuda_device() if where == "cuda" else cpu_name()


def trajectory(model, seed: int, j: int) -> tuple[dict, dict]:
    """Trajectory j: ``truth`` (T + 1, 2), ``y`` (T, 2), and the Kalman
    filter's ``kf_rmse`` and ``kf_bias`` (2,) against x_1 ... x_T."""
    truth, y = model.simulate(trajectory_seed(seed, j))
    rmse, bias = velocity_errors(kalman_filter(model, y), truth[1:])
    arrays = {"truth": truth, "y": y, "kf_rmse": rmse, "kf_bias": bias}
    metadata = {"study": "d3_2014", "what": "trajectory", "trajectory": int(j),
                "seed": int(seed), "steps": int(model.steps), "dt": float(model.dt),
                "signs": model.signs}  # fmt: skip
    return arrays, metadata


def first_steps(traj, steps: int) -> dict:
    """The trajectory's first ``steps`` readings and the truth x_0 ... x_steps:
    what a run of a model ``steps`` long filters (the timing runs)."""
    check_trajectory(traj, "first_steps")
    if not 1 <= steps <= traj["y"].shape[0]:
        raise ValueError(f"the trajectory has {traj['y'].shape[0]} steps, not {steps}")
    return {**traj, "y": traj["y"][:steps], "truth": traj["truth"][: steps + 1]}


def warm_up(model, traj, spec: dict, n: int, *, seed: int, backend: str = "cuda") -> None:
    """An untimed run of the first ``WARMUP_STEPS`` steps at N: on the GPU it compiles
    (or loads) the kernels the timed run launches (too short for a CUDA graph: the GPU
    filter keeps one per run length, so the timed run captures its own); on the CPU it
    pays the first call's costs (imports, first touches) outside the timed run."""
    steps = min(WARMUP_STEPS, traj["y"].shape[0])
    run_d3(model, traj["y"][:steps], n, warmup_seed(seed, n), backend=backend, **_options(spec))


def run_d3(model, y, n: int, seed: int, *, method: str = "d3", **options):
    """Das et al.'s filter (``run_filter`` with ``D3_OPTIONS``) with ``method``."""
    return run_filter(model, y, n, method, seed=seed, **D3_OPTIONS, **options)


def d3_stage_seconds(run) -> np.ndarray:
    """The seconds of the three stages of ``D3_STAGES`` summed over the steps,
    from the engine's four (prediction and weights: its first two)."""
    s = np.asarray(run.stage_seconds).sum(axis=0)
    return np.array([s[0] + s[1], s[2], s[3]])


def check_trajectory(arrays, where: str) -> None:
    """Raise ValueError (naming ``where``) unless ``arrays`` is a trajectory:
    finite ``truth`` (T + 1, 2) and ``y`` (T, 2)."""
    truth, y = np.asarray(arrays.get("truth")), np.asarray(arrays.get("y"))
    ok = y.ndim == 2 and y.shape[1] == 2 and truth.shape == (y.shape[0] + 1, 2) and y.size > 0
    if not (ok and np.isfinite(truth).all() and np.isfinite(y).all()):
        raise ValueError(
            f"{where}: not a d3_2014 trajectory: expected truth (T + 1, 2) and y (T, 2), "
            f"finite; got truth {truth.shape}, y {y.shape}"
        )


def load_trajectory(path) -> dict:
    """Read a cached trajectory; a file that is not one raises
    :class:`pfresample_studies.pipeline.artifacts.CorruptArtifact` naming it."""
    arrays, _ = artifacts.load_npz(path)
    try:
        check_trajectory(arrays, str(path))
    except ValueError as exc:
        raise artifacts.CorruptArtifact(f"{exc}; delete it to regenerate") from exc
    return arrays


OPTIONS = ("noise", "cdf", "threads", "threads_scope", "components", "impl")


def _options(spec: dict) -> dict:
    """:func:`run_d3`'s method options of a filter spec (catalog.filters)."""
    return {"method": spec["method"]} | {k: spec[k] for k in OPTIONS if k in spec}


def filter_model(model, spec: dict):
    """``model`` with the filter's process noise of ``spec`` where it sets one
    (``filter_process_sd``: null is the truth's)."""
    if "filter_process_sd" not in spec:
        return model
    return dataclasses.replace(model, filter_process_sd=spec["filter_process_sd"])


def regime_of(model) -> str:
    """ "paper" (the filter has no process noise), "ours" (the truth's), or
    "sd=<value>"."""
    sd = model.particle_sd
    if sd == model.process_sd:
        return "ours"
    return "paper" if sd == 0 else f"sd={sd:g}"


def snapshot_summary(x: np.ndarray, keep: int) -> dict:
    """The first ``keep`` particles of a snapshot, and over all of them the
    number of distinct values per component and of distinct particles, their
    standard deviation and range (Figs 5-6: the paper's diversity claim)."""
    x = np.asarray(x, dtype=np.float64)
    return {
        "snapshot": x[:keep],
        "snapshot_distinct": np.array(
            [np.unique(x[:, 0]).size, np.unique(x[:, 1]).size, np.unique(x, axis=0).shape[0]]
        ),  # fmt: skip
        "snapshot_std": x.std(axis=0, ddof=1) if x.shape[0] > 1 else np.zeros(2),
        "snapshot_range": x.max(axis=0) - x.min(axis=0),
    }


def filter_cell(
    model, traj, label: str, spec: dict, n: int, j: int, r: int, *, seed: int, backend: str,
    ess_threshold=None, snapshot_step: int | None = None, snapshot_particles: int = 5000,
    estimate_every: int = 10, log=None,
):  # fmt: skip
    """One run of filter ``label`` (``spec``: catalog.filters) with N
    particles on trajectory j (``traj``: :func:`trajectory`'s arrays), run r.
    Returns ``(arrays, metadata)`` (module docstring)."""
    check_trajectory(traj, f"filter_cell({label!r})")
    model = filter_model(model, spec)
    method = spec["method"]
    where = resolve_backend(
        backend, get_method(method).gpu is not None, fallback=method, log_to=log
    )
    y, truth = traj["y"], traj["truth"]
    if where == "cuda":
        warm_up(model, traj, spec, n, seed=seed)
    s = run_seed(seed, n, j, r)
    start = time.perf_counter()
    run = run_d3(model, y, n, s, ess_threshold=ess_threshold, snapshot_step=snapshot_step,
                 backend=where, **_options(spec))  # fmt: skip
    elapsed = time.perf_counter() - start
    rmse, bias = velocity_errors(run.estimates, truth[1:])
    steps = np.arange(estimate_every, y.shape[0] + 1, estimate_every)  # k of x^_k kept
    arrays = {
        "rmse": rmse, "bias": bias, "wall_seconds": np.float64(run.wall_seconds),
        "call_seconds": np.float64(elapsed), "stage_seconds": d3_stage_seconds(run),
        "resampled": np.int64(np.count_nonzero(run.resampled)), "estimate_steps": steps,
        "estimates": np.asarray(run.estimates)[steps - 1], "seed": np.uint64(s),
    }  # fmt: skip
    if run.snapshot is not None:
        arrays |= snapshot_summary(run.snapshot, snapshot_particles)
    if log is not None:
        log.info("%s N = %d trajectory %d run %d on %s: RMSE %s, bias %s, %.2f s", label, n, j,
                 r, where, np.round(rmse, 4), np.round(bias, 4), run.wall_seconds)  # fmt: skip
    metadata = {"study": "d3_2014", "experiment": "filter", "filter": label, **_options(spec),
                "n": int(n), "trajectory": int(j), "run": int(r), "seed": int(seed),
                "steps": int(y.shape[0]), "dt": float(model.dt),
                "ess_threshold": ess_threshold, "snapshot_step": snapshot_step,
                "filter_process_sd": model.particle_sd, "regime": regime_of(model),
                "backend": where, "device": device_name(where),
                "host": platform.node()}  # fmt: skip
    metadata.setdefault("threads", None)
    return arrays, metadata


def timing_cell(model, traj, label: str, spec: dict, n: int, *, seed: int,
                ess_threshold=None, log=None):  # fmt: skip
    """Table 5's CPU columns: one CPU run of filter ``label`` at N on
    trajectory 0, run 0, over the first ``model.steps`` steps, after an untimed
    warm-up run of its first steps (:func:`warm_up`) (``model``:
    ``catalog.timing_model``; ``traj``: trajectory 0's arrays, truncated
    here). :func:`filter_cell`'s arrays without a snapshot, ``steps`` and
    ``cpu_seconds`` (the process's CPU time over the run: on a shared machine
    the time the process itself ran). Table 1's loop (``impl="loop"``) runs
    compiled by numba where it is installed (metadata ``numba``), in plain
    Python otherwise."""
    steps = int(model.steps)
    warm_up(filter_model(model, spec), first_steps(traj, steps), spec, n, seed=seed,
            backend="cpu")  # fmt: skip
    cpu = time.process_time()
    arrays, metadata = filter_cell(
        model, first_steps(traj, steps), label, spec, n, 0, 0, seed=seed, backend="cpu",
        ess_threshold=ess_threshold, log=log,
    )  # fmt: skip
    arrays["cpu_seconds"] = np.float64(time.process_time() - cpu)
    arrays["steps"] = np.int64(steps)
    metadata |= {"experiment": "timing", "duration": float(model.duration)}
    if spec.get("impl") == "loop":
        metadata["numba"] = bool(d3_loop.compiled)
        if log is not None and not d3_loop.compiled:
            log.warning("%s: numba is not installed; Table 1's loop runs in plain Python", label)
    return arrays, metadata


def gpu_cell(model, traj, spec: dict, n: int, threads, *, seed: int, ess_threshold=None,
             algorithm: str = "d3", window_steps: int | None = None, log=None):  # fmt: skip
    """Tables 5-7 and Fig 10: the GPU D3 filter of ``spec`` (a GPU algorithm of
    catalog.gpu_algorithms, labelled ``algorithm``) with N particles on
    trajectory 0 (``traj``), run 0, over the first ``model.steps`` steps,
    once per number of threads per block of ``threads`` (which replaces the
    spec's), each run after an untimed warm-up (:func:`warm_up`) at its block
    size. Arrays of length T = len(threads): ``threads``, ``rmse``, ``bias``
    (T, 2), ``wall_seconds``, ``device_seconds`` (the GPU's time of the run),
    ``steps``; ``chunk_ms_median``, ``chunk_ms_min``, ``chunk_ms_max`` and
    ``chunks``: milliseconds per step of the run's replays of 100 steps (the
    repeats of the timing: consecutive windows of the run); and
    ``occupancy``: the theoretical occupancy of the algorithm's dominant
    kernel at that block size (``pfresample.cuda.d3.occupancy``: d3_moves
    for the prefix stride, the search kernel for cdf local or paper).
    ``window_ms_per_step``: the milliseconds per step of the replays within
    the first ``window_steps`` steps (Table 5's window, the CPU's: steps 3
    ... 2 + 100 k), NaN where none fits."""
    from pfresample.cuda import d3 as cuda_d3
    from pfresample.filters.d3_gpu import CHUNK

    model = filter_model(model, spec)
    steps = int(model.steps)
    data = first_steps(traj, steps)
    tpb = np.array([int(t) for t in threads], dtype=np.int64)
    count = tpb.size
    rmse, bias = np.empty((count, 2)), np.empty((count, 2))
    wall, device, occupancy = np.empty(count), np.empty(count), np.empty(count)
    chunk_stats = np.full((count, 3), np.nan)
    window_ms = np.full(count, np.nan)
    in_window = max(0, (int(window_steps or steps) - 2) // CHUNK)
    chunks = np.zeros(count, dtype=np.int64)
    kernel = {"prefix": "d3_moves", "local": "d3_local_strides", "paper": "d3_paper_strides"}[
        spec.get("cdf", "prefix")
    ]
    s = run_seed(seed, n, 0, 0)
    started = reported = time.perf_counter()
    for i, t in enumerate(tpb.tolist()):
        spec_t = {**spec, "threads": t}
        warm_up(model, data, spec_t, n, seed=seed)
        run = run_d3(model, data["y"], n, s, ess_threshold=ess_threshold, backend="cuda",
                     **_options(spec_t))  # fmt: skip
        rmse[i], bias[i] = velocity_errors(run.estimates, data["truth"][1:])
        wall[i], device[i] = run.wall_seconds, run.device_seconds
        ms = 1e3 * np.asarray(run.chunk_seconds, dtype=np.float64) / CHUNK
        if ms.size:
            chunk_stats[i] = (np.median(ms), ms.min(), ms.max())
            chunks[i] = ms.size
            if in_window:
                window_ms[i] = ms[:in_window].mean()
        occupancy[i] = cuda_d3.occupancy(t, kernel=kernel)
        now = time.perf_counter()
        if log is not None and (now - reported > LOG_EVERY_S or i + 1 == count):
            reported = now
            log.info("GPU %s N = %d, %d steps: %d of %d block sizes, %.1f s; at %d threads/"
                     "block %.4g ms/step, occupancy %.3g", algorithm, n, steps, i + 1, count,
                     now - started, t, 1e3 * device[i] / steps, occupancy[i])  # fmt: skip
    arrays = {"threads": tpb, "rmse": rmse, "bias": bias, "wall_seconds": wall,
              "device_seconds": device, "steps": np.full(count, steps, dtype=np.int64),
              "chunk_ms_median": chunk_stats[:, 0], "chunk_ms_min": chunk_stats[:, 1],
              "chunk_ms_max": chunk_stats[:, 2], "chunks": chunks,
              "window_ms_per_step": window_ms,
              "window_steps": np.int64(2 + CHUNK * min(in_window, int(chunks.max(initial=0)))),
              "occupancy": occupancy, "seed": np.uint64(s)}  # fmt: skip
    opts = {k: v for k, v in _options(spec).items() if k != "threads"}
    metadata = {"study": "d3_2014", "experiment": "gpu", "filter": algorithm,
                "algorithm": algorithm, **opts, "n": int(n), "threads": tpb.tolist(),
                "trajectory": 0, "run": 0, "seed": int(seed), "steps": steps,
                "duration": float(model.duration), "dt": float(model.dt),
                "filter_process_sd": model.particle_sd, "regime": regime_of(model),
                "ess_threshold": ess_threshold, "warmup_steps": WARMUP_STEPS,
                "occupancy_kernel": kernel, "backend": "cuda",
                "device": device_name("cuda"), "host": platform.node()}  # fmt: skip
    return arrays, metadata


BEST_CPU_SKIP = 2  # the best CPU code's clock starts after step 2, as the GPU's windows do


def native_options(spec: dict) -> dict:
    """``native.run``'s options of a filter spec (catalog.best_cpu_filters): ``kind``,
    and for D3 ``cdf``, ``noise`` and ``block`` (the spec's threads, else Table 5's 160)."""
    if spec["method"] == "systematic":
        return {"kind": "systematic"}
    return {"kind": "d3", "cdf": spec.get("cdf", "prefix"), "noise": spec.get("noise", "eq5"),
            "block": int(spec.get("threads", FIG11_THREADS))}  # fmt: skip


def best_cpu_cell(model, traj, specs: dict, n: int, *, seed: int, repeats: int, threads: int,
                  log=None):  # fmt: skip
    """Ratio 2 of Table 5 at N, its CPU side on this host: the best CPU code we can write
    (``native/d3_best.c``, ``native.run``) of each filter of ``specs`` (label -> spec,
    catalog.best_cpu_filters) on ``threads`` OpenMP threads, on trajectory 0 (``traj``)
    over the first ``model.steps`` steps (``model``: catalog.timing_model, the timing
    cells' window) with the timing cells' seed (:func:`run_seed` of run 0), the clock in C
    around steps ``BEST_CPU_SKIP`` + 1 ... T (the GPU cells' windows start there too);
    ``repeats`` timed runs a filter after an untimed run of its first steps.

    Arrays: ``window_seconds`` and ``seconds_per_step`` (filters, repeats), ``rmse``
    (filters, 2: the first run's over the whole window, against the truth: the same
    filter as the NumPy one, not a faster wrong one), ``seed``. The metadata records the
    host (``host``, ``cpu``, ``cores``: its logical CPUs), ``threads``, the compiler and
    OMP_WAIT_POLICY; a compiler is needed (``cbuild.compiler``'s RuntimeError otherwise)."""
    from ..pipeline import cbuild
    from . import native

    threads, repeats = int(threads), int(repeats)
    if threads < 1 or repeats < 1:
        raise ValueError(f"best_cpu_cell: threads and repeats must be >= 1, got {threads}, "
                         f"{repeats}")  # fmt: skip
    steps = int(model.steps)
    data = first_steps(traj, steps)
    skip = BEST_CPU_SKIP if steps > BEST_CPU_SKIP else 0
    s = run_seed(seed, n, 0, 0)
    warm = min(steps, WARMUP_STEPS + BEST_CPU_SKIP)
    labels = list(specs)
    window = np.empty((len(labels), repeats))
    rmse = np.empty((len(labels), 2))
    for k, label in enumerate(labels):
        m, opts = filter_model(model, specs[label]), native_options(specs[label])
        kind = opts.pop("kind")
        native.run(m, data["y"][:warm], n, kind, seed=warmup_seed(seed, n), threads=threads,
                   **opts)  # fmt: skip
        for i in range(repeats):
            run = native.run(m, data["y"], n, kind, seed=s, threads=threads, skip=skip, **opts)
            window[k, i] = run.window_seconds
            if i == 0:
                rmse[k] = velocity_errors(run.estimates, data["truth"][1:])[0]
        if log is not None:
            log.info("%s %s N = %d on %d threads: median %.4g ms a step over steps %d ... %d",
                     BEST_CPU_CODE, label, n, threads,
                     1e3 * np.median(window[k]) / (steps - skip), skip + 1, steps)  # fmt: skip
    arrays = {"window_seconds": window, "seconds_per_step": window / (steps - skip),
              "rmse": rmse, "seed": np.uint64(s)}  # fmt: skip
    metadata = {"study": "d3_2014", "experiment": "best_cpu", "code": BEST_CPU_CODE,
                "filters": labels, "options": [native_options(specs[x]) for x in labels],
                "n": int(n), "trajectory": 0, "run": 0, "seed": int(seed), "steps": steps,
                "skip": skip, "window_steps": steps - skip, "repeats": repeats,
                "warmup_steps": warm, "statistic": "median",
                "duration": float(model.duration), "dt": float(model.dt),
                "regime": regime_of(filter_model(model, specs[labels[0]])),
                "threads": threads, "cores": os.cpu_count() or 1, "cpu": cpu_name(),
                "host": platform.node(), "compiler": cbuild.compiler(),
                "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
                "backend": "cpu", "device": device_name("cpu")}  # fmt: skip
    return arrays, metadata


def step_weights(model, traj, spec: dict, n: int, step: int, *, seed: int):
    """The predicted particles x, the likelihood weights w, the prior
    log-weights pw and the resampling seed of the D3 filter's step ``step``
    (1 ... T) at N on trajectory ``traj``, run 0:
    the filter (CPU) runs to step - 1, keeps its particles, and step ``step``
    is then done as ``run_d3`` does it, with a generator of its own for the
    prediction. The weights are those of a filter that resamples every step
    (the paper's): the likelihood of z_step alone."""
    y = traj["y"]
    s = run_seed(seed, n, 0, 0)
    rng = np.random.default_rng(np.random.SeedSequence(s, spawn_key=(zlib.crc32(b"fig11"),)))
    opts = _options(spec)
    if step == 1:
        x = model.init_particles(n, rng)
        previous = x.mean(axis=0)
    else:
        run = run_d3(model, y[: step - 1], n, s, snapshot_step=step - 1, backend="cpu", **opts)
        x, previous = run.snapshot, run.estimates[-1]
    x = model.transition(x, step - 1, rng)
    w = weights_from_log(model.log_likelihood(y[step - 1], x)).astype(np.float64)
    pw = prior_log_weights(x, model.mean_transition(previous, step - 1))
    return x, w / w.sum(), pw, s


def fig11_cell(model, traj, spec: dict, n: int, step: int, *, seed: int, log=None):
    """Fig 11: on the weights of step ``step`` of the D3 filter at N
    (:func:`step_weights`), thread i of the local-CDF search adds weights
    from particle 0 up to its stride particle j_i: j_i + 1 iterations, with
    the systematic thresholds (``cdf="local"`` of
    ``pfresample.resampling.d3.plan``: ``iterations``) and with the paper's
    printed Fig 8-9 thresholds at FIG11_THREADS a block (``cdf="paper"``:
    ``paper_iterations``; every threshold is reached, the weights summing to
    1 >= u_i). Also the prefix-CDF strides (the library's default)."""
    check_trajectory(traj, "fig11_cell")
    _, w, pw, s = step_weights(model, traj, spec, n, step, seed=seed)
    key = tuple(int(k[0]) for k in seed_keys([s]))
    local = plan(w, pw, key, cdf="local")[0]
    prefix = plan(w, pw, key, cdf="prefix")[0]
    paper = plan(w, pw, key, cdf="paper", threads=FIG11_THREADS)[0]
    iterations = local + 1
    if log is not None:
        log.info("step %d, N = %d: mean iterations %.1f, max %d", step, n, iterations.mean(),
                 iterations.max())  # fmt: skip
    ess = 1.0 / float(w @ w)
    arrays = {"iterations": iterations.astype(np.int64), "prefix_j": prefix.astype(np.int64),
              "paper_iterations": (paper + 1).astype(np.int64), "ess": np.float64(ess)}  # fmt: skip
    metadata = {"study": "d3_2014", "experiment": "fig11", "n": int(n), "step": int(step),
                "time_s": float(step * model.dt), "seed": int(seed), **_options(spec),
                "backend": "cpu", "device": device_name("cpu")}  # fmt: skip
    return arrays, metadata
