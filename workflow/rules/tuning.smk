"""Tuning artifacts: the Uphill SSD table SSD(EU(., B)), B = 0 ... 8191, per N
(thesis §6.4, Algorithms 6.4-6.5), computed once and read by the experiments.

One job writes the tables of every N of the grid: a job per N spent a third
of its time starting Python (19 jobs at thesis scale, 30% overhead measured
on the H200 host)."""


rule uphill_ssd_tables:
    output:
        uphill_ssd_tables(),
    params:
        n=n_grid(),
    log:
        "results/logs/tuning/uphill_ssd.log",
    benchmark:
        "results/benchmarks/tuning/uphill_ssd.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: ssd_mem_mb(max(n_grid())),
    conda:
        CONDA_ENV
    script:
        "../../scripts/uphill_ssd_tables.py"
