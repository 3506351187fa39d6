"""Resampling calls on the CPU backend: the NumPy reference kernels of the
registry, with B chosen on the host when none is given. Like
``pfresample.cuda.run`` on the device, it takes weights and kernel arguments
that ``validation.prepare`` checked, and checks nothing again."""

from __future__ import annotations

import numpy as np

from ..constants import EPSILON_RESAMPLING
from ..rng import seed_keys
from ..tuning import metropolis_B, uphill_B


def default_B(m, w: np.ndarray, params: dict) -> int:
    """The B of ``m`` on checked host weights: Murray et al.'s formula for the
    Metropolis family (``epsilon``), the SSD match for the Uphill family
    (``ssd_table``)."""
    if m.B_rule == "metropolis":
        return metropolis_B(w, params.get("epsilon", EPSILON_RESAMPLING))
    if m.B_rule == "uphill":
        return uphill_B(w, params.get("ssd_table"))
    raise TypeError(f"method {m.name!r} has no B parameter")


def resample_many(m, w: np.ndarray, seeds: list, kw: dict, params: dict) -> np.ndarray:
    """K resamplings on the host: (K, N) int32, row k for ``seeds[k]``."""
    if kw.get("B", 0) is None:
        kw = {**kw, "B": default_B(m, w, params)}
    return m.cpu(w, seed_keys(seeds), **kw)
