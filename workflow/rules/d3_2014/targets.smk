# The study's targets, and its artifacts for target `all` (STUDY_ARTIFACTS, Snakefile).

STUDY_ARTIFACTS["d3_2014"] = d3_2014_artifacts


rule d3_2014:
    """Das et al. (2014): Figs 3-6, 10, 11, Tables 5-7 (with the CPM), the methods table, the
    regime experiment's tables and the printed thresholds' tables; the GPU cells (Tables 5-7's GPU columns, Fig 10) where a
    GPU may run them."""
    input:
        d3_2014_outputs(),
        regenerate(DISCARDED, d3_2014_artifacts),


rule d3_2014_regimes:
    """The regime experiment alone: its four tables (results/tables/d3_2014/regimes/)."""
    input:
        d3_2014_regime_tables(),
        regenerate(DISCARDED, lambda: set(d3_2014_regime_cells())),


rule d3_2014_thresholds:
    """The paper's printed GPU thresholds on the CPU reference alone: their bias and Fig
    11's iterations in each regime (results/tables/d3_2014/thresholds/)."""
    input:
        d3_2014_threshold_tables(),
        regenerate(DISCARDED, lambda: set(d3_2014_threshold_cells())),


rule d3_2014_gpu:
    """The GPU experiment (timing at every N and TPB, spread, regimes and Table 7 over 360 s
    at N = 50,000) and its derived tables (results/tables/d3_2014/gpu/); run here where the
    cells have a GPU, else drawn from the newest committed run, labelled; not in `all`."""
    input:
        d3_2014_gpu_tables_outputs(),
