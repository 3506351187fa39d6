"""Das, Mazumdar and Banerjee (2014), "GPU accelerated novel particle
filtering method" (Computing, 2014): D3 (dual distribution dependent)
resampling on the UUV velocity model of §3.2, Figs 3-6, 10, 11 and Tables
5-7 with the cost-to-performance metric, on the library's
``pfresample.run_filter`` with ``D3_OPTIONS`` and ``pfresample.models.UuvModel``.

* ``catalog``: the study's configuration keys, their checks, the paper's
  published numbers and the CPM of §4.3;
* ``experiments``: the cells (trajectories with the Kalman floor, filter
  runs, GPU threads-per-block runs, Fig 11's local-CDF iterations);
* ``tables``: Tables 5-7, the methods table and the figures' tidy tables;
  ``figures``: the figures.
"""
