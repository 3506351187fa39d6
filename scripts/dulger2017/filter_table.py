"""Snakemake entry point: one filter table of Dülger (2017) (Tables 5.1-5.2,
6.2-6.3, 7.2-7.3, 7.5-7.6) from its filter cells, as CSV (one row per variant
and N) and Markdown laid out as the thesis's table; pfresample_studies.dulger2017.filter_tables
does the work."""

from pfresample.backend import BACKEND_LABELS
from pfresample_studies.dulger2017 import filter_tables
from pfresample_studies.pipeline import artifacts as io
from pfresample_studies.pipeline import plots
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run


def main(snakemake, log):
    p = snakemake.params
    cells = [io.load_npz(path) for path in snakemake.input.cells]
    table = filter_tables.filter_table(cells, p.spec)
    backends = ", ".join(BACKEND_LABELS.get(b, b) for b in dict.fromkeys(table["backend"]))
    devices = ", ".join(dict.fromkeys(table["device"].astype(str)))
    first = table.iloc[0]
    note = plots.caption(
        backend=f"{backends}; device: {devices}",
        scale=p.scale,
        detail=f"model {first['model']}: {first['trajectories']} trajectories x "
        f"{first['runs']} runs per N, T = {first['steps']} steps, epsilon = 1/10",
    )
    name = snakemake.wildcards.ftable
    pipeline_tables.write_csv(table, snakemake.output.csv)
    pipeline_tables.write_text(
        filter_tables.table_markdown(table, p.spec, name, note), snakemake.output.md
    )
    log.info("%d cells, %d rows; %s", len(cells), len(table), note)


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
