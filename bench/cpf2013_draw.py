#!/usr/bin/env python3
"""Draw a cpf2013 figure from its committed tidy table with the study's own
``figures.draw`` (the pipeline's cpf2013_figure rule, without the pipeline).

    python bench/cpf2013_draw.py evidence/2026-11-24-h200-018e605/cpf2013/fig7.csv \
        [--no-sir] [--note TEXT]

Writes the PNG beside the CSV. ``--no-sir`` leaves the SIR rows out (Fig 12 of a
run whose SIR times are out of date); tables of an older layout get the columns
the figures read now (Fig 11-12: ``kernel`` float64-search, the kernel they timed).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from pfresample_studies.cpf2013 import catalog, figures
from pfresample_studies.pipeline import plots


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("table", type=Path)
    p.add_argument("--no-sir", action="store_true")
    p.add_argument("--note", default="", help="added to the scale in the caption")
    args = p.parse_args(argv)
    figure = args.table.stem
    frame = pd.read_csv(args.table)
    if args.no_sir and "filter" in frame:
        frame = frame[frame["filter"] != "SIR"]
    if figure in catalog.TIMING_FIGURES and "kernel" not in frame:
        frame = frame.assign(kernel="float64-search", precision="float64",
                             neighbourhood="search")  # fmt: skip
    scale = str(frame["scale"].iloc[0]) + (f" ({args.note})" if args.note else "")
    fig = figures.draw(figure, frame, scale)
    out = args.table.with_suffix(".png")
    plots.save(fig, [out], title=catalog.TITLES[figure])
    print(out)


if __name__ == "__main__":
    main()
