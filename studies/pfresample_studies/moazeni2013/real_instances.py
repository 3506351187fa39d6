"""Moazeni (2013) chapter 3 on real instances, on one GPU host: the recurrence with its
triangle term w(i, k, j) (``dp_weighted``: the least-perimeter triangulation of a convex
polygon, float32, and the matrix-chain order, int32) at n vertices (8,192 by default, the
size Ito and Nakano's GTX 680 solved in 5.57 s), on the GPU (``dp_weighted_gpu``, the
strip order at each block size, CUDA events behind ``delay_ns``, the median and minimum
of the repeats, the upload beside) and on the best CPU code on every core
(``native/dp_weighted.c``, the median and minimum of its repeats after a warm-up call on
a small instance), each GPU matrix checked equal bit for bit to the CPU's.

Sections (``moazeni2013_ch3_real_sections``): ``real`` (``real.csv``), ``fig12`` (Fig 12
behind ``delay_ns``, ``experiments.fig12_cell``: ``fig12.csv``) and ``gpu_cell`` (chapter
3's GPU cell from n = 64, ``experiments.gpu_cell``, the strip order at every block size
and Table 1's orders, each checked against the compiled C code: ``gpu_cell.csv``). Every
row names the device, the CPU and the commit (``pipeline.jobs.git_revision``).

The pipeline's rule ``moazeni2013_ch3_real_runs`` runs :func:`run` where the cells have a
GPU; without one the rule draws the files from the committed run (``pipeline.gpu_runs``),
and ``moazeni2013_ch3_real_tables`` derives :func:`tables` from them. By hand:

    python -m pfresample_studies.moazeni2013.real_instances --out OUT
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample_studies.moazeni2013 import dp_weighted, experiments, native
from pfresample_studies.moazeni2013.runs_io import host, write_rows

INSTANCES = {"perimeter": lambda n: dp_weighted.random_polygon(n, 2013),
             "chain": lambda n: dp_weighted.random_chain(n, 2013)}  # fmt: skip
SECTIONS = ("real", "fig12", "gpu_cell")
FILES = {"real": "real.csv", "fig12": "fig12.csv", "gpu_cell": "gpu_cell.csv"}
NAMES = tuple(FILES[s] for s in SECTIONS)
# The committed run the rule draws from: its folder's marker and the folder inside it.
BASE = "ch3"
MARKER = f"{BASE}/real.csv"
FIG12_SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
CELL_BLOCKS = (16, 32, 64, 128, 256)
# The derived tables and the run's files each reads.
TABLES = {"real_speedups": ("real.csv",), "fig12": ("fig12.csv",)}


def _frame_rows(arrays: dict, meta: dict) -> list[dict]:
    keys = list(arrays)
    return [{**{k: arrays[k][i].item() for k in keys}, **meta}
            for i in range(len(arrays[keys[0]]))]  # fmt: skip


def settings(cfg) -> argparse.Namespace:
    """The run's parameters from the configuration's ``moazeni2013_ch3_real_*`` keys."""
    return argparse.Namespace(
        sections=tuple(cfg["moazeni2013_ch3_real_sections"]), n=cfg["moazeni2013_ch3_real_n"],
        families=list(INSTANCES), blocks=list(cfg["moazeni2013_ch3_real_blocks"]),
        repeats=cfg["moazeni2013_ch3_real_repeats"],
        cpu_repeats=cfg["moazeni2013_ch3_real_cpu_repeats"],
        threads=os.cpu_count() or 1, cell_n=list(cfg["moazeni2013_ch3_real_cell_n"]),
        cpu_only=False,
    )  # fmt: skip


def _device(cpu_only: bool) -> str:
    if cpu_only:
        return "none"
    import cupy

    return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()


def real(args, meta: dict, log=print) -> list[dict]:
    """The real instances on the best CPU code and (unless ``cpu_only``) the GPU."""
    from pfresample_studies.moazeni2013 import dp_weighted_gpu

    rows = []
    for family in args.families:
        warm = INSTANCES[family](200)
        native.solve_weighted(warm, args.threads)  # the build and OpenMP's start, untimed
        if not args.cpu_only:
            dp_weighted_gpu.solve(warm, min(args.blocks))  # the kernels' compile, untimed
        inst = INSTANCES[family](args.n)
        times, reference = [], None
        for _ in range(args.cpu_repeats):
            begin = time.perf_counter()
            reference = native.solve_weighted(inst, args.threads)
            times.append(time.perf_counter() - begin)
        answer = dp_weighted.answer(reference).item()
        rows.append({"family": family, "n": args.n, "side": "cpu", "code": "native/dp_weighted.c",
                     "block": 64, "threads": args.threads, "seconds": float(np.median(times)),
                     "seconds_min": min(times), "repeats": len(times), "upload_s": 0.0,
                     "checked": "reference", "answer": answer, **meta})  # fmt: skip
        log(f"CPU {family} n={args.n} {args.threads} threads: {np.median(times):.3f} s "
            f"(answer {answer})")  # fmt: skip
        for s in [] if args.cpu_only else args.blocks:
            result, gtimes, upload_s = dp_weighted_gpu.solve(inst, s, repeats=args.repeats)
            same = bool(np.array_equal(result, reference))
            rows.append({"family": family, "n": args.n, "side": "gpu",
                         "code": "kernels/" + dp_weighted_gpu.SOURCES[family][0], "block": s,
                         "threads": 0, "seconds": float(np.median(gtimes)),
                         "seconds_min": min(gtimes), "repeats": len(gtimes), "upload_s": upload_s,
                         "checked": "equal" if same else "DIFFERS",
                         "answer": dp_weighted.answer(result).item(), **meta})  # fmt: skip
            log(f"GPU {family} n={args.n} s={s}: {np.median(gtimes):.4f} s, equal to C: {same}")
    return rows


def run(args, out, log=print) -> set[str]:
    """The sections of ``args.sections`` into ``out``; returns the files (NAMES) written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    h = host()
    meta = {"device": _device(args.cpu_only), "cpu": h["cpu"], "cpu_count": h["cores"],
            "commit": h["commit"]}  # fmt: skip
    produced = set()
    if "real" in args.sections:
        write_rows(out / FILES["real"], real(args, meta, log))
        produced.add(FILES["real"])
    if args.cpu_only:
        return produced
    if "fig12" in args.sections:
        arrays, cell_meta = experiments.fig12_cell(list(FIG12_SIZES), repeats=20)
        write_rows(out / FILES["fig12"], _frame_rows(arrays, {**meta,
                   "delay_ns": cell_meta["delay_ns"]}))  # fmt: skip
        produced.add(FILES["fig12"])
        log("Fig 12 written")
    if "gpu_cell" in args.sections:
        arrays, _ = experiments.gpu_cell(args.cell_n, list(CELL_BLOCKS), ["float32", "int32"],
                                         seed=2013, repeats=5)  # fmt: skip
        write_rows(out / FILES["gpu_cell"], _frame_rows(arrays, meta))
        produced.add(FILES["gpu_cell"])
        log("GPU cell written")
    return produced


def real_speedups(real_rows: pd.DataFrame) -> pd.DataFrame:
    """Per family and GPU block size: the GPU's median time, the best CPU code's on the same
    host, the GPU over that code (ratio of medians), the upload apart, and whether the GPU's
    answer is the C code's; ``best_block`` marks each family's fastest block size."""
    rows = []
    for family, part in real_rows.groupby("family", sort=False):
        cpu = part[part["side"] == "cpu"]
        if len(cpu) != 1:
            raise ValueError(f"{family}: {len(cpu)} CPU rows, expected one")
        cpu = cpu.iloc[0]
        gpu = part[part["side"] == "gpu"].sort_values("block")
        fastest = gpu["seconds"].idxmin() if not gpu.empty else None
        for i, g in gpu.iterrows():
            rows.append({
                "family": family, "n": int(g["n"]), "block": int(g["block"]),
                "gpu_s": g["seconds"], "gpu_s_min": g["seconds_min"], "upload_s": g["upload_s"],
                "cpu_s": cpu["seconds"], "cpu_threads": int(cpu["threads"]),
                "speedup": cpu["seconds"] / g["seconds"], "best_block": i == fastest,
                "equal_to_c": g["checked"] == "equal", "device": g["device"], "cpu": cpu["cpu"],
            })  # fmt: skip
    return pd.DataFrame(rows)


def fig12_ratios(fig12: pd.DataFrame) -> pd.DataFrame:
    """Fig 12: per p the min-plus launch's and cuBLAS sgemm's times and their ratio."""
    out = fig12[["p", "minplus_s", "matmul_s"]].copy()
    out["minplus_over_matmul"] = out["minplus_s"] / out["matmul_s"]
    return out.assign(delay_ns=fig12["delay_ns"], device=fig12["device"])


def tables(runs) -> dict[str, pd.DataFrame]:
    """The derived tables (TABLES) of the run's files under ``runs``."""
    runs = Path(runs)
    return {"real_speedups": real_speedups(pd.read_csv(runs / FILES["real"])),
            "fig12": fig12_ratios(pd.read_csv(runs / FILES["fig12"]))}  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--n", type=int, default=8192, help="vertices (chain: n - 1 matrices)")
    p.add_argument("--families", nargs="+", default=list(INSTANCES), choices=list(INSTANCES))
    p.add_argument("--blocks", type=int, nargs="+", default=[32, 64, 128])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cpu-repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--chapter-cells", action="store_true", help="also the GPU cell and Fig 12")
    p.add_argument("--cpu-only", action="store_true", help="the best CPU code alone (no GPU)")
    p.add_argument("--cell-n", type=int, nargs="+", default=[64, 128, 256, 512, 1024])
    args = p.parse_args(argv)
    args.sections = SECTIONS if args.chapter_cells else ("real",)
    run(args, args.out, log=lambda m: print(m, flush=True))


if __name__ == "__main__":
    main()
