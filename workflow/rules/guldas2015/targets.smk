# The study's targets, and its artifacts for target `all` (STUDY_ARTIFACTS, Snakefile).

STUDY_ARTIFACTS["guldas2015"] = guldas2015_artifacts


rule guldas2015_filters:
    """Güldaş (2015) Figs 4.9-4.12, the filter experiments, on the configured backend."""
    input:
        guldas2015_figure_outputs(guldas2015_catalog.FILTER_STUDY_FIGURES),
        regenerate(DISCARDED, guldas2015_filter_artifacts),


rule guldas2015:
    """Güldaş (2015): the single-step experiments (Figs 4.1-4.8), and at quick scale
    the filter experiments (Figs 4.9-4.12; at thesis scale: guldas2015_filters)."""
    input:
        guldas2015_outputs(),
