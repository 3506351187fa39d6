"""Weight datasets (thesis §2.5): `sequences` weight sequences of one
distribution at one N, as a (sequences, N) float32 array."""


rule weight_dataset:
    output:
        "results/weights/{dist}/{n}.npz",
    params:
        sequences=config["sequences"],
        seed=config["seed"],
    log:
        "results/logs/weights/{dist}/{n}.log",
    benchmark:
        "results/benchmarks/weights/{dist}/{n}.tsv"
    threads: 1
    resources:
        mem_mb=weights_mem_mb,
    conda:
        CONDA_ENV
    script:
        "../../scripts/weight_dataset.py"
