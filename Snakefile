"""pfresample: regenerate the figures of the parallel-resampling literature.

    snakemake --cores all                                  # everything
    snakemake --cores all dulger2017                       # one study
    snakemake --cores all dulger2017_ch5                   # one chapter
    snakemake --cores all guldas2015                       # Güldaş (2015) Figs 4.1-4.8 (4.12)
    snakemake --cores all cpf2013                          # Gelencsér-Horváth (2013) Figs 7-12
    snakemake --cores all d3_2014                          # Das et al. (2014) Tables 5-7, Figs 3-11
    snakemake --cores all moazeni2013_ch3                  # Moazeni (2013) ch. 3: Tables 1, 3, Figs 13-17
    snakemake --cores all d3_2014_gpu                      # a study's GPU experiment (also cpf2013_gpu,
                                                           # guldas2015_gpu): no GPU, the committed run's
    snakemake --cores 1 dulger2017_profiler                # Dülger Tables 5.3-5.5, Figs 6.24-6.26 (needs ncu)
    snakemake --cores all results/figures/dulger2017/fig2_3.png   # one figure
    snakemake --cores all --config log2_n_max=18 sequences=4      # another grid

Configuration: config/config.yaml (shared keys) and config/studies/<study>.yaml
(each study's grid and catalog); keys in config/README.md. Without a visible
CUDA device, `scale: auto` overlays config/quick.yaml. docs/pipeline.md walks
one figure from the config to its PNG.
"""

import importlib

from snakemake.utils import min_version, validate

min_version("9.0")

# The studies and their rule files (workflow/rules/<study>/<name>.smk, in include order;
# targets.smk last: the study's target rules and its artifacts). A study joins the
# workflow here and nowhere else: its config file, its catalog's checks, its rules, its
# target and its artifacts in target `all` follow from its entry.
STUDIES = {
    "dulger2017": ("common", "resampling", "filter", "profiler"),
    "guldas2015": ("common", "single_step", "filters", "checks", "gpu"),
    "cpf2013": ("common", "cells", "outputs", "gpu"),
    "d3_2014": ("common", "cells", "outputs", "gpu"),
    "moazeni2013": ("common", "cells", "outputs", "gpu"),
}
CATALOGS = {study: importlib.import_module(f"pfresample_studies.{study}.catalog") for study in STUDIES}
STUDY_ARTIFACTS = {}  # study -> a function of its artifacts (set in its targets.smk)


configfile: f"{workflow.basedir}/config/config.yaml"


for study in STUDIES:

    configfile: f"{workflow.basedir}/config/studies/{study}.yaml"


include: "workflow/rules/common.smk"


SCALE, SCALE_NOTE = apply_scale_preset(
    config, [key for catalog in CATALOGS.values() for key in catalog.NUMBER_LIST_KEYS]
)
validate(config, "config/schemas/config.schema.yaml")
for catalog in CATALOGS.values():
    check(catalog.check_config, config)
# A corrupt or truncated cached artifact is deleted here, never used; the targets
# below ask for it again so that it is rebuilt (and what read it reruns).
DISCARDED = discard_corrupt_artifacts()


for study, rule_files in STUDIES.items():
    for name in (*rule_files, "targets"):

        include: f"workflow/rules/{study}/{name}.smk"


# The run report: every figure with where its data came from (results/report/).
include: "workflow/rules/report.smk"


rule all:
    """Every study's figures and tables, the artifacts they read, and the run report."""
    default_target: True
    input:
        [getattr(rules, study).input for study in STUDIES],
        rules.figure_sources.output,
        regenerate(
            DISCARDED, lambda: set().union(*(STUDY_ARTIFACTS[study]() for study in STUDIES))
        ),
