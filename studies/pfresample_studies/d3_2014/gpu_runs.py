#!/usr/bin/env python3
"""Das et al. (2014) on one GPU: the paper's GPU algorithm and ours side by side
(Tables 5-7, Fig 10), and the two regimes at the paper's scale. The pipeline's rule
``d3_2014_gpu_runs`` runs it (:func:`run`) where the cells have a GPU; without one the
rule draws the same files from the committed run (``pipeline.gpu_runs``).

**Timing** (``timing.csv``): for each algorithm, each N of the paper's Table
6 and each threads per block (TPB) of THREADS (160 ... 1024, step 36:
the paper's 160 ... 736 and on to the block limit, to test its "lower above
800"), one GPU filter run of trajectory 0 of the d3_2014 model over its
first ``2 + CHUNK * repeats`` steps (``filters.d3_gpu``: two eager steps,
then graph replays of CHUNK = 100 steps), in the paper's regime (no process
noise in the filter). The time of each replay (CUDA events around it, the
GPU's time of 100 steps) is one repeat: ``repeats`` consecutive windows of
100 steps, steps 3 ... 2 + 100 repeats (t = 0.03 ... 5.02 s with 5). Their
median and min-max (a 93.75 % distribution-free interval for the median with
5) per step. The algorithms:

* ``ours``: D3 eq. 5 with the prefix-sum stride; TPB reaches the D3 kernels,
  the rest of the step runs at 256 (the study's GPU filter);
* ``paper``: the paper's GPU algorithm as printed -- the local-CDF search
  with the Fig 8-9 thresholds and one u1 a block (``cdf="paper"``), Fig 9's
  noise line, every kernel of the step at TPB (``threads_scope="step"``).

Each row also has the run's RMSE over its steps (one run: Table 7's
quantity over the window, not over 360 s) and the theoretical occupancy of
the algorithm's dominant kernel at that TPB.

**Spread** (``spread.csv``): ``spread_runs`` runs a cell of both algorithms at N =
``regime_n`` and TPB 160, 556, 736, 1024 over the timing window.

**Regimes** (``regimes/``): the regime cells of ``d3_2014_regimes`` on the GPU at the
paper's N = 50,000 over the whole 360 s, the GPU-able filters (systematic,
d3 eq. 5, d3-between, d3-fig9, d3-fig9neg, d3-paper: prefix stride, the study's GPU
filter), both regimes, ``trajectories`` trajectories, and their summary.

**Table 7 over 360 s** (``table7_360s.csv``): one run a TPB at N = ``regime_n``.

The timing stops starting new runs ``timing_deadline`` seconds after the
start, the spread ``spread_deadline`` and the rest ``deadline`` seconds after it (what was
measured is kept and written). The timing runs ours first, then the paper's (its runs
cost 10-30x ours), N by N, so a cut leaves whole N of ours. Every parameter is a key
``d3_2014_gpu_runs_*`` of config/studies/d3_2014.yaml (:func:`settings`).
"""

from __future__ import annotations

import csv
import datetime
import statistics
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from pfresample.filters import D3_OPTIONS, clear_graphs, d3_gpu, run_filter, velocity_errors
from pfresample.timing import cpu_name
from pfresample_studies.d3_2014 import catalog, experiments, regimes
from pfresample_studies.pipeline import artifacts
from pfresample_studies.pipeline.tables import write_csv

ALGORITHMS = {
    "ours": {"method": "d3", "noise": "eq5", "cdf": "prefix", "threads_scope": "d3"},
    "paper": {"method": "d3", "noise": "fig9", "cdf": "paper", "threads_scope": "step"},
}
THREADS = tuple(range(160, 1025, 36))  # 160 ... 1024
SECTIONS = ("timing", "spread", "regimes", "table7")  # in the order they run
FIRST_PASS = (160, 520, 556, 628, 736, 808, 1024)  # Table 5's, CPM's 520-628, the ends
# cheapest first: a deadline cuts the paper's O(N^2) search (~100 s a run at N = 50,000);
# d3-each is not here: the GPU filter runs the joint D3 only (the pipeline's target
# d3_2014_regimes runs it on the CPU)
GPU_FILTERS = ("systematic", "d3", "d3-between", "d3-fig9neg", "d3-fig9", "d3-paper")
SPREAD_THREADS = (160, 556, 736, 1024)  # Table 5's, the CPM's pick, the paper's last, the limit
TABLE7_THREADS = {"ours": THREADS, "paper": (160, 556, 736, 1024)}
FIELDS = ["date", "device", "cuda", "cupy", "cpu", "algorithm", "n", "threads", "run",
          "window_first", "window_last", "repeats", "ms_per_step_median", "ms_per_step_min",
          "ms_per_step_max", "ms_per_step_repeats", "rmse_x", "rmse_y", "occupancy",
          "kernel"]  # fmt: skip


def run_d3(model, y, n, seed, *, method="d3", **kw):
    """Das et al.'s filter: ``run_filter`` with ``D3_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **D3_OPTIONS, **kw)


def occupancy(algorithm: str, threads: int) -> tuple[float, str]:
    """The theoretical occupancy of the algorithm's dominant kernel at TPB."""
    from pfresample.cuda import d3 as cuda_d3

    if algorithm == "paper":
        return cuda_d3.occupancy(threads, kernel="d3_paper_strides"), "d3_paper_strides<float>"
    return cuda_d3.occupancy(threads), "d3_moves<float,float,double>"


def timed_run(model, y, truth, n, t, algorithm, spec, cfg, info, r: int = 0) -> dict:
    """Run ``r`` (its own filter seed) at N and TPB: its windows' times per
    step, RMSE, occupancy."""
    seed = experiments.run_seed(cfg["seed"], n, 0, r)
    run = run_d3(model, y, n, seed, threads=t, backend="cuda", **spec)
    ms = [1e3 * s / d3_gpu.CHUNK for s in run.chunk_seconds]
    rmse, _ = velocity_errors(run.estimates, truth[1:])
    occ, kernel = occupancy(algorithm, t)
    return {**info, "algorithm": algorithm, "n": n, "threads": t, "run": r, "window_first": 3,
            "window_last": y.shape[0], "repeats": len(ms),
            "ms_per_step_median": f"{statistics.median(ms):.6g}",
            "ms_per_step_min": f"{min(ms):.6g}", "ms_per_step_max": f"{max(ms):.6g}",
            "ms_per_step_repeats": " ".join(f"{v:.6g}" for v in ms),
            "rmse_x": f"{rmse[0]:.6g}", "rmse_y": f"{rmse[1]:.6g}",
            "occupancy": f"{occ:.4g}", "kernel": kernel}  # fmt: skip


def window_inputs(cfg, repeats: int):
    """The paper's regime over the timing window (2 eager steps and ``repeats``
    graph replays of CHUNK steps) of trajectory 0: (model, y, truth)."""
    model = replace(catalog.model(cfg), filter_process_sd=catalog.regimes(cfg)["paper"])
    window = 2 + d3_gpu.CHUNK * repeats
    model = catalog.truncated(model, window * model.dt)
    traj, _ = experiments.trajectory(catalog.model(cfg), cfg["seed"], 0)
    return model, traj["y"][:window], traj["truth"][: window + 1]


def spread(args, cfg, info, started) -> list[dict]:
    """Run-to-run spread at a fixed TPB: ``--spread-runs`` runs (each its own
    filter seed, the same trajectory) of each algorithm at N = ``--regime-n``
    and each TPB of SPREAD_THREADS, over the timing window. Whether the
    paper's algorithm's RMSE depends on TPB is then a comparison of groups of
    runs, not of one run a TPB."""
    model, y, truth = window_inputs(cfg, args.repeats)
    rows = []
    for r in range(args.spread_runs):  # run by run: a cut leaves every TPB with as many runs
        for algorithm in args.algorithms:
            for t in SPREAD_THREADS:
                if time.perf_counter() - started > args.spread_deadline:
                    print(f"deadline: spread stops before run {r}", flush=True)
                    return rows
                row = timed_run(model, y, truth, args.regime_n, t, algorithm,
                                ALGORITHMS[algorithm], cfg, info, r)  # fmt: skip
                rows.append(row)
                print(f"spread {algorithm:>5} TPB={t:>4} run {r}: {row['ms_per_step_median']} "
                      f"ms/step, RMSE {row['rmse_x']} {row['rmse_y']}", flush=True)  # fmt: skip
        clear_graphs("d3")
    return rows


TABLE7_FIELDS = ["date", "device", "cuda", "cupy", "algorithm", "n", "threads", "trajectory",
                 "steps", "rmse_x", "rmse_y", "bias_x", "bias_y", "ms_per_step_median",
                 "seconds"]  # fmt: skip


def table7(args, cfg, info, started) -> list[dict]:
    """Table 7 over the paper's whole 360 s (36,000 steps) at N = ``--regime-n``
    in the paper's regime, trajectory 0: ours at every TPB of THREADS, the
    paper's algorithm at TABLE7_THREADS (its run takes ~100 s). One run a cell,
    its RMSE and bias over all steps; ``ms_per_step_median`` is the median of
    its replays' times (other work may share the GPU: the timing tables come
    from ``timing.csv``)."""
    model = replace(catalog.model(cfg), filter_process_sd=catalog.regimes(cfg)["paper"])
    traj, _ = experiments.trajectory(catalog.model(cfg), cfg["seed"], 0)
    y, truth = traj["y"], traj["truth"]
    n = args.regime_n
    rows = []
    for algorithm in args.algorithms:
        for t in TABLE7_THREADS[algorithm]:
            if time.perf_counter() - started > args.deadline:
                print(f"deadline: table7 stops before {algorithm} TPB={t}", flush=True)
                return rows
            seed = experiments.run_seed(cfg["seed"], n, 0, 0)
            begin = time.perf_counter()
            run = run_d3(model, y, n, seed, threads=t, backend="cuda", **ALGORITHMS[algorithm])
            seconds = time.perf_counter() - begin
            rmse, bias = velocity_errors(run.estimates, truth[1:])
            ms = [1e3 * s / d3_gpu.CHUNK for s in run.chunk_seconds]
            rows.append({k: info[k] for k in ("date", "device", "cuda", "cupy")} | {
                "algorithm": algorithm, "n": n, "threads": t, "trajectory": 0,
                "steps": y.shape[0], "rmse_x": f"{rmse[0]:.6g}", "rmse_y": f"{rmse[1]:.6g}",
                "bias_x": f"{bias[0]:.6g}", "bias_y": f"{bias[1]:.6g}",
                "ms_per_step_median": f"{statistics.median(ms):.6g}",
                "seconds": f"{seconds:.4g}"})  # fmt: skip
            print(f"table7 {algorithm:>5} TPB={t:>4}: RMSE {rmse.round(5)} in {seconds:.1f} s, "
                  f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
        clear_graphs("d3")
    return rows


def timing(args, cfg, info, started) -> list[dict]:
    model, y, truth = window_inputs(cfg, args.repeats)
    rows = []
    # coarse before fine: first the block sizes of FIRST_PASS at every N and algorithm (Table
    # 5's 160, the paper's choices and the ends), then the rest, so that a cut by the
    # deadline leaves whole tables at fewer block sizes rather than fewer N
    first = [t for t in args.threads if t in FIRST_PASS]
    passes = (first, [t for t in args.threads if t not in FIRST_PASS])
    for threads in passes:
        for n in args.sizes:
            for algorithm in args.algorithms:
                spec = ALGORITHMS[algorithm]
                for t in threads:
                    if time.perf_counter() - started > args.timing_deadline:
                        print(f"deadline: timing stops before {algorithm} N={n} TPB={t}",
                              flush=True)  # fmt: skip
                        return rows
                    rows.append(timed_run(model, y, truth, n, t, algorithm, spec, cfg, info))
                    print(
                        f"{algorithm:>5} N={n:>6} TPB={t:>4}: {rows[-1]['ms_per_step_median']} "
                        f"ms/step, {time.perf_counter() - started:.0f} s",
                        flush=True,
                    )
                clear_graphs("d3")  # the graphs of one (N, algorithm) go before the next
    return rows


def regime_runs(args, cfg, started) -> list:
    model = catalog.model(cfg)
    step = catalog.snapshot_step(cfg)
    out = args.out / "regimes" / "cells"
    noise, filters = catalog.regimes(cfg), catalog.all_filters(cfg)
    cells = []
    for label in args.filters:
        for regime in noise:
            for j in range(args.trajectories):
                if time.perf_counter() - started > args.deadline:
                    print(f"deadline: regimes stop before {label} {regime} t{j}", flush=True)
                    return cells
                path = out / regime / label / f"t{j}.npz"
                if path.exists():  # kept from an earlier run (--out given its regimes/)
                    cells.append(artifacts.load_npz(path))
                    continue
                traj, _ = experiments.trajectory(model, cfg["seed"], j)
                cell = regimes.regime_cell(
                    model, traj, regime, noise[regime], label, filters[label], args.regime_n,
                    j, seed=cfg["seed"], snapshot_step=step, bin_seconds=10.0, backend="cuda",
                )  # fmt: skip
                artifacts.save_npz(path, *cell)
                cells.append(cell)
                print(f"regime {regime} {label} t{j}: RMSE {cell[0]['rmse'].round(4)}, "
                      f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
    return cells


# What the experiment writes (paths under its folder), section by section.
FILES = {
    "timing": ("timing.csv",),
    "spread": ("spread.csv",),
    "regimes": tuple(f"regimes/{t}.csv" for t in catalog.REGIME_TABLES),
    "table7": ("table7_360s.csv",),
}
NAMES = tuple(name for section in SECTIONS for name in FILES[section])


def settings(cfg) -> SimpleNamespace:
    """The run's parameters from the configuration's ``d3_2014_gpu_runs_*`` keys (a
    deadline of null: none; the timing's and the spread's default to the run's)."""
    deadline = cfg["d3_2014_gpu_runs_deadline_s"]
    deadline = float("inf") if deadline is None else float(deadline)

    def own(key):
        value = cfg[key]
        return deadline if value is None else float(value)

    return SimpleNamespace(
        sections=tuple(cfg["d3_2014_gpu_runs_sections"]), sizes=list(catalog.TABLE6_N),
        threads=list(THREADS), algorithms=list(cfg["d3_2014_gpu_runs_algorithms"]),
        repeats=cfg["d3_2014_gpu_runs_repeats"],
        trajectories=cfg["d3_2014_gpu_runs_trajectories"], regime_n=cfg["d3_2014_gpu_runs_n"],
        spread_runs=cfg["d3_2014_gpu_runs_spread_runs"],
        filters=list(cfg["d3_2014_gpu_runs_filters"]),
        deadline=deadline, timing_deadline=own("d3_2014_gpu_runs_timing_deadline_s"),
        spread_deadline=own("d3_2014_gpu_runs_spread_deadline_s"),
    )  # fmt: skip


def _device_info() -> dict:
    """Today's date, CUDA device 0's name, the CUDA runtime's and CuPy's versions."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    version = cupy.cuda.runtime.runtimeGetVersion()
    cuda = f"{version // 1000}.{version % 1000 // 10}"
    return {"date": datetime.date.today().isoformat(), "device": name, "cuda": cuda,
            "cupy": cupy.__version__}  # fmt: skip


def _write_rows(path: Path, rows: list[dict], fields) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)


def run(cfg, out, log=print) -> set[str]:
    """The sections of ``d3_2014_gpu_runs_sections`` on the GPU, into ``out``; returns the
    files (NAMES) written with at least one row. Regime cells already under
    ``out/regimes/cells`` are kept and not rerun."""
    args = settings(cfg)
    args.out = Path(out)
    started = time.perf_counter()
    info = {**_device_info(), "cpu": cpu_name()}
    args.out.mkdir(parents=True, exist_ok=True)
    produced = set()
    if "timing" in args.sections:
        rows = timing(args, cfg, info, started)
        if rows:
            _write_rows(args.out / "timing.csv", rows, FIELDS)
            produced.add("timing.csv")
    if "spread" in args.sections:
        rows = spread(args, cfg, info, started)
        if rows:
            _write_rows(args.out / "spread.csv", rows, FIELDS)
            produced.add("spread.csv")
    if "regimes" in args.sections:
        cells = regime_runs(args, cfg, started)
        if cells:
            order = [f for f in GPU_FILTERS if any(c[1]["filter"] == f for c in cells)]
            folder = args.out / "regimes"
            write_csv(regimes.cell_frame(cells), folder / "cells.csv")
            write_csv(regimes.summary(cells, order=order), folder / "summary.csv")
            write_csv(regimes.regime_pairs(cells), folder / "regime_pairs.csv")
            write_csv(regimes.error_vs_time(cells), folder / "error_vs_time.csv")
            produced.update(FILES["regimes"])
    if "table7" in args.sections:
        rows = table7(args, cfg, info, started)
        if rows:
            _write_rows(args.out / "table7_360s.csv", rows, TABLE7_FIELDS)
            produced.add("table7_360s.csv")
    log(f"done in {time.perf_counter() - started:.0f} s: {sorted(produced)}")
    return produced
