"""Moazeni (2013) chapter 3: the tables and figures, from the cells of cells.smk, in one
job (their start-up would cost more than their drawing); glue scripts/moazeni2013/outputs.py.

* results/tables/moazeni2013/table1.csv: Table 1's calls counted exactly at the thesis's
  sizes beside the printed ones, and our measured calls and times per kernel kind;
* results/tables/moazeni2013/table3.csv: bottom-up over divide and conquer;
* results/tables/moazeni2013/{fig12,fig13,fig15,fig16,fig17,fig18}.csv and their figures
  (PNG, PDF); the GPU's rows where the cells had a GPU (Figs 12 and 18 are empty otherwise);
* results/tables/moazeni2013/ch3_speedups.{csv,md}: the GPU over the document's baseline
  (dp.c, one thread) and over the best CPU code (dp_blocked.c, every core), the GPU's rows
  this run's or, where no GPU ran, the committed GPU cell's (labelled, not one host);
* results/tables/moazeni2013/ch4_speedups.{csv,md}: chapter 4's, GPU_PH over the thesis's
  CPU_PH and over hashset_best.c (moazeni2013_ch4_outputs below).
"""


rule moazeni2013_ch3_outputs:
    input:
        orders=[moazeni2013_ch3_order_cell(o) for o in moazeni2013_catalog.ORDERS],
        native=moazeni2013_ch3_native_cell(),
        best_cpu=moazeni2013_ch3_best_cpu_cell(),
        gpu=moazeni2013_ch3_gpu_cells()["gpu"],
        fig12=moazeni2013_ch3_gpu_cells()["fig12"],
        other_gpu=moazeni2013_catalog.other_gpu_cells(config),
        evidence=list(moazeni2013_evidence((*moazeni2013_catalog.CH3_FIGURES, "ch3_speedups")).values()),
    output:
        moazeni2013_ch3_outputs(),
    params:
        evidence=moazeni2013_evidence((*moazeni2013_catalog.CH3_FIGURES, "ch3_speedups")),
    log:
        "results/logs/tables/moazeni2013/ch3.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/moazeni2013/outputs.py"


rule moazeni2013_ch4_outputs:
    """Chapter 4: Table 5 and Figs 19, 26-40 (hashtable_figures; the GPU's figures are
    empty where no GPU ran), and ch4_speedups.{csv,md}: GPU_PH (DEK and mix) over the
    thesis's CPU_PH (the CPU cell's runs) and over hashset_best.c on every core (the
    best-CPU cell), the GPU's rows this run's or, where no GPU ran, the committed one-host
    bench run's (labelled, not one host, that host's own ratios beside)."""
    input:
        **moazeni2013_ch4_cells(),
        evidence=list(moazeni2013_evidence((*moazeni2013_catalog.CH4_FIGURES, "ch4_speedups")).values()),
    output:
        moazeni2013_ch4_outputs(),
    params:
        evidence=moazeni2013_evidence((*moazeni2013_catalog.CH4_FIGURES, "ch4_speedups")),
    log:
        "results/logs/tables/moazeni2013/ch4.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/moazeni2013/outputs.py"


rule moazeni2013_ch5_outputs:
    """Chapter 5: Tables 7-9, Fig 45 and the reuse figure (tv_figures; Tables 8-9 and
    the reuse figure are empty where no GPU ran)."""
    input:
        ch5=moazeni2013_ch56_cells()["ch5"],
        evidence=list(moazeni2013_evidence(moazeni2013_catalog.CH5_FIGURES).values()),
    output:
        moazeni2013_outputs(moazeni2013_catalog.CH5_TABLES, moazeni2013_catalog.CH5_FIGURES),
    params:
        evidence=moazeni2013_evidence(moazeni2013_catalog.CH5_FIGURES),
        scale=SCALE,
    log:
        "results/logs/tables/moazeni2013/ch5.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/moazeni2013/outputs.py"


rule moazeni2013_ch6_outputs:
    """Chapter 6: Table 10, Figs 49-53 and the quality, parameter, peer and check tables
    (tv_figures; the GPU's are empty where no GPU ran), and ch6_speedups.{csv,md}: the GPU
    over tv.c on one thread and over tv_best.c on every core (the GPU's rows this run's or,
    where no GPU ran, Fig 53's committed table's, labelled, not one host)."""
    input:
        cpu=moazeni2013_ch56_cells()["cpu"],
        native=moazeni2013_ch56_cells()["native"],
        peer=moazeni2013_ch56_cells()["peer"],
        best_cpu=moazeni2013_ch56_cells()["best_cpu"],
        gpu=moazeni2013_ch56_cells()["gpu"],
        evidence=list(moazeni2013_evidence((*moazeni2013_catalog.CH6_FIGURES, "ch6_speedups")).values()),
    output:
        moazeni2013_outputs(moazeni2013_catalog.CH6_TABLES, moazeni2013_catalog.CH6_FIGURES),
    params:
        evidence=moazeni2013_evidence((*moazeni2013_catalog.CH6_FIGURES, "ch6_speedups")),
    log:
        "results/logs/tables/moazeni2013/ch6.log",
    threads: 1
    resources:
        mem_mb=2048,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/moazeni2013/outputs.py"


rule moazeni2013_ch7_outputs:
    """Chapter 7: Tables 11-13, the planted recall and Figs 58, 60, 62-64 (mddtw_figures;
    the timing figures are empty where no GPU ran), and ch7_speedups.{csv,md}: the GPU over
    dtw.c on one thread and over dtw_best.c on every core (the GPU's rows this run's timing
    cell's, the kernel alone, or, where no GPU ran, the committed one-host bench run's, the
    kernel and the top-p task, labelled, not one host)."""
    input:
        **moazeni2013_ch7_cells(),
        evidence=list(moazeni2013_evidence((*moazeni2013_catalog.CH7_FIGURES, "ch7_speedups")).values()),
    output:
        moazeni2013_outputs(moazeni2013_catalog.CH7_TABLES, moazeni2013_catalog.CH7_FIGURES),
    params:
        evidence=moazeni2013_evidence((*moazeni2013_catalog.CH7_FIGURES, "ch7_speedups")),
        scale=SCALE,
    log:
        "results/logs/tables/moazeni2013/ch7.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/moazeni2013/outputs.py"


rule moazeni2013_ch4_byte_order_spread_table:
    """Chapter 4's hashes in each byte order on the configured preload (moazeni2013_ch4_preload
    keys, normal and uniform, seed `seed`): buckets used, largest chain and the mean walk of
    a search, NumPy's and the C++ table's (byte_orders.py), CPU, no cell; glue
    scripts/moazeni2013/byte_orders.py. Target moazeni2013_ch4_byte_order_spread, not in `all`."""
    output:
        "results/tables/moazeni2013/ch4_byte_orders.csv",
    params:
        preload=config["moazeni2013_ch4_preload"],
        buckets=moazeni2013_workloads.BUCKETS,
        seed=config["seed"],
        scale=SCALE,
    log:
        "results/logs/tables/moazeni2013/ch4_byte_orders.log",
    benchmark:
        "results/benchmarks/tables/moazeni2013/ch4_byte_orders.tsv"
    threads: 2
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/moazeni2013/byte_orders.py"
