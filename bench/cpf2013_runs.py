#!/usr/bin/env python3
"""The cpf2013 study on one GPU in one process (Gelencsér-Horváth et al. 2013, issue 41):
a device-side convenience, kept because through Snakemake the target at the paper's scale
is start-up bound on a GPU (89 jobs in 174.6 s on the H200); everything it computes is a
pipeline target.

    python bench/cpf2013_runs.py study --backend cuda --out OUT       # the device
    python bench/cpf2013_runs.py cpu-reference --out DIR

``study`` runs target cpf2013 at the paper's scale in one process (its cells, Figs 7-12's
tables and figures, Table 1, the baselines; the same study functions the pipeline's jobs
call, without a job's start-up each), then the extras of the device (the former start,
the paper's kernels, the N trend with ``--n-trajectories``: cells of the kind of target
cpf2013_campaign, ``config/studies/cpf2013.yaml``) while ``--deadline`` allows, and the
campaign's paired tables of all of them (``campaign.campaign_tables``): OUT/tables,
OUT/figures, OUT/study.json.

The paired CPU runs (the former ``quality --plan cpu``) are the pipeline's target
``cpf2013_campaign``: ``snakemake --cores 2 cpf2013_campaign``
(``--config cpf2013_campaign_bot_trajectories=100`` etc. for other counts).

``cpu-reference`` times the CPU filter alone (``cpu_reference.csv``): the library's NumPy
CPF (``run_filter`` with ``CPF_OPTIONS`` on the CPU, float64, one process) at N = 4,096,
every radius, the whole 100-step run, median of ``--repeats`` -- the counterpart of the
paper's CPU reference (its ref. [21]'s code, 16.417 s at 4,096 particles on an Intel
T6570).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample.filters import CPF_OPTIONS, run_filter
from pfresample.timing import cpu_name
from pfresample_studies.cpf2013 import campaign, experiments, tables, targets
from pfresample_studies.cpf2013.campaign import key

SEED = 2017  # config/config.yaml's seed
STEPS = {"growth": 100, "bot": 24}
PAPER_N = (2048, 4096, 8192, 16384)
PAPER_R = (32, 64, 128, 256)


def cpf(model, n, r, setup="paper", precision="float64", neighbourhood="search", fast=False):
    return {"kind": "cpf", "model": model, "n": n, "radius": r, "setup": setup,
            "precision": precision, "neighbourhood": neighbourhood, "fast_math": fast}  # fmt: skip


def sir(model, n, method, setup="paper"):
    return {"kind": "sir", "model": model, "n": n, "method": method, "setup": setup}


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
    """A cell from its parts (in trajectory order): the arrays that every part
    has, concatenated; the metadata of the first with the trajectories of all."""
    arrays, meta = {}, None
    for p in parts:
        with np.load(p) as f:
            m = json.loads(str(f["metadata"]))
            for k in f.files:
                if k == "estimates":
                    arrays[k] = [f[k]]
                elif k != "metadata":
                    arrays.setdefault(k, []).append(f[k])
        count = m["trajectories"]
        meta = m if meta is None else meta | {"trajectories": meta["trajectories"] + count}
    whole = {k: np.concatenate(v) for k, v in arrays.items() if len(v) == len(parts)}
    if "estimates" in arrays:
        whole["estimates"] = arrays["estimates"][0]
    return whole, meta


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
        y = data["y"][0]
        # seed 1 warms up; seeds 2 ... repeats + 1 are timed
        runs = [run_filter(model, y, 4096, "cellular", seed=seed, radius=radius, backend="cpu",
                           **CPF_OPTIONS) for seed in range(1, 2 + args.repeats)]  # fmt: skip
        walls = [run.wall_seconds for run in runs[1:]]
        rows.append({"model": "growth", "filter": "CPF", "code": "pfresample CPF (run_filter), "
                     "CPU (NumPy, float64 scan, one process)", "n": 4096, "radius": radius,
                     "steps": STEPS["growth"], "repeats": args.repeats,
                     "wall_s_median": float(np.median(walls)), "wall_s_min": float(min(walls)),
                     "wall_s_max": float(max(walls)), "device": cpu_name(),
                     "machine": machine(), "commit": commit(),
                     "date": datetime.date.today().isoformat()})  # fmt: skip
        print(rows[-1], flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out / "cpu_reference.csv", index=False, float_format="%.6g")


# ------------------------------------------------------------- the study on the device


def study_config(quick: bool = False, cap: int | None = None) -> dict:
    """config/config.yaml with config/studies/cpf2013.yaml: the paper's scale;
    ``quick``: config/quick.yaml on top; ``cap``: at most that many
    trajectories a model (a smoke test)."""
    import yaml

    root = Path(__file__).resolve().parents[1] / "config"
    cfg = yaml.safe_load((root / "config.yaml").read_text())
    cfg |= yaml.safe_load((root / "studies" / "cpf2013.yaml").read_text())
    if quick:
        cfg |= yaml.safe_load((root / "quick.yaml").read_text())
    if cap:
        for m in targets.MODELS:
            cfg[f"cpf2013_{m}_trajectories"] = min(cap, cfg[f"cpf2013_{m}_trajectories"])
    return cfg


def _study_plan(cfg) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """(the pipeline's cells of target cpf2013 at the paper's N: CPF and SIR;
    Fig 9's cells at the large N; the extras: the former start at every
    configuration and the kernels of ``_gpu_plan``; the N trend's cells)."""
    from pfresample_studies.cpf2013 import catalog

    setup = catalog.setup(cfg)
    paper = [cpf(m, n, r, setup=setup) for m in targets.MODELS
             for n, r in catalog.configurations(cfg)]  # fmt: skip
    paper += [sir(m, n, method, setup=setup) for m in targets.MODELS
              for method in cfg["cpf2013_baselines"] for n in catalog.n_grid(cfg)]  # fmt: skip
    large = [cpf("growth", n, r, setup=setup) for n in catalog.large_n(cfg)
             for r in catalog.radii(cfg)]  # fmt: skip
    seen = {key(c) for c in paper + large}
    extras = [c for c in _gpu_plan() if key(c) not in seen]
    return paper, large, extras, _gpu_n_plan()


def study(args) -> None:
    """Target cpf2013 at the paper's scale on one device in one process (the
    pipeline's cells, tables and figures, without a job's start-up each):
    the cells at the paper's N (Figs 7, 8, 10, Table 1), the timing cells
    (Figs 11-12), Fig 9's cells at the large N while ``--deadline`` allows
    (each skipped where the timing cells say it would pass it), Fig 9 and
    the baselines, then the extras of ``_study_plan`` while the deadline
    allows, and the paired tables of every cell that ran."""
    from pfresample_studies.cpf2013 import catalog, figures
    from pfresample_studies.pipeline import plots

    start = time.perf_counter()
    cfg = study_config(args.quick, args.cap)
    if args.large_n is not None:
        cfg["cpf2013_large_n"] = args.large_n
    catalog.check_config(cfg)
    counts = {m: catalog.trajectories(cfg, m) for m in targets.MODELS}
    out, cache = Path(args.out), Path(args.cache) / "study"
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    paper_cells, large_cells, extras, n_cells = _study_plan(cfg)
    scale = "quick" if args.quick else "thesis"
    setup = catalog.setup(cfg)
    log = []

    def note(text):
        line = f"[{time.perf_counter() - start:7.1f} s] {text}"
        log.append(line)
        print(line, flush=True)

    def left() -> float:
        return args.deadline - (time.perf_counter() - start)

    def run_cells(cell_list, total: dict, part: int) -> dict:
        done = {}
        for cell in cell_list:
            paths = []
            for first in range(0, total[cell["model"]], part):
                count = min(part, total[cell["model"]] - first)
                path = cache / f"{key(cell)}-j{first}-{count}.npz"
                if not path.exists():
                    run_part(cell, first, count, args.backend, str(path))
                paths.append(str(path))
            done[key(cell)] = load_cell(paths)
            note(f"{key(cell)}: {total[cell['model']]} trajectories")
        return done

    def write_figure(figure, frame):
        frame = frame.assign(scale=scale)
        frame.to_csv(out / "tables" / f"{figure}.csv", index=False)
        fig = figures.draw(figure, frame, f"{scale} (bench/cpf2013_runs.py study)")
        plots.save(fig, [out / "figures" / f"{figure}.png"], title=catalog.TITLES[figure])

    ran = run_cells(paper_cells, counts, args.part)
    cells = list(ran.values())
    cpf_cells = [c for c in cells if c[1]["filter"] == "CPF"]
    sets = {m: trajectory_rows(m, 0, counts[m]) for m in targets.MODELS}
    n, r = catalog.trajectory_configuration(cfg)
    for figure, model in catalog.TRAJECTORY_FIGURES.items():
        cell = ran[key(cpf(model, n, r, setup=setup))]
        write_figure(figure, tables.figure_table(figure, trajectories=sets[model], cpf=[cell]))
    bot = [c for c in cells if c[1]["model"] == "bot"]
    fig10 = tables.figure_table("fig10", cpf=[c for c in bot if c[1]["filter"] == "CPF"],
                                sir=[c for c in bot if c[1]["filter"] == "SIR"])  # fmt: skip
    write_figure("fig10", fig10)
    t1 = tables.table1(catalog.PUBLISHED_TABLE1, cpf_cells, catalog.table1_configurations(cfg))
    t1.assign(scale=scale).to_csv(out / "tables" / "table1.csv", index=False)
    (out / "tables" / "table1.md").write_text(tables.table1_markdown(t1))
    note("Figs 7, 8, 10 and Table 1 written")
    # Figs 11-12: the timing cells, one an N.
    data = trajectory_rows(catalog.TIMING_MODEL, 0, 1)
    timing = []
    for n in catalog.timing_n_grid(cfg):
        timing.append(experiments.timing_cell(
            catalog.TIMING_MODEL, data, n, catalog.radii(cfg), seed=SEED, backend=args.backend,
            repeats=int(cfg["cpf2013_timing_repeats"]), kernels=catalog.timing_kernels(cfg),
            baselines=cfg["cpf2013_timing_baselines"], setup=setup,
        ))  # fmt: skip
        note(f"timing N = {n}")
    for figure in catalog.TIMING_FIGURES:
        write_figure(figure, tables.figure_table(figure, cpf=timing))
    runs_ms = {}  # the median whole run of each (N, r) of the first kernel, default build
    for arrays, meta in timing:
        for k, v in enumerate(meta["variants"]):
            if v["build"] == "default" and (v["precision"], v["neighbourhood"]) in (
                catalog.timing_kernels(cfg)[0], ("float64", "scan"),
            ):  # fmt: skip
                runs_ms[(meta["n"], v["radius"])] = 1e3 * float(
                    np.median(arrays["wall_seconds"][k])
                )
    note("Figs 11-12 written")
    # Fig 9: the paper's N, then the large N that fit before the deadline.
    for cell in large_cells:
        estimate = counts["growth"] * runs_ms.get((cell["n"], cell["radius"]), 0.0) / 1e3
        if estimate > left():
            note(f"deadline: {key(cell)} left out (about {estimate:.0f} s, {left():.0f} s left)")
            continue
        ran |= run_cells([cell], counts, args.part)
    growth = [c for c in ran.values() if c[1]["model"] == "growth"]
    fig9 = tables.figure_table("fig9", cpf=[c for c in growth if c[1]["filter"] == "CPF"],
                               sir=[c for c in growth if c[1]["filter"] == "SIR"])  # fmt: skip
    write_figure("fig9", fig9)
    errors = pd.concat([fig9, fig10], ignore_index=True)
    tables.baselines_table(errors).assign(scale=scale).to_csv(out / "tables" / "baselines.csv",
                                                              index=False)  # fmt: skip
    note("Fig 9 and the baselines written")
    # The extras, while the deadline allows: the former start and the kernels at the
    # paper's count, then the N trend with --n-trajectories.
    for cell in extras:
        if left() < 0:
            note(f"deadline: {key(cell)} and the rest of the extras left out")
            break
        ran |= run_cells([cell], counts, args.part)
    trend = {}
    for cell in n_cells:
        if left() < 0:
            note(f"deadline: the N trend's {key(cell)} and after left out")
            break
        trend |= run_cells([cell], {"growth": args.n_trajectories}, args.part)
    ran |= trend  # the N trend's cells replace their 1,000-trajectory selves
    frames = campaign.campaign_tables(list(ran.values()))
    for name in ("paired", "claims", "errors"):
        frames[name].to_csv(out / "tables" / f"{name}.csv", index=False, float_format="%.6g")
    info = {"command": " ".join(sys.argv), "backend": args.backend, "machine": machine(),
            "commit": commit(), "seconds": round(time.perf_counter() - start, 1),
            "date": datetime.date.today().isoformat(), "log": log}  # fmt: skip
    (out / "study.json").write_text(json.dumps(info, indent=1) + "\n")
    note("done")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    st = sub.add_parser("study")
    st.add_argument("--backend", default="cuda", choices=("cpu", "cuda"))
    st.add_argument("--part", type=int, default=1000, help="trajectories a part")
    st.add_argument("--n-trajectories", type=int, default=10000,
                    help="trajectories of the N trend's cells")  # fmt: skip
    st.add_argument("--deadline", type=float, default=200.0,
                    help="seconds after which the extras are left out")  # fmt: skip
    st.add_argument("--quick", action="store_true", help="config/quick.yaml's grid")
    st.add_argument("--cap", type=int, help="at most this many trajectories a model")
    st.add_argument(
        "--large-n", type=int, nargs="*", help="cpf2013_large_n instead of the config's"
    )
    st.add_argument("--cache", default="results/cpf2013_runs_cache")
    st.add_argument("--out", required=True)
    c = sub.add_parser("cpu-reference")
    c.add_argument("--repeats", type=int, default=5)
    c.add_argument("--out", required=True)
    args = p.parse_args(argv)
    {"study": study, "cpu-reference": cpu_reference}[args.what](args)


if __name__ == "__main__":
    main()
