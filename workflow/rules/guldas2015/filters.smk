"""Güldaş (2015) §4.2-4.3: the filter experiments of Figs 4.9-4.12. The grid is
config/studies/guldas2015.yaml; the study's code is
studies/pfresample_studies/guldas2015/filter_experiments.py and its glue
scripts/guldas2015/filters.py. The tables and figures come from the study's
generic rules (single_step.smk: guldas2015_table, guldas2015_figure).

* results/guldas2015/filters/{kind}/n{n}.npz: M runs of the bootstrap or the
  adaptive filter with standard and butterfly multinomial (Figs 4.9-4.10), one job
  per kind and N;
* results/guldas2015/interaction/n{n}.npz: ESS and interaction level of both
  adaptive filters at every step (Fig 4.11);
* results/guldas2015/smcem/reference.npz: each sequence's ML point and exact
  EM traces (the grid solution, filters/volatility_grid.py), on the CPU;
* results/guldas2015/smcem/n{n}.npz: SMC-EM with both schemes and the
  configured filters on M sequences from each start (Fig 4.12), one job per N.
The filter and SMC-EM cells run on the configured backend (a GPU when there is
one: filters/guldas_gpu.py) and take a GPU; the interaction and reference cells
run on the CPU.
"""

GULDAS2015_FILTER_SCRIPT = "../../../scripts/guldas2015/filters.py"


rule guldas2015_filter_cell:
    output:
        "results/guldas2015/filters/{kind}/n{n}.npz",
    wildcard_constraints:
        kind="bootstrap|adaptive",
    params:
        seed=config["seed"],
        runs=config["guldas2015_filter_runs"],
        steps=config["guldas2015_filter_steps"],
        tau=config["guldas2015_filter_tau"],
        backend=config["backend"],
        scale=SCALE,
    log:
        "results/logs/guldas2015/filters/{kind}/n{n}.log",
    benchmark:
        "results/benchmarks/guldas2015/filters/{kind}/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: guldas2015_mem_mb(wildcards.n),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_FILTER_SCRIPT


rule guldas2015_interaction_cell:
    output:
        "results/guldas2015/interaction/n{n}.npz",
    params:
        seed=config["seed"],
        steps=config["guldas2015_filter_steps"],
        tau=config["guldas2015_filter_tau"],
        scale=SCALE,
    log:
        "results/logs/guldas2015/interaction/n{n}.log",
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_FILTER_SCRIPT


rule guldas2015_smcem_reference:
    output:
        GULDAS2015_SMCEM_REFERENCE,
    params:
        seed=config["seed"],
        sequences=config["guldas2015_smcem_sequences"],
        length=config["guldas2015_smcem_length"],
        iterations=config["guldas2015_smcem_iterations"],
        starts=config["guldas2015_smcem_starts"],
        scale=SCALE,
    log:
        "results/logs/guldas2015/smcem/reference.log",
    benchmark:
        "results/benchmarks/guldas2015/smcem/reference.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_FILTER_SCRIPT


rule guldas2015_smcem_cell:
    input:
        reference=GULDAS2015_SMCEM_REFERENCE,
    output:
        "results/guldas2015/smcem/n{n}.npz",
    wildcard_constraints:
        n=r"\d+",
    params:
        seed=config["seed"],
        iterations=config["guldas2015_smcem_iterations"],
        filters=config["guldas2015_smcem_filters"],
        tau=config["guldas2015_filter_tau"],
        backend=config["backend"],
        scale=SCALE,
    log:
        "results/logs/guldas2015/smcem/n{n}.log",
    benchmark:
        "results/benchmarks/guldas2015/smcem/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: guldas2015_mem_mb(wildcards.n, arrays=24),
        gpu=CELL_GPUS,
    conda:
        CONDA_ENV
    script:
        GULDAS2015_FILTER_SCRIPT
