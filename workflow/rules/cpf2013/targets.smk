# The study's targets, and its artifacts for target `all` (STUDY_ARTIFACTS, Snakefile).

STUDY_ARTIFACTS["cpf2013"] = cpf2013_artifacts


rule cpf2013:
    """Gelencsér-Horváth et al. (2013): Figs 7-12, Table 1 and the SIR baselines' table."""
    input:
        cpf2013_outputs(),
        regenerate(DISCARDED, cpf2013_artifacts),


rule cpf2013_campaign:
    """Gelencsér-Horváth et al. (2013): the paired campaign (cpf2013_campaign) and its
    tables; not part of target cpf2013 (its CPU runs take the better part of an hour)."""
    input:
        list(cpf2013_campaign_tables().values()),
        regenerate(
            DISCARDED,
            lambda: set(cpf2013_campaign_cells())
            | {cpf2013_campaign_trajectories(m) for m in cpf2013_campaign.models(config)},
        ),


rule cpf2013_gpu:
    """The GPU experiment (target cpf2013's cells on the GPU in one process with the
    device's extras, the CPU filter alone on the same host), its derived tables
    (results/tables/cpf2013/gpu/) and figures (results/figures/cpf2013/gpu/); run here where
    the cells have a GPU, else drawn from the newest committed run, labelled; not in `all`."""
    input:
        cpf2013_gpu_outputs(),
