"""Snakemake entry point: one figure of Dülger (2017) chapters 5-6 (or Table 6.1
drawn as a table) from its tidy table; pfresample.figures draws it."""

import pandas as pd
from _pipeline import run

from pfresample import figures


def main(snakemake, log):
    p = snakemake.params
    table = pd.read_csv(snakemake.input.table)
    devices = ", ".join(sorted(set(table["device"].dropna().astype(str)))) or "unknown"
    caption = figures.caption(
        backend=f"{p.backend}; device: {devices}",
        scale=p.scale,
        detail=f"{p.sequences} weight sequences x K = {p.draws} draws per N",
    )
    fig = figures.dulger2017_figure(table, p.spec, p.distributions, caption=caption)
    title = f"Dülger (2017) {snakemake.wildcards.figure}: {p.spec['title']}"
    figures.save(fig, [snakemake.output.png, snakemake.output.pdf], title=title)
    log.info("caption: %s", caption)


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
