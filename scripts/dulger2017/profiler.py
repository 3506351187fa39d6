"""Entry point of the target dulger2017_profiler (Snakemake), and the same
from the command line where Snakemake is not installed:

    python scripts/dulger2017/profiler.py --out DIR [--config key=value ...]
    python scripts/dulger2017/profiler.py --out DIR --from-raw   # tables from DIR's raw files

Runs each build's cells (pfresample_studies.dulger2017.profiler.plan) under
Nsight Compute, one ncu process per build (scripts/dulger2017/profile_cell.py
is the profiled program), then writes Tables 5.3-5.5 and the data and figure
of Figs 6.24-6.26. Without ncu on PATH it says so and exits non-zero before
writing anything.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

from pfresample_studies.dulger2017 import profiler

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROGRAM = HERE / "profile_cell.py"


def device_name() -> str:
    """The name of the GPU the cells run on (CUDA_VISIBLE_DEVICES's first)."""
    import cupy

    return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()


def measure(cfg, out: Path, ncu: str, log) -> None:
    """plan.json and one raw ncu CSV per build in ``out``."""
    from pfresample_studies.pipeline import tables as pipeline_tables

    cells = profiler.plan(cfg)
    version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout
    meta = {
        "device": device_name(),
        "ncu": version.strip().splitlines()[-1] if version.strip() else "",
        "distribution": cfg["profiler_distribution"],
        "seed": cfg["seed"],
        "cells": profiler.cells_to_json(cells),
    }
    out.mkdir(parents=True, exist_ok=True)
    plan_path = out / profiler.PLAN
    pipeline_tables.write_text(json.dumps(meta, indent=1), plan_path)
    log(f"{len(cells)} cells on {meta['device']}, {meta['ncu']}")
    for loads in profiler.builds(cells):
        target = out / profiler.raw_name(loads)
        partial = target.with_name(target.name + ".part")
        program = [sys.executable, str(PROGRAM), "--plan", str(plan_path), "--loads", loads,
                   "--distribution", meta["distribution"], "--seed", str(meta["seed"])]  # fmt: skip
        cmd = profiler.ncu_command(ncu, loads, cells, partial, program)
        log(" ".join(cmd))
        subprocess.run(cmd, check=True, cwd=ROOT)
        partial.replace(target)


def build(out: Path, scale: str, log, figure: bool = True) -> None:
    """profiler.csv, profiler.md and the figure from ``out``'s raw files."""
    import pandas as pd

    from pfresample_studies.pipeline import plots
    from pfresample_studies.pipeline import tables as pipeline_tables

    meta = json.loads((out / profiler.PLAN).read_text())
    cells = profiler.cells_from_json(meta["cells"])
    frames = []
    for loads in profiler.builds(cells):
        text = (out / profiler.raw_name(loads)).read_text()
        frames.append(profiler.join(cells, profiler.parse_ncu_csv(text), loads))
    tables = profiler.build_tables(pd.concat(frames, ignore_index=True))
    note = plots.caption(
        backend=f"CUDA, Nsight Compute ({meta['ncu']}); device: {meta['device']}",
        scale=scale,
        detail=f"{meta['distribution']}, one launch per weight sequence and cell",
    )
    pipeline_tables.write_csv(profiler.tidy(tables), out / profiler.TABLE)
    pipeline_tables.write_text(profiler.markdown(tables, note), out / profiler.MARKDOWN)
    if figure:
        fig = profiler.profiler_figure(tables["fig6_24_26"], note)
        plots.save(fig, [out / profiler.FIGURE], title="Dülger (2017) Figs 6.24-6.26")
    log(f"tables of {len(cells)} cells written to {out}")


def snakemake_main(snakemake, log, ncu: str):
    from pfresample_studies.pipeline import devices

    out = Path(snakemake.output.plan).parent
    devices.pin_job(snakemake.params.devices)
    measure(snakemake.params.cfg, out, ncu, log.info)
    build(out, snakemake.params.scale, log.info)


def config_from_files(overrides) -> dict:
    """config/config.yaml and config/studies/dulger2017.yaml with
    ``key=value`` overrides (YAML values), checked as the Snakefile checks
    the profiler's keys."""
    import yaml

    from pfresample_studies.dulger2017 import catalog

    cfg = {}
    for path in (ROOT / "config/config.yaml", ROOT / "config/studies/dulger2017.yaml"):
        cfg.update(yaml.safe_load(path.read_text()))
    for item in overrides:
        key, _, value = item.partition("=")
        cfg[key] = yaml.safe_load(value)
    catalog.check_profiler(cfg, catalog.variants(cfg))
    return cfg


def cli_main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="folder of every output")
    parser.add_argument("--config", nargs="*", default=[], help="key=value overrides")
    parser.add_argument("--from-raw", action="store_true", help="tables from --out's raw files")
    parser.add_argument("--no-figure", action="store_true", help="tables only (no matplotlib)")
    args = parser.parse_args(argv)
    if not args.from_raw:
        try:
            ncu = profiler.find_ncu()
        except profiler.NcuMissing as exc:
            print(exc, file=sys.stderr)
            return 2
        measure(config_from_files(args.config), args.out, ncu, print)
    build(args.out, "profiler (config/studies/dulger2017.yaml)", print, figure=not args.no_figure)
    return 0


if "snakemake" in globals():
    from functools import partial

    from pfresample_studies.pipeline.jobs import run

    # Nothing is written, not even the log's first line, when ncu is missing.
    try:
        NCU = profiler.find_ncu()
    except profiler.NcuMissing as exc:
        sys.exit(str(exc))
    run(partial(snakemake_main, ncu=NCU), snakemake)  # noqa: F821 -- injected by Snakemake
elif __name__ == "__main__":
    sys.exit(cli_main())
