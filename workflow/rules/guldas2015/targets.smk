# The study's targets, and its artifacts for target `all` (STUDY_ARTIFACTS, Snakefile).

STUDY_ARTIFACTS["guldas2015"] = guldas2015_artifacts


rule guldas2015_filters:
    """Güldaş (2015) Figs 4.9-4.12, the filter experiments, on the configured backend, and
    EM's convergence (exact EM on Fig 4.12's sequences, CPU)."""
    input:
        guldas2015_filter_outputs(),
        regenerate(DISCARDED, guldas2015_filter_artifacts),


rule guldas2015:
    """Güldaş (2015): the single-step experiments (Figs 4.1-4.8) and float32 stability on
    the thesis's kernel, and at quick scale the filter experiments (Figs 4.9-4.12) with
    EM's convergence (at thesis scale: guldas2015_filters)."""
    input:
        guldas2015_outputs(),


rule guldas2015_log32:
    """float32 stability on the thesis's kernel alone: its two tables
    (results/tables/guldas2015/log32/), CPU."""
    input:
        guldas2015_log32_tables(),
        regenerate(DISCARDED, guldas2015_log32_artifacts),


rule guldas2015_exact_em:
    """EM's convergence alone: its three tables (results/tables/guldas2015/exact_em/), CPU;
    the ML points from Fig 4.12's reference cell."""
    input:
        guldas2015_exact_em_tables(),
        regenerate(DISCARDED, guldas2015_exact_em_artifacts),


rule guldas2015_gpu:
    """The GPU experiment (float32 stability of the log-domain scan and Fig 4.12's SMC-EM at
    the thesis's N) and its derived tables (results/tables/guldas2015/gpu/); run here where
    the cells have a GPU, else drawn from the newest committed run, labelled; not in `all`."""
    input:
        guldas2015_gpu_tables_outputs(),
