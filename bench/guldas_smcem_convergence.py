"""Güldaş (2015) Fig 4.12 at the thesis's N on a GPU: SMC-EM's cells, table and
figure on a given reference cell (issue 40; docs/guldas2015.md, "At the thesis's N,
on the GPU"; run by bench/device/guldas2015_gpu.sh).

The study's cells at each --log2-n (``filter_experiments.smcem_cell`` with the
configured filters and starts) on --reference, a reference cell
(``smcem_reference_cell``: the pipeline's results/guldas2015/smcem/reference.npz or
the committed evidence/2026-11-26-xeon2-bc8d0b2/guldas2015/smcem_cpu/reference_smcem.npz,
so that the device spends no time on the ML search), then Fig 4.12's table of them
(``fig4_12.csv``), the per-iteration mean squared Monte Carlo error
(``mc_trace.csv``) and the figure (``fig4_12.png``), under --out; a cell is saved
per N, so a run stopped by a timeout keeps its finished N.

The CPU parts are pipeline targets: EM's convergence (the exact EM traces and the
stopping rule) is ``snakemake guldas2015_exact_em``; Fig 4.12 on the CPU at N = 2^9
is ``snakemake results/tables/guldas2015/fig4_12.csv --config scale=thesis
backend=cpu guldas2015_smcem_log2_n=[9]``.

    python bench/guldas_smcem_convergence.py smcem --log2-n 11 13 15 17 19 21 --starts ml \
        --filters bootstrap --backend cuda --reference REFERENCE.npz --out DIR
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from pfresample.models.volatility import ALPHA, SIGMA
from pfresample.timing import cpu_name
from pfresample_studies.guldas2015 import figures, filter_experiments, tables
from pfresample_studies.pipeline import artifacts


def smcem(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ref = artifacts.load_npz(args.reference)
    cells = [ref]
    for e in args.log2_n:
        path = out / f"smcem_n{2**e}.npz"
        if not path.exists():
            started = time.perf_counter()
            cell = filter_experiments.smcem_cell(
                2**e, ref, iterations=args.iterations, seed=ref[1]["seed"], filters=args.filters,
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
    caption = (f"{cells[-1][1]['backend']} ({device}), {ref[1]['sequences']} sequences, "
               f"{args.iterations} EM iterations; bench/guldas_smcem_convergence.py")  # fmt: skip
    figures.smcem(table, caption).savefig(out / "fig4_12.png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="part", required=True)
    s = sub.add_parser("smcem")
    s.add_argument("--log2-n", type=int, nargs="+", default=[9, 11])
    s.add_argument("--iterations", type=int, default=100)
    s.add_argument("--starts", nargs="+", default=["ml", "truth"])
    s.add_argument("--filters", nargs="+", default=["bootstrap", "adaptive"])
    s.add_argument("--backend", default="cpu", help="cpu or cuda (the bootstrap filter only)")
    s.add_argument("--reference", required=True, help="a reference cell (.npz)")
    s.add_argument("--out", required=True)
    args = parser.parse_args()
    smcem(args)


if __name__ == "__main__":
    main()
