"""The paired campaign of Gelencsér-Horváth et al. (2013) (target ``cpf2013_campaign``,
docs/cpf2013.md "The paper's claims, judged"): chosen cells of the study
(``experiments.cpf_cell``, ``sir_cell``) beyond the figures' grid -- both starts of
the growth model side by side, r = N - 1, other kernels -- on their own trajectory
counts, and the study's tables on all of them together.

``cpf2013_campaign`` in the config is a list of groups, each one model and every
N of ``n`` with either every ``radius`` (the CPF) or every ``method`` (the SIR
filter with that global resampler); a group may set ``setup`` (default: the
study's ``cpf2013_growth_setup``), and a CPF group ``precision``,
``neighbourhood`` (default float64, search) and ``fast_math`` (default false).
Each cell runs trajectories 0 ... k - 1 of its model (k:
``cpf2013_campaign_<model>_trajectories``) with the study's run seeds, so its
trajectory j is the figures' cells' trajectory j.

* :func:`cells`: the campaign's cells by :func:`key` (the artifact's name);
* :func:`distinct_cells`: the cells without those that ran as an earlier one did
  (on the CPU a fast-math cell runs the default build, a search scans);
* :func:`campaign_tables`: ``runs`` (one row per cell and trajectory),
  ``errors`` (``tables.error_table``), ``paired``, ``claims`` (``paired``) and
  ``baselines`` (``tables.baselines_table`` of the default kernel at r < N - 1).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from . import paired, tables, targets
from .catalog import campaign_cells as cells

TABLES = ("runs", "errors", "paired", "claims", "baselines")
RUN_COLUMNS = ("model", "filter", "method", "n", "radius", "setup", "precision",
               "neighbourhood", "fast_math", "backend", "device")  # fmt: skip


def trajectories(cfg: Mapping, name: str) -> int:
    return int(cfg[f"cpf2013_campaign_{name}_trajectories"])


def models(cfg: Mapping) -> list[str]:
    """The models the campaign runs, in ``targets.MODELS``' order."""
    used = {c["model"] for c in cells(cfg).values()}
    return [m for m in targets.MODELS if m in used]


def distinct_cells(loaded) -> list:
    """``loaded`` ((arrays, metadata) pairs) without those that ran as an earlier one did
    (on the CPU a fast-math cell runs the default build, a search scans): the paired
    tables compare what differs."""
    seen, out = set(), []
    for arrays, meta in loaded:
        facets = (meta["model"], *sorted(paired._facets(meta).items()), meta["trajectories"])
        if facets not in seen:
            seen.add(facets)
            out.append((arrays, meta))
    return out


def runs_table(loaded) -> pd.DataFrame:
    """One row per (cell, trajectory): what the cell is, the error measures of each
    estimator, the cloud's measures, the step and run times, the run seed."""
    rows = []
    for arrays, meta in loaded:
        measures = [k for k in arrays if k not in ("seeds", "estimates", "mean_B")]
        frame = pd.DataFrame({k: arrays[k] for k in measures})
        frame.insert(0, "trajectory", np.arange(len(arrays["seeds"])))
        frame["seed"] = np.asarray(arrays["seeds"]).astype(np.uint64).astype(str)
        for col in RUN_COLUMNS:
            frame.insert(0, col, meta.get(col, ""))
        rows.append(frame)
    return pd.concat(rows, ignore_index=True)


def campaign_tables(loaded) -> dict[str, pd.DataFrame]:
    """The campaign's tables (``TABLES``) from its loaded cells, :func:`distinct_cells` first."""
    loaded = distinct_cells(loaded)
    errors = pd.concat(
        [tables.error_table([c for c in loaded if c[1]["model"] == m]) for m in targets.MODELS
         if any(c[1]["model"] == m for c in loaded)], ignore_index=True,
    )  # fmt: skip
    p = paired.paired_table(loaded)
    default = errors[(errors["setup"] != "thesis") & (errors["precision"].isin(["", "float64"]))
                     & ~errors["fast_math"].astype(bool)]  # fmt: skip
    default = default[default["radius"].isna() | (default["radius"] < default["n"] - 1)]
    claims, baselines = paired.claims_table(p), tables.baselines_table(default)
    return {"runs": runs_table(loaded), "errors": errors, "paired": p, "claims": claims,
            "baselines": baselines}  # fmt: skip
