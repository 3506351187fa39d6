"""A family of paired comparisons judged together: each comparison's mean difference with a
simultaneous (Bonferroni) interval, its two-sided p-value adjusted by Holm's step-down,
and the smallest effect the sample could detect.

A study that picks the best of several comparisons after the fact (an inner radius, a
block size) must pay for the choice; this module does that once for the studies that
pre-register a test (``cpf2013.preregistered``, ``d3_2014.preregistered``).

* the interval of comparison k is ``mean ± t_{1 − α/(2m)} sd / √n`` (m comparisons, α =
  1 − level): all m hold together with probability ≥ level;
* ``p_holm`` is Holm's adjusted p (sorted p_(i) times m − i + 1, made monotone, capped at
  1); a comparison is ``resolved`` where ``p_holm < α``;
* ``mde`` is the smallest true mean difference the comparison would resolve at its
  Bonferroni level with probability ``power`` (the one-sample t approximation
  ``(t_{1 − α/(2m)} + t_{power}) sd / √n`` with the sample's own sd).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

COLUMNS = ["comparison", "pairs", "mean", "sd", "ci_low", "ci_high", "p", "p_holm",
           "resolved", "mde", "level", "family_size"]  # fmt: skip


def t_half(values, level: float) -> float:
    """The half width of the two-sided Student-t interval of the mean of ``values`` at
    ``level`` (two values at least)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        raise ValueError(f"an interval needs two values at least, got {x.size}")
    return float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the order given."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or np.any((p < 0) | (p > 1)) or not np.isfinite(p).all():
        raise ValueError(f"holm needs a 1-d array of p-values in [0, 1], got {p!r}")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum((m - np.arange(m)) * p[order], 1.0)
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def paired_family(
    differences: Mapping[str, np.ndarray], level: float = 0.99, power: float = 0.8
) -> pd.DataFrame:
    """One row per comparison of ``differences`` (name -> the per-pair differences b − a),
    judged as one family of ``len(differences)`` comparisons (module docstring)."""
    if not differences:
        raise ValueError("paired_family needs at least one comparison")
    if not 0 < level < 1 or not 0 < power < 1:
        raise ValueError(f"level and power must lie in (0, 1), got {level}, {power}")
    m = len(differences)
    alpha = 1.0 - level
    rows = []
    for name, d in differences.items():
        d = np.asarray(d, dtype=np.float64)
        if d.ndim != 1 or d.size < 3 or not np.isfinite(d).all():
            raise ValueError(f"{name}: needs >= 3 finite paired differences, got {d.shape}")
        n = d.size
        mean, sd = float(d.mean()), float(d.std(ddof=1))
        se = sd / np.sqrt(n)
        crit = stats.t.ppf(1 - alpha / (2 * m), n - 1)
        p = 2 * stats.t.sf(abs(mean) / se, n - 1) if se > 0 else float(mean == 0)
        rows.append({"comparison": name, "pairs": n, "mean": mean, "sd": sd,
                     "ci_low": mean - crit * se, "ci_high": mean + crit * se, "p": p,
                     "mde": (crit + stats.t.ppf(power, n - 1)) * se})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["p_holm"] = holm(frame["p"].to_numpy())
    frame["resolved"] = frame["p_holm"] < alpha
    frame["level"] = level
    frame["family_size"] = m
    return frame[COLUMNS]
