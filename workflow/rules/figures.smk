"""Figures of Dülger (2017), written as PNG and PDF under results/figures/dulger2017/."""


rule dulger2017_fig2_3:
    """Fig 2.3: histograms of one weight sequence of each gamma distribution."""
    input:
        weights=fig2_3_weights(),
    output:
        png=report(
            "results/figures/dulger2017/fig2_3.png",
            caption="../report/fig2_3.rst",
            category="Dülger (2017)",
            subcategory="fig2_3",
        ),
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


rule dulger2017_figure:
    """Figs 5.3-5.14, 6.2-6.22, 6.27 and Table 6.1 from their tidy table."""
    input:
        table="results/tables/dulger2017/{figure}.csv",
    output:
        png=report(
            "results/figures/dulger2017/{figure}.png",
            caption="../report/dulger2017_figure.rst",
            category="Dülger (2017)",
            subcategory="{figure}",
        ),
        pdf="results/figures/dulger2017/{figure}.pdf",
    params:
        spec=lambda wildcards: config["dulger2017_figures"][wildcards.figure],
        distributions=lambda wildcards: figure_distributions(
            config["dulger2017_figures"][wildcards.figure]
        ),
        backend=cell_backend_note(),
        scale=SCALE_NOTE,
        draws=config["draws"],
        sequences=config["sequences"],
    log:
        "results/logs/figures/dulger2017/{figure}.log",
    benchmark:
        "results/benchmarks/figures/dulger2017/{figure}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
    conda:
        CONDA_ENV
    script:
        "../../scripts/dulger2017_figure.py"
