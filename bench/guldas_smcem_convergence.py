"""Güldaş (2015) Fig 4.12 on the CPU: does SMC-EM converge, and which part of
its error is the resampler's? (issue 40; docs/guldas2015.md, "SMC-EM").

Two parts, each writing CSVs under --out:

* ``reference``: the M sequences of the study (seed, M, n as the pipeline's)
  solved on a grid (``filters.volatility_grid``): each sequence's ML point
  (``ml_points.csv``) and the exact EM trace from the truth and from the
  guess (0.8, 0.3), up to --em-iterations iterations or until an iteration
  moves (alpha, sigma) by less than SETTLED (``exact_em.csv``: every
  iteration up to 200, every 10th after), with, per sequence and start, the
  iterations EM needs to come within 1e-2 and 1e-3 of the ML point and where
  the stopping rule (``smcem.stop_iteration``, window w, tolerance tol)
  stops it (``exact_em_convergence.csv``). (From the ML point EM stays put:
  tests/library/test_guldas_filters.py.)
* ``smcem``: the study's cells at each --log2-n (``smcem_reference_cell``,
  ``smcem_cell`` with both filters and the configured starts) and Fig 4.12's
  table of them (``fig4_12.csv``), the per-iteration mean squared Monte Carlo
  error (``mc_trace.csv``) and the figure (``fig4_12.png``).

    python bench/guldas_smcem_convergence.py reference --out DIR
    python bench/guldas_smcem_convergence.py reference-cell --starts ml truth --out DIR
    python bench/guldas_smcem_convergence.py smcem --log2-n 9 11 --out DIR
    python bench/guldas_smcem_convergence.py smcem --log2-n 11 13 15 17 19 21 --starts ml \
        --filters bootstrap --backend cuda --out DIR     # thesis scale on a GPU
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample.filters import volatility_grid
from pfresample.filters.smcem import STOP_WINDOW, stop_iteration
from pfresample.models.volatility import ALPHA, SIGMA
from pfresample.timing import cpu_name
from pfresample_studies.guldas2015 import figures, filter_experiments, tables
from pfresample_studies.pipeline import artifacts

SEED, SEQUENCES, LENGTH = 2017, 10, 100  # config/config.yaml's seed, the study's M and n
STARTS = ("ml", "truth", "guess")
STOP_TOLERANCE = 1e-4
SETTLED = 1e-8  # exact EM stops once an iteration moves (alpha, sigma) by less


def reference(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    data = filter_experiments.smcem_sequences(SEED, SEQUENCES, LENGTH)
    starts = {name: filter_experiments.SMCEM_STARTS[name] for name in ("truth", "guess")}
    rows, summary, points = [], [], []
    for m, y in enumerate(data):
        if args.sequences is not None and m not in args.sequences:
            continue
        ml = volatility_grid.ml_point(y, list(starts.values()))
        points.append({"sequence": m, "alpha_ml": ml.alpha, "sigma_ml": ml.sigma,
                       "loglik_ml": ml.log_likelihood, "alpha_true": ALPHA,
                       "sigma_true": SIGMA})  # fmt: skip
        for start, (a0, s0) in starts.items():
            a, sg, ll = volatility_grid.exact_em(y, a0, s0, args.em_iterations,
                                                 settled=SETTLED)  # fmt: skip
            keep = np.r_[0 : min(201, a.size), 210 : a.size : 10]
            for i in keep:
                rows.append({"start": start, "sequence": m, "iteration": int(i), "alpha": a[i],
                             "sigma": sg[i], "loglik": ll[i]})  # fmt: skip
            distance = np.maximum(np.abs(a - ml.alpha), np.abs(sg - ml.sigma))
            stop = stop_iteration(a, sg, STOP_WINDOW, STOP_TOLERANCE)

            def within(eps, d=distance):
                far = np.flatnonzero(d >= eps)
                if far.size == 0:
                    return 0
                return int(far[-1]) + 1 if far[-1] + 1 < d.size else -1  # -1: not reached

            summary.append({
                "start": start, "sequence": m, "iterations_run": a.size - 1,
                "settled": a.size - 1 < args.em_iterations,
                "iterations_to_1e-2": within(1e-2), "iterations_to_1e-3": within(1e-3),
                "distance_at_100": distance[min(100, a.size - 1)],
                "distance_at_end": distance[-1], "loglik_gap_at_end": ml.log_likelihood - ll[-1],
                "stop_iteration": -1 if stop is None else stop,
                "distance_at_stop": np.nan if stop is None else distance[stop],
                "stop_window": STOP_WINDOW, "stop_tolerance": STOP_TOLERANCE,
            })  # fmt: skip
        print(f"sequence {m}: {time.perf_counter() - started:.0f} s", flush=True)
        # written after every sequence, so a stopped run keeps what it finished
        pd.DataFrame(points).to_csv(out / "ml_points.csv", index=False)
        pd.DataFrame(rows).to_csv(out / "exact_em.csv", index=False, float_format="%.6g")
        pd.DataFrame(summary).to_csv(out / "exact_em_convergence.csv", index=False)
    print(f"reference: {time.perf_counter() - started:.0f} s on {cpu_name()}")


def reference_cell(args) -> None:
    """The study's reference cell alone (OUT/reference_smcem.npz), for smcem runs to share."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    ref = filter_experiments.smcem_reference_cell(
        sequences=SEQUENCES, length=LENGTH, iterations=args.iterations,
        starts=list(args.starts), seed=SEED,
    )  # fmt: skip
    artifacts.save_npz(out / "reference_smcem.npz", *ref)
    print(f"reference cell: {time.perf_counter() - started:.0f} s on {cpu_name()}")


def smcem(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ref_path = Path(args.reference) if args.reference else out / "reference_smcem.npz"
    if ref_path.exists():
        ref = artifacts.load_npz(ref_path)
    else:
        ref = filter_experiments.smcem_reference_cell(
            sequences=SEQUENCES, length=LENGTH, iterations=args.iterations,
            starts=list(args.starts), seed=SEED,
        )  # fmt: skip
        artifacts.save_npz(ref_path, *ref)
    cells = [ref]
    for e in args.log2_n:
        path = out / f"smcem_n{2**e}.npz"
        if not path.exists():
            started = time.perf_counter()
            cell = filter_experiments.smcem_cell(
                2**e, ref, iterations=args.iterations, seed=SEED, filters=args.filters,
                starts=args.starts, backend=args.backend,
            )  # fmt: skip
            artifacts.save_npz(path, *cell)
            print(f"N = 2^{e}: {time.perf_counter() - started:.0f} s on {cell[1]['device']}",
                  flush=True)  # fmt: skip
        cells.append(artifacts.load_npz(path))
    table = tables.smcem_table(cells, ALPHA, SIGMA)
    table.to_csv(out / "fig4_12.csv", index=False, float_format="%.6g")
    trace = []
    r = cells[0][0]
    for arrays, meta in cells[1:]:
        for a, arm in enumerate(meta["arms"]):
            for j, start in enumerate(meta["starts"]):
                k = cells[0][1]["starts"].index(start)
                for name in ("alpha", "sigma"):
                    iterates = arrays[name][a, j]  # (M, iterations + 1)
                    d2 = (iterates - r[name][k][:, : iterates.shape[1]]) ** 2
                    for i in range(d2.shape[1]):
                        trace.append({"n": meta["n"], **arm, "start": start, "parameter": name,
                                      "iteration": i, "mc_mse": d2[:, i].mean()})  # fmt: skip
    pd.DataFrame(trace).to_csv(out / "mc_trace.csv", index=False, float_format="%.6g")
    device = cells[1][1]["device"] if len(cells) > 1 else cpu_name()
    caption = (f"{cells[-1][1]['backend']} ({device}), {SEQUENCES} sequences, "
               f"{args.iterations} EM iterations; bench/guldas_smcem_convergence.py")  # fmt: skip
    figures.smcem(table, caption).savefig(out / "fig4_12.png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="part", required=True)
    r = sub.add_parser("reference")
    r.add_argument("--em-iterations", type=int, default=1000)
    r.add_argument("--sequences", type=int, nargs="+", help="only these (default: all)")
    r.add_argument("--out", required=True)
    s = sub.add_parser("smcem")
    s.add_argument("--log2-n", type=int, nargs="+", default=[9, 11])
    s.add_argument("--iterations", type=int, default=100)
    s.add_argument("--starts", nargs="+", default=["ml", "truth"])
    s.add_argument("--filters", nargs="+", default=["bootstrap", "adaptive"])
    s.add_argument("--backend", default="cpu", help="cpu or cuda (the bootstrap filter only)")
    s.add_argument("--reference", help="a reference_smcem.npz (default: OUT's, made if absent)")
    c = sub.add_parser("reference-cell")
    c.add_argument("--iterations", type=int, default=100)
    c.add_argument("--starts", nargs="+", default=["ml", "truth"])
    c.add_argument("--out", required=True)
    s.add_argument("--out", required=True)
    args = parser.parse_args()
    {"reference": reference, "smcem": smcem, "reference-cell": reference_cell}[args.part](args)


if __name__ == "__main__":
    main()
