#!/usr/bin/env python3
"""The cpf2013 study on one GPU in one process (Gelencsér-Horváth et al. 2013), and the CPU
filter alone on the same host. The pipeline's rule ``cpf2013_gpu_runs`` runs it (:func:`run`)
where the cells have a GPU; without one the rule draws the same files from the committed run
(``pipeline.gpu_runs``). Through Snakemake target cpf2013 at the paper's scale is start-up
bound on a GPU (89 jobs in 174.6 s on the H200), hence one process here.

``study`` (section of ``cpf2013_gpu_runs_sections``) runs target cpf2013's cells at the
paper's scale in one process (Figs 7-12's tables, Table 1, the baselines; the same study
functions the pipeline's jobs call), then the extras of the device (the former start, the
paper's kernels, the N trend with ``cpf2013_gpu_runs_n_trajectories``: cells of the kind of
target cpf2013_campaign) while ``cpf2013_gpu_runs_deadline_s`` allows, and the campaign's
paired tables of all of them (``campaign.campaign_tables``): tables/*.csv, study.json.

``cpu_reference`` times the CPU filter alone (``tables/cpu_reference.csv``): the library's
NumPy CPF (``run_filter`` with ``CPF_OPTIONS`` on the CPU, float64, one process) at N = 4,096,
every radius, the whole 100-step run, median of ``cpf2013_gpu_runs_cpu_reference_repeats`` --
the counterpart of the paper's CPU reference (its ref. [21]'s code, 16.417 s at 4,096
particles on an Intel T6570), on the GPU's own host.

The paired CPU runs are the pipeline's target ``cpf2013_campaign``.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample.filters import CPF_OPTIONS, run_filter
from pfresample.timing import cpu_name
from pfresample_studies.cpf2013 import campaign, experiments, tables, targets
from pfresample_studies.cpf2013.catalog import campaign_key as key

SEED = 2017  # config/config.yaml's seed (the cells' trajectories and filter seeds)
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


def cpu_reference(repeats: int) -> pd.DataFrame:
    """The CPU filter alone at N = 4,096, every radius: median whole run of ``repeats``."""
    model = targets.model("growth")
    data = trajectory_rows("growth", 0, 1)
    rows = []
    for radius in PAPER_R:
        y = data["y"][0]
        # seed 1 warms up; seeds 2 ... repeats + 1 are timed
        runs = [run_filter(model, y, 4096, "cellular", seed=seed, radius=radius, backend="cpu",
                           **CPF_OPTIONS) for seed in range(1, 2 + repeats)]  # fmt: skip
        walls = [run.wall_seconds for run in runs[1:]]
        rows.append({"model": "growth", "filter": "CPF", "code": "pfresample CPF (run_filter), "
                     "CPU (NumPy, float64 scan, one process)", "n": 4096, "radius": radius,
                     "steps": STEPS["growth"], "repeats": repeats,
                     "wall_s_median": float(np.median(walls)), "wall_s_min": float(min(walls)),
                     "wall_s_max": float(max(walls)), "device": cpu_name(),
                     "machine": machine(), "commit": commit(),
                     "date": datetime.date.today().isoformat()})  # fmt: skip
    return pd.DataFrame(rows)


# ------------------------------------------------------------- the study on the device


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


def study(cfg, out, cache, scale: str, backend: str = "cuda", say=print) -> None:
    """Target cpf2013 at the configured scale on one device in one process (the
    pipeline's cells and tables, without a job's start-up each): the cells at the paper's
    N (Figs 7, 8, 10, Table 1), the timing cells (Figs 11-12), Fig 9's cells at the large N
    while ``cpf2013_gpu_runs_deadline_s`` allows (each skipped where the timing cells say
    it would pass it), Fig 9 and the baselines, then the extras of ``_study_plan`` while
    the deadline allows, and the paired tables of every cell that ran; under ``out``:
    tables/ and study.json. Cells are kept in ``cache``, and a cell found there is not
    rerun."""
    from pfresample_studies.cpf2013 import catalog

    start = time.perf_counter()
    deadline = cfg["cpf2013_gpu_runs_deadline_s"]
    deadline = float("inf") if deadline is None else float(deadline)
    part, n_trajectories = cfg["cpf2013_gpu_runs_part"], cfg["cpf2013_gpu_runs_n_trajectories"]
    catalog.check_config(cfg)
    counts = {m: catalog.trajectories(cfg, m) for m in targets.MODELS}
    out, cache = Path(out), Path(cache)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    paper_cells, large_cells, extras, n_cells = _study_plan(cfg)
    setup = catalog.setup(cfg)
    log = []

    def note(text):
        line = f"[{time.perf_counter() - start:7.1f} s] {text}"
        log.append(line)
        say(line)

    def left() -> float:
        return deadline - (time.perf_counter() - start)

    def run_cells(cell_list, total: dict, part: int) -> dict:
        done = {}
        for cell in cell_list:
            paths = []
            for first in range(0, total[cell["model"]], part):
                count = min(part, total[cell["model"]] - first)
                path = cache / f"{key(cell)}-j{first}-{count}.npz"
                if not path.exists():
                    run_part(cell, first, count, backend, str(path))
                paths.append(str(path))
            done[key(cell)] = load_cell(paths)
            note(f"{key(cell)}: {total[cell['model']]} trajectories")
        return done

    def write_figure(figure, frame):  # the figure's table: rule cpf2013_gpu_figure draws it
        frame = frame.assign(scale=scale)
        frame.to_csv(out / "tables" / f"{figure}.csv", index=False)

    ran = run_cells(paper_cells, counts, part)
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
            catalog.TIMING_MODEL, data, n, catalog.radii(cfg), seed=SEED, backend=backend,
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
        ran |= run_cells([cell], counts, part)
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
        ran |= run_cells([cell], counts, part)
    trend = {}
    for cell in n_cells:
        if left() < 0:
            note(f"deadline: the N trend's {key(cell)} and after left out")
            break
        trend |= run_cells([cell], {"growth": n_trajectories}, part)
    ran |= trend  # the N trend's cells replace their 1,000-trajectory selves
    frames = campaign.campaign_tables(list(ran.values()))
    for name in ("paired", "claims", "errors"):
        frames[name].to_csv(out / "tables" / f"{name}.csv", index=False, float_format="%.6g")
    info = {"command": "snakemake cpf2013_gpu", "backend": backend, "machine": machine(),
            "commit": commit(), "seconds": round(time.perf_counter() - start, 1),
            "date": datetime.date.today().isoformat(), "log": log}  # fmt: skip
    (out / "study.json").write_text(json.dumps(info, indent=1) + "\n")
    note("done")


SECTIONS = ("study", "cpu_reference")
STUDY_TABLES = ("fig7", "fig8", "fig9", "fig10", "fig11", "fig12", "table1", "baselines",
                "paired", "claims", "errors")  # fmt: skip
FILES = {
    "study": (*(f"tables/{t}.csv" for t in STUDY_TABLES), "tables/table1.md", "study.json"),
    "cpu_reference": ("tables/cpu_reference.csv",),
}
NAMES = tuple(name for section in SECTIONS for name in FILES[section])


def run(cfg, out, scale: str, say=print) -> set[str]:
    """The sections of ``cpf2013_gpu_runs_sections`` on the GPU (and its host's CPU), into
    ``out`` (cells kept under ``out/cache``); returns the files (NAMES) written."""
    if cfg["seed"] != SEED:  # the cells' trajectories and seeds are the study's (SEED)
        raise ValueError(f"the cpf2013 GPU experiment runs on seed {SEED}, not {cfg['seed']}")
    out = Path(out)
    produced = set()
    if "study" in cfg["cpf2013_gpu_runs_sections"]:
        study(cfg, out, out / "cache", scale, say=say)
        produced.update(FILES["study"])
    if "cpu_reference" in cfg["cpf2013_gpu_runs_sections"]:
        frame = cpu_reference(int(cfg["cpf2013_gpu_runs_cpu_reference_repeats"]))
        (out / "tables").mkdir(parents=True, exist_ok=True)
        frame.to_csv(out / "tables" / "cpu_reference.csv", index=False, float_format="%.6g")
        produced.update(FILES["cpu_reference"])
    return produced
