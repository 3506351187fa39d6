"""Particle filters built on the resamplers of ``pfresample``: one engine,
``run_filter`` (``engine``), for any resampler and any model, with the
estimate of log p(z_1:T); the source documents' filters are its options --
Dülger's SIR filter (``sir.SIR_OPTIONS``), Güldaş's bootstrap and adaptive
filters (``adaptive``), the cellular particle filter of Gelencsér-Horváth et
al. (``cellular.CPF_OPTIONS``), the filters of Das et al. (``d3.D3_OPTIONS``)
-- and SMC-EM (``smcem``) runs its E-step through it. On the GPU the engine
picks the CUDA graph that implements a call (``gpu``), kept in one cache
that ``clear_graphs`` empties."""

from .adaptive import ADAPTIVE_OPTIONS, BOOTSTRAP_OPTIONS, amse, interaction_level
from .cellular import CPF_OPTIONS
from .common import STAGES
from .d3 import D3_OPTIONS, velocity_errors
from .engine import FilterResult, run_filter, run_filters
from .graph import clear_graphs
from .sir import SIR_OPTIONS, rmse
from .smcem import run_smcem

__all__ = [
    "ADAPTIVE_OPTIONS",
    "BOOTSTRAP_OPTIONS",
    "CPF_OPTIONS",
    "D3_OPTIONS",
    "SIR_OPTIONS",
    "STAGES",
    "FilterResult",
    "amse",
    "clear_graphs",
    "interaction_level",
    "rmse",
    "run_filter",
    "run_filters",
    "run_smcem",
    "velocity_errors",
]
