#!/usr/bin/env python3
"""Paired runs of the cpf2013 study (Gelencsér-Horváth et al. 2013, issue 41):
the study's own cells (``pfresample.studies.cpf2013.experiments``) on chosen
configurations and trajectory counts, and the study's tables on them
(``tables``, ``paired``: the paired differences behind every trend and the
paper's claims judged on them).

    python bench/cpf2013_runs.py quality --plan cpu --jobs 2 \\
        --out bench/results/cpf2013_issue41            # this machine's CPU campaign
    python bench/cpf2013_runs.py cpu-reference --out bench/results/cpf2013_issue41
    python bench/cpf2013_runs.py quality --plan gpu --backend cuda --out OUT   # the device

``quality`` runs the cells of a plan (``PLANS``), each in parts of
``--part`` trajectories (trajectory j and its run seed are the study's,
whatever the part: ``experiments.cpf_cell(first=...)``), keeps each part
under ``--cache`` (a rerun skips what is there, so a larger
``--*-trajectories`` extends the runs), then writes to ``--out``:

* ``runs.csv.gz``: one row per (cell, trajectory): the error measures of
  each estimator, the distinct fraction, the step and run times, the seed;
* ``errors.csv``: ``tables.error_table`` of every cell (the figures' rows);
* ``paired.csv``, ``claims.csv``: ``paired.paired_table``, ``claims_table``;
* ``baselines.csv``: ``tables.baselines_table`` of the paper's start.

Times in these cells are measurements of parallel jobs on a shared machine
(``--jobs``); the study's timing figures come from its timing cells, and
``cpu-reference`` times the CPU filter alone (``cpu_reference.csv``): the
library's NumPy CPF (``run_cpf(backend="cpu")``, float64, one process) at
N = 4,096, every radius, the whole 100-step run, median of ``--repeats`` --
the counterpart of the paper's CPU reference (its ref. [21]'s code, 16.417 s
at 4,096 particles on an Intel T6570).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample.filters import run_cpf
from pfresample.studies.cpf2013 import experiments, paired, tables, targets
from pfresample.timing import cpu_name

SEED = 2017  # config/config.yaml's seed
STEPS = {"growth": 100, "bot": 24}
PAPER_N = (2048, 4096, 8192, 16384)
PAPER_R = (32, 64, 128, 256)


def cpf(model, n, r, setup="paper", precision="float64", neighbourhood="search", fast=False):
    return {"kind": "cpf", "model": model, "n": n, "radius": r, "setup": setup,
            "precision": precision, "neighbourhood": neighbourhood, "fast_math": fast}  # fmt: skip


def sir(model, n, method, setup="paper"):
    return {"kind": "sir", "model": model, "n": n, "method": method, "setup": setup}


def _cpu_plan() -> list[dict]:
    """This machine's CPU campaign: the bearings-only model at the paper's
    grid (Fig 10's U, CPF against SIR with each estimator, the distinct
    ancestors, r = N - 1); the growth model at N = 2,048 (every r) and
    4,096 (r = 32, 256), both starts at N = 2,048, SIR at both N (Fig 9's r
    trend, CPF against SIR, the start)."""
    cells = [cpf("bot", n, r) for n in PAPER_N for r in PAPER_R]
    cells += [cpf("bot", 2048, 2047)]  # r = N - 1: the multinomial SIR filter's resampling
    cells += [sir("bot", n, m) for n in PAPER_N for m in ("systematic", "multinomial")]
    cells += [cpf("growth", 2048, r) for r in PAPER_R] + [cpf("growth", 4096, r) for r in (32, 256)]
    cells += [cpf("growth", 2048, r, setup="thesis") for r in (32, 256)]
    cells += [sir("growth", n, m) for n in (2048, 4096) for m in ("systematic", "multinomial")]
    return cells


def _gpu_plan() -> list[dict]:
    """The device's paired runs at the paper's scale beyond the pipeline's
    cells: both starts at every configuration; the kernels (float32 with the
    paper's quotients, fast math) against the default at three
    configurations; SIR with both starts. (The N trend with more
    trajectories is ``_gpu_n_plan``.)"""
    cells = [cpf("growth", n, r, setup=s) for s in ("paper", "thesis")
             for n in PAPER_N for r in PAPER_R]  # fmt: skip
    for model in ("growth", "bot"):
        for n, r in ((2048, 256), (16384, 32), (16384, 256)):
            cells += [
                cpf(model, n, r, fast=True),
                cpf(model, n, r, precision="float32", neighbourhood="divide"),
                cpf(model, n, r, precision="float32", neighbourhood="divide", fast=True),
            ]
    cells += [cpf("bot", n, r) for n in PAPER_N for r in PAPER_R]
    cells += [sir(model, n, m, setup=s) for model in ("growth", "bot") for n in PAPER_N
              for m in ("systematic", "multinomial")
              for s in (("paper", "thesis") if model == "growth" else ("paper",))]  # fmt: skip
    return _unique(cells)


def _gpu_n_plan() -> list[dict]:
    """Fig 9's 'more than 4,096 particles slightly improves' with more
    trajectories: the growth model at N = 4,096, 8,192, 16,384, r = 256."""
    return [cpf("growth", n, 256) for n in (4096, 8192, 16384)]


def _unique(cells):
    seen, out = set(), []
    for c in cells:
        k = key(c)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out


PLANS = {"cpu": _cpu_plan, "gpu": _gpu_plan, "gpu-n": _gpu_n_plan}


def key(cell: dict) -> str:
    if cell["kind"] == "sir":
        return f"sir-{cell['model']}-n{cell['n']}-{cell['method']}-{cell['setup']}"
    fast = "-fast" if cell["fast_math"] else ""
    return (f"cpf-{cell['model']}-n{cell['n']}-r{cell['radius']}-{cell['setup']}-"
            f"{cell['precision']}-{cell['neighbourhood']}{fast}")  # fmt: skip


def trajectory_rows(name: str, first: int, count: int) -> dict:
    """Trajectories first ... first + count - 1 of the study's set (targets.simulate's rows)."""
    model = targets.model(name)
    runs = [model.simulate(STEPS[name], targets.trajectory_rng(SEED, name, j))
            for j in range(first, first + count)]  # fmt: skip
    return {"truth": np.stack([x for x, _ in runs]), "y": np.stack([y for _, y in runs])}


def run_part(cell: dict, first: int, count: int, backend: str, path: str) -> str:
    """One part of one cell, saved to ``path`` (arrays and metadata as JSON)."""
    data = trajectory_rows(cell["model"], first, count)
    kw = {"seed": SEED, "backend": backend, "setup": cell["setup"], "first": first}
    if cell["kind"] == "cpf":
        arrays, meta = experiments.cpf_cell(
            cell["model"], data, cell["n"], cell["radius"], fast_math=cell["fast_math"],
            precision=cell["precision"], neighbourhood=cell["neighbourhood"], **kw,
        )  # fmt: skip
    else:
        arrays, meta = experiments.sir_cell(cell["model"], data, cell["n"], cell["method"], **kw)
    arrays = {k: v for k, v in arrays.items() if k != "estimates" or first == 0}
    tmp = f"{path}.tmp.npz"
    np.savez(tmp, **arrays, metadata=json.dumps(meta))
    os.replace(tmp, path)
    return path


def load_cell(parts: list[str]) -> tuple[dict, dict]:
    """A cell from its parts (in trajectory order): arrays concatenated."""
    arrays, meta = {}, None
    for p in parts:
        with np.load(p) as f:
            m = json.loads(str(f["metadata"]))
            for k in f.files:
                if k == "metadata":
                    continue
                if k == "estimates":
                    arrays[k] = f[k]
                else:
                    arrays.setdefault(k, []).append(f[k])
        meta = (
            m if meta is None else meta | {"trajectories": meta["trajectories"] + m["trajectories"]}
        )
    arrays = {k: (v if k == "estimates" else np.concatenate(v)) for k, v in arrays.items()}
    return arrays, meta


def quality(args) -> None:
    cells = PLANS[args.plan]()
    counts = {"growth": args.growth_trajectories, "bot": args.bot_trajectories}
    cache = Path(args.cache) / args.plan
    cache.mkdir(parents=True, exist_ok=True)
    tasks, parts = [], {}
    for cell in cells:
        total = counts[cell["model"]]
        parts[key(cell)] = []
        for first in range(0, total, args.part):
            count = min(args.part, total - first)
            path = cache / f"{key(cell)}-j{first}-{count}.npz"
            parts[key(cell)].append(str(path))
            if not path.exists():
                tasks.append((cell, first, count, args.backend, str(path)))
    start = time.perf_counter()
    print(f"{len(cells)} cells, {len(tasks)} parts to run", flush=True)
    if tasks and args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(run_part, *t) for t in tasks]
            for done, future in enumerate(as_completed(futures), 1):
                print(f"[{time.perf_counter() - start:7.1f} s] {done}/{len(tasks)} "
                      f"{Path(future.result()).name}", flush=True)  # fmt: skip
    else:
        for done, t in enumerate(tasks, 1):
            run_part(*t)
            print(f"[{time.perf_counter() - start:7.1f} s] {done}/{len(tasks)} "
                  f"{Path(t[-1]).name}", flush=True)  # fmt: skip
    loaded = [load_cell(parts[key(c)]) for c in cells]
    write_tables(loaded, Path(args.out), args, time.perf_counter() - start)


def write_tables(cells, out: Path, args, seconds: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for arrays, meta in cells:
        measures = [k for k in arrays if k not in ("seeds", "estimates", "mean_B")]
        count = len(arrays["seeds"])
        frame = pd.DataFrame({k: arrays[k] for k in measures})
        frame.insert(0, "trajectory", np.arange(count))
        frame["seed"] = arrays["seeds"].astype(np.uint64).astype(str)
        for col in ("model", "filter", "method", "n", "radius", "setup", "precision",
                    "neighbourhood", "fast_math", "backend", "device"):  # fmt: skip
            frame.insert(0, col, meta.get(col, ""))
        rows.append(frame)
    runs = pd.concat(rows, ignore_index=True)
    with gzip.open(out / "runs.csv.gz", "wt", compresslevel=9) as f:
        runs.to_csv(f, index=False, float_format="%.6g")
    errors = pd.concat(
        [tables.error_table([c for c in cells if c[1]["model"] == m]) for m in targets.MODELS
         if any(c[1]["model"] == m for c in cells)], ignore_index=True,
    )  # fmt: skip
    errors.to_csv(out / "errors.csv", index=False, float_format="%.6g")
    p = paired.paired_table(cells)
    p.to_csv(out / "paired.csv", index=False, float_format="%.6g")
    paired.claims_table(p).to_csv(out / "claims.csv", index=False, float_format="%.6g")
    default = errors[(errors["setup"] != "thesis") & (errors["precision"].isin(["", "float64"]))
                     & ~errors["fast_math"].astype(bool)]  # fmt: skip
    default = default[default["radius"].isna() | (default["radius"] < default["n"] - 1)]
    tables.baselines_table(default).to_csv(out / "baselines.csv", index=False,
                                           float_format="%.6g")  # fmt: skip
    info = {"command": " ".join(sys.argv), "plan": args.plan, "backend": args.backend,
            "machine": machine(), "commit": commit(), "seconds": round(seconds, 1),
            "date": datetime.date.today().isoformat()}  # fmt: skip
    (out / f"run_{args.plan}.json").write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps(info), flush=True)


def machine() -> str:
    return f"{cpu_name()}, {os.cpu_count()} logical CPUs, {platform.platform()}"


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_reference(args) -> None:
    """The CPU filter alone at N = 4,096, every radius: median whole run of ``--repeats``."""
    model = targets.model("growth")
    data = trajectory_rows("growth", 0, 1)
    rows = []
    for radius in PAPER_R:
        run_cpf(model, data["y"][0], 4096, radius, 1)  # warm-up
        walls = [run_cpf(model, data["y"][0], 4096, radius, 2 + i).wall_seconds
                 for i in range(args.repeats)]  # fmt: skip
        rows.append({"model": "growth", "filter": "CPF", "code": "pfresample run_cpf, CPU "
                     "(NumPy, float64 scan, one process)", "n": 4096, "radius": radius,
                     "steps": STEPS["growth"], "repeats": args.repeats,
                     "wall_s_median": float(np.median(walls)), "wall_s_min": float(min(walls)),
                     "wall_s_max": float(max(walls)), "device": cpu_name(),
                     "machine": machine(), "commit": commit(),
                     "date": datetime.date.today().isoformat()})  # fmt: skip
        print(rows[-1], flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out / "cpu_reference.csv", index=False, float_format="%.6g")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--plan", choices=sorted(PLANS), default="cpu")
    q.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    q.add_argument("--growth-trajectories", type=int, default=1000)
    q.add_argument("--bot-trajectories", type=int, default=100)
    q.add_argument("--part", type=int, default=50, help="trajectories a task")
    q.add_argument("--jobs", type=int, default=1)
    q.add_argument("--cache", default="results/cpf2013_runs_cache")
    q.add_argument("--out", required=True)
    c = sub.add_parser("cpu-reference")
    c.add_argument("--repeats", type=int, default=5)
    c.add_argument("--out", required=True)
    args = p.parse_args(argv)
    quality(args) if args.what == "quality" else cpu_reference(args)


if __name__ == "__main__":
    main()
