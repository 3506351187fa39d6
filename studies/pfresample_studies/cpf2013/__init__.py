"""Gelencsér-Horváth, Tornai, Horváth and Cserey (2013), "Fast, parallel
implementation of particle filtering on the GPU architecture" (EURASIP J. Adv.
Signal Process.): the cellular particle filter (CPF) on a ring, Figs 7-12 and
Table 1, on the library's ``pfresample.run_filter`` with resampler "cellular"
and ``CPF_OPTIONS``, with the SIR filter's global resamplers as baselines.

* ``targets``: the two models, their simulated trajectories and the error
  measures of Figs 9-10;
* ``experiments``: the cells (CPF and SIR runs over the trajectories, timings);
* ``catalog``: the study's configuration keys, their checks, the paper's
  published numbers;
* ``tables``: tidy tables of the figures and Table 1; ``figures``: the figures.
"""
