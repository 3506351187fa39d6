"""Tuning artifacts: the Uphill SSD table SSD(EU(., B)), B = 0 ... 8191, per N
(thesis §6.4, Algorithms 6.4-6.5), computed once and read by the experiments."""


rule uphill_ssd_table:
    output:
        "results/tuning/uphill_ssd/{n}.npz",
    log:
        "results/logs/tuning/uphill_ssd/{n}.log",
    benchmark:
        "results/benchmarks/tuning/uphill_ssd/{n}.tsv"
    threads: 1
    resources:
        mem_mb=ssd_mem_mb,
    conda:
        CONDA_ENV
    script:
        "../../scripts/uphill_ssd_table.py"
