"""Güldaş (2015): two of the thesis's claims checked on the CPU (docs/guldas2015.md). The
grids are config/studies/guldas2015.yaml; the study's code is
studies/pfresample_studies/guldas2015/{log32,exact_em}.py and its glue
scripts/guldas2015/checks.py.

* results/guldas2015/log32/{exact,draws}/{target}/n{n}.npz: float32 stability on the
  thesis's kernel (§4.1.4, Appendix A's log-domain scan), one job per particle-weight set
  and N: the exact distribution multinomial resampling draws from through each scan
  (exact), and multinomial and systematic resampled in float32, log32 and float64 on the
  same particle sets (draws);
* results/tables/guldas2015/log32/{exact,draws}.csv: their tables (target guldas2015_log32);
* results/guldas2015/exact_em/s{m}.npz: exact EM on Fig 4.12's sequence m from each start
  of guldas2015_exact_em_starts, one job per sequence;
* results/tables/guldas2015/exact_em/{ml_points,exact_em,exact_em_convergence}.csv: EM's
  convergence, with the ML points of Fig 4.12's reference cell (target guldas2015_exact_em).
"""

GULDAS2015_CHECKS_SCRIPT = "../../../scripts/guldas2015/checks.py"


rule guldas2015_log32_cell:
    output:
        "results/guldas2015/log32/{log32_part}/{target}/n{n}.npz",
    wildcard_constraints:
        log32_part="exact|draws",
        n=r"\d+",
    params:
        seed=config["seed"],
        sets=lambda wildcards: guldas2015_catalog.log32_exact_sets(config, int(wildcards.n)),
        replicates=config["guldas2015_log32_draws_replicates"],
        scale=SCALE,
    log:
        "results/logs/guldas2015/log32/{log32_part}/{target}/n{n}.log",
    benchmark:
        "results/benchmarks/guldas2015/log32/{log32_part}/{target}/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: guldas2015_mem_mb(wildcards.n),
    conda:
        CONDA_ENV
    script:
        GULDAS2015_CHECKS_SCRIPT


rule guldas2015_log32_tables:
    """The two tables of float32 stability, rows in the grid's order (set, N)."""
    input:
        exact=guldas2015_log32_cells("exact"),
        draws=guldas2015_log32_cells("draws"),
    output:
        **{t: f"results/tables/guldas2015/log32/{t}.csv" for t in guldas2015_catalog.LOG32_TABLES},
    params:
        scale=SCALE,
    log:
        "results/logs/tables/guldas2015/log32.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_CHECKS_SCRIPT


rule guldas2015_exact_em_cell:
    input:
        reference=GULDAS2015_SMCEM_REFERENCE,
    output:
        "results/guldas2015/exact_em/s{m}.npz",
    wildcard_constraints:
        m=r"\d+",
    params:
        starts=config["guldas2015_exact_em_starts"],
        iterations=config["guldas2015_exact_em_iterations"],
        settled=config["guldas2015_exact_em_settled"],
        scale=SCALE,
    log:
        "results/logs/guldas2015/exact_em/s{m}.log",
    benchmark:
        "results/benchmarks/guldas2015/exact_em/s{m}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_CHECKS_SCRIPT


rule guldas2015_exact_em_tables:
    """EM's convergence: the three tables, rows in sequence order."""
    input:
        reference=GULDAS2015_SMCEM_REFERENCE,
        cells=guldas2015_exact_em_cells(),
    output:
        **{
            t: f"results/tables/guldas2015/exact_em/{t}.csv"
            for t in guldas2015_catalog.EXACT_EM_TABLES
        },
    params:
        window=config["guldas2015_exact_em_stop_window"],
        tolerance=config["guldas2015_exact_em_stop_tolerance"],
        scale=SCALE,
    log:
        "results/logs/tables/guldas2015/exact_em.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_CHECKS_SCRIPT
