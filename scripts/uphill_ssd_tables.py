"""Snakemake entry point: the Uphill SSD tables of the N grid,
results/tuning/uphill_ssd/{n}.npz, one file per N.

Array ``ssd``: float64, SSD(EU(., B)) for B = 0 ... 8191 (pfresample.tuning.ssd_table),
in the layout that pfresample.tuning.load_or_compute_ssd_table reads.
"""

import time

from _pipeline import provenance, run

from pfresample import tuning
from pfresample.backend import BACKEND_LABELS


def main(snakemake, log):
    metadata = {"backend": BACKEND_LABELS["cpu"], **provenance(snakemake)}
    for n, path in zip(snakemake.params.n, snakemake.output, strict=True):
        start = time.perf_counter()
        table = tuning.ssd_table(n)
        tuning.save_ssd_table(path, table, n, metadata)
        log.info(
            "N = %d: SSD table of %d entries in %.2f s", n, table.size, time.perf_counter() - start
        )


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
