"""pfresample: regenerate the figures of the parallel-resampling literature.

    snakemake --cores all                                  # everything
    snakemake --cores all dulger2017_ch2                   # one chapter
    snakemake --cores all results/figures/dulger2017/fig2_3.png   # one figure
    snakemake --cores all --config log2_n_max=18 sequences=4      # another grid

Configuration: config/config.yaml (thesis scale; keys in config/README.md).
Without a visible CUDA device, `scale: auto` overlays config/quick.yaml.
"""

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: f"{workflow.basedir}/config/config.yaml"


# Helpers; resolves `scale` and applies config/quick.yaml when no CUDA device is visible.
include: "workflow/rules/common.smk"


validate(config, "config/schemas/config.schema.yaml")
check_config(config)


include: "workflow/rules/weights.smk"
include: "workflow/rules/tuning.smk"
include: "workflow/rules/figures.smk"


rule dulger2017_ch2:
    """Dülger (2017) chapter 2: Fig 2.3 and the weight datasets it draws."""
    input:
        fig2_3_outputs(),
        fig2_3_weights(),


rule all:
    """Every figure and table of the configured grid, and the artifacts they read."""
    default_target: True
    input:
        rules.dulger2017_ch2.input,
        uphill_ssd_tables(),
