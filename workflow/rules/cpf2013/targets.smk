# The study's targets, and its artifacts for target `all` (STUDY_ARTIFACTS, Snakefile).

STUDY_ARTIFACTS["cpf2013"] = cpf2013_artifacts


rule cpf2013:
    """Gelencsér-Horváth et al. (2013): Figs 7-12, Table 1 and the SIR baselines' table."""
    input:
        cpf2013_outputs(),
        regenerate(DISCARDED, cpf2013_artifacts),
