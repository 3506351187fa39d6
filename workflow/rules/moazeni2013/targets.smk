# The study's targets, and its artifacts for target `all` (STUDY_ARTIFACTS, Snakefile).

STUDY_ARTIFACTS["moazeni2013"] = moazeni2013_artifacts


rule moazeni2013_ch3:
    """Moazeni (2013) chapter 3: Tables 1 and 3, Figs 12, 13 and 15-18 (the GPU's rows
    where the cells have a GPU)."""
    input:
        moazeni2013_ch3_outputs(),


rule moazeni2013_ch4:
    """Moazeni (2013) chapter 4: Table 5 and Figs 19, 26-40 (the GPU's where the cells
    have a GPU)."""
    input:
        moazeni2013_ch4_outputs(),


rule moazeni2013:
    """Moazeni (2013): every chapter built so far (chapters 3 and 4)."""
    input:
        rules.moazeni2013_ch3.input,
        rules.moazeni2013_ch4.input,
        regenerate(DISCARDED, moazeni2013_artifacts),
