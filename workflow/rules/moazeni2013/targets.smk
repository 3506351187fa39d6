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


rule moazeni2013_ch5:
    """Moazeni (2013) chapter 5: Tables 7-9 and Fig 45 (the GPU's rows where the cells
    have a GPU; Table 7 and Fig 45 come from the colouring alone)."""
    input:
        moazeni2013_outputs(moazeni2013_catalog.CH5_TABLES, moazeni2013_catalog.CH5_FIGURES),


rule moazeni2013_ch6:
    """Moazeni (2013) chapter 6: Table 10, Figs 49-53, the quality curves, the parameter
    sweep, the peer and the GPU-against-NumPy check (the GPU's where the cells have a GPU)."""
    input:
        moazeni2013_outputs(moazeni2013_catalog.CH6_TABLES, moazeni2013_catalog.CH6_FIGURES),


rule moazeni2013_ch7:
    """Moazeni (2013) chapter 7: Tables 11-13, the planted recall, Figs 58, 60, 62-64
    (the timing figures where the cells have a GPU)."""
    input:
        moazeni2013_outputs(moazeni2013_catalog.CH7_TABLES, moazeni2013_catalog.CH7_FIGURES),


rule moazeni2013_ch4_byte_order_spread:
    """Moazeni (2013) chapter 4: each hash's spread of the preloaded keys in each byte order
    (results/tables/moazeni2013/ch4_byte_orders.csv), CPU; not in `all`."""
    input:
        rules.moazeni2013_ch4_byte_order_spread_table.output,


rule moazeni2013:
    """Moazeni (2013): every chapter built (chapters 3 to 7)."""
    input:
        rules.moazeni2013_ch3.input,
        rules.moazeni2013_ch4.input,
        rules.moazeni2013_ch5.input,
        rules.moazeni2013_ch6.input,
        rules.moazeni2013_ch7.input,
        regenerate(DISCARDED, moazeni2013_artifacts),
