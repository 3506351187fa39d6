#!/usr/bin/env python3
"""The growth-model SIR filter against a peer: the ``particles`` library (CPU, both).

Both filters run the univariate growth model (``pfresample.models.growth``, thesis eqs.
2.34-2.35, T = 100) with systematic resampling at every step on the same ``--trajectories``
fixed trajectories, ``--runs`` runs each, for every N of ``--n``:

* ours: ``pfresample.filters.sir.run_sir(model, y, n, "systematic", seed)``;
* theirs: ``particles.SMC(fk=particles.state_space_models.Bootstrap(ssm=GrowthSSM(), data=y), N=n,
  resampling="systematic", ESSrmin=1)`` (ESSrmin = 1 resamples at every step, as ours does),
  its filtering mean taken by a ``Moments`` collector.

Time indices. ``particles`` numbers its states from 0 and weights X_0 with the first datum, so
its X_t is our x_{t+1} and its Y_t our z_{t+1} = y[t]. Hence ``GrowthSSM.PX(t, xp)`` is our
``transition(xp, k=t)`` (cos(1.2 t), the thesis's index convention), and ``PX0`` is the law
of x_1: x_0 ~ N(0, 2) (our ``init_particles``) moved once by eq. 2.34 with k = 0. Its
filtering mean at t is then our ``estimates[t]`` = x^_{t+1}; both are scored with our ``rmse``
against x_1 ... x_T.

Statistics. A run's RMSE is ``pfresample.filters.sir.rmse``. Runs on one trajectory share that
trajectory and are not independent, so the unit is the trajectory: per filter, the R runs of
each trajectory are averaged, and the 99% confidence interval is a Student-t interval over the
M trajectory means (M - 1 degrees of freedom). The two filters see the same trajectories, so
the comparison is paired: the per-trajectory differences (ours - theirs) get the same t
interval, and "agree" means that interval contains 0.

Timing. Wall seconds (``time.perf_counter``) of one whole filter call (set-up, T = 100 steps,
estimates) on trajectory 0, after one untimed warm-up call per filter and N (it compiles
particles' numba code); ``--timing-repeats`` calls each, alternating ours and theirs, median
reported. The medians over all RMSE runs (also alternated) are given too. Single process.

    python bench/filter_peers.py                                  # defaults, ~2 min on 2 cores
    python bench/filter_peers.py --trajectories 8 --runs 4 --n 2^10 2^16 --timing-repeats 5
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from _common import parse_size, particles_version, write_rows  # bench/, the scripts' own folder

from pfresample.filters import SIR_OPTIONS, run_filter
from pfresample.filters.sir import rmse
from pfresample.models.growth import STEPS, GrowthModel
from pfresample.timing import cpu_name

try:
    import particles
    import particles.collectors as particles_collectors
    import particles.distributions as particles_dists
    import particles.state_space_models as particles_ssm
except ImportError:  # optional: pip install -e '.[bench]'
    particles = None

TRAJECTORY_SEED = 20261122  # trajectory j is simulated from SeedSequence([TRAJECTORY_SEED, j])
CONFIDENCE = 0.99
DEFAULT_OUT = Path("results/bench/filter_peers.csv")


def run_sir(model, y, n, method, seed, **kw):
    """Dülger's Algorithm 2.4: ``run_filter`` with ``SIR_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--trajectories", type=int, default=16, help="M trajectories (default: 16)")
    p.add_argument(
        "--runs", type=int, default=10, help="R runs per trajectory and filter (default: 10)"
    )
    p.add_argument(
        "--n",
        nargs="+",
        type=parse_size,
        default=[2**10, 2**14, 2**16],
        metavar="N",
        help="numbers of particles (default: 2^10 2^14 2^16)",
    )
    p.add_argument(
        "--timing-repeats",
        type=int,
        default=10,
        help="timed calls per filter and N, alternated (default: 10)",
    )
    p.add_argument(
        "--csv",
        "--out",
        dest="out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"CSV (default: {DEFAULT_OUT})",
    )
    args = p.parse_args(argv)
    for name in ("trajectories", "runs", "timing_repeats"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.trajectories < 2:
        p.error("--trajectories must be >= 2 for a confidence interval")
    return args


# --- the model in particles' terms ----------------------------------------------------------

if particles is not None:

    class FirstState(particles_dists.ProbDist):
        """The law of our x_1, particles' X_0: x_0 ~ N(init_mean, init_var), then eq. 2.34 at
        k = 0. Draws from NumPy's global generator, as particles' own distributions do."""

        def __init__(self, model: GrowthModel):
            self.model = model

        def rvs(self, size=None):
            m = self.model
            x0 = np.random.normal(m.init_mean, math.sqrt(m.init_var), size=size)  # noqa: NPY002
            noise = np.random.normal(0.0, math.sqrt(m.sigma_v2), size=size)  # noqa: NPY002
            return m.mean_transition(x0, 0) + noise

    class GrowthSSM(particles_ssm.StateSpaceModel):
        """Eqs. 2.34-2.35 with particles' time t = our k - 1 (see the module docstring)."""

        def __init__(self, model: GrowthModel | None = None):
            self.model = model if model is not None else GrowthModel()

        def PX0(self):
            return FirstState(self.model)

        def PX(self, t, xp):  # particles' X_t = our x_{t+1} = f(x_t, t) + v_t
            return particles_dists.Normal(
                loc=self.model.mean_transition(xp, t), scale=math.sqrt(self.model.sigma_v2)
            )

        def PY(self, t, xp, x):  # particles' Y_t = our z_{t+1}, given X_t = our x_{t+1}
            return particles_dists.Normal(
                loc=self.model.observe(x), scale=math.sqrt(self.model.sigma_n2)
            )


def weighted_mean(W, X) -> float:
    """The filtering mean sum_i W_i X_i (particles' ``Moments`` collector's ``mom_func``)."""
    return float(np.dot(W, X))


def run_particles(model: GrowthModel, y, n: int, seed: int) -> np.ndarray:
    """particles' bootstrap filter over ``y``; returns the T filtering means (our x^_1..x^_T)."""
    np.random.seed(seed)  # noqa: NPY002 -- particles has no generator argument
    fk = particles_ssm.Bootstrap(ssm=GrowthSSM(model), data=np.asarray(y, dtype=np.float64))
    pf = particles.SMC(
        fk=fk,
        N=n,
        resampling="systematic",
        ESSrmin=1.0,
        store_history=False,
        collect=[particles_collectors.Moments(mom_func=weighted_mean)],
    )
    pf.run()
    return np.asarray(pf.summaries.moments, dtype=np.float64)


def run_ours(model: GrowthModel, y, n: int, seed: int) -> np.ndarray:
    return run_sir(model, y, n, "systematic", seed).estimates


FILTERS = {"pfresample": run_ours, "particles": run_particles}


# --- statistics ------------------------------------------------------------------------------


def t_interval(values, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """(mean, half-width) of the Student-t confidence interval for the mean of ``values``."""
    from scipy import stats  # installed with particles

    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size < 2:
        raise ValueError("need a 1-d sample of at least 2 values")
    q = stats.t.ppf(0.5 + confidence / 2.0, df=v.size - 1)
    return float(v.mean()), float(q * v.std(ddof=1) / math.sqrt(v.size))


def paired_summary(ours, theirs, confidence: float = CONFIDENCE) -> dict:
    """Per-trajectory means of two filters (same trajectories) -> both intervals, the interval
    of the paired difference ours - theirs, and whether the checks pass."""
    a, b = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("ours and theirs need one mean per trajectory each")
    ma, ha = t_interval(a, confidence)
    mb, hb = t_interval(b, confidence)
    md, hd = t_interval(a - b, confidence)
    return {
        "ours": (ma, ha),
        "theirs": (mb, hb),
        "diff": (md, hd),
        "overlap": abs(ma - mb) <= ha + hb,
        "diff_contains_0": abs(md) <= hd,
    }


def trajectories(model: GrowthModel, m: int, steps: int = STEPS):
    """M fixed (x, y) trajectories, trajectory j from SeedSequence([TRAJECTORY_SEED, j])."""
    return [model.simulate(steps, np.random.default_rng([TRAJECTORY_SEED, j])) for j in range(m)]


def run_seed(j: int, r: int) -> int:
    """Seed of run r on trajectory j (both filters get it; their generators differ anyway)."""
    return 1_000_003 * (j + 1) + r


def timed(fn, *args) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


# --- the benchmark ---------------------------------------------------------------------------


def accuracy(model, trajs, n: int, runs: int) -> tuple[dict, dict]:
    """Per filter: the M per-trajectory mean RMSEs, and the wall seconds of every run."""
    means = {name: [] for name in FILTERS}
    seconds = {name: [] for name in FILTERS}
    for j, (x, y) in enumerate(trajs):
        per_run = {name: [] for name in FILTERS}
        for r in range(runs):
            order = list(FILTERS) if r % 2 == 0 else list(FILTERS)[::-1]  # alternate
            for name in order:
                s, est = timed(FILTERS[name], model, y, n, run_seed(j, r))
                per_run[name].append(rmse(est, x[1:]))
                seconds[name].append(s)
        for name in FILTERS:
            means[name].append(float(np.mean(per_run[name])))
    return means, seconds


def timing(model, y, n: int, repeats: int) -> dict:
    """Median wall seconds of one filter call per filter: one warm-up each, then alternated."""
    for fn in FILTERS.values():
        fn(model, y, n, 0)  # warm-up: numba compilation, caches
    times = {name: [] for name in FILTERS}
    for i in range(repeats):
        order = list(FILTERS) if i % 2 == 0 else list(FILTERS)[::-1]
        for name in order:
            times[name].append(timed(FILTERS[name], model, y, n, 10_000 + i)[0])
    return {name: statistics.median(t) for name, t in times.items()}


def check_alignment(model, x, y, n: int = 2**14) -> tuple[float, float]:
    """Both filters' RMSE on one trajectory, one run each (a shifted index would show here)."""
    return rmse(run_ours(model, y, n, 1), x[1:]), rmse(run_particles(model, y, n, 1), x[1:])


def main(argv=None) -> int:
    args = parse_args(argv)
    if particles is None:
        print(
            "the 'particles' library is not installed: pip install -e '.[bench]'", file=sys.stderr
        )
        return 2
    meta = {
        "date": datetime.date.today().isoformat(),
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "numpy": np.__version__,
        "particles": particles_version(),
    }
    print(
        f"# {meta['date']} | {meta['cpu']} | {meta['cores']} cores | numpy {meta['numpy']} | "
        f"particles {meta['particles']} | python {platform.python_version()}"
    )
    print(
        f"# growth model, T = {STEPS}, systematic resampling every step; "
        f"M = {args.trajectories} trajectories x R = {args.runs} runs; "
        f"{CONFIDENCE:.0%} t-intervals over the M trajectory means (df = M - 1); "
        f"timing: median of {args.timing_repeats} alternated calls after 1 warm-up"
    )
    model = GrowthModel()
    trajs = trajectories(model, args.trajectories)
    x0, y0 = trajs[0]
    ours0, theirs0 = check_alignment(model, x0, y0)
    print(
        f"# alignment check, trajectory 0, N = 2^14: RMSE ours {ours0:.4f}, particles {theirs0:.4f}"
    )

    header = (
        f"{'filter':<11} {'N':>7} {'RMSE mean':>10} {'±99% CI':>8} "
        f"{'diff (ours-theirs)':>20} {'0 in CI':>7} {'median s':>9} {'med s (runs)':>12}"
    )
    print(header)
    rows = []
    for n in args.n:
        means, run_seconds = accuracy(model, trajs, n, args.runs)
        summary = paired_summary(means["pfresample"], means["particles"])
        medians = timing(model, y0, n, args.timing_repeats)
        md, hd = summary["diff"]
        for name, key in (("pfresample", "ours"), ("particles", "theirs")):
            mean, half = summary[key]
            row = {
                "filter": name,
                "n": n,
                "trajectories": args.trajectories,
                "runs": args.runs,
                "rmse_mean": mean,
                "rmse_ci99_halfwidth": half,
                "diff_mean": md,
                "diff_ci99_halfwidth": hd,
                "diff_ci_contains_0": summary["diff_contains_0"],
                "intervals_overlap": summary["overlap"],
                "median_s": medians[name],
                "timing_repeats": args.timing_repeats,
                "median_s_all_runs": statistics.median(run_seconds[name]),
                **meta,
            }
            rows.append(row)
            print(
                f"{name:<11} {n:>7} {mean:>10.4f} {half:>8.4f} "
                f"{f'{md:+.4f} ± {hd:.4f}':>20} {str(summary['diff_contains_0']):>7} "
                f"{medians[name]:>9.4f} {row['median_s_all_runs']:>12.4f}",
                flush=True,
            )
        ratio = medians["particles"] / medians["pfresample"]
        print(f"#   N = {n}: particles / ours median time = {ratio:.2f}", flush=True)

    write_rows(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
