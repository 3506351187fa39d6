"""Figures of Dülger (2017), written as PNG and PDF under results/figures/dulger2017/."""


rule dulger2017_fig2_3:
    """Fig 2.3: histograms of one weight sequence of each gamma distribution."""
    input:
        weights=fig2_3_weights(),
    output:
        png="results/figures/dulger2017/fig2_3.png",
        pdf="results/figures/dulger2017/fig2_3.pdf",
    params:
        distributions=config["gamma_distributions"],
        n=config["fig2_3_n"],
        sequence=config["fig2_3_sequence"],
        bins=config["fig2_3_bins"],
        backend=CPU_BACKEND,
        scale=SCALE_NOTE,
    log:
        "results/logs/figures/dulger2017/fig2_3.log",
    benchmark:
        "results/benchmarks/figures/dulger2017/fig2_3.tsv"
    threads: 1
    resources:
        mem_mb=2048,
    conda:
        CONDA_ENV
    script:
        "../../scripts/weight_histograms.py"
