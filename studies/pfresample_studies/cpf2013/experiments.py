"""The cells of Gelencsér-Horváth et al. (2013), "Evaluation and results", on
the library's cellular particle filter (``pfresample.run_filter`` with resampler
"cellular" and ``CPF_OPTIONS``, the paper's Fig 6 on a ring) and, as baselines
the paper does not have, the SIR filter with global resampling (``SIR_OPTIONS``).

* :func:`cpf_cell` (Figs 7-10, Table 1): the CPF at one configuration
  (N, r) on every trajectory of a model: per trajectory the error measures
  of ``targets`` (Fig 9's MSE, Fig 10's position RMSE) of its estimate and
  of the SIR filter's (the weighted mean before resampling), the particle
  cloud's measures (CPU), the time of a step and of the whole run;
* :func:`sir_cell` (the baselines of Figs 9-10): the same with the SIR filter
  and one global resampler at N;
* :func:`timing_cell` (Figs 11-12): repeated runs of the CPF at one N and
  every r on one trajectory of the growth model, each kernel with the
  default build and, on the GPU, with --use_fast_math, taking turns run by
  run; the SIR baselines beside them; the tables keep the medians.

The growth model starts as ``setup`` says (``targets.GROWTH_SETUPS``: the
paper's start by default, the thesis's as an option), every filter alike.

What is timed. ``step_seconds`` is "the kernel time per state" of Figs 9-11:
on the GPU the device time of the run's CUDA graph over T (CUDA events; for
the CPF its step kernels and the initial kernel, for the SIR filter every
kernel of its stages, ``stage_times=False``), on the CPU the host's clock
around the filter's loop over T. ``wall_seconds`` is the "global running
time" of Fig 12 and Table 1, the host's clock around a whole run: the CPF's
own ``wall_seconds`` (inputs built and uploaded, graph, estimates
downloaded), and for the SIR filter the clock around the ``run_filter`` call
(its own ``wall_seconds`` leaves out building the inputs and downloading
the estimates). Every cell first makes ``TIMING_WARMUP`` untimed runs (NVRTC
compile or cache load, graph capture), which keeps these out of every time.

Randomness. Run j of trajectory j at N uses the seed word j of
``SeedSequence(seed, spawn_key=(crc32("cpf2013-run-<model>"), N))``: the same
for every r, every baseline method and both starts (common random numbers;
on the CPU the same initial normals), independent of the number of trajectories (a
quick cell's runs are the first runs of a paper-scale cell). The timing runs
and the warm-up runs draw from streams of their own ("timing", "warmup").

Backends. ``backend`` is the config's ("auto", "cpu" or "cuda"). Where a
filter has no device code for a model (or a method), "cuda" runs that cell
on the CPU with a warning in the log rather than failing (the library's
``resolve_backend`` raises NotImplementedError there); every cell records
the backend that ran it and the device's name.
"""

from __future__ import annotations

import platform
import time
import zlib

import numpy as np

from pfresample.backend import cuda_device, resolve_backend
from pfresample.cuda.geometry import CPF_MAX_RADIUS
from pfresample.filters import CPF_OPTIONS, SIR_OPTIONS, run_filter
from pfresample.filters.cellular_gpu import cpf_twin
from pfresample.filters.common import NO_B
from pfresample.filters.sir_gpu import device_twin
from pfresample.resampling.registry import get_method
from pfresample.timing import cpu_name

from . import targets

TIMING_WARMUP = 1  # untimed runs before the timed ones of every cell
BUILDS = ("default", "fast-math")  # Fig 11's two builds of the GPU kernels
LOG_EVERY_S = 30.0  # a progress line at least this often in a long cell


def run_seeds(seed: int, name: str, n: int, count: int, stream: str = "run") -> list[int]:
    """``count`` run seeds (< 2^64) of model ``name`` at N from the ``stream``
    ("run", "timing" or "warmup"; module docstring)."""
    tag = zlib.crc32(f"cpf2013-{stream}-{name}".encode())
    words = np.random.SeedSequence(int(seed), spawn_key=(tag, int(n))).generate_state(
        count, np.uint64
    )
    return [int(s) for s in words]


def device_name(where: str) -> str:
    return cuda_device() if where == "cuda" else cpu_name()


def cpf_backend(name: str, radius: int, backend: str, log=None) -> str:
    """Where the CPF of model ``name`` at radius r runs (``resolve_backend``)."""
    has_gpu = cpf_twin(targets.model(name)) is not None and radius <= CPF_MAX_RADIUS
    return resolve_backend(
        backend, has_gpu, fallback=f"the CPF on model {name!r} at r = {radius}", log_to=log
    )


def sir_backend(name: str, method: str, backend: str, log=None) -> str:
    """Where the SIR filter with ``method`` on model ``name`` runs."""
    has_gpu = get_method(method).gpu is not None and device_twin(targets.model(name)) is not None
    return resolve_backend(
        backend, has_gpu, fallback=f"the SIR filter on model {name!r}", log_to=log
    )


def _metadata(experiment: str, name: str, n: int, seed: int, where: str, **extra) -> dict:
    return {
        "study": "cpf2013",
        "experiment": experiment,
        "model": name,
        "n": int(n),
        "seed": int(seed),
        "backend": where,
        "device": device_name(where),
        "host": platform.node(),
        **extra,
    }


def _run_trajectories(run_one, name: str, trajectories, seeds, label: str, log=None) -> dict:
    """Run ``run_one(y, seed) -> (estimates, step_seconds, wall_seconds,
    run)`` on every trajectory j with ``seeds[j]`` (``estimates``: the
    estimators of ``targets.estimator_errors``; ``run``: the filter's record,
    whose particle cloud ``targets.cloud_measures`` reads where the run
    measured it): the arrays of a cell (the error measures and the cloud's
    measures per trajectory, the times, the seeds, and the filter's own
    estimates of trajectory 0)."""
    truth, ys = trajectories["truth"], trajectories["y"]
    count = ys.shape[0]
    errors: dict[str, np.ndarray] = {}
    step, wall = np.empty(count), np.empty(count)
    started = reported = time.perf_counter()
    first = None
    for j in range(count):
        estimates, step[j], wall[j], run = run_one(ys[j], seeds[j])
        values = targets.estimator_errors(name, estimates, truth[j, 1:])
        values |= targets.cloud_measures(name, run.n, run, truth[j, 1:])
        for measure, value in values.items():
            errors.setdefault(measure, np.empty(count))[j] = value
        if j == 0:
            first = np.asarray(estimates["own"], dtype=np.float64)
        now = time.perf_counter()
        if log is not None and (now - reported > LOG_EVERY_S or j + 1 == count):
            reported = now
            log.info("%s: %d of %d trajectories, %.1f s", label, j + 1, count, now - started)
    return {**errors, "step_seconds": step, "wall_seconds": wall,
            "seeds": np.array(seeds, dtype=np.uint64), "estimates": first}  # fmt: skip


def _cpf(model, y, n: int, radius: int, seed: int, where: str, *, fast_math: bool = False,
         **options):  # fmt: skip
    """The CPF (``run_filter`` with resampler "cellular" and ``CPF_OPTIONS``) on ``where``."""
    if not fast_math:  # an option of the GPU kernels only
        return run_filter(model, y, n, "cellular", seed=seed, backend=where, radius=radius,
                          **CPF_OPTIONS, **options)  # fmt: skip
    return run_filter(model, y, n, "cellular", seed=seed, backend=where, radius=radius,
                      fast_math=True, **CPF_OPTIONS, **options)  # fmt: skip


def _step_seconds(run) -> float:
    """ "The kernel time per state" of Figs 9-11: the device time of the run's
    graph over T on the GPU, the loop's clock over T on the CPU."""
    steps = max(len(run.estimates), 1)
    return (run.total_seconds if run.backend == "cuda" else run.wall_seconds) / steps


def cpf_cell(
    name: str, trajectories, n: int, radius: int, *, seed: int, backend: str,
    fast_math: bool = False, setup: str = "paper", precision: str = "float64",
    neighbourhood: str = "search", first: int = 0, log=None,
):  # fmt: skip
    """Figs 7-10 and Table 1 at one configuration: the CPF with N particles
    and radius r on every trajectory of model ``name`` (``trajectories``: a
    set of ``targets.simulate``), the growth model started as ``setup``
    says. ``fast_math`` builds the GPU kernels with --use_fast_math (ignored
    on the CPU); ``precision`` and ``neighbourhood`` choose the kernel
    (``_cpf``). Returns ``(arrays, metadata)``: per trajectory the error
    measures of the CPF's own estimate (the mean of the resampled
    particles), of the weighted mean before resampling (``_weighted``) and
    again of its own (``_resampled``); ``step_seconds``, ``wall_seconds``;
    the particle cloud's measures (``targets.CLOUD_MEASURES``: the CPU only,
    NaN on the GPU); the run seeds and the estimates of trajectory 0.
    ``first``: the rows of ``trajectories`` are trajectories ``first``,
    ``first`` + 1, ... (a part of a set), and get those trajectories' run
    seeds."""
    targets.check_set(name, trajectories, f"cpf_cell({name!r})")
    model = targets.model(name, setup)
    where = cpf_backend(name, radius, backend, log)
    fast = bool(fast_math) and where == "cuda"
    steps = trajectories["y"].shape[1]
    kernel = {"precision": precision, "neighbourhood": neighbourhood}

    def run_one(y, run_seed):
        run = _cpf(model, y, n, radius, run_seed, where, fast_math=fast,
                   diagnostics=where == "cpu", **kernel)  # fmt: skip
        estimates = {"own": run.resampled_estimates, "weighted": run.estimates,
                     "resampled": run.resampled_estimates}  # fmt: skip
        return estimates, _step_seconds(run), run.wall_seconds, run

    for warm in run_seeds(seed, name, n, TIMING_WARMUP, "warmup"):
        run_one(trajectories["y"][0], warm)
    seeds = _seeds_of(seed, name, n, trajectories, first)
    label = f"CPF {name} N = {n} r = {radius}"
    arrays = _run_trajectories(run_one, name, trajectories, seeds, label, log)
    ran = "scan" if where == "cpu" and neighbourhood == "search" else neighbourhood
    metadata = _metadata("cpf", name, n, seed, where, filter="CPF", method="cellular",
                         radius=int(radius), fast_math=fast, steps=int(steps),
                         trajectories=int(len(seeds)), warmup=TIMING_WARMUP,
                         setup=_setup(name, setup), estimator="resampled",
                         precision=precision, neighbourhood=ran, first=int(first))  # fmt: skip
    return arrays, metadata


def _seeds_of(seed: int, name: str, n: int, trajectories, first: int) -> list[int]:
    """The run seeds of the rows of ``trajectories``: trajectories ``first``, ``first`` + 1, ..."""
    if first < 0:
        raise ValueError(f"first must be >= 0, got {first}")
    return run_seeds(seed, name, n, first + trajectories["y"].shape[0])[first:]


def _setup(name: str, setup: str) -> str:
    """The setup a cell records: the growth model's start; the bearings-only model has one."""
    return setup if name == "growth" else "prior"


def sir_cell(
    name: str, trajectories, n: int, method: str, *, seed: int, backend: str,
    setup: str = "paper", first: int = 0, log=None,
):  # fmt: skip
    """The baselines of Figs 9-10: the SIR filter (Dülger's Algorithm 2.4,
    ``run_filter`` with ``SIR_OPTIONS``) with the global resampler ``method`` at N on every
    trajectory of model ``name``, with the CPF cells' run seeds and start.
    Arrays as :func:`cpf_cell`'s -- its own estimate is the weighted mean
    before resampling; the mean of the resampled particles (``_resampled``)
    and the cloud's measures on the CPU only (NaN on the GPU) -- plus
    ``mean_B`` (the mean B of a run's steps, NaN for methods without B);
    ``first`` as :func:`cpf_cell`'s."""
    targets.check_set(name, trajectories, f"sir_cell({name!r})")
    model = targets.model(name, setup)
    where = sir_backend(name, method, backend, log)
    steps = trajectories["y"].shape[1]
    used_B = []

    def run_one(y, run_seed):
        start = time.perf_counter()
        run = run_filter(model, y, n, method, seed=run_seed, backend=where, stage_times=False,
                         diagnostics=where == "cpu", **SIR_OPTIONS)  # fmt: skip
        wall = time.perf_counter() - start
        used_B.append(np.nan if (run.B == NO_B).all() else float(run.B.mean()))
        # Step time: device time over T on the GPU, the loop's clock over T on the CPU.
        loop = run.total_seconds if where == "cuda" else run.wall_seconds
        estimates = {"own": run.estimates, "weighted": run.estimates,
                     "resampled": run.resampled_estimates}  # fmt: skip
        return estimates, loop / steps, wall, run

    for warm in run_seeds(seed, name, n, TIMING_WARMUP, "warmup"):
        run_one(trajectories["y"][0], warm)
    used_B.clear()
    seeds = _seeds_of(seed, name, n, trajectories, first)
    label = f"SIR {method} {name} N = {n}"
    arrays = _run_trajectories(run_one, name, trajectories, seeds, label, log)
    arrays["mean_B"] = np.array(used_B)
    metadata = _metadata("sir", name, n, seed, where, filter="SIR", method=method, radius=None,
                         fast_math=False, steps=int(steps), trajectories=int(len(seeds)),
                         warmup=TIMING_WARMUP, setup=_setup(name, setup),
                         estimator="weighted", first=int(first))  # fmt: skip
    return arrays, metadata


def timing_variants(radii, kernels, where: str) -> list[dict]:
    """The CPF variants a timing cell times, in the order of its arrays' rows:
    every radius x kernel (``kernels``: (precision, neighbourhood) pairs) x
    build (``BUILDS``), on the GPU; on the CPU each radius with the first
    kernel only (the CPU's reference: its "search" scans) and the default
    build (fast math is an option of the GPU kernels)."""
    out = []
    for radius in radii:
        if where == "cuda":
            for precision, neighbourhood in kernels:
                for build in BUILDS:
                    out.append({"radius": int(radius), "precision": precision,
                                "neighbourhood": neighbourhood, "build": build})  # fmt: skip
        else:
            precision, neighbourhood = kernels[0]
            ran = "scan" if neighbourhood == "search" else neighbourhood
            out.append({"radius": int(radius), "precision": precision, "neighbourhood": ran,
                        "build": BUILDS[0]})  # fmt: skip
    return out


def timing_cell(
    name: str, trajectories, n: int, radii, *, seed: int, backend: str, repeats: int,
    kernels=(("float64", "search"),), baselines=(), setup: str = "paper", log=None,
):  # fmt: skip
    """Figs 11-12 at one N: ``repeats`` timed runs of the CPF on trajectory 0
    of model ``name`` for every variant of :func:`timing_variants` (radius,
    kernel, build), after ``TIMING_WARMUP`` untimed runs of each; the
    variants of one radius take turns run by run (repeat i of each, then
    repeat i + 1), so that a drift of the machine's speed falls on all of
    them alike and repeat i of two builds is a pair. Then the SIR filter with
    each method of ``baselines`` on the same trajectory (``run_filter`` without
    stage marks; step time as :func:`sir_cell`'s). Arrays ``step_seconds``
    and ``wall_seconds`` of shape (variants, repeats), ``sir_step_seconds``
    and ``sir_wall_seconds`` of shape (methods, repeats)."""
    targets.check_set(name, trajectories, f"timing_cell({name!r})")
    model = targets.model(name, setup)
    radii = [int(r) for r in radii]
    where = {cpf_backend(name, r, backend, log) for r in radii}
    if len(where) != 1:
        raise ValueError(f"timing_cell: the radii {radii} run on different backends {where}")
    where = where.pop()
    variants = timing_variants(radii, list(kernels), where)
    y = trajectories["y"][0]
    steps = y.shape[0]
    seeds = run_seeds(seed, name, n, repeats, "timing")
    step, wall = np.empty((len(variants), repeats)), np.empty((len(variants), repeats))

    def run(v: dict, run_seed: int):
        return _cpf(model, y, n, v["radius"], run_seed, where,
                    fast_math=v["build"] == "fast-math", precision=v["precision"],
                    neighbourhood=v["neighbourhood"], weighted=False)  # fmt: skip

    for radius in radii:
        rows = [k for k, v in enumerate(variants) if v["radius"] == radius]
        for k in rows:
            for warm in run_seeds(seed, name, n, TIMING_WARMUP, "warmup"):
                run(variants[k], warm)
        for i, run_seed in enumerate(seeds):
            for k in rows:
                result = run(variants[k], run_seed)
                step[k, i], wall[k, i] = _step_seconds(result), result.wall_seconds
        if log is not None:
            for k in rows:
                v = variants[k]
                log.info("timing %s N = %d r = %d %s-%s %s: median step %.3g us, run %.3g ms",
                         name, n, radius, v["precision"], v["neighbourhood"], v["build"],
                         1e6 * np.median(step[k]), 1e3 * np.median(wall[k]))  # fmt: skip
    methods = list(baselines)
    sir_step, sir_wall = np.empty((len(methods), repeats)), np.empty((len(methods), repeats))
    sir_where = []
    for b, method in enumerate(methods):
        on = sir_backend(name, method, backend, log)
        sir_where.append(on)

        def sir_run(run_seed: int, on=on, method=method) -> tuple[float, float]:
            start = time.perf_counter()
            result = run_filter(model, y, n, method, seed=run_seed, backend=on,
                                stage_times=False, **SIR_OPTIONS)  # fmt: skip
            elapsed = time.perf_counter() - start
            loop = result.total_seconds if on == "cuda" else result.wall_seconds
            return loop / steps, elapsed

        for warm in run_seeds(seed, name, n, TIMING_WARMUP, "warmup"):
            sir_run(warm)
        for i, run_seed in enumerate(seeds):
            sir_step[b, i], sir_wall[b, i] = sir_run(run_seed)
    arrays = {"step_seconds": step, "wall_seconds": wall, "seeds": np.array(seeds, np.uint64),
              "sir_step_seconds": sir_step, "sir_wall_seconds": sir_wall}  # fmt: skip
    metadata = _metadata("timing", name, n, seed, where, radii=radii, variants=variants,
                         builds=sorted({v["build"] for v in variants}, key=BUILDS.index),
                         repeats=int(repeats), warmup=TIMING_WARMUP, steps=int(steps),
                         statistic="median", setup=_setup(name, setup), sir_methods=methods,
                         sir_backends=sir_where,
                         sir_devices=[device_name(w) for w in sir_where])  # fmt: skip
    return arrays, metadata


BEST_CPU_CODE = "cpf_best.c"  # the best CPU code of the CPF (native.py, native/cpf_best.c)


def best_cpu_cell(
    name: str, trajectories, n: int, radii, *, seed: int, repeats: int, threads: int,
    numpy: bool = True, setup: str = "paper", log=None,
):  # fmt: skip
    """Ratios 1 and 2 of Figs 11-12 at one N, their CPU sides on this host: ``repeats``
    timed whole runs of the CPF on trajectory 0 of model ``name`` at every radius, with
    :func:`timing_cell`'s seeds, after ``TIMING_WARMUP`` untimed runs of each,

    * with ``numpy``: the document's kind of baseline, the library's NumPy CPF on one
      process (``run_filter`` with ``CPF_OPTIONS`` on the CPU, the timing cells' call;
      ``numpy_wall_seconds``, (radii, repeats)); first, before any OpenMP thread starts;
    * the best CPU code we can write, ``native/cpf_best.c`` (``native.run``) on
      ``threads`` threads, the host's clock around each whole run
      (``best_wall_seconds``, (radii, repeats)).

    The metadata records the host (``host``, ``cpu``, ``cores``: its logical CPUs) and
    ``threads``; a compiler is needed (``native.compiler``'s RuntimeError otherwise)."""
    import os

    from . import native

    targets.check_set(name, trajectories, f"best_cpu_cell({name!r})")
    radii = [int(r) for r in radii]
    threads = int(threads)
    if threads < 1:
        raise ValueError(f"best_cpu_cell: threads must be >= 1, got {threads}")
    model = targets.model(name, setup)
    y = trajectories["y"][0]
    steps = y.shape[0]
    seeds = run_seeds(seed, name, n, repeats, "timing")
    warmup = run_seeds(seed, name, n, TIMING_WARMUP, "warmup")
    numpy_wall = np.full((len(radii) if numpy else 0, repeats), np.nan)
    if numpy:  # before the C code: its OpenMP threads must not share a core with NumPy
        for k, radius in enumerate(radii):
            for warm in warmup:
                _cpf(model, y, n, radius, warm, "cpu", weighted=False)
            for i, run_seed in enumerate(seeds):
                numpy_wall[k, i] = _cpf(model, y, n, radius, run_seed, "cpu",
                                        weighted=False).wall_seconds  # fmt: skip
            if log is not None:
                log.info("NumPy CPF %s N = %d r = %d: median run %.3g ms", name, n, radius,
                         1e3 * np.median(numpy_wall[k]))  # fmt: skip
    best_wall = np.empty((len(radii), repeats))
    paper_start = name != "growth" or setup == "paper"
    for k, radius in enumerate(radii):
        for warm in warmup:  # threads started, pages touched, caches warm
            native.run(name, y, n, radius, seed=warm, threads=threads, paper_start=paper_start)
        for i, run_seed in enumerate(seeds):
            start = time.perf_counter()
            native.run(name, y, n, radius, seed=run_seed, threads=threads,
                       paper_start=paper_start)  # fmt: skip
            best_wall[k, i] = time.perf_counter() - start
        if log is not None:
            log.info("%s %s N = %d r = %d on %d threads: median run %.3g ms", BEST_CPU_CODE,
                     name, n, radius, threads, 1e3 * np.median(best_wall[k]))  # fmt: skip
    arrays = {"numpy_wall_seconds": numpy_wall, "best_wall_seconds": best_wall,
              "seeds": np.array(seeds, np.uint64)}  # fmt: skip
    metadata = _metadata("best_cpu", name, n, seed, "cpu", radii=radii, repeats=int(repeats),
                         warmup=TIMING_WARMUP, steps=int(steps), statistic="median",
                         setup=_setup(name, setup), numpy=bool(numpy), code=BEST_CPU_CODE,
                         threads=threads, cores=os.cpu_count() or 1, cpu=cpu_name(),
                         compiler=native.compiler(),
                         omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", ""))  # fmt: skip
    return arrays, metadata
