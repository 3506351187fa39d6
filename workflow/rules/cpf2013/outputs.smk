"""Gelencsér-Horváth et al. (2013): the tidy tables and figures of Figs 7-12, Table 1 and
the baselines' table, from the cells of cells.smk; glue scripts/cpf2013/outputs.py.

* results/tables/cpf2013/{cpf_fig}.csv: the table of each figure (fig7 ... fig12);
* results/tables/cpf2013/table1.csv, .md: the paper's Table 1 (published) next to ours;
* results/tables/cpf2013/baselines.csv: at each N, the SIR baselines against the CPF's
  best r (what locality costs in error and saves in time);
* results/tables/cpf2013/speedup.csv, .md: per (N, r) of the timing grid the GPU's whole
  run (this run's, else the newest committed evidence's, labelled) beside the NumPy CPF's
  (ratio 1) and the best CPU code's (ratio 2), saying where each side ran;
* results/tables/cpf2013/paired.csv, claims.csv: the paired differences behind every
  trend (pairs of cells per trajectory) and the paper's claims judged on them;
* results/figures/cpf2013/{cpf_fig}.png and .pdf;
* results/tables/cpf2013/campaign/{errors,paired,claims,baselines}.csv, runs.csv.gz: the
  paired campaign (target cpf2013_campaign; pfresample_studies.cpf2013.campaign).
"""

CPF2013_OUTPUTS_SCRIPT = "../../../scripts/cpf2013/outputs.py"


wildcard_constraints:
    cpf_fig=alternatives(cpf2013_catalog.FIGURES),


rule cpf2013_table:
    input:
        unpack(lambda wildcards: cpf2013_table_inputs(wildcards.cpf_fig)),
    output:
        "results/tables/cpf2013/{cpf_fig}.csv",
    log:
        "results/logs/tables/cpf2013/{cpf_fig}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        CPF2013_OUTPUTS_SCRIPT


rule cpf2013_table1:
    """Table 1: the paper's rows (transcribed, marked published) and ours."""
    input:
        cpf=cpf2013_table1_cells(),
    output:
        csv="results/tables/cpf2013/table1.csv",
        md="results/tables/cpf2013/table1.md",
    params:
        configurations=cpf2013_catalog.table1_configurations(config),
    log:
        "results/logs/tables/cpf2013/table1.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        CPF2013_OUTPUTS_SCRIPT


rule cpf2013_baselines:
    """The SIR baselines against the CPF's best r at each N, both models."""
    input:
        cpf=cpf2013_cpf_cells("growth") + cpf2013_cpf_cells("bot"),
        sir=cpf2013_sir_cells("growth") + cpf2013_sir_cells("bot"),
    output:
        "results/tables/cpf2013/baselines.csv",
    log:
        "results/logs/tables/cpf2013/baselines.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        CPF2013_OUTPUTS_SCRIPT


rule cpf2013_speedup:
    """Ratios 1 and 2 at the timing grid's (N, r): the GPU's whole run (this run's timing
    cells where they ran on the GPU, else the newest committed best-CPU run's) over the
    best-CPU cells' NumPy CPF and cpf_best.c."""
    input:
        timing=cpf2013_timing_cells(),
        best=cpf2013_best_cpu_cells(),
        # where no GPU runs here: the newest committed GPU rows (pipeline.evidence)
        evidence=list(committed_tables(cpf2013_catalog.EVIDENCE_TABLES).values()),
    output:
        csv="results/tables/cpf2013/speedup.csv",
        md="results/tables/cpf2013/speedup.md",
    params:
        kernel=cpf2013_catalog.kernel_name(*cpf2013_catalog.timing_kernels(config)[0]),
    log:
        "results/logs/tables/cpf2013/speedup.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        CPF2013_OUTPUTS_SCRIPT


rule cpf2013_paired:
    """Paired differences behind every trend, and the paper's claims judged on them."""
    input:
        cpf=cpf2013_cpf_cells("growth") + cpf2013_cpf_cells("bot"),
        sir=cpf2013_sir_cells("growth") + cpf2013_sir_cells("bot"),
    output:
        paired="results/tables/cpf2013/paired.csv",
        claims="results/tables/cpf2013/claims.csv",
    log:
        "results/logs/tables/cpf2013/paired.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        CPF2013_OUTPUTS_SCRIPT


rule cpf2013_figure:
    input:
        table="results/tables/cpf2013/{cpf_fig}.csv",
    output:
        png=report(
            "results/figures/cpf2013/{cpf_fig}.png",
            caption="../../report/cpf2013.rst",
            category="Gelencsér-Horváth et al. (2013)",
        ),
        pdf="results/figures/cpf2013/{cpf_fig}.pdf",
    params:
        scale=SCALE_NOTE,
    log:
        "results/logs/figures/cpf2013/{cpf_fig}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        CPF2013_OUTPUTS_SCRIPT


rule cpf2013_campaign_tables:
    """The paired campaign's tables from every cell of cpf2013_campaign (campaign_tables)."""
    input:
        cells=cpf2013_campaign_cells(),
    output:
        **cpf2013_campaign_tables(),
    log:
        "results/logs/tables/cpf2013/campaign.log",
    threads: 1
    resources:
        mem_mb=2048,
    conda:
        CONDA_ENV
    script:
        CPF2013_OUTPUTS_SCRIPT
