#!/usr/bin/env python3
"""Derived tables of the cpf2013 GPU run: the speed-ups, fast-math ratios and scaling that
docs/cpf2013.md quotes, computed from the run's own tables (:mod:`.gpu_runs`' files, this
run's or the committed run's) so that no number in the doc is worked out by hand; the
pipeline's rule ``cpf2013_gpu_tables`` (target ``cpf2013_gpu``) writes them into
results/tables/cpf2013/gpu/, each with its ``gpu_source`` (``pipeline.gpu_runs``), from the
run's ``tables/{fig10,fig11,fig12,table1,cpu_reference}.csv``:

* ``cpu_speedup.csv``: the paper's 164x (its ref. [21]'s CPU code, 16.417 s
  at N = 4,096, over its 100 ms GPU run) beside ours: the CPU reference's
  median whole run at N = 4,096 over the GPU's median whole run of each
  kernel, build and radius at the same N (timing cells, Figs 11-12). The two
  sides are separate runs on different processors: a ratio of medians, with
  the CPU's min-max and the GPU's quartiles as their spread, no paired
  interval.
* ``fast_math.csv``: per kernel and radius, the paired fast-math ratio
  (``fig11.csv``'s ``fast_math_ratio``: the geometric mean over the 21 repeats
  of fast-math step / default step, the two builds taking turns run by run,
  with its 99% interval) at its smallest and largest over N, over the paper's
  N (2,048-16,384) and over all N; ``saved`` is 1 - ratio.
* ``scaling.csv``: per kernel, build and radius, the median step time at each
  N and its ratio to the step time at N / 2 (2 where the time is linear in N).
* ``sir_ratio.csv``: per N of the timing cells, the CPF's median step and
  whole-run times (each kernel, build, radius) over the SIR baselines'
  measured in the same cell (``fig12.csv``).
* ``published.csv``: the paper's abstract and Table 1 times against ours at
  the same configurations (published / measured).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pfresample_studies.pipeline import gpu_runs

# The paper's CPU reference and its GPU run at N = 4,096 (the text after Fig 12).
PAPER_CPU_S = 16.417
PAPER_GPU_S = 0.100
PAPER_N = (2048, 4096, 8192, 16384)
REFERENCE_N = 4096
GPU_RUN = "cpf2013/tables/fig11.csv"  # marks the committed GPU run
TABLES = ("cpu_speedup", "fast_math", "scaling", "sir_ratio", "published")


def cpu_speedup(cpu: pd.DataFrame, timing: pd.DataFrame) -> pd.DataFrame:
    gpu = timing[(timing["filter"] == "CPF") & (timing["n"] == REFERENCE_N)]
    rows = [{"source": "published", "n": REFERENCE_N, "radius": pd.NA,
             "cpu": "ref. [21]'s CPU code, Intel T6570 (2 cores, 2.1 GHz)",
             "cpu_wall_s": PAPER_CPU_S, "gpu": "GTX 550 Ti, -arch=sm_20 -use_fast_math",
             "gpu_wall_ms": PAPER_GPU_S * 1e3, "speedup": PAPER_CPU_S / PAPER_GPU_S}]  # fmt: skip
    for c in cpu.itertuples():
        for g in gpu[gpu["radius"] == c.radius].itertuples():
            rows.append({"source": "measured", "n": REFERENCE_N, "radius": c.radius,
                         "cpu": f"{c.code}; {c.machine}", "cpu_wall_s": c.wall_s_median,
                         "cpu_wall_s_min": c.wall_s_min, "cpu_wall_s_max": c.wall_s_max,
                         "cpu_repeats": c.repeats, "gpu": f"{g.device}, {g.kernel}, {g.build}",
                         "kernel": g.kernel, "build": g.build, "gpu_wall_ms": g.wall_ms,
                         "gpu_wall_ms_q25": g.wall_ms_q25, "gpu_wall_ms_q75": g.wall_ms_q75,
                         "gpu_repeats": g.repeats,
                         "speedup": c.wall_s_median / (g.wall_ms * 1e-3)})  # fmt: skip
    return pd.DataFrame(rows)


def _extremes(part: pd.DataFrame, label: str) -> dict:
    lo = part.loc[part["fast_math_ratio"].idxmin()]
    hi = part.loc[part["fast_math_ratio"].idxmax()]
    out = {}
    for name, row in (("min", lo), ("max", hi)):
        out |= {f"{label}_{name}_n": int(row["n"]), f"{label}_{name}": row["fast_math_ratio"],
                f"{label}_{name}_low": row["fast_math_ratio_low"],
                f"{label}_{name}_high": row["fast_math_ratio_high"],
                f"{label}_{name}_saved": 1.0 - row["fast_math_ratio"]}  # fmt: skip
    return out


def fast_math(timing: pd.DataFrame) -> pd.DataFrame:
    fast = timing[(timing["filter"] == "CPF") & (timing["build"] == "fast-math")]
    rows = []
    for (kernel, radius), part in fast.groupby(["kernel", "radius"]):
        row = {"kernel": kernel, "radius": int(radius), "cells": len(part),
               "median_ratio": part["fast_math_ratio"].median()}  # fmt: skip
        row |= _extremes(part[part["n"].isin(PAPER_N)], "paper_n")
        row |= _extremes(part, "all_n")
        rows.append(row)
    return pd.DataFrame(rows)


def scaling(timing: pd.DataFrame) -> pd.DataFrame:
    cpf = timing[timing["filter"] == "CPF"].sort_values(["kernel", "build", "radius", "n"])
    cpf = cpf[["kernel", "build", "radius", "n", "step_us", "wall_ms"]].copy()
    cpf["step_ratio_to_half_n"] = cpf.groupby(["kernel", "build", "radius"])["step_us"].transform(
        lambda s: s / s.shift(1)
    )
    return cpf.reset_index(drop=True)


def sir_ratio(timing: pd.DataFrame, wall: pd.DataFrame) -> pd.DataFrame:
    sir = wall[wall["filter"] == "SIR"]
    cpf = timing[timing["filter"] == "CPF"]
    merged = cpf.merge(sir[["n", "method", "step_us", "wall_ms"]], on="n", suffixes=("", "_sir"))
    columns = ["n", "kernel", "build", "radius", "method_sir", "step_us", "step_us_sir",
               "wall_ms", "wall_ms_sir"]  # fmt: skip
    out = merged[columns].rename(columns={"method_sir": "sir_method"})
    out = out.assign(step_ratio=out["step_us"] / out["step_us_sir"],
                     wall_ratio=out["wall_ms"] / out["wall_ms_sir"])  # fmt: skip
    return out.sort_values(["sir_method", "kernel", "build", "radius", "n"], ignore_index=True)


def published(timing: pd.DataFrame, fig10: pd.DataFrame, table1: pd.DataFrame) -> pd.DataFrame:
    """The abstract's four times against ours at N = 16,384, r = 256."""
    cpf = timing[(timing["filter"] == "CPF") & (timing["n"] == 16384) & (timing["radius"] == 256)]
    bot = fig10[(fig10["filter"] == "CPF") & (fig10["n"] == 16384) & (fig10["radius"] == 256)]
    ours = table1[(table1["source"] != "published") & (table1["particles"] == 16384)
                  & table1["model"].str.startswith("BOT")]  # fmt: skip
    rows = []
    for g in cpf.itertuples():
        what = f"{g.kernel}, {g.build}, median of {g.repeats}"
        rows.append({"quantity": "growth: kernel time per step (us)", "published": 266.0,
                     "measured": g.step_us, "how": what, "table": "fig11.csv"})  # fmt: skip
        rows.append({"quantity": "growth: whole run, 100 steps (ms)", "published": 124.0,
                     "measured": g.wall_ms, "how": what, "table": "fig11.csv"})  # fmt: skip
    for b in bot.itertuples():
        how = f"float64-search, default, mean over {b.trajectories} runs"
        rows.append({"quantity": "BOT: kernel time per step (us)", "published": 411.0,
                     "measured": b.step_us, "table": "fig10.csv", "how": how})  # fmt: skip
    for t in ours.itertuples():
        rows.append({"quantity": "BOT: whole run, 24 steps (ms)", "published": 77.0,
                     "measured": t.time_ms, "how": "float64-search, default, median",
                     "table": "table1.csv"})  # fmt: skip
    out = pd.DataFrame(rows)
    return out.assign(published_over_measured=out["published"] / out["measured"])


def tables(runs: Path) -> dict[str, pd.DataFrame]:
    """The derived tables (TABLES) from the GPU run's files under ``runs`` (with their
    ``sources.csv``), each labelled with the sources of the tables it read."""
    runs = Path(runs)
    sources = gpu_runs.read_sources(runs / gpu_runs.SOURCES)

    def read(name):
        return pd.read_csv(runs / "tables" / f"{name}.csv")

    timing, wall = read("fig11"), read("fig12")
    out = {
        "cpu_speedup": (cpu_speedup(read("cpu_reference"), timing), ["cpu_reference", "fig11"]),
        "fast_math": (fast_math(timing), ["fig11"]),
        "scaling": (scaling(timing), ["fig11"]),
        "sir_ratio": (sir_ratio(timing, wall), ["fig11", "fig12"]),
        "published": (published(timing, read("fig10"), read("table1")),
                      ["fig11", "fig10", "table1"]),
    }  # fmt: skip
    return {name: gpu_runs.labelled(frame, sources, [f"tables/{t}.csv" for t in names])
            for name, (frame, names) in out.items()}  # fmt: skip
