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


rule moazeni2013_ch3_real:
    """Moazeni (2013) chapter 3 on real instances (the 8,192-gon, the 8,191-matrix chain),
    Fig 12 behind delay_ns and the GPU cell from n = 64 (results/tables/moazeni2013/ch3_real/);
    run here where the cells have a GPU, else the newest committed run's, labelled; not in
    `all`."""
    input:
        rules.moazeni2013_ch3_real_tables.output,


rule moazeni2013_ch7_fig63:
    """Moazeni (2013) Fig 63 end to end, GPU against the best CPU code
    (results/tables/moazeni2013/ch7_fig63/); run here where the cells have a GPU, else the
    newest committed run's, labelled; not in `all`."""
    input:
        rules.moazeni2013_ch7_fig63_tables.output,


rule moazeni2013_ch4_peers:
    """Moazeni (2013) chapter 4 beside cuCollections and SlabHash on fair terms
    (results/tables/moazeni2013/ch4_peers/); run here where the cells have a GPU and the
    peers are built, else the newest committed run's, labelled; not in `all`."""
    input:
        rules.moazeni2013_ch4_peers_tables.output,


rule moazeni2013_ch6_tv_draws:
    """Moazeni (2013) chapter 6: ours against scikit-image over held-out noise draws, both
    tuned by one rule (results/tables/moazeni2013/ch6_tv_draws/summary.csv), CPU; not in
    `all`."""
    input:
        rules.moazeni2013_ch6_tv_draws_summary.output,
