"""The pre-registered tests of Gelencsér-Horváth et al.'s two open trends (docs/cpf2013.md,
"Pre-registered"), and the same statistics on the committed CPU runs.

* **Fig 10's U** (bearings-only model, position RMSE): at each N of ``U_N``, each inner
  radius of ``INNER`` against each outer one of ``OUTER``, paired by trajectory and run
  seed (every r at one N shares them): 16 comparisons, one family
  (``pipeline.multiplicity``: Holm, simultaneous 99 % intervals). The U is resolved at N
  where some inner r is resolved below both outer ones.
* **Fig 9's N trend** (growth model, MSE, r = ``TREND_R``): ``TREND_PAIRS``, the step
  into 4,096 and each larger N against 4,096 and the last step, paired by trajectory (cells
  at different N have their own run seeds): 5 comparisons, one family.

    python -m pfresample_studies.cpf2013.preregistered cpu --runs RUNS.csv.gz --out DIR
    python -m pfresample_studies.cpf2013.preregistered gpu --out DIR [--u-trajectories M]
    python -m pfresample_studies.cpf2013.preregistered tables --runs DIR/runs.csv --out DIR

``gpu`` runs the cells (``experiments.cpf_cell``, the study's GPU path) and writes one row
per (cell, trajectory) to ``runs.csv``; ``tables`` and ``cpu`` write ``fig10_u_family.csv``,
``fig10_u_verdict.csv`` and (where the runs hold the N trend) ``fig9_n_family.csv``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..pipeline.multiplicity import paired_family
from . import experiments, targets

SEED = 2017  # config/config.yaml's seed, the study's trajectories and run seeds
STEPS = {"growth": 100, "bot": 24}
U_N = (2048, 4096, 8192, 16384)
INNER = (64, 128)
OUTER = (32, 256)
TREND_R = 256
TREND_N = (2048, 4096, 8192, 16384, 65536)
TREND_PAIRS = ((2048, 4096), (4096, 8192), (4096, 16384), (4096, 65536), (16384, 65536))
LEVEL = 0.99


def _pivot(runs: pd.DataFrame, model: str, value: str, index: str) -> pd.DataFrame:
    rows = runs[(runs["model"] == model) & (runs["filter"] == "CPF")]
    if "setup" in rows and model == "growth":
        rows = rows[rows["setup"] == "paper"]
    return rows.pivot_table(index=["trajectory"], columns=index, values=value, aggfunc="first")


def u_family(runs: pd.DataFrame) -> pd.DataFrame:
    """Fig 10's 16 comparisons (inner − outer position RMSE) as one family."""
    bot = runs[(runs["model"] == "bot") & (runs["filter"] == "CPF")]
    diffs, keys = {}, []
    for n in U_N:
        table = bot[bot["n"] == n].pivot_table(
            index="trajectory", columns="radius", values="position_rmse", aggfunc="first"
        )
        missing = [r for r in INNER + OUTER if r not in table.columns]
        if missing:
            raise ValueError(f"fig 10 family: N = {n} lacks the radii {missing}")
        table = table.dropna()
        for inner in INNER:
            for outer in OUTER:
                name = f"N={n} r={inner} - r={outer}"
                diffs[name] = (table[inner] - table[outer]).to_numpy()
                keys.append({"n": n, "inner": inner, "outer": outer})
    family = paired_family(diffs, level=LEVEL)
    return pd.concat([pd.DataFrame(keys), family], axis=1)


def u_verdict(family: pd.DataFrame) -> pd.DataFrame:
    """Per N: is some inner r resolved below both outer radii (the U)?"""
    rows = []
    for n, at in family.groupby("n"):
        below = at[at["resolved"] & (at["mean"] < 0)]
        inner = [r for r in INNER if set(below.loc[below["inner"] == r, "outer"]) == set(OUTER)]
        rows.append({"n": n, "u_resolved": bool(inner),
                     "inner_resolved": " ".join(map(str, inner)),
                     "comparisons_resolved": int(at["resolved"].sum()),
                     "pairs": int(at["pairs"].min())})  # fmt: skip
    return pd.DataFrame(rows)


def n_family(runs: pd.DataFrame) -> pd.DataFrame | None:
    """Fig 9's N trend at r = TREND_R (MSE at the larger N − at the smaller) as one family;
    None where the runs lack one of its N."""
    growth = runs[(runs["model"] == "growth") & (runs["filter"] == "CPF")]
    if "setup" in growth:
        growth = growth[growth["setup"] == "paper"]
    growth = growth[growth["radius"] == TREND_R]
    table = growth.pivot_table(index="trajectory", columns="n", values="mse", aggfunc="first")
    if any(n not in table.columns for n in TREND_N):
        return None
    table = table.dropna()
    diffs = {f"r={TREND_R} N={a} -> {b}": (table[b] - table[a]).to_numpy() for a, b in TREND_PAIRS}
    keys = pd.DataFrame([{"n_a": a, "n_b": b, "radius": TREND_R} for a, b in TREND_PAIRS])
    family = paired_family(diffs, level=LEVEL)
    family["relative"] = family["mean"] / table[[a for a, _ in TREND_PAIRS]].mean().to_numpy()
    return pd.concat([keys, family], axis=1)


def write_tables(runs: pd.DataFrame, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    family = u_family(runs)
    family.to_csv(out / "fig10_u_family.csv", index=False, float_format="%.6g")
    u_verdict(family).to_csv(out / "fig10_u_verdict.csv", index=False)
    trend = n_family(runs)
    if trend is not None:
        trend.to_csv(out / "fig9_n_family.csv", index=False, float_format="%.6g")
    print(family.to_string(), u_verdict(family).to_string(), sep="\n")
    if trend is not None:
        print(trend.to_string())


def gpu_runs(args) -> None:
    """The pre-registered cells on the GPU, cheapest family first; one row a trajectory."""
    started = time.perf_counter()
    plan = [("bot", n, r, args.u_trajectories) for n in U_N for r in OUTER + INNER]
    plan += [("growth", n, TREND_R, args.n_trajectories) for n in TREND_N]
    sets = {}
    frames = []
    args.out.mkdir(parents=True, exist_ok=True)
    for model, n, r, count in plan:
        if time.perf_counter() - started > args.deadline:
            print(f"deadline: {model} N={n} r={r} and after left out", flush=True)
            break
        if (model, count) not in sets:
            sets[model, count] = targets.simulate(model, count, STEPS[model], SEED)
        arrays, meta = experiments.cpf_cell(
            model, sets[model, count], n, r, seed=SEED, backend=args.backend
        )
        error = "position_rmse" if model == "bot" else "mse"
        frames.append(pd.DataFrame({
            "model": model, "filter": "CPF", "setup": meta["setup"], "n": n, "radius": r,
            "trajectory": np.arange(count), error: arrays[error],
            "step_seconds": arrays["step_seconds"], "wall_seconds": arrays["wall_seconds"],
            "device": meta["device"], "backend": meta["backend"],
        }))  # fmt: skip
        pd.concat(frames).to_csv(args.out / "runs.csv", index=False, float_format="%.8g")
        print(f"[{time.perf_counter() - started:7.1f} s] {model} N={n} r={r}: {count} "
              f"trajectories on {meta['device']}", flush=True)  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    cpu = sub.add_parser("cpu", help="the families on committed per-trajectory runs")
    cpu.add_argument("--runs", type=Path, required=True)
    cpu.add_argument("--out", type=Path, required=True)
    tab = sub.add_parser("tables", help="the families of a gpu run's runs.csv")
    tab.add_argument("--runs", type=Path, required=True)
    tab.add_argument("--out", type=Path, required=True)
    gpu = sub.add_parser("gpu", help="run the pre-registered cells")
    gpu.add_argument("--out", type=Path, required=True)
    gpu.add_argument("--backend", default="cuda")
    gpu.add_argument("--u-trajectories", type=int, default=3000)
    gpu.add_argument("--n-trajectories", type=int, default=8000)
    gpu.add_argument("--deadline", type=float, default=200.0, help="seconds: no new cell after")
    args = p.parse_args(argv)
    if args.command == "gpu":
        gpu_runs(args)
        return
    write_tables(pd.read_csv(args.runs), args.out)


if __name__ == "__main__":
    main()
