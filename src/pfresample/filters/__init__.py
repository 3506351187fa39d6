"""Particle filters built on the resamplers of ``pfresample``."""

from .sir import STAGES, SirResult, rmse, run_sir

__all__ = ["STAGES", "SirResult", "rmse", "run_sir"]
