"""Choosing B, the number of inner-loop iterations.

* Metropolis family (Murray et al., used in thesis §5.1 and §6.5):
  ``B = ceil(log(eps) / log(1 - beta))`` with ``beta = mean(w) / max(w)``.
* Uphill family (thesis §6.4): compare the SSD (eq. 6.5, Algorithm 6.4) of the
  weights with a table of SSD(EU(., B)) for B = 0 ... 8191, where EU is the
  exact Uphill expectation of eq. 6.1, and take the B that FIND-B
  (Algorithm 6.5) finds. The table depends only on N: it is computed once and
  cached as an ``.npz`` artifact by the pipeline
  (``pipeline.artifacts.load_or_compute_ssd_table``).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .constants import EPSILON_RESAMPLING, UPHILL_B_MAX
from .sums import device_sum, weight_sums
from .validation import check_int

# A term (P_i - 1)^2 with P_i below this is 1.0 to double precision, so the
# table skips computing P_i there (see ssd_table).
_NEGLIGIBLE = 1e-17


def metropolis_B(weights, epsilon: float = EPSILON_RESAMPLING) -> int:
    """Murray et al.'s B for Metropolis, Metropolis-C1/C2 (thesis §5.1).

    ``beta`` is computed in float64 from the sum the device computes
    (:func:`pfresample.sums.weight_sums`, in its order), so that both
    backends get the same B. All-equal weights give ``beta = 1`` and B = 0:
    every particle keeps itself, which is then exactly unbiased.
    """
    if not 0.0 < float(epsilon) < 1.0:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon}")
    w = np.asarray(weights)
    total, maximum, scale = weight_sums(w)
    beta = (total / w.size) / (maximum * scale)
    if beta >= 1.0:
        return 0
    return math.ceil(math.log(epsilon) / math.log1p(-beta))


def ssd(values) -> float:
    """SSD of a sequence (eq. 6.5, Algorithm 6.4): ``sum((N P_i / sum P - 1)^2)``."""
    p = np.asarray(values, dtype=np.float64)
    return float(np.sum((p.size * p / p.sum() - 1.0) ** 2))


def ssd_table(n: int, b_max: int = UPHILL_B_MAX, xp=np) -> np.ndarray:
    """``SSD(EU(., B))`` for B = 0 ... ``b_max`` (thesis §6.4), float64.

    EU(i, B) = (i^(B+1) - (i-1)^(B+1)) / N^B (eq. 6.1) sums to N, so
    SSD = sum_i (EU(i, B) - 1)^2. Each EU is evaluated as
    ``N x^(B+1) (1 - (1 - 1/i)^(B+1))`` with ``x = i/N`` through exp/expm1,
    which keeps full precision where the two powers nearly cancel. Positions
    whose EU is below 1e-17 add exactly 1.0 each and are counted, not
    evaluated: for large B only the top ~40/B of the positions are computed.
    ``xp=cupy`` computes it on the GPU (minutes on a CPU for N >= 2^24); the
    result is a NumPy array either way.
    """
    n = check_int(n, "N", minimum=1)
    b_max = check_int(b_max, "b_max")
    i = xp.arange(1, n + 1, dtype=np.float64)
    log_x = xp.log(i / n)
    with np.errstate(divide="ignore"):
        log_step = xp.log1p(-1.0 / i)  # log(1 - 1/i); -inf at i = 1
    log_floor = math.log(_NEGLIGIBLE) - math.log(n)
    firsts = xp.searchsorted(log_x, log_floor / xp.arange(1, b_max + 2, dtype=np.float64))
    table = xp.empty(b_max + 1, dtype=np.float64)
    for b, first in enumerate(firsts.tolist()):
        eu = n * xp.exp((b + 1) * log_x[first:]) * -xp.expm1((b + 1) * log_step[first:])
        table[b] = xp.sum((eu - 1.0) ** 2) + first
    return table if xp is np else table.get()


def find_B(table, value: float) -> int:
    """FIND-B (Algorithm 6.5): the B with ``table[B-1] < value <= table[B]``
    (B = 0 when ``value <= table[0]``). A value beyond the table's end gets
    the largest B in the table."""
    table = np.asarray(table)
    return min(int(np.searchsorted(table, value, side="left")), table.size - 1)


@lru_cache(maxsize=8)
def cached_ssd_table(n: int) -> np.ndarray:
    table = ssd_table(n)
    table.flags.writeable = False
    return table


def uphill_B(weights, table=None) -> int:
    """The SSD-matched B for Uphill, Uphill-CA, Uphill-C1 (thesis §6.4).

    ``table`` is the SSD table for this N; without one it is computed (and
    kept in memory for the process). Pipelines pass the cached artifact.
    """
    w = np.asarray(weights)
    if table is None:
        table = cached_ssd_table(w.size)
    elif np.asarray(table).ndim != 1:
        raise ValueError("ssd_table must be a 1-D array of SSD values for B = 0, 1, ...")
    return find_B(table, weights_ssd(w))


def weights_ssd(w: np.ndarray) -> float:
    """The SSD of the weights as the device computes it (reduce.cu's
    ``uphill_b``): ``d_i = N w_i / sum w - 1`` on the scaled weights, the sum
    of ``d_i * d_i`` in the device's order."""
    total, _, scale = weight_sums(w)
    d = w.size * (w.astype(np.float64) * scale) / total - 1.0
    return device_sum(d * d)
