"""The Dülger filter cells with their runs batched (``pfresample.run_filters``,
``filters.sir_batch``) against the same cells run one at a time, and what that
does to the GPU-seconds of the whole thesis-scale study.

    python bench/filter_batching.py measure --out DIR      # on a GPU (a few minutes)
    python bench/filter_batching.py project --cells DIR/cells.csv --out DIR

``measure`` runs a sample of the filter tables' cells at thesis scale (16
trajectories x 100 runs of the catalog's models) twice: every run made alone
and timed (``timed_runs`` None: what the pipeline did before batching), and
as the pipeline now runs them (the first ``filter_timed_runs`` runs of each
trajectory alone and timed, the rest side by side). It records each cell's
seconds both ways and whether the RMSE, B and estimates of every run are equal
bit for bit (``cells.csv``); and the seconds a run at each batch width for two
cells (``widths.csv``).

``project`` takes the GPU jobs of the last four-GPU run's projection
(evidence/2026-11-26-h100x4-45fdae3/dulger2017_thesis_scale/projection.csv:
every GPU job of ``snakemake dulger2017 --resources gpu=4 --config
scale=thesis``, measured or expected, one H100 each), scales each filter table
cell by the measured after/before ratio of its model and N (the median over the
sampled variants; 1 where N is too large to batch), and schedules the result
on four GPUs (``pipeline.busy.list_schedule``, the plan's priorities): the
GPU-seconds per rule before and after, the projected wall time, and the bound
that no batching moves, the GPU-seconds of the cells whose single run fills
the GPU.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

CONFIG = Path(__file__).resolve().parents[1] / "config" / "studies" / "dulger2017.yaml"
SAMPLE_MODELS = ("growth", "radar-scenario2")
SAMPLE_VARIANTS = ("systematic", "metropolis")
SAMPLE_LOG2_N = (14, 16, 18)
SEED = yaml.safe_load((CONFIG.parents[1] / "config.yaml").read_text())["seed"]


def _catalog():
    from pfresample_studies.dulger2017.experiments import Variant

    config = yaml.safe_load(CONFIG.read_text())
    variants = {
        "systematic": Variant("systematic", "systematic"),
        "metropolis": Variant("metropolis", "metropolis"),
    }
    return config, variants


def measure(out: Path) -> None:
    import cupy

    from pfresample.filters import sir_batch
    from pfresample.resampling.registry import get_method
    from pfresample_studies.dulger2017 import filter_experiments as fe

    config, variants = _catalog()
    J, R = config["filter_trajectories"], config["filter_runs"]
    timed = config["filter_timed_runs"]
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    rows = []
    for name in SAMPLE_MODELS:
        spec = config["filter_models"][name]
        trajectories, _ = fe.make_trajectories(spec, J, SEED)
        for variant_name in SAMPLE_VARIANTS:
            variant = variants[variant_name]
            for e in SAMPLE_LOG2_N:
                n = 2**e
                cells = {}
                for label, timed_runs in (("before", None), ("after", timed)):
                    settings = fe.FilterSettings(runs=R, seed=SEED, timed_runs=timed_runs)
                    start = time.perf_counter()
                    cells[label], _ = fe.run_filter_cell(
                        name, spec, variant, n, trajectories, settings
                    )
                    cupy.cuda.Device().synchronize()
                    cells[label + "_s"] = time.perf_counter() - start
                equal = all(
                    np.array_equal(cells["before"][k], cells["after"][k])
                    for k in ("rmse", "B", "estimates", "seeds")
                )
                row = {
                    "model": name, "variant": variant_name, "n": n, "trajectories": J,
                    "runs": R, "timed_runs": timed, "before_s": cells["before_s"],
                    "after_s": cells["after_s"], "ratio": cells["after_s"] / cells["before_s"],
                    "equal": equal, "device": device,
                }  # fmt: skip
                rows.append(row)
                print(
                    f"{name} {variant_name} N=2^{e}: {row['before_s']:.2f} s -> "
                    f"{row['after_s']:.2f} s ({row['ratio']:.3f}), equal {equal}",
                    flush=True,
                )
    pd.DataFrame(rows).to_csv(out / "cells.csv", index=False)

    # Seconds a run at each batch width: 5 repeats of 64 runs, median.
    widths = []
    for name, variant_name, e in (
        ("radar-scenario2", "systematic", 14),
        ("growth", "metropolis", 16),
    ):
        spec = config["filter_models"][name]
        trajectories, _ = fe.make_trajectories(spec, 1, SEED)
        y = trajectories["y"][0]
        m = get_method(variants[variant_name].method)
        seeds = list(range(64))
        for width in (1, 4, 16, 64):
            sir_batch.run_sir_batch(fe.make_model(spec), [y] * 64, 2**e, m, seeds, width=width)
            times = []
            for _ in range(5):
                start = time.perf_counter()
                sir_batch.run_sir_batch(fe.make_model(spec), [y] * 64, 2**e, m, seeds, width=width)
                times.append((time.perf_counter() - start) / 64)
            widths.append(
                {
                    "model": name,
                    "variant": variant_name,
                    "n": 2**e,
                    "width": width,
                    "s_per_run": statistics.median(times),
                    "min_s": min(times),
                    "max_s": max(times),
                    "device": device,
                }  # fmt: skip
            )
            print(
                f"{name} {variant_name} 2^{e} width {width}: {widths[-1]['s_per_run']:.2e} s a run"
            )
    pd.DataFrame(widths).to_csv(out / "widths.csv", index=False)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    (out / "device.txt").write_text(f"{device}\ncommit {commit.stdout.strip()}\n")


def project(cells_csv: Path, before_csv: Path, out: Path, gpus: int) -> None:
    from pfresample.cuda.geometry import batch_width
    from pfresample_studies.pipeline.busy import list_schedule

    config, _ = _catalog()
    runs = config["filter_trajectories"] * (config["filter_runs"] - config["filter_timed_runs"])
    cells = pd.read_csv(cells_csv)
    if not cells["equal"].all():
        raise SystemExit("a batched cell differs from the cell run one at a time: no projection")
    cells["kind"] = cells["model"].str.split("-").str[0]  # growth, radar
    factor = cells.groupby(["kind", "n"])["ratio"].median()
    jobs = pd.read_csv(before_csv)

    def scaled(row) -> tuple[float, str]:
        if row.rule != "filter_cell":
            return row.seconds, "unchanged"
        model, _, n = row.job.split("/")[1:4]
        n = int(n.removeprefix("n"))
        kind = model.split("-")[0]
        if (kind, n) in factor.index:
            return row.seconds * factor[(kind, n)], f"x {factor[(kind, n)]:.3f} (measured)"
        if batch_width(n, runs) == 1:
            return row.seconds, "not batched: one run fills the GPU"
        raise SystemExit(f"no measured ratio for {kind} at N = {n}: measure it")

    values = [scaled(row) for row in jobs.itertuples()]
    jobs["after_s"] = [v[0] for v in values]
    jobs["after_source"] = [v[1] for v in values]
    per_rule = jobs.groupby("rule")[["seconds", "after_s"]].sum()
    per_rule.loc["all GPU jobs"] = per_rule.sum()
    jobs.to_csv(out / "projection_after.csv", index=False, float_format="%.2f")
    per_rule.to_csv(out / "gpu_seconds_by_rule.csv", float_format="%.1f")
    wall = {}
    for column in ("seconds", "after_s"):
        wall[column], _ = list_schedule(
            zip(jobs["job"], jobs[column], jobs["priority"], strict=True), gpus
        )
    n = jobs["job"].str.extract(r"/n(\d+)$")[0].astype(float)
    unbatched = jobs["rule"].eq("filter_cell") & (n >= 2**20)
    big = float(jobs.loc[unbatched, "after_s"].sum())
    resample = float(jobs.loc[jobs["rule"].str.startswith("resample"), "after_s"].sum())
    lines = [
        f"GPU-seconds of the thesis run, before -> after batching: "
        f"{per_rule.loc['all GPU jobs', 'seconds']:.0f} -> "
        f"{per_rule.loc['all GPU jobs', 'after_s']:.0f} s",
        *(
            f"  {rule}: {r.seconds:.0f} -> {r.after_s:.0f} s"
            for rule, r in per_rule.drop("all GPU jobs").iterrows()
        ),
        f"On {gpus} GPUs with no gap between jobs (list schedule by the plan's priorities): "
        f"{wall['seconds']:.0f} s -> {wall['after_s']:.0f} s; lower bound "
        f"{per_rule.loc['all GPU jobs', 'after_s'] / gpus:.0f} s",
        f"Bound no batching moves: the filter cells at N >= 2^20 (a run fills the GPU) "
        f"{big:.0f} GPU-s and the resampling cells {resample:.0f} GPU-s: "
        f"{(big + resample) / gpus:.0f} s on {gpus} GPUs at 100 % busy, "
        f"{(big + resample) / gpus / 0.85:.0f} s at 85 %",
    ]
    (out / "projection_after.md").write_text("\n".join(f"* {line}" for line in lines) + "\n")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", required=True)
    p = sub.add_parser("project")
    p.add_argument("--cells", required=True)
    p.add_argument(
        "--before",
        default="evidence/2026-11-26-h100x4-45fdae3/dulger2017_thesis_scale/projection.csv",
    )
    p.add_argument("--gpus", type=int, default=4)
    p.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.command == "measure":
        measure(out)
    else:
        project(Path(args.cells), Path(args.before), out, args.gpus)


if __name__ == "__main__":
    main()
