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

TABLES = ("runs", "errors", "paired", "claims", "baselines")
CPF_DEFAULTS = {"precision": "float64", "neighbourhood": "search", "fast_math": False}
RUN_COLUMNS = ("model", "filter", "method", "n", "radius", "setup", "precision",
               "neighbourhood", "fast_math", "backend", "device")  # fmt: skip


def key(cell: Mapping) -> str:
    """The name of a campaign cell (its artifact's file name without .npz)."""
    if cell["kind"] == "sir":
        return f"sir-{cell['model']}-n{cell['n']}-{cell['method']}-{cell['setup']}"
    fast = "-fast" if cell["fast_math"] else ""
    return (f"cpf-{cell['model']}-n{cell['n']}-r{cell['radius']}-{cell['setup']}-"
            f"{cell['precision']}-{cell['neighbourhood']}{fast}")  # fmt: skip


def cells(cfg: Mapping) -> dict[str, dict]:
    """The campaign's cells in the config's order, by :func:`key` (duplicates once)."""
    out = {}
    default_setup = str(cfg["cpf2013_growth_setup"])
    for group in cfg.get("cpf2013_campaign") or []:
        base = {"model": group["model"], "setup": str(group.get("setup", default_setup))}
        if "radius" in group:
            base |= {"kind": "cpf"} | {k: group.get(k, v) for k, v in CPF_DEFAULTS.items()}
            specs = [base | {"n": int(n), "radius": int(r)}
                     for n in group["n"] for r in group["radius"]]  # fmt: skip
        else:
            specs = [base | {"kind": "sir", "n": int(n), "method": str(m)}
                     for n in group["n"] for m in group["method"]]  # fmt: skip
        for spec in specs:
            out.setdefault(key(spec), spec)
    return out


def trajectories(cfg: Mapping, name: str) -> int:
    return int(cfg[f"cpf2013_campaign_{name}_trajectories"])


def models(cfg: Mapping) -> list[str]:
    """The models the campaign runs, in ``targets.MODELS``' order."""
    used = {c["model"] for c in cells(cfg).values()}
    return [m for m in targets.MODELS if m in used]


def check(cfg: Mapping) -> None:
    """Checks across keys, a ValueError naming the key."""
    from pfresample.resampling.registry import ancestor_methods

    from . import catalog

    known = ancestor_methods()
    for name, c in cells(cfg).items():
        if c["setup"] not in catalog.SETUPS:
            raise ValueError(f"cpf2013_campaign: {name} has setup {c['setup']!r}, "
                             f"not one of {catalog.SETUPS}")  # fmt: skip
        if c["kind"] == "sir":
            if c["method"] not in known or c["method"] == "cellular":
                raise ValueError(f"cpf2013_campaign: {name}'s method must be a global "
                                 "resampler of the registry that returns ancestors")  # fmt: skip
            continue
        if not 1 <= c["radius"] <= c["n"] - 1:
            raise ValueError(f"cpf2013_campaign: {name} needs 1 <= radius <= N - 1")
        catalog.parse_kernel(f"{c['precision']}-{c['neighbourhood']}")


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
