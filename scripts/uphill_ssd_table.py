"""Snakemake entry point: the Uphill SSD table of one N, results/tuning/uphill_ssd/{n}.npz.

Array ``ssd``: float64, SSD(EU(., B)) for B = 0 ... 8191 (pfresample.tuning.ssd_table),
in the layout that pfresample.tuning.load_or_compute_ssd_table reads.
"""

import time

from _pipeline import provenance, run

from pfresample import tuning


def main(snakemake, log):
    n = int(snakemake.wildcards.n)
    start = time.perf_counter()
    table = tuning.ssd_table(n)
    log.info(
        "N = %d: SSD table of %d entries in %.2f s", n, table.size, time.perf_counter() - start
    )
    metadata = {"backend": "CPU (NumPy)", **provenance(snakemake)}
    tuning.save_ssd_table(snakemake.output[0], table, n, metadata)


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
