"""Weight datasets (thesis §2.5): `sequences` weight sequences of one
distribution at one N, as a (sequences, N) float32 array per file.

One job writes every N of the grid for one distribution: a job per
(distribution, N) spent most of its time starting Python (58% of the weight
jobs' time on the H200 host, 380 jobs at thesis scale)."""


rule weight_datasets:
    output:
        [weight_dataset("{dist}", n) for n in n_grid()],
    params:
        n=n_grid(),
        sequences=config["sequences"],
        seed=config["seed"],
    log:
        "results/logs/weights/{dist}.log",
    benchmark:
        "results/benchmarks/weights/{dist}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wildcards: weights_mem_mb(max(n_grid())),
    conda:
        CONDA_ENV
    script:
        "../../scripts/weight_dataset.py"


if config["fig2_3_n"] not in n_grid():

    rule fig2_3_weight_dataset:
        """Fig 2.3's N when the grid does not reach it (the quick grid)."""
        output:
            weight_dataset("{dist}", config["fig2_3_n"]),
        params:
            n=[config["fig2_3_n"]],
            sequences=config["sequences"],
            seed=config["seed"],
        log:
            f"results/logs/weights/{{dist}}/{config['fig2_3_n']}.log",
        benchmark:
            f"results/benchmarks/weights/{{dist}}/{config['fig2_3_n']}.tsv"
        threads: 1
        resources:
            mem_mb=lambda wildcards: weights_mem_mb(config["fig2_3_n"]),
        conda:
            CONDA_ENV
        script:
            "../../scripts/weight_dataset.py"
