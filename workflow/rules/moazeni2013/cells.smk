"""Moazeni (2013) chapter 3: the cells. The grid is config/studies/moazeni2013.yaml; the
study's code studies/pfresample_studies/moazeni2013/ and its glue scripts/moazeni2013/cells.py.

* results/moazeni2013/ch3/cpu/{ch3_order}.npz: one decomposition in NumPy (bottom-up,
  divide and conquer, ours) at every n, block size and dtype, each run checked equal to
  the reference bit for bit;
* results/moazeni2013/ch3/native.npz: the compiled baseline on one thread and on the
  threads the job holds (moazeni2013_ch3_native_threads; null: every CPU of the host,
  which Snakemake caps at --cores, so that no other job runs beside it);
* results/moazeni2013/ch3/best_cpu.npz: the best CPU code (dp_blocked.c) on the threads
  of moazeni2013_best_cpu_threads (null: every CPU) at the compiled baseline's n, each
  matrix checked equal to dp.c's;
* results/moazeni2013/ch3/gpu.npz, fig12.npz: the GPU orders, each run checked equal to
  the compiled code's matrix, and Fig 12's launches (only where the cells have a GPU);
* results/moazeni2013/ch4/{cpu,gpu}.npz: chapter 4's runs (hashtable_workloads.plan), each
  batch checked; the GPU's only where the cells have a GPU;
* results/moazeni2013/ch4/best_cpu.npz: the best CPU code (hashset_best.c on
  moazeni2013_best_cpu_threads) at the (distribution, batch, mix) of the thesis's CPU_PH
  runs (hashtable_workloads.doc_runs), on their keys, each batch checked;
* results/moazeni2013/ch6/{cpu,native,peer,best_cpu,gpu}.npz and ch5/gpu.npz: chapters 5
  and 6's runs (tv_experiments; best_cpu: tv_best.c on moazeni2013_best_cpu_threads at the
  compiled solver's sizes); the GPU's only where the cells have a GPU;
* results/moazeni2013/ch7/{search,timing}.npz: chapter 7's searches (mddtw_experiments:
  on the GPU where the cells have one) and timings (GPU only);
* results/moazeni2013/ch7/best_cpu.npz: the best CPU code (dtw_best.c's two codes on
  moazeni2013_best_cpu_threads) and dtw.c on one thread at moazeni2013_ch7_best_cpu_cases,
  on the timing cell's inputs, the selections checked equal.
"""

MOAZENI2013_CELLS_SCRIPT = "../../../scripts/moazeni2013/cells.py"


wildcard_constraints:
    ch3_order=alternatives(moazeni2013_catalog.ORDERS),


rule moazeni2013_ch3_order_cell:
    output:
        moazeni2013_ch3_order_cell("{ch3_order}"),
    params:
        n=moazeni2013_catalog.numpy_n(config),
        block_sizes=moazeni2013_catalog.block_sizes(config),
        dtypes=config["moazeni2013_ch3_dtypes"],
        base=config["moazeni2013_ch3_recursive_base"],
        repeats=config["moazeni2013_ch3_repeats"],
        seed=config["seed"],
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch3/cpu/{ch3_order}.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch3/cpu/{ch3_order}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch3_native_cell:
    output:
        moazeni2013_ch3_native_cell(),
    params:
        n=moazeni2013_catalog.native_n(config),
        dtypes=config["moazeni2013_ch3_dtypes"],
        repeats=config["moazeni2013_ch3_repeats"],
        seed=config["seed"],
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch3/native.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch3/native.tsv"
    threads: moazeni2013_catalog.native_threads(config)
    resources:
        mem_mb=lambda wildcards: 1024 + 3 * 4 * max(moazeni2013_catalog.native_n(config)) ** 2 // 2**20,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch3_best_cpu_cell:
    output:
        moazeni2013_ch3_best_cpu_cell(),
    params:
        n=moazeni2013_catalog.native_n(config),
        dtypes=config["moazeni2013_ch3_dtypes"],
        repeats=config["moazeni2013_ch3_repeats"],
        seed=config["seed"],
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch3/best_cpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch3/best_cpu.tsv"
    # every core of the job: nothing else runs beside it
    threads: moazeni2013_catalog.best_cpu_threads(config)
    resources:
        mem_mb=lambda wildcards: 1024 + 3 * 4 * max(moazeni2013_catalog.native_n(config)) ** 2 // 2**20,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch3_gpu_cell:
    output:
        "results/moazeni2013/ch3/gpu.npz",
    params:
        n=moazeni2013_catalog.gpu_n(config),
        block_sizes=moazeni2013_catalog.gpu_block_sizes(config),
        dtypes=config["moazeni2013_ch3_dtypes"],
        repeats=config["moazeni2013_ch3_repeats"],
        seed=config["seed"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch3/gpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch3/gpu.tsv"
    # the compiled reference of each matrix runs on every CPU, so the job holds them
    threads: moazeni2013_catalog.native_threads(config)
    resources:
        mem_mb=lambda wildcards: 1024 + 3 * 4 * max(moazeni2013_catalog.gpu_n(config)) ** 2 // 2**20,
        gpu=1,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch3_fig12_cell:
    output:
        "results/moazeni2013/ch3/fig12.npz",
    params:
        sizes=moazeni2013_catalog.fig12_sizes(config),
        repeats=max(5, config["moazeni2013_ch3_repeats"]),
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch3/fig12.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch3/fig12.tsv"
    threads: 1
    resources:
        mem_mb=1024,
        gpu=1,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch4_cpu_cell:
    output:
        "results/moazeni2013/ch4/cpu.npz",
    params:
        cell=moazeni2013_ch4_params(),
        # without a GPU, the CPU's twins of the GPU runs too (hashtable_workloads.plan)
        runs=[r for r in moazeni2013_workloads.plan(config, bool(CELL_GPUS)) if r.backend == "cpu"],
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch4/cpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch4/cpu.tsv"
    # the runs use this many threads: the job holds them, so that none runs beside it
    threads: moazeni2013_catalog.ch4_cpu_threads(config)
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch4_best_cpu_cell:
    output:
        "results/moazeni2013/ch4/best_cpu.npz",
    params:
        runs=moazeni2013_workloads.doc_runs(config, bool(CELL_GPUS)),
        preload=config["moazeni2013_ch4_preload"],
        # the median of at least 5 runs a batch: one run can stall ~3 ms (docs/moazeni2013.md)
        repeats=max(5, config["moazeni2013_ch4_repeats"]),
        seed=config["seed"],
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch4/best_cpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch4/best_cpu.tsv"
    # every core of the job: nothing else runs beside it
    threads: moazeni2013_catalog.best_cpu_threads(config)
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch4_gpu_cell:
    output:
        "results/moazeni2013/ch4/gpu.npz",
    params:
        cell=moazeni2013_ch4_params(),
        runs=[r for r in moazeni2013_workloads.plan(config) if r.backend == "gpu"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch4/gpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch4/gpu.tsv"
    threads: 1
    resources:
        mem_mb=2048,
        gpu=1,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch6_cpu_cell:
    output:
        "results/moazeni2013/ch6/cpu.npz",
    params:
        size=config["moazeni2013_ch6_cpu_size"],
        tiles=moazeni2013_catalog.ch6_tiles(config),
        settings=moazeni2013_catalog.ch6_settings(config),
        lambdas=moazeni2013_catalog.floats(config, "moazeni2013_ch6_sweep_lambdas"),
        epsilons=moazeni2013_catalog.floats(config, "moazeni2013_ch6_sweep_eps"),
        steps=moazeni2013_catalog.floats(config, "moazeni2013_ch6_sweep_steps"),
        every=config["moazeni2013_ch6_every"],
        phantom=moazeni2013_catalog.ch6_phantom(config),
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch6/cpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch6/cpu.tsv"
    threads: 1
    resources:
        mem_mb=2048,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch6_native_cell:
    output:
        "results/moazeni2013/ch6/native.npz",
    params:
        sizes=moazeni2013_catalog.ints(config, "moazeni2013_ch6_native_sizes"),
        settings=moazeni2013_catalog.ch6_settings(config),
        iterations=config["moazeni2013_ch6_native_iterations"],
        repeats=config["moazeni2013_ch6_repeats"],
        phantom=moazeni2013_catalog.ch6_phantom(config),
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch6/native.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch6/native.tsv"
    # one thread timed; the job holds every CPU so that nothing runs beside it (§6.5)
    threads: moazeni2013_catalog.native_threads(config)
    resources:
        mem_mb=lambda wildcards: 1024 + 160 * max(moazeni2013_catalog.ints(config, "moazeni2013_ch6_native_sizes")) ** 3 // 2**20,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch6_best_cpu_cell:
    output:
        "results/moazeni2013/ch6/best_cpu.npz",
    params:
        sizes=moazeni2013_catalog.ints(config, "moazeni2013_ch6_native_sizes"),
        settings=moazeni2013_catalog.ch6_settings(config),
        iterations=config["moazeni2013_ch6_native_iterations"],
        repeats=config["moazeni2013_ch6_repeats"],
        phantom=moazeni2013_catalog.ch6_phantom(config),
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch6/best_cpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch6/best_cpu.tsv"
    # every core of the job: nothing else runs beside it
    threads: moazeni2013_catalog.best_cpu_threads(config)
    resources:
        mem_mb=lambda wildcards: 1024 + 160 * max(moazeni2013_catalog.ints(config, "moazeni2013_ch6_native_sizes")) ** 3 // 2**20,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch6_peer_cell:
    output:
        "results/moazeni2013/ch6/peer.npz",
    params:
        size=config["moazeni2013_ch6_peer_size"],
        weights=moazeni2013_catalog.floats(config, "moazeni2013_ch6_peer_weights"),
        settings=moazeni2013_catalog.ch6_settings(config),
        phantom=moazeni2013_catalog.ch6_phantom(config),
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch6/peer.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch6/peer.tsv"
    # both sides are timed on one thread: the job holds every CPU so that nothing runs beside
    threads: moazeni2013_catalog.native_threads(config)
    resources:
        mem_mb=2048,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch6_gpu_cell:
    output:
        "results/moazeni2013/ch6/gpu.npz",
    params:
        sizes=moazeni2013_catalog.ints(config, "moazeni2013_ch6_gpu_sizes"),
        tiles=moazeni2013_catalog.ch6_tiles(config),
        settings=moazeni2013_catalog.ch6_settings(config),
        repeats=config["moazeni2013_ch6_repeats"],
        every=config["moazeni2013_ch6_every"],
        check_size=config["moazeni2013_ch6_check_size"],
        check_iterations=config["moazeni2013_ch6_check_iterations"],
        phantom=moazeni2013_catalog.ch6_phantom(config),
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch6/gpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch6/gpu.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: 2048 + 200 * max(moazeni2013_catalog.ints(config, "moazeni2013_ch6_gpu_sizes")) ** 3 // 2**20,
        gpu=1,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch5_gpu_cell:
    output:
        "results/moazeni2013/ch5/gpu.npz",
    params:
        sizes_3d=moazeni2013_catalog.ints(config, "moazeni2013_ch5_sizes_3d"),
        sizes_2d=moazeni2013_catalog.ints(config, "moazeni2013_ch5_sizes_2d"),
        tiles=moazeni2013_catalog.ints(config, "moazeni2013_ch5_tiles"),
        carveouts=moazeni2013_catalog.ints(config, "moazeni2013_ch5_carveouts"),
        repeats=config["moazeni2013_ch5_repeats"],
        seed=config["seed"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch5/gpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch5/gpu.tsv"
    threads: 1
    resources:
        mem_mb=2048,
        gpu=1,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch7_search_cell:
    output:
        "results/moazeni2013/ch7/search.npz",
    params:
        m=config["moazeni2013_ch7_m"],
        search=moazeni2013_catalog.ch7_search(config),
        segments=config["moazeni2013_ch7_segments"],
        exhaust_band=moazeni2013_catalog.ch7_exhaust_band(config),
        widths=moazeni2013_catalog.ints(config, "moazeni2013_ch7_planted_widths"),
        length=config["moazeni2013_ch7_planted_length"],
        seeds=config["moazeni2013_ch7_planted_seeds"],
        rare=config["moazeni2013_ch7_rare"],
        rare_count=config["moazeni2013_ch7_rare_count"],
        queries_per_label=config["moazeni2013_ch7_queries_per_label"],
        normalise=[bool(v) for v in config["moazeni2013_ch7_normalise"]],
        orientations=list(config["moazeni2013_ch7_orientations"]),
        orientation_queries=config["moazeni2013_ch7_orientation_queries"],
        seed=config["seed"],
        backend="gpu" if CELL_GPUS else "cpu",
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch7/search.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch7/search.tsv"
    threads: 1
    resources:
        mem_mb=2048,
        gpu=1 if CELL_GPUS else 0,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch7_timing_cell:
    output:
        "results/moazeni2013/ch7/timing.npz",
    params:
        widths=moazeni2013_catalog.ints(config, "moazeni2013_ch7_timing_widths"),
        lengths=moazeni2013_catalog.ints(config, "moazeni2013_ch7_timing_lengths"),
        queries=moazeni2013_catalog.ints(config, "moazeni2013_ch7_timing_queries"),
        sf=config["moazeni2013_ch7_sf"],
        nr=config["moazeni2013_ch7_nr"],
        cpu_pairs=config["moazeni2013_ch7_cpu_pairs"],
        cpu_max_length=config["moazeni2013_ch7_cpu_max_length"],
        p=config["moazeni2013_ch7_p"],
        repeats=config["moazeni2013_ch7_repeats"],
        seed=config["seed"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch7/timing.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch7/timing.tsv"
    # the compiled DTW is timed on one thread: the job holds every CPU so that nothing runs beside
    threads: moazeni2013_catalog.native_threads(config)
    resources:
        mem_mb=8192,
        gpu=1,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch7_best_cpu_cell:
    output:
        "results/moazeni2013/ch7/best_cpu.npz",
    params:
        cases=moazeni2013_catalog.ch7_best_cpu_cases(config),
        queries=moazeni2013_catalog.ints(config, "moazeni2013_ch7_timing_queries"),
        sf=config["moazeni2013_ch7_sf"],
        nr=config["moazeni2013_ch7_nr"],
        p=config["moazeni2013_ch7_p"],
        cpu_pairs=config["moazeni2013_ch7_cpu_pairs"],
        repeats=config["moazeni2013_ch7_repeats"],
        seed=config["seed"],
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch7/best_cpu.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch7/best_cpu.tsv"
    # every core of the job: nothing else runs beside it (dtw.c's one thread included)
    threads: moazeni2013_catalog.best_cpu_threads(config)
    resources:
        mem_mb=4096,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT


rule moazeni2013_ch7_choices_cell:
    output:
        "results/moazeni2013/ch7/choices.npz",
    params:
        m=config["moazeni2013_ch7_m"],
        search=moazeni2013_catalog.ch7_search(config),
        choices=moazeni2013_catalog.ch7_choices(config),
        queries=config["moazeni2013_ch7_choice_queries"],
        seed=config["seed"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/moazeni2013/ch7/choices.log",
    benchmark:
        "results/benchmarks/moazeni2013/ch7/choices.tsv"
    threads: 1
    resources:
        mem_mb=2048,
        gpu=1,
    conda:
        CONDA_ENV
    script:
        MOAZENI2013_CELLS_SCRIPT
