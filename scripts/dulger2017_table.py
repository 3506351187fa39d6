"""Snakemake entry point: the tidy table of one Dülger (2017) figure or table,
results/tables/dulger2017/{figure}.csv (averages over weight sequences) and
{figure}_sequences.csv (one row per weight sequence); pfresample.tables does the work."""

from _pipeline import run

from pfresample import io, tables


def main(snakemake, log):
    cells = [tables.cell_frame(*io.load_npz(path)) for path in snakemake.input.cells]
    per_sequence, summary = tables.figure_tables(
        cells, snakemake.params.spec, snakemake.params.members
    )
    tables.write_csv(per_sequence, snakemake.output.sequences)
    tables.write_csv(summary, snakemake.output.summary)
    log.info("%d cells, %d rows", len(cells), len(summary))


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
