"""Das, Mazumdar & Banerjee (2014): the cells of Figs 3-6, 10, 11, Tables 5-7 and the
methods table. The grid is config/studies/d3_2014.yaml; the study's code is
studies/pfresample_studies/d3_2014/ and its glue scripts/d3_2014/cells.py.

* results/d3_2014/trajectories/t{d3_j}.npz: trajectory j of the UUV model (truth, DVL
  readings) and the Kalman filter's RMSE and bias on it, simulated once, read by every cell;
* results/d3_2014/filter/{d3_where}/{d3_filter}/n{n}/t{d3_j}_r{d3_r}.npz: one run of one filter
  at N on trajectory j over the whole duration (Figs 3-6, the methods table), one job per
  (filter, N, trajectory, run); `cpu` cells run on the CPU, `gpu` cells on `backend`;
* results/d3_2014/timing/{d3_filter}/n{n}.npz: one CPU run of systematic or D3 at N on
  trajectory 0 over the first d3_2014_timing_duration seconds (Table 5's CPU columns), and
  of D3 with Table 1's loop (d3-loop) at d3_2014_timing_loop_n;
* results/d3_2014/best_cpu/n{n}.npz: the best CPU code (native/d3_best.c) of systematic, D3
  and the paper's GPU algorithm at N on d3_2014_best_cpu_threads threads over the timing
  window, d3_2014_best_cpu_repeats runs each (ratio 2 of Table 5), one job per N holding
  that many cores; its metadata records the host and the threads;
* results/d3_2014/gpu/{d3_algo}/n{n}.npz: the GPU D3 filter of one algorithm (ours `d3`,
  the paper's `d3-paper`) at N, one run on trajectory 0 per threads per block (Tables 5-7,
  Fig 10), one job per (algorithm, N) so that a job starts CUDA and loads its kernels
  once; the whole duration at the figure N (Table 7's RMSE), the timing window elsewhere;
  requested only where a GPU may run them;
* results/d3_2014/fig11/n{n}.npz: the local-CDF iterations per thread of one D3 step (Fig 11);
* results/d3_2014/regimes/{d3_regime}/{d3_regime_filter}/n{n}/t{d3_j}.npz: one CPU run of one
  filter of d3_2014_regime_filters at N in one regime of d3_2014_regimes on trajectory j,
  over its first d3_2014_regime_duration seconds (the regime experiment, docs/d3_2014.md
  "The two regimes"), one job per (regime, filter, N, trajectory);
* results/d3_2014/thresholds/{d3_regime}.npz, .../gamma.npz: the paper's printed GPU
  thresholds (Figs 8-9) on the weights of the D3 filter's step at
  d3_2014_thresholds_time, N = d3_2014_thresholds_n, in one regime, or on gamma(2) weights: the stride's bias over
  d3_2014_thresholds_draws seeds, Fig 11's mean iterations (thresholds.py).
"""

D3_2014_CELLS_SCRIPT = "../../../scripts/d3_2014/cells.py"


wildcard_constraints:
    d3_where="cpu|gpu",
    d3_filter=alternatives((*D3_2014_FILTERS, *d3_2014_catalog.timing_filters(config))),
    d3_algo=alternatives(D3_2014_GPU_ALGORITHMS),
    d3_regime=alternatives(d3_2014_catalog.regimes(config)),
    d3_regime_filter=alternatives(d3_2014_catalog.regime_filters(config)),
    d3_j=r"[0-9]+",
    d3_r=r"[0-9]+",


rule d3_2014_trajectory:
    output:
        d3_2014_trajectory("{d3_j}"),
    params:
        seed=config["seed"],
        model=config["d3_2014_model"],
        duration=config["d3_2014_duration"],
        scale=SCALE,
    log:
        "results/logs/d3_2014/trajectories/t{d3_j}.log",
    benchmark:
        "results/benchmarks/d3_2014/trajectories/t{d3_j}.tsv"
    threads: 1
    resources:
        mem_mb=512,
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT


rule d3_2014_filter_cell:
    input:
        trajectory=d3_2014_trajectory("{d3_j}"),
    output:
        d3_2014_filter_cell("{d3_where}", "{d3_filter}", "{n}", "{d3_j}", "{d3_r}"),
    params:
        cell=d3_2014_cell_params(),
        backend=lambda wildcards: "cpu" if wildcards.d3_where == "cpu" else config["backend"],
        model=config["d3_2014_model"],
        duration=config["d3_2014_duration"],
        spec=lambda wildcards: d3_2014_catalog.filters(config)[wildcards.d3_filter],
        snapshot_step=d3_2014_catalog.snapshot_step(config),
        snapshot_particles=config["d3_2014_snapshot_particles"],
        estimate_every=config["d3_2014_estimate_every"],
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/d3_2014/filter/{d3_where}/{d3_filter}/n{n}/t{d3_j}_r{d3_r}.log",
    benchmark:
        "results/benchmarks/d3_2014/filter/{d3_where}/{d3_filter}/n{n}/t{d3_j}_r{d3_r}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: d3_2014_mem_mb(wildcards.n),
        gpu=lambda wildcards: CELL_GPUS if wildcards.d3_where == "gpu" else 0,
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT


rule d3_2014_timing_cell:
    """Table 5's CPU columns: always on the CPU, over the timing window."""
    input:
        trajectory=d3_2014_trajectory(0),
    output:
        d3_2014_timing_cell("{d3_filter}", "{n}"),
    params:
        cell=d3_2014_cell_params(),
        model=config["d3_2014_model"],
        duration=config["d3_2014_duration"],
        timing_duration=config["d3_2014_timing_duration"],
        spec=lambda wildcards: d3_2014_catalog.timing_filters(config)[wildcards.d3_filter],
        scale=SCALE,
    log:
        "results/logs/d3_2014/timing/{d3_filter}/n{n}.log",
    benchmark:
        "results/benchmarks/d3_2014/timing/{d3_filter}/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: d3_2014_mem_mb(wildcards.n),
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT


rule d3_2014_best_cpu_cell:
    """Ratio 2 of Table 5, its CPU side at one N: the job holds the cores it runs on."""
    input:
        trajectory=d3_2014_trajectory(0),
    output:
        d3_2014_best_cpu_cell("{n}"),
    params:
        cell=d3_2014_cell_params(),
        model=config["d3_2014_model"],
        duration=config["d3_2014_duration"],
        timing_duration=config["d3_2014_timing_duration"],
        specs=d3_2014_catalog.best_cpu_filters(config),
        repeats=d3_2014_catalog.best_cpu_repeats(config),
        threads=d3_2014_catalog.best_cpu_threads(config),
        scale=SCALE,
    log:
        "results/logs/d3_2014/best_cpu/n{n}.log",
    benchmark:
        "results/benchmarks/d3_2014/best_cpu/n{n}.tsv"
    threads: d3_2014_catalog.best_cpu_threads(config)
    resources:
        mem_mb=lambda wildcards: d3_2014_mem_mb(wildcards.n),
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT


rule d3_2014_gpu_cell:
    input:
        trajectory=d3_2014_trajectory(0),
    output:
        d3_2014_gpu_cell("{d3_algo}", "{n}"),
    params:
        cell=d3_2014_cell_params(),
        model=config["d3_2014_model"],
        duration=config["d3_2014_duration"],
        timing_duration=config["d3_2014_timing_duration"],
        spec=lambda wildcards: d3_2014_catalog.gpu_algorithms(config)[wildcards.d3_algo],
        threads=lambda wildcards: d3_2014_catalog.gpu_cells(config)[int(wildcards.n)],
        full=lambda wildcards: d3_2014_catalog.gpu_full_run(config, wildcards.n),
        devices=GPU_DEVICES,
        scale=SCALE,
    log:
        "results/logs/d3_2014/gpu/{d3_algo}/n{n}.log",
    benchmark:
        "results/benchmarks/d3_2014/gpu/{d3_algo}/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: d3_2014_mem_mb(wildcards.n),
        gpu=1,
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT


rule d3_2014_fig11_cell:
    input:
        trajectory=d3_2014_trajectory(0),
    output:
        d3_2014_fig11_cell("{n}"),
    params:
        cell=d3_2014_cell_params(),
        model=config["d3_2014_model"],
        duration=config["d3_2014_duration"],
        spec=d3_2014_catalog.filters(config)[d3_2014_catalog.D3_FILTER],
        step=d3_2014_catalog.fig11_step(config),
        scale=SCALE,
    log:
        "results/logs/d3_2014/fig11/n{n}.log",
    benchmark:
        "results/benchmarks/d3_2014/fig11/n{n}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: d3_2014_mem_mb(wildcards.n),
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT


rule d3_2014_regime_cell:
    """The regime experiment: always on the CPU, paired by trajectory and run seed."""
    input:
        trajectory=d3_2014_trajectory("{d3_j}"),
    output:
        d3_2014_regime_cell("{d3_regime}", "{d3_regime_filter}", "{n}", "{d3_j}"),
    params:
        seed=config["seed"],
        model=config["d3_2014_model"],
        duration=config["d3_2014_duration"],
        regime_duration=config["d3_2014_regime_duration"],
        filter_process_sd=lambda wildcards: d3_2014_catalog.regimes(config)[wildcards.d3_regime],
        spec=lambda wildcards: d3_2014_catalog.regime_filters(config)[wildcards.d3_regime_filter],
        snapshot_step=d3_2014_catalog.regime_snapshot_step(config),
        bin_seconds=config["d3_2014_regime_bin_seconds"],
        scale=SCALE,
    log:
        "results/logs/d3_2014/regimes/{d3_regime}/{d3_regime_filter}/n{n}/t{d3_j}.log",
    benchmark:
        "results/benchmarks/d3_2014/regimes/{d3_regime}/{d3_regime_filter}/n{n}/t{d3_j}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: d3_2014_mem_mb(wildcards.n),
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT


rule d3_2014_threshold_cell:
    """The printed thresholds on one regime's Fig 11 step: always on the CPU."""
    input:
        trajectory=d3_2014_trajectory(0),
    output:
        d3_2014_threshold_cell("{d3_regime}"),
    params:
        seed=config["seed"],
        model=config["d3_2014_model"],
        duration=config["d3_2014_duration"],
        filter_process_sd=lambda wildcards: d3_2014_catalog.regimes(config)[wildcards.d3_regime],
        spec=d3_2014_catalog.all_filters(config)[d3_2014_catalog.D3_FILTER],
        n=d3_2014_catalog.thresholds_n(config),
        step=d3_2014_catalog.thresholds_step(config),
        draws=d3_2014_catalog.thresholds_draws(config),
        scale=SCALE,
    log:
        "results/logs/d3_2014/thresholds/{d3_regime}.log",
    benchmark:
        "results/benchmarks/d3_2014/thresholds/{d3_regime}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: d3_2014_mem_mb(d3_2014_catalog.thresholds_n(config)),
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT


rule d3_2014_threshold_gamma_cell:
    """The printed thresholds on gamma(2) weights whose values rise with the index."""
    output:
        d3_2014_threshold_cell(d3_2014_catalog.THRESHOLDS_GAMMA),
    params:
        n=d3_2014_catalog.thresholds_n(config),
        draws=d3_2014_catalog.thresholds_draws(config),
        scale=SCALE,
    log:
        f"results/logs/d3_2014/thresholds/{d3_2014_catalog.THRESHOLDS_GAMMA}.log",
    benchmark:
        f"results/benchmarks/d3_2014/thresholds/{d3_2014_catalog.THRESHOLDS_GAMMA}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: d3_2014_mem_mb(d3_2014_catalog.thresholds_n(config)),
    conda:
        CONDA_ENV
    script:
        D3_2014_CELLS_SCRIPT
