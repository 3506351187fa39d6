"""SIR-filter experiments of Dülger (2017): §5.4 (Tables 5.1-5.2), §6.9
(Tables 6.2-6.3), §6.10 (Fig 6.23), chapter 7 (Tables 7.2-7.3, 7.5-7.6,
Figs 7.1-7.2). The catalog is config/studies/dulger2017.yaml (filter_models,
dulger2017_filter_tables, dulger2017_filter_figures).

* results/trajectories/{model}.npz: the model's filter_trajectories
  trajectories (studies/dulger2017/trajectories.py), the same for every N and method;
* results/filter/{model}/{variant}/n{n}.npz: a filter cell, the SIR filter
  with one method variant and N particles, filter_runs runs per trajectory
  (studies/dulger2017/filter_experiments.py) on `backend`;
* results/filter_speedup/{backend}/{model}/{variant}/n{n}.npz: Fig 6.23's
  cells, filter_speedup_runs runs per trajectory on the CPU and on the GPU;
* results/tables/dulger2017/table*.csv and .md (studies/dulger2017/filter_tables.py),
  results/figures/dulger2017/fig6_23 and fig7_1, fig7_2.

`filter_jobs: per_cell` (thesis scale) runs one job per cell: hour-long GPU
jobs, one GPU each, resumable cell by cell. `per_variant` (quick scale) runs
one job per (model, variant) that writes the same files for every N: at a
second of work per cell, a job per cell would spend most of its time
starting Python.
"""

wildcard_constraints:
    model=alternatives(FILTER_MODELS),
    backend="cpu|cuda",
    ftable=alternatives(FILTER_TABLES),
    tfigure=alternatives(TRAJECTORY_FIGURES),
    sfigure=alternatives(SPEEDUP_FIGURES),


rule filter_trajectories:
    output:
        trajectory_path("{model}"),
    params:
        spec=lambda wildcards: FILTER_MODELS[wildcards.model],
        trajectories=config["filter_trajectories"],
        seed=config["seed"],
    log:
        "results/logs/trajectories/{model}.log",
    benchmark:
        "results/benchmarks/trajectories/{model}.tsv"
    threads: 1
    resources:
        mem_mb=512,
    priority: schedule.INPUTS
    conda:
        CONDA_ENV
    script:
        "../../../scripts/dulger2017/filter_trajectories.py"


if config["filter_jobs"] == "per_cell":

    rule filter_cell:
        input:
            trajectories=trajectory_path("{model}"),
        output:
            filter_cell_path("{model}", "{variant}", "{n}"),
        params:
            spec=lambda wildcards: FILTER_MODELS[wildcards.model],
            variant=lambda wildcards: VARIANTS[wildcards.variant].as_dict(),
            n=lambda wildcards: [int(wildcards.n)],
            settings=filter_params(
                config["filter_runs"], config["backend"], config["filter_timed_runs"]
            ),
            devices=GPU_DEVICES,
            scale=SCALE_NOTE,
        log:
            "results/logs/filter/{model}/{variant}/n{n}.log",
        benchmark:
            "results/benchmarks/filter/{model}/{variant}/n{n}.tsv"
        threads: config["cell_threads"]
        resources:
            mem_mb=lambda wildcards: filter_mem_mb(wildcards.model, wildcards.n),
            gpu=CELL_GPUS,
        priority: filter_cell_priority
        conda:
            CONDA_ENV
        script:
            "../../../scripts/dulger2017/filter_cell.py"

    rule filter_speedup_cell:
        """Fig 6.23's GPU cells; its CPU cells run in parts (below)."""
        input:
            trajectories=trajectory_path("{model}"),
        output:
            filter_speedup_path("{backend}", "{model}", "{variant}", "{n}"),
        wildcard_constraints:
            backend="cuda",
        params:
            spec=lambda wildcards: FILTER_MODELS[wildcards.model],
            variant=lambda wildcards: VARIANTS[wildcards.variant].as_dict(),
            n=lambda wildcards: [int(wildcards.n)],
            settings=filter_params(config["filter_speedup_runs"], "cuda"),
            devices=GPU_DEVICES,
            scale=SCALE_NOTE,
        log:
            "results/logs/filter_speedup/{backend}/{model}/{variant}/n{n}.log",
        benchmark:
            "results/benchmarks/filter_speedup/{backend}/{model}/{variant}/n{n}.tsv"
        threads: config["cell_threads"]
        resources:
            mem_mb=lambda wildcards: filter_mem_mb(wildcards.model, wildcards.n),
            gpu=1,
        priority: speedup_cell_priority
        conda:
            CONDA_ENV
        script:
            "../../../scripts/dulger2017/filter_cell.py"

    rule filter_speedup_part:
        """Part p of P of one CPU cell of Fig 6.23 (filter_experiments.part_runs):
        a CPU run takes minutes at N = 2^22, so the cell's runs are spread over
        jobs that run side by side, one core each."""
        input:
            trajectories=trajectory_path("{model}"),
        output:
            "results/filter_speedup_parts/cpu/{model}/{variant}/n{n}/part{part}of{parts}.npz",
        wildcard_constraints:
            part=r"[0-9]+",
            parts=r"[1-9][0-9]*",
        params:
            spec=lambda wildcards: FILTER_MODELS[wildcards.model],
            variant=lambda wildcards: VARIANTS[wildcards.variant].as_dict(),
            n=lambda wildcards: [int(wildcards.n)],
            part=lambda wildcards: [int(wildcards.part), int(wildcards.parts)],
            compute_threads=config["cell_threads"],
            settings=filter_params(config["filter_speedup_runs"], "cpu"),
            devices=[],
            scale=SCALE_NOTE,
        log:
            "results/logs/filter_speedup_parts/cpu/{model}/{variant}/n{n}/part{part}of{parts}.log",
        benchmark:
            "results/benchmarks/filter_speedup_parts/cpu/{model}/{variant}/n{n}/part{part}of{parts}.tsv"
        # Each part reserves filter_cpu_part_cpus logical CPUs and computes on
        # cell_threads: fewer parts side by side leave the GPU jobs' host threads
        # and the memory bandwidth free.
        threads: max(config["cell_threads"], config["filter_cpu_part_cpus"])
        resources:
            mem_mb=lambda wildcards: filter_mem_mb(wildcards.model, wildcards.n),
        priority: speedup_part_priority
        conda:
            CONDA_ENV
        script:
            "../../../scripts/dulger2017/filter_cell.py"

    rule filter_speedup_merge:
        """One CPU cell of Fig 6.23 from its parts (filter_experiments.merge_filter_parts)."""
        input:
            parts=lambda wildcards: speedup_part_paths(wildcards.model, wildcards.variant, wildcards.n),
        output:
            filter_speedup_path("cpu", "{model}", "{variant}", "{n}"),
        log:
            "results/logs/filter_speedup/cpu/{model}/{variant}/n{n}.log",
        benchmark:
            "results/benchmarks/filter_speedup/cpu/{model}/{variant}/n{n}.tsv"
        threads: 1
        resources:
            mem_mb=lambda wildcards: filter_mem_mb(wildcards.model, wildcards.n),
        conda:
            CONDA_ENV
        script:
            "../../../scripts/dulger2017/filter_merge.py"

else:

    rule filter_cells:
        input:
            trajectories=trajectory_path("{model}"),
        output:
            [filter_cell_path("{model}", "{variant}", n) for n in filter_n_grid()],
        params:
            spec=lambda wildcards: FILTER_MODELS[wildcards.model],
            variant=lambda wildcards: VARIANTS[wildcards.variant].as_dict(),
            n=filter_n_grid(),
            settings=filter_params(
                config["filter_runs"], config["backend"], config["filter_timed_runs"]
            ),
            devices=GPU_DEVICES,
            scale=SCALE_NOTE,
        log:
            "results/logs/filter/{model}/{variant}.log",
        benchmark:
            "results/benchmarks/filter/{model}/{variant}.tsv"
        threads: config["cell_threads"]
        resources:
            mem_mb=lambda wildcards: filter_mem_mb(wildcards.model, max(filter_n_grid())),
            gpu=CELL_GPUS,
        priority: filter_cell_priority
        conda:
            CONDA_ENV
        script:
            "../../../scripts/dulger2017/filter_cell.py"

    rule filter_speedup_cells:
        input:
            trajectories=trajectory_path("{model}"),
        output:
            [filter_speedup_path("{backend}", "{model}", "{variant}", n) for n in filter_n_grid()],
        params:
            spec=lambda wildcards: FILTER_MODELS[wildcards.model],
            variant=lambda wildcards: VARIANTS[wildcards.variant].as_dict(),
            n=filter_n_grid(),
            settings=lambda wildcards: filter_params(
                config["filter_speedup_runs"], wildcards.backend
            ),
            devices=lambda wildcards: GPU_DEVICES if wildcards.backend == "cuda" else [],
            scale=SCALE_NOTE,
        log:
            "results/logs/filter_speedup/{backend}/{model}/{variant}.log",
        benchmark:
            "results/benchmarks/filter_speedup/{backend}/{model}/{variant}.tsv"
        threads: config["cell_threads"]
        resources:
            mem_mb=lambda wildcards: filter_mem_mb(wildcards.model, max(filter_n_grid())),
            gpu=lambda wildcards: int(wildcards.backend == "cuda"),
        priority: speedup_cell_priority
        conda:
            CONDA_ENV
        script:
            "../../../scripts/dulger2017/filter_cell.py"


rule dulger2017_filter_table:
    """Tables 5.1-5.2, 6.2-6.3, 7.2-7.3, 7.5-7.6: CSV (one row per variant and
    N) and Markdown laid out as the thesis's table."""
    input:
        cells=lambda wildcards: filter_table_cells(wildcards.ftable),
    output:
        csv="results/tables/dulger2017/{ftable}.csv",
        md="results/tables/dulger2017/{ftable}.md",
    params:
        spec=lambda wildcards: FILTER_TABLES[wildcards.ftable],
        scale=SCALE_NOTE,
    log:
        "results/logs/tables/dulger2017/{ftable}.log",
    benchmark:
        "results/benchmarks/tables/dulger2017/{ftable}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/dulger2017/filter_table.py"


rule dulger2017_filter_trajectory_figure:
    """Figs 7.1-7.2: the truth, the measurements of trajectory 0 as x/y and
    one filter estimate (smallest N, trajectory 0, run 0)."""
    input:
        unpack(lambda wildcards: filter_figure_inputs(wildcards.tfigure)),
    output:
        png=report(
            "results/figures/dulger2017/{tfigure}.png",
            caption="../../report/dulger2017_filter_figure.rst",
            category="Dülger (2017)",
            subcategory="{tfigure}",
        ),
        pdf="results/figures/dulger2017/{tfigure}.pdf",
    params:
        spec=lambda wildcards: FILTER_FIGURES[wildcards.tfigure],
        labels=FILTER_LABELS,
        scale=SCALE_NOTE,
    log:
        "results/logs/figures/dulger2017/{tfigure}.log",
    benchmark:
        "results/benchmarks/figures/dulger2017/{tfigure}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/dulger2017/filter_figure.py"


rule dulger2017_filter_speedup_figure:
    """Fig 6.23: speed-up of the GPU filter over the CPU filter, with its table;
    without a CUDA device only the CPU times (the caption says so)."""
    input:
        unpack(lambda wildcards: filter_figure_inputs(wildcards.sfigure)),
    output:
        png=report(
            "results/figures/dulger2017/{sfigure}.png",
            caption="../../report/dulger2017_filter_figure.rst",
            category="Dülger (2017)",
            subcategory="{sfigure}",
        ),
        pdf="results/figures/dulger2017/{sfigure}.pdf",
        table="results/tables/dulger2017/{sfigure}.csv",
    params:
        spec=lambda wildcards: FILTER_FIGURES[wildcards.sfigure],
        scale=SCALE_NOTE,
        note=SPEEDUP_NOTE,
    log:
        "results/logs/figures/dulger2017/{sfigure}.log",
    benchmark:
        "results/benchmarks/figures/dulger2017/{sfigure}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/dulger2017/filter_figure.py"


rule dulger2017_best_cpu_cell:
    """Fig 6.23's best CPU code: native/sir_growth.c, Systematic and Uphill,
    on filter_best_cpu_threads threads (null: every CPU) at the table's N, and the NumPy
    filter on one thread at those N where Fig 6.23's CPU cells do not run."""
    input:
        trajectories=lambda wildcards: trajectory_path(FILTER_FIGURES[wildcards.sfigure]["model"]),
    output:
        best_cpu_cell_path("{sfigure}"),
    params:
        spec=lambda wildcards: FILTER_FIGURES[wildcards.sfigure],
        n=best_cpu.table_n(config),
        numpy_n=best_cpu_numpy_n(),
        threads=best_cpu.threads(config),
        repeats=config["timing_repeats"],
        numpy_repeats=config["filter_best_cpu_numpy_repeats"],
        warmup=config["timing_warmup"],
        seed=config["seed"],
        scale=SCALE_NOTE,
    log:
        "results/logs/filter_best_cpu/{sfigure}.log",
    benchmark:
        "results/benchmarks/filter_best_cpu/{sfigure}.tsv"
    # every core it computes on (Snakemake caps it at --cores): timed alone
    threads: best_cpu.threads(config)
    resources:
        mem_mb=lambda wildcards: filter_mem_mb("growth", max(best_cpu.table_n(config))),
    priority: schedule.priority(0, schedule.CPU, 6)
    conda:
        CONDA_ENV
    script:
        "../../../scripts/dulger2017/best_cpu_cell.py"


rule dulger2017_best_cpu_table:
    """Fig 6.23's ratios 1 and 2: per N and stage the GPU over the document's
    kind of CPU baseline and over the best CPU code; the GPU rows from this run, else
    from committed evidence (labelled; one_host False)."""
    input:
        unpack(lambda wildcards: best_cpu_table_inputs(wildcards.sfigure)),
    output:
        csv=best_cpu_table_path("{sfigure}", "csv"),
        md=best_cpu_table_path("{sfigure}", "md"),
    params:
        spec=lambda wildcards: FILTER_FIGURES[wildcards.sfigure],
        scale=SCALE_NOTE,
    log:
        "results/logs/tables/dulger2017/{sfigure}_speedups.log",
    benchmark:
        "results/benchmarks/tables/dulger2017/{sfigure}_speedups.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../../scripts/dulger2017/best_cpu_table.py"
