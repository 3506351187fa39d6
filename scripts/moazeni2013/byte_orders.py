"""Snakemake glue of Moazeni (2013)'s byte-order table (rule
moazeni2013_ch4_byte_order_spread_table, workflow/rules/moazeni2013/outputs.smk):
pfresample_studies.moazeni2013.byte_orders' table, written atomically to
results/tables/moazeni2013/ch4_byte_orders.csv."""

from pfresample_studies.moazeni2013 import byte_orders
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run


def byte_orders_table(snakemake, log):
    p = snakemake.params
    frame = byte_orders.byte_order_table(preload=p.preload, buckets=p.buckets, seed=p.seed,
                                         threads=snakemake.threads, log=log)  # fmt: skip
    frame["scale"] = p.scale
    pipeline_tables.write_csv(frame, snakemake.output[0])
    log.info("ch4_byte_orders: %d rows", len(frame))


run(byte_orders_table, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
