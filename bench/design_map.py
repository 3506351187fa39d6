#!/usr/bin/env python3
"""The design-space map of issue 42: every resampler of the four studies in
one filter, ``pfresample.run_filter``, on three models and several N, with R
runs per cell on shared trajectories and seeds, on the CPU (``--backend
cpu``, the default) or the GPU (``--backend cuda``).

On the GPU the engine picks its GPU filter (``pfresample.filters.gpu``): the
growth and bearings-only models run Dülger's SIR graph (float32 states,
Philox noise, the log-likelihood estimate from each step's kept maximum and
sum; cellular there runs the CPF graph, whose last block of a step sums w~),
and D3 on them and every method on ``lg`` the engine's loop on CuPy arrays
(``filters.device``). So the GPU half is another draw of the same filters,
not the CPU's bits; ``device_step_seconds`` is the GPU's own time a step
(CUDA events around a graph's steps; the host's clock for the CuPy loop).

Resamplers: every method of ``pfresample.methods()`` plus "d3" (Das et al.
2014, which moves the particles); cellular with radius ``CELLULAR_RADIUS``
drawing the CPF's way (``METHOD_PARAMS``),
the butterflies with their default radix (``pfresample.radix.default_radix``),
Metropolis and Uphill with B as ``run_filter`` chooses it; every step
resamples (``ess_threshold=None``).

Models (``MODELS``), one simulated trajectory each, shared by every
resampler, N and run:

* ``growth``: ``GrowthModel()`` (Dülger eqs. 2.34-2.35, x_0 = 0.1, particles
  from N(0, 2) predicted first), T = 100 (§5.4);
* ``bot``: ``BearingsOnlyModel()`` (Gordon, Salmond & Smith 1993), T = 24,
  simulated as the cpf2013 study does (``model.simulate(T, rng)``);
* ``lg``: ``LinearGaussianModel()`` (a = 0.9, q = r = p0 = 1), T = 25, whose
  exact posterior means and log p(z_1:T) the Kalman filter gives.

Run r of every cell has seed ``r``, so the runs of two resamplers at the same
(model, N) share the trajectory and the seed (the model's draws start alike;
they part at the first resampling). Per run (``runs.csv``): the RMSE of the
posterior means against the model's truth x_1 ... x_T (bot: the position
RMSE of Gelencsér-Horváth et al.'s Fig 10, over (x, y)); on ``lg`` also the
RMSE against the Kalman means; the log-likelihood estimate; the mean ESS;
the wall time a step and stage 4's (resampling) time a step.

Per cell (``summary.csv``, :func:`summarise`), 95 % intervals:

* the mean RMSE (Student t), and its paired difference from Systematic's on
  the same seeds (Student t of the per-seed differences);
* the variance of the log-likelihood estimate across seeds (divisor R - 1),
  the SMC literature's measure of a resampler's quality, with a percentile
  bootstrap interval (``BOOTSTRAP`` resamples of the seeds, a fixed seed),
  and its ratio to Systematic's with a paired bootstrap (the same resampled
  seeds for both);
* on ``lg``: the mean of Z^/Z = exp(log Z^ - log Z) and its standard error
  (sd / sqrt(R)): 1 for an unbiased resampler (Del Moral 2004, Prop. 7.4.1);
* the median time a step over the runs with the distribution-free interval
  of order statistics (:func:`median_interval`), and the same for stage 4.

    python bench/design_map.py results/bench/design_map_cpu --runs 16 --jobs 3  # make design-map
    python bench/design_map.py OUT --backend cuda --runs 8 --jobs 1 \
        --sizes 2^10 2^14 2^18 2^22          # the GPU half: evidence/2026-11-26-h100-fe3755d
    python bench/design_map.py OUT --replot          # summary and figure from OUT/runs*.csv
"""

from __future__ import annotations

import os

# One BLAS thread: the engine's stage 3 (w @ x, w @ w) in OpenBLAS's threads takes
# 10-20 ms a step at N = 2^14 on a loaded 2-core host, 0.03 ms in one (README).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402 -- after the BLAS setting, which numpy reads on import
import csv  # noqa: E402
import datetime  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from functools import lru_cache  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import pfresample as pr  # noqa: E402
from pfresample.models import BearingsOnlyModel, GrowthModel, LinearGaussianModel  # noqa: E402
from pfresample.timing import cpu_name  # noqa: E402
from pfresample_studies.d3_2014.regimes import t_quantile  # noqa: E402
from pfresample_studies.pipeline.jobs import git_revision  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import parse_size, write_rows  # noqa: E402 -- sibling module

# The smallest radius of Gelencsér-Horváth et al.'s grid (config cpf2013_radii: 32 ... 256).
CELLULAR_RADIUS = 32
# The CPF's own choice (neighbourhood given: ``filters.engine.cpf_choice``), on both
# backends the same: each neighbourhood shifted by its own maximum, as the GPU's CPF graph
# draws. With the radius alone the CPU would draw from the normalised W instead.
METHOD_PARAMS = {"cellular": {"radius": CELLULAR_RADIUS, "neighbourhood": "search"}}
METHODS = (*pr.methods(), "d3")
REFERENCE = "systematic"  # the paired comparisons' baseline
# name -> (model, T): the module docstring.
MODELS = {
    "growth": (GrowthModel(), 100),
    "bot": (BearingsOnlyModel(), 24),
    "lg": (LinearGaussianModel(), 25),
}
POSITION_COLUMNS = (0, 2)  # bot's (x, y) of the state (x, xdot, y, ydot)
LEVEL = 0.95
BOOTSTRAP = 2000  # bootstrap resamples of the seeds
BOOTSTRAP_SEED = 42
TRAJECTORY_SEED = 2024
RUN_FIELDS = [
    "model", "n", "method", "seed", "steps", "rmse", "rmse_exact", "log_likelihood",
    "exact_log_likelihood", "ess_mean", "step_seconds", "resample_seconds", "backend",
    "device_step_seconds",
]  # fmt: skip


def trajectory(name: str, seed: int = TRAJECTORY_SEED):
    """(model, truth x_0 ... x_T, y, Kalman means or None, exact log p(y) or None)."""
    model, steps = MODELS[name]
    tag = zlib.crc32(f"design-map-{name}".encode())
    if name == "lg":
        truth, y = model.simulate(steps, seed=(int(seed) << 32) | tag)
        means, _, exact = model.kalman(y)
        return model, truth, y, means, exact
    truth, y = model.simulate(steps, np.random.default_rng([seed, tag]))
    return model, truth, y, None, None


def rmse(name: str, estimates, truth) -> float:
    """RMSE of ``estimates`` (x^_1 ... x^_T) against ``truth`` (x_1 ... x_T);
    bot: the Euclidean position error's."""
    e, x = np.asarray(estimates), np.asarray(truth)
    if name == "bot":
        e, x = e[:, POSITION_COLUMNS], x[:, POSITION_COLUMNS]
    d = (e - x).reshape(len(e), -1)
    return float(math.sqrt(np.mean(np.sum(d * d, axis=1))))


def one_run(name, model, truth, y, means, exact, n, method, seed, backend="cpu",
            capture=None) -> dict:  # fmt: skip
    """One run; ``capture`` (when not None) goes to ``run_filter``'s
    ``capture`` (the CuPy loop captured as one CUDA graph)."""
    params = dict(METHOD_PARAMS.get(method, {}))
    if capture is not None:
        params["capture"] = capture
    run = pr.run_filter(model, y, n, method, seed=seed, backend=backend, **params)
    steps = len(y)
    return {
        "model": name, "n": n, "method": method, "seed": seed, "steps": steps,
        "rmse": rmse(name, run.estimates, truth[1:]),
        "rmse_exact": "" if means is None else rmse(name, run.estimates, means),
        "log_likelihood": run.log_likelihood,
        "exact_log_likelihood": "" if exact is None else exact,
        "ess_mean": float(run.ess.mean()),
        "step_seconds": run.wall_seconds / steps,
        "resample_seconds": float(run.stage_seconds[:, 3].mean()),
        "backend": run.backend,
        "device_step_seconds": run.total_seconds / steps,
    }  # fmt: skip


def measure_model(
    out: Path, name: str, sizes, runs: int, methods, first_seed: int = 0, backend: str = "cpu",
    capture=None,
) -> Path:  # fmt: skip
    """Every (N, seed, method) of model ``name``, seeds ``first_seed`` ...
    ``first_seed + runs - 1``, the methods innermost so
    that the machine's load falls alike on every method; rows appended to
    ``out/runs-<name>.csv`` as they come (a run cut short keeps them). A
    method with no path on ``backend`` for this model is said and left out."""
    path = out / f"runs-{name}.csv"
    model, truth, y, means, exact = trajectory(name)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=RUN_FIELDS)
        writer.writeheader()
        for n in sizes:
            start = time.perf_counter()
            for seed in range(first_seed, first_seed + runs):
                for method in methods:
                    try:
                        row = one_run(name, model, truth, y, means, exact, n, method, seed,
                                      backend, capture)  # fmt: skip
                    except (NotImplementedError, TypeError) as error:
                        print(f"# {name} N={n} {method}: no run ({error})", flush=True)
                        continue
                    writer.writerow(row)
                f.flush()
            print(f"# {name} N={n}: {time.perf_counter() - start:.1f} s", flush=True)
    return path


def measure(
    out: Path, sizes, runs: int, models, methods, jobs: int = 1, first_seed: int = 0,
    backend: str = "cpu", capture=None,
) -> list[dict]:  # fmt: skip
    """:func:`measure_model` for each model, ``jobs`` models at a time (one
    process each), their rows joined into ``out/runs.csv`` (in the order of
    ``models``) and returned."""
    out.mkdir(parents=True, exist_ok=True)
    tasks = [(out, name, list(sizes), runs, list(methods), first_seed, backend, capture)
             for name in models]  # fmt: skip
    if jobs > 1:
        from multiprocessing import get_context

        with get_context("spawn").Pool(jobs) as pool:
            parts = pool.starmap(measure_model, tasks, chunksize=1)
    else:
        parts = [measure_model(*task) for task in tasks]
    rows = []
    for part in parts:
        with open(part, newline="") as f:
            rows.extend(csv.DictReader(f))
    with open(out / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=RUN_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    for part in parts:
        part.unlink()
    return rows


def read_runs(out: Path) -> list[dict]:
    """The rows of ``out/runs.csv``, or, where a run was cut short before
    joining them, of every ``out/runs-<model>.csv`` (in ``MODELS``' order)."""
    paths = [out / "runs.csv"]
    if not paths[0].exists():
        paths = [out / f"runs-{name}.csv" for name in MODELS if (out / f"runs-{name}.csv").exists()]
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def median_interval(values, level: float = LEVEL) -> tuple[float, float, float]:
    """(median, lo, hi): lo, hi the order statistics x_(j), x_(R+1-j) with the
    largest j whose coverage 1 - 2 P(Bin(R, 1/2) <= j - 1) is at least
    ``level`` (distribution-free; NaN bounds where even j = 1 covers less)."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    r = x.size
    tail, j = 0.0, 0
    while True:  # tail = P(Bin(R, 1/2) <= j)
        tail += math.comb(r, j) / 2.0**r
        if 2 * tail > 1 - level:
            break
        j += 1
    if j == 0:
        return float(np.median(x)), math.nan, math.nan
    return float(np.median(x)), float(x[j - 1]), float(x[r - j])


def bootstrap_variance(values, reference=None, level: float = LEVEL):
    """Percentile bootstrap of the variance (divisor R - 1) of ``values``:
    (lo, hi); with ``reference`` (the same seeds, another method) also
    (ratio lo, ratio hi) of var(values) / var(reference), the seeds
    resampled jointly (paired)."""
    x = np.asarray(values, dtype=np.float64)
    idx = np.random.default_rng(BOOTSTRAP_SEED).integers(0, x.size, (BOOTSTRAP, x.size))
    q = [(1 - level) / 2, (1 + level) / 2]
    v = x[idx].var(axis=1, ddof=1)
    lo, hi = np.quantile(v, q)
    if reference is None:
        return float(lo), float(hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = v / np.asarray(reference, dtype=np.float64)[idx].var(axis=1, ddof=1)
    rlo, rhi = np.quantile(ratio, q)
    return float(lo), float(hi), float(rlo), float(rhi)


@lru_cache
def _t(df: int) -> float:
    return t_quantile(0.5 + LEVEL / 2, df)


def t_interval(values) -> tuple[float, float]:
    """(mean, half width) of the Student-t ``LEVEL`` interval of the mean of
    ``values`` (half width NaN for one value: a cell cut short)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        return float(x.mean()), math.nan
    return float(x.mean()), _t(x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)


def _floats(rows, key) -> np.ndarray:
    return np.array([float(r[key]) for r in rows])


def summarise(rows) -> list[dict]:
    """One row per (model, N, method) of the module docstring's statistics.
    The runs of a cell are matched to Systematic's (``REFERENCE``) by seed
    for the paired columns (left empty for Systematic itself, or without it)."""
    cells: dict[tuple, list] = {}
    for r in rows:
        cells.setdefault((r["model"], int(r["n"]), r["method"]), []).append(r)
    out = []
    for (name, n, method), cell in cells.items():
        cell = sorted(cell, key=lambda r: int(r["seed"]))
        seeds = [int(r["seed"]) for r in cell]
        ref = sorted(cells.get((name, n, REFERENCE), []), key=lambda r: int(r["seed"]))
        paired = method != REFERENCE and [int(r["seed"]) for r in ref] == seeds
        ll, err = _floats(cell, "log_likelihood"), _floats(cell, "rmse")
        rmse_mean, rmse_half = t_interval(err)
        row = {
            "model": name, "n": n, "method": method, "runs": len(cell),
            "rmse": rmse_mean, "rmse_lo": rmse_mean - rmse_half, "rmse_hi": rmse_mean + rmse_half,
        }  # fmt: skip
        if paired:
            diff_mean, diff_half = t_interval(err - _floats(ref, "rmse"))
            row.update(rmse_diff_vs_systematic=diff_mean, rmse_diff_lo=diff_mean - diff_half,
                       rmse_diff_hi=diff_mean + diff_half)  # fmt: skip
        if cell[0]["rmse_exact"] not in ("", None):
            exact_mean, exact_half = t_interval(_floats(cell, "rmse_exact"))
            row.update(rmse_exact=exact_mean, rmse_exact_lo=exact_mean - exact_half,
                       rmse_exact_hi=exact_mean + exact_half)  # fmt: skip
        row["ll_mean"] = float(ll.mean())
        row["var_ll"] = float(ll.var(ddof=1))
        if paired:
            lo, hi, rlo, rhi = bootstrap_variance(ll, _floats(ref, "log_likelihood"))
            row.update(var_ll_lo=lo, var_ll_hi=hi,
                       var_ll_ratio_vs_systematic=row["var_ll"] / _floats(
                           ref, "log_likelihood").var(ddof=1),
                       var_ll_ratio_lo=rlo, var_ll_ratio_hi=rhi)  # fmt: skip
        else:
            row["var_ll_lo"], row["var_ll_hi"] = bootstrap_variance(ll)
        if cell[0]["exact_log_likelihood"] not in ("", None):
            ratio = np.exp(ll - _floats(cell, "exact_log_likelihood"))
            row["z_ratio_mean"] = float(ratio.mean())
            row["z_ratio_se"] = float(ratio.std(ddof=1) / math.sqrt(ratio.size))
        row["ess_mean"] = float(_floats(cell, "ess_mean").mean())
        timed = [("step_ms", "step_seconds"), ("resample_ms", "resample_seconds")]
        if cell[0].get("device_step_seconds") not in ("", None):  # the runs of the GPU half
            timed.append(("device_step_ms", "device_step_seconds"))
            row["backend"] = cell[0]["backend"]
        for key, col in timed:
            med, lo, hi = median_interval(1e3 * _floats(cell, col))
            row.update({key: med, f"{key}_lo": lo, f"{key}_hi": hi})
        out.append(row)
    return out


SUMMARY_FIELDS = [
    "model", "n", "method", "runs", "rmse", "rmse_lo", "rmse_hi", "rmse_diff_vs_systematic",
    "rmse_diff_lo", "rmse_diff_hi", "rmse_exact", "rmse_exact_lo", "rmse_exact_hi", "ll_mean",
    "var_ll", "var_ll_lo", "var_ll_hi", "var_ll_ratio_vs_systematic", "var_ll_ratio_lo",
    "var_ll_ratio_hi", "z_ratio_mean", "z_ratio_se", "ess_mean", "step_ms", "step_ms_lo",
    "step_ms_hi", "resample_ms", "resample_ms_lo", "resample_ms_hi", "backend", "device_step_ms",
    "device_step_ms_lo", "device_step_ms_hi",
]  # fmt: skip
PANELS = (
    ("rmse", "RMSE (model's truth)"),
    ("var_ll", "Var log Ẑ across seeds"),
    ("step_ms", "median time a step (ms)"),
)
LINESTYLES = ("-", "--", ":", "-.")
# Models whose RMSE panel is against the exact posterior means, not the truth: the truth's
# RMSE there is mostly the posterior's own spread (sd 0.77), the same for every resampler.
EXACT_RMSE_MODELS = ("lg",)


def draw(summary, path: Path) -> None:
    """A row of panels a model (``PANELS``: RMSE, lg's against the Kalman
    means, Var log Z^, time a step against N), one line per resampler, log
    axes, each statistic's 95 % interval as bars."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    models = [m for m in MODELS if any(r["model"] == m for r in summary)]
    methods = [m for m in METHODS if any(r["method"] == m for r in summary)]
    colours = colormaps["tab20"]
    fig = Figure(figsize=(15, 3.6 * len(models)), layout="constrained")
    axes = fig.subplots(len(models), len(PANELS), squeeze=False)
    for i, name in enumerate(models):
        for j, (key, label) in enumerate(PANELS):
            ax = axes[i, j]
            if key == "rmse" and name in EXACT_RMSE_MODELS:
                key, label = "rmse_exact", "RMSE to the Kalman means"
            for k, method in enumerate(methods):
                cell = sorted(
                    (r for r in summary if r["model"] == name and r["method"] == method),
                    key=lambda r: int(r["n"]),
                )
                n = np.array([int(r["n"]) for r in cell])
                v = np.array([float(r[key]) for r in cell])
                lo = np.array([float(r[f"{key}_lo"]) for r in cell])
                hi = np.array([float(r[f"{key}_hi"]) for r in cell])
                ax.errorbar(
                    n * (1 + 0.012 * (k - len(methods) / 2)), v,
                    yerr=[np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)],
                    color=colours(k % 20), ls=LINESTYLES[k % len(LINESTYLES)], marker="o",
                    ms=3, lw=1, capsize=1.5, label=method,
                )  # fmt: skip
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{name}: {label}", fontsize=9)
            ax.set_xlabel("N")
            ax.grid(True, which="both", lw=0.3, alpha=0.5)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    print(f"# wrote {path}")


def write_readme_header(out: Path, commit: str | None, seconds: float) -> None:
    """``out/machine.txt``: what the README needs to say where it ran
    (``commit``: the checkout's when the run began)."""
    lines = [
        f"command: python bench/design_map.py {' '.join(sys.argv[1:])}",
        f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"commit: {commit}",
        f"cpu: {cpu_name()}",
        f"numpy: {np.__version__}",
        f"OPENBLAS_NUM_THREADS: {os.environ.get('OPENBLAS_NUM_THREADS')}",
        f"wall seconds: {seconds:.0f}",
    ]
    (out / "machine.txt").write_text("\n".join(lines) + "\n")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path, help="output folder (runs.csv, summary.csv, design_map.png)")
    p.add_argument("--sizes", nargs="+", type=parse_size, default=[2**10, 2**12, 2**14])
    p.add_argument("--runs", type=int, default=16, help="seeds per cell (R)")
    p.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.add_argument("--first-seed", type=int, default=0, help="seeds first ... first + runs - 1")
    p.add_argument("--jobs", type=int, default=3, help="models measured at once (processes)")
    p.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    p.add_argument(
        "--capture", choices=("auto", "on"),
        help="run_filter's capture ('auto', or True for 'on'); left out when not given",
    )  # fmt: skip
    p.add_argument(
        "--replot", action="store_true",
        help="summarise and draw OUT/runs.csv (or OUT/runs-*.csv of a run cut short)",
    )  # fmt: skip
    args = p.parse_args(argv)
    if args.runs < 2:
        p.error("--runs must be at least 2 (a variance across seeds)")
    if args.replot:
        rows = read_runs(args.out)
        if not rows:
            p.error(f"no runs in {args.out} (runs.csv or runs-<model>.csv)")
    else:
        start, commit = time.perf_counter(), git_revision(HERE)
        rows = measure(
            args.out, args.sizes, args.runs, args.models, args.methods, args.jobs,
            args.first_seed, args.backend, {"auto": "auto", "on": True}.get(args.capture),
        )  # fmt: skip
        write_readme_header(args.out, commit, time.perf_counter() - start)
    summary = summarise(rows)
    write_rows(args.out / "summary.csv", summary, SUMMARY_FIELDS)
    draw(summary, args.out / "design_map.png")


if __name__ == "__main__":
    main()
