"""pfresample: regenerate the figures of the parallel-resampling literature.

    snakemake --cores all                                  # everything
    snakemake --cores all dulger2017                       # one study
    snakemake --cores all dulger2017_ch5                   # one chapter
    snakemake --cores all guldas2015                       # Güldaş (2015) Figs 4.1-4.8 (4.12)
    snakemake --cores all cpf2013                          # Gelencsér-Horváth (2013) Figs 7-12
    snakemake --cores all d3_2014                          # Das et al. (2014) Tables 5-7, Figs 3-11
    snakemake --cores 1 dulger2017_profiler                # Dülger Tables 5.3-5.5, Figs 6.24-6.26 (needs ncu)
    snakemake --cores all results/figures/dulger2017/fig2_3.png   # one figure
    snakemake --cores all --config log2_n_max=18 sequences=4      # another grid

Configuration: config/config.yaml (shared keys) and config/studies/<study>.yaml
(each study's grid and catalog); keys in config/README.md. Without a visible
CUDA device, `scale: auto` overlays config/quick.yaml. docs/pipeline.md walks
one figure from the config to its PNG.
"""

from snakemake.utils import min_version, validate

from pfresample.studies.cpf2013 import catalog as cpf2013_catalog
from pfresample.studies.d3_2014 import catalog as d3_2014_catalog
from pfresample.studies.dulger2017 import catalog as dulger2017_catalog
from pfresample.studies.guldas2015 import catalog as guldas2015_catalog

min_version("9.0")


configfile: f"{workflow.basedir}/config/config.yaml"
configfile: f"{workflow.basedir}/config/studies/dulger2017.yaml"
configfile: f"{workflow.basedir}/config/studies/guldas2015.yaml"
configfile: f"{workflow.basedir}/config/studies/cpf2013.yaml"
configfile: f"{workflow.basedir}/config/studies/d3_2014.yaml"


include: "workflow/rules/common.smk"


SCALE, SCALE_NOTE = apply_scale_preset(
    config,
    dulger2017_catalog.INTEGER_LIST_KEYS
    + guldas2015_catalog.INTEGER_LIST_KEYS
    + cpf2013_catalog.INTEGER_LIST_KEYS
    + d3_2014_catalog.INTEGER_LIST_KEYS,
)
validate(config, "config/schemas/config.schema.yaml")
check(dulger2017_catalog.check_config, config)
check(guldas2015_catalog.check_config, config)
check(cpf2013_catalog.check_config, config)
check(d3_2014_catalog.check_config, config)
# A corrupt or truncated cached artifact is deleted here, never used; the targets
# below ask for it again so that it is rebuilt (and what read it reruns).
DISCARDED = discard_corrupt_artifacts()


include: "workflow/rules/dulger2017/common.smk"
include: "workflow/rules/dulger2017/resampling.smk"
include: "workflow/rules/dulger2017/filter.smk"
include: "workflow/rules/dulger2017/profiler.smk"
include: "workflow/rules/guldas2015/common.smk"
include: "workflow/rules/guldas2015/single_step.smk"
include: "workflow/rules/guldas2015/filters.smk"
include: "workflow/rules/cpf2013/common.smk"
include: "workflow/rules/cpf2013/cells.smk"
include: "workflow/rules/cpf2013/outputs.smk"
include: "workflow/rules/d3_2014/common.smk"
include: "workflow/rules/d3_2014/cells.smk"
include: "workflow/rules/d3_2014/outputs.smk"


rule dulger2017_ch2:
    """Dülger (2017) chapter 2: Fig 2.3 and the weight datasets it draws."""
    input:
        fig2_3_outputs(),
        fig2_3_weights(),


rule dulger2017_ch5:
    """Dülger (2017) chapter 5: Figs 5.3-5.14 and their tables, filter Tables 5.1-5.2."""
    input:
        dulger2017_outputs(5),
        dulger2017_filter_outputs(5),


rule dulger2017_ch6:
    """Dülger (2017) chapter 6: Figs 6.2-6.22, 6.27, Table 6.1 and their tables,
    filter Tables 6.2-6.3 and Fig 6.23."""
    input:
        dulger2017_outputs(6),
        dulger2017_filter_outputs(6),


rule dulger2017_ch7:
    """Dülger (2017) chapter 7: radar tracking, Tables 7.2-7.3, 7.5-7.6 and Figs 7.1-7.2."""
    input:
        dulger2017_filter_outputs(7),


rule dulger2017:
    """Every target of Dülger (2017), and the Uphill SSD tables of its grid."""
    input:
        rules.dulger2017_ch2.input,
        rules.dulger2017_ch5.input,
        rules.dulger2017_ch6.input,
        rules.dulger2017_ch7.input,
        uphill_ssd_tables(),


rule guldas2015_filters:
    """Güldaş (2015) Figs 4.9-4.12, the filter experiments (on the CPU for now)."""
    input:
        guldas2015_figure_outputs(guldas2015_catalog.FILTER_STUDY_FIGURES),
        regenerate(DISCARDED, guldas2015_filter_artifacts),


rule guldas2015:
    """Güldaş (2015): the single-step experiments (Figs 4.1-4.8), and at quick scale
    the filter experiments (Figs 4.9-4.12; at thesis scale: guldas2015_filters)."""
    input:
        guldas2015_outputs(),


rule cpf2013:
    """Gelencsér-Horváth et al. (2013): Figs 7-12, Table 1 and the SIR baselines' table."""
    input:
        cpf2013_outputs(),
        regenerate(DISCARDED, cpf2013_artifacts),


rule d3_2014:
    """Das et al. (2014): Figs 3-6, 10, 11, Tables 5-7 (with the CPM) and the methods table;
    the GPU cells (Tables 5-7's GPU columns, Fig 10) where a GPU may run them."""
    input:
        d3_2014_outputs(),
        regenerate(DISCARDED, d3_2014_artifacts),


rule all:
    """Every study's figures and tables, and the artifacts they read."""
    default_target: True
    input:
        rules.dulger2017.input,
        rules.guldas2015.input,
        rules.cpf2013.input,
        rules.d3_2014.input,
        regenerate(
            DISCARDED,
            lambda: resampling_artifacts()
            | filter_artifacts()
            | guldas2015_artifacts()
            | cpf2013_artifacts()
            | d3_2014_artifacts(),
        ),
