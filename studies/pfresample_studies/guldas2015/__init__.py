"""Güldaş (2015), "Acceleration of SMC via parallelization of resampling
algorithms" (MSc thesis): the single-step experiments of §4.1 (Figs 4.1-4.8)
on the library's butterfly resamplers (``pfresample.resampling.butterfly``).

* ``targets``: the particle-weight sets and their exact weighted moments;
* ``experiments``: the cells (particle sets, resampling, errors, timings);
* ``catalog``: the study's configuration keys and their checks;
* ``tables``: tidy tables of the figures; ``figures``: the figures.
"""
