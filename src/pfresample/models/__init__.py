"""State-space models of the filter experiments.

Every model has the same interface, which ``pfresample.filters`` relies on:
``transition(x, k, rng)`` (x_{k+1} given the particles x at time k),
``observe(x)``, ``log_likelihood(y, x)`` (one value per particle) and
``init_particles(n, rng)``.
"""

from .bearings import BearingsOnlyModel
from .bimodal import BimodalModel
from .growth import GrowthModel
from .radar import RadarModel
from .scenarios import SCENARIOS, truth_trajectory
from .uuv import UuvModel, kalman_filter
from .volatility import VolatilityModel

__all__ = [
    "SCENARIOS",
    "BearingsOnlyModel",
    "BimodalModel",
    "GrowthModel",
    "RadarModel",
    "UuvModel",
    "VolatilityModel",
    "kalman_filter",
    "truth_trajectory",
]
