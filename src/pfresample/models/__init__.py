"""State-space models of the filter experiments.

Every model has the same interface, which ``pfresample.filters`` relies on:
``init_particles(n, rng)`` (N particles, (N,) or (N, d)), ``transition(x, k,
rng)`` (x_{k+1} given the particles x at time k, one draw each) and
``log_likelihood(y, x)`` (log g(y | x), one value per particle), with ``rng``
a NumPy Generator; ``observe(x)`` (the noise-free measurement, for
simulation) and ``mean_transition(x, k)`` (D3's prior mean) where needed.
``LinearGaussianModel`` is the worked example of docs/library.md ("Your own
model") and has an exact filter.
"""

from .bearings import BearingsOnlyModel
from .bimodal import BimodalModel
from .growth import GrowthModel
from .linear_gaussian import LinearGaussianModel
from .radar import RadarModel
from .scenarios import SCENARIOS, truth_trajectory
from .uuv import UuvModel, kalman_filter
from .volatility import VolatilityModel

__all__ = [
    "SCENARIOS",
    "BearingsOnlyModel",
    "BimodalModel",
    "GrowthModel",
    "LinearGaussianModel",
    "RadarModel",
    "UuvModel",
    "VolatilityModel",
    "kalman_filter",
    "truth_trajectory",
]
