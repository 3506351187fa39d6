# The study's targets, and its artifacts for target `all` (STUDY_ARTIFACTS, Snakefile).

STUDY_ARTIFACTS["dulger2017"] = lambda: resampling_artifacts() | filter_artifacts()


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
