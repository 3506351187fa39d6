"""Particle filters built on the resamplers of ``pfresample``: the SIR filter of
Dülger (2017) (``sir``), the bootstrap and adaptive-resampling filters and
SMC-EM of Güldaş (2015) (``adaptive``, ``smcem``), the cellular particle
filter of Gelencsér-Horváth et al. (2013) (``cellular``), the SIR and D3
filters of Das et al. (2014) (``d3``), and ``run_filter`` (``engine``): one
bootstrap filter for any resampler and any model, with the estimate of
log p(z_1:T)."""

from .adaptive import FilterRun, amse, run_adaptive, run_bootstrap
from .cellular import CpfRun, run_cpf
from .d3 import D3Run, run_d3, velocity_errors
from .engine import FilterResult, run_filter
from .sir import STAGES, SirResult, rmse, run_sir
from .smcem import EmRun, run_smcem

__all__ = [
    "STAGES",
    "CpfRun",
    "D3Run",
    "EmRun",
    "FilterResult",
    "FilterRun",
    "SirResult",
    "amse",
    "rmse",
    "run_adaptive",
    "run_bootstrap",
    "run_cpf",
    "run_d3",
    "run_filter",
    "run_sir",
    "run_smcem",
    "velocity_errors",
]
