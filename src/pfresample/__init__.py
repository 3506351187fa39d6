"""pfresample: parallel resampling for particle filters.

A library of resamplers (Systematic, Stratified, Multinomial, Residual,
Metropolis, Metropolis-C1/C2, Rejection, Uphill, Uphill-CA, Uphill-C1, and the
butterfly family with its adaptive form, cellular, and D3, which moves
particles) with a NumPy reference backend and
CUDA kernels through CuPy, following the algorithm boxes of Dülger (2017),
Güldaş (2015) and Murray et al.

    import pfresample as pr
    ancestors = pr.resample(weights, "uphill-ca", seed=1, segment_bytes=128)
    run = pr.run_filter(model, y, 1024, "systematic", seed=1)  # run.log_likelihood
"""

from .api import (
    choose_B,
    methods,
    offspring,
    resample,
    resample_adaptive,
    resample_d3,
    resample_each_B,
    resample_many,
)
from .filters.engine import FilterResult, run_filter, run_filters

__version__ = "0.1.0"

__all__ = [
    "FilterResult",
    "__version__",
    "choose_B",
    "methods",
    "offspring",
    "resample",
    "resample_adaptive",
    "resample_d3",
    "resample_each_B",
    "resample_many",
    "run_filter",
    "run_filters",
]
