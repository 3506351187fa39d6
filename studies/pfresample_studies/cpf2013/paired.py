"""Paired statistics behind every trend of Gelencsér-Horváth et al. (2013)
that the study states, and the paper's claims judged on them.

Every cell of a model runs the same trajectories (``targets``), and every
cell at one N the same run seeds (``experiments.run_seeds``: common random
numbers for every r, method and start). So two cells are compared per
trajectory: the difference of their errors on trajectory j, whose mean over
the trajectories has a confidence interval (the library's level,
``constants.CONFIDENCE_LEVEL``, normal approximation) far narrower than the
two cells' own intervals, which hold the spread between trajectories. Cells at
different N share the trajectories but not the seeds ("pairing": trajectory).

* :func:`paired_table`: one row per pair of cells that differ in one thing --
  the radius, N, the growth model's start (``setup``), the kernel (precision,
  neighbourhood, build), or the filter (CPF against an SIR baseline, with each
  estimator: the filters' own, both the weighted mean before resampling, both
  the mean after it) -- with the mean of b - a per trajectory, its interval
  and what the interval says (``verdict``: "b lower", "b higher", "not
  resolved"); and the particle cloud after resampling, CPF against SIR,
  where the cells measured it (the CPU; ``targets.CLOUD_MEASURES``: distinct
  ancestors, lineages, spread, coverage of the truth).
* :func:`claims_table`: the paper's statements, each with reproduced / not
  reproduced / not resolved and the rows it rests on (cells at r = N - 1, the
  multinomial limit, are left out of the claims).
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations

import numpy as np
import pandas as pd

from pfresample.constants import CONFIDENCE_LEVEL
from pfresample.metrics import confidence_interval

from . import targets

LOWER, HIGHER, OPEN = "b lower", "b higher", "not resolved"
REPRODUCED, NOT_REPRODUCED, NOT_RESOLVED = "reproduced", "not reproduced", "not resolved"
# The estimators compared between the CPF and the SIR filter (targets.ESTIMATORS and
# each filter's own: the CPF's is the mean after resampling, the SIR filter's the
# weighted mean before it).
ESTIMATOR_LABELS = {
    "own": "each filter's own (CPF: mean after resampling; SIR: weighted mean before)",
    "weighted": "both the weighted mean before resampling",
    "resampled": "both the mean after resampling",
}
# The paper's particle number beyond which "more than 4,096 particles slightly improves".
PAPER_N_THRESHOLD = 4096


def _facets(meta) -> dict:
    """What a cell is, beyond its model: the facets pairs may differ in."""
    return {
        "filter": meta["filter"], "method": meta["method"], "n": int(meta["n"]),
        "radius": None if meta["radius"] is None else int(meta["radius"]),
        "setup": meta.get("setup", "paper"), "precision": meta.get("precision", ""),
        "neighbourhood": meta.get("neighbourhood", ""), "fast_math": bool(meta["fast_math"]),
        "backend": meta["backend"],
    }  # fmt: skip


def paired_difference(a, b) -> dict:
    """The mean of b - a over the pairs and its interval; what it says."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"paired_difference needs two equal 1-d samples of >= 2, got "
                         f"{a.shape} and {b.shape}")  # fmt: skip
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return {}
    mean, half = confidence_interval(b - a)
    low, high = mean - half, mean + half
    verdict = LOWER if high < 0 else HIGHER if low > 0 else OPEN
    mean_a = float(a.mean())
    return {
        "pairs": int(a.size), "mean_a": mean_a, "mean_b": float(b.mean()), "difference": mean,
        "ci_low": low, "ci_high": high, "relative": mean / mean_a if mean_a else math.nan,
        "verdict": verdict,
    }  # fmt: skip


def _row(model, comparison, measure, estimator, cell_a, cell_b) -> dict | None:
    (arrays_a, meta_a), (arrays_b, meta_b) = cell_a, cell_b
    if measure not in arrays_a or measure not in arrays_b:
        return None
    pairs = min(len(arrays_a[measure]), len(arrays_b[measure]))
    same_seeds = np.array_equal(arrays_a["seeds"][:pairs], arrays_b["seeds"][:pairs])
    stats = paired_difference(arrays_a[measure][:pairs], arrays_b[measure][:pairs])
    if not stats:  # a measure the cells did not take (NaN: the GPU's distinct ancestors)
        return None
    fa, fb = _facets(meta_a), _facets(meta_b)
    row = {"model": model, "comparison": comparison, "measure": measure, "estimator": estimator}
    row |= {f"{k}_a": v for k, v in fa.items()} | {f"{k}_b": v for k, v in fb.items()}
    row["pairing"] = "trajectory and run seed" if same_seeds else "trajectory"
    return row | stats | {"confidence_level": CONFIDENCE_LEVEL}


def _differ_only_in(fa: dict, fb: dict, keys) -> bool:
    return all(fa[k] == fb[k] for k in fa if k not in keys and k != "backend") and any(
        fa[k] != fb[k] for k in keys
    )


KERNEL_FACETS = ("precision", "neighbourhood", "fast_math")


def paired_table(cells) -> pd.DataFrame:
    """Every comparison of :mod:`this module <paired>` among ``cells``
    ((arrays, metadata) of CPF and SIR cells of both models): the model's
    figure measure (``targets.ERROR_MEASURES``) with the filters' own
    estimators for pairs of CPF cells, with each estimator for CPF against
    SIR, and the cloud's measures for CPF against SIR. Pairs run b - a with
    a the smaller radius or N, the "thesis" start, the library's default
    kernel (float64 search without fast math), the SIR baseline."""
    rows = []
    by_model = defaultdict(list)
    for cell in cells:
        by_model[cell[1]["model"]].append(cell)
    for model, group in sorted(by_model.items()):
        measure = targets.ERROR_MEASURES[model]
        cpf = [c for c in group if c[1]["filter"] == "CPF"]
        sir = [c for c in group if c[1]["filter"] == "SIR"]
        for one, two in combinations(cpf, 2):
            fa, fb = _facets(one[1]), _facets(two[1])
            for comparison, keys in (("radius", ("radius",)), ("N", ("n",)),
                                     ("setup", ("setup",)), ("kernel", KERNEL_FACETS)):  # fmt: skip
                if not _differ_only_in(fa, fb, keys):
                    continue
                a, b = (one, two) if _order(fa, fb, comparison) else (two, one)
                row = _row(model, comparison, measure, "own", a, b)
                if row is not None:
                    rows.append(row)
        for c in cpf:
            for s in sir:
                fc, fs = _facets(c[1]), _facets(s[1])
                if (fc["n"], fc["setup"]) != (fs["n"], fs["setup"]):
                    continue
                for estimator in ESTIMATOR_LABELS:
                    name = measure if estimator == "own" else f"{measure}_{estimator}"
                    row = _row(model, "CPF - SIR", name, estimator, s, c)
                    if row is not None:
                        rows.append(row)
                for name in targets.CLOUD_MEASURES:  # where the cells measured the cloud
                    row = _row(model, "CPF - SIR", name, "", s, c)
                    if row is not None:
                        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    for col in ("radius_a", "radius_b"):
        frame[col] = frame[col].astype("Int64")
    keys = ["model", "comparison", "measure", "n_a", "n_b", "radius_a", "radius_b", "method_a"]
    return frame.sort_values(keys, ignore_index=True, na_position="first")


def _order(fa: dict, fb: dict, comparison: str) -> bool:
    """Whether (fa, fb) is already (a, b): a the smaller radius or N, the
    thesis start, the default kernel."""
    if comparison == "radius":
        return fa["radius"] < fb["radius"]
    if comparison == "N":
        return fa["n"] < fb["n"]
    if comparison == "setup":
        return fa["setup"] == "thesis"
    default = ("float64", "search", False)
    return tuple(fa[k] for k in KERNEL_FACETS) == default or (
        tuple(fb[k] for k in KERNEL_FACETS) != default and not fa["fast_math"]
    )


# ------------------------------------------------------------------ the claims


def _fmt(row) -> str:
    return f"{row['difference']:+.4g} [{row['ci_low']:+.4g}, {row['ci_high']:+.4g}]"


def _cpf_rows(paired: pd.DataFrame, model: str, comparison: str) -> pd.DataFrame:
    part = paired[(paired["model"] == model) & (paired["comparison"] == comparison)]
    return _configurations(part[part["measure"] == targets.ERROR_MEASURES[model]])


def _configurations(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows whose CPF cells are configurations of the filter: without r = N - 1,
    the limit where cellular resampling is the multinomial SIR filter's (a check of
    the implementation, not one of the paper's configurations)."""
    keep = pd.Series(True, index=rows.index)
    for side in ("a", "b"):
        radius, n = rows[f"radius_{side}"], rows[f"n_{side}"]
        keep &= radius.isna() | (radius < n - 1)
    return rows[keep]


# The columns that name one kernel of the CPF cells (one group of a claim).
GROUP = ["setup_a", "precision_a", "neighbourhood_a", "fast_math_a"]


def _kernel(precision, neighbourhood, fast_math) -> str:
    return f"{precision}-{neighbourhood}" + (" fast math" if fast_math else "")


def _radius_claims(paired, model, claim, statement) -> list[dict]:
    """Fig 9's 'the estimation quality improves' with r at each N."""
    out = []
    rows = _cpf_rows(paired, model, "radius")
    for (n, setup, *kernel), part in rows.groupby(["n_a", *GROUP]):
        kernel = _kernel(*kernel)
        radii = sorted(set(part["radius_a"]) | set(part["radius_b"]))
        ends = part[(part["radius_a"] == radii[0]) & (part["radius_b"] == radii[-1])]
        steps = [part[(part["radius_a"] == a) & (part["radius_b"] == b)]
                 for a, b in zip(radii[:-1], radii[1:], strict=True)]  # fmt: skip
        if ends.empty:
            continue
        end = ends.iloc[0]
        rising = [s.iloc[0] for s in steps if not s.empty and s.iloc[0]["verdict"] == HIGHER]
        open_steps = [s.iloc[0] for s in steps if not s.empty and s.iloc[0]["verdict"] == OPEN]
        if rising:
            verdict = NOT_REPRODUCED
            note = "rises from r = " + ", ".join(
                f"{int(s['radius_a'])} to {int(s['radius_b'])}: {_fmt(s)}" for s in rising
            )
        elif end["verdict"] == LOWER:
            verdict = REPRODUCED
            note = f"r = {radii[0]} -> {radii[-1]}: {_fmt(end)}"
            if open_steps:
                note += "; not resolved between r = " + ", ".join(
                    f"{int(s['radius_a'])} and {int(s['radius_b'])}" for s in open_steps
                )
        else:
            verdict = NOT_RESOLVED if end["verdict"] == OPEN else NOT_REPRODUCED
            note = f"r = {radii[0]} -> {radii[-1]}: {_fmt(end)}"
        out.append({"claim": claim, "statement": statement, "model": model, "n": int(n),
                    "radius": None, "setup": setup, "verdict": verdict, "evidence": note,
                    "pairs": int(end["pairs"]), "kernel": kernel})  # fmt: skip
    return out


def _n_claims(paired, model, claim, statement) -> list[dict]:
    """Fig 9's 'using more than 4,096 particles slightly improves': N > 4,096
    against N = 4,096 at each r."""
    out = []
    rows = _cpf_rows(paired, model, "N")
    rows = rows[(rows["n_a"] == PAPER_N_THRESHOLD) & (rows["n_b"] > PAPER_N_THRESHOLD)]
    for _, row in rows.iterrows():
        verdict = {LOWER: REPRODUCED, HIGHER: NOT_REPRODUCED, OPEN: NOT_RESOLVED}[row["verdict"]]
        note = (f"N = {PAPER_N_THRESHOLD:,} -> {int(row['n_b']):,}: {_fmt(row)} "
                f"({100 * row['relative']:+.2f} %)")  # fmt: skip
        out.append({"claim": claim, "statement": statement, "model": model,
                    "n": int(row["n_b"]), "radius": int(row["radius_a"]),
                    "setup": row["setup_a"], "verdict": verdict, "evidence": note,
                    "pairs": int(row["pairs"]),
                    "kernel": _kernel(*(row[c] for c in GROUP[1:]))})  # fmt: skip
    return out


def _u_claims(paired, model, claim, statement) -> list[dict]:
    """Fig 10's U: at each N some inner r below both the smallest and the largest r."""
    out = []
    rows = _cpf_rows(paired, model, "radius")
    for (n, setup, *kernel), part in rows.groupby(["n_a", *GROUP]):
        kernel = _kernel(*kernel)
        radii = sorted(set(part["radius_a"]) | set(part["radius_b"]))
        if len(radii) < 3:
            continue
        lo, hi = radii[0], radii[-1]

        def pair(a, b, part=part):
            found = part[(part["radius_a"] == a) & (part["radius_b"] == b)]
            return None if found.empty else found.iloc[0]

        inner = []
        for r in radii[1:-1]:
            down, up = pair(lo, r), pair(r, hi)
            if down is not None and up is not None:
                inner.append((r, down, up))
        u = [(r, d, p) for r, d, p in inner if d["verdict"] == LOWER and p["verdict"] == HIGHER]
        ends = pair(lo, hi)
        means = {int(lo): ends["mean_a"], int(hi): ends["mean_b"]}
        means |= {int(r): d["mean_b"] for r, d, _ in inner}
        best = min(means, key=means.get)
        if u:
            r, d, p = u[0]
            verdict = REPRODUCED
            note = (f"r = {int(r)} below r = {int(lo)} ({_fmt(d)} from r = {int(lo)}) and "
                    f"below r = {int(hi)} ({_fmt(p)} to r = {int(hi)})")  # fmt: skip
        elif ends["verdict"] != OPEN:
            verdict = NOT_REPRODUCED
            trend = "rises" if ends["verdict"] == HIGHER else "falls"
            note = f"{trend} from r = {int(lo)} to {int(hi)}: {_fmt(ends)}"
            note += "; no inner minimum resolved"
        else:
            verdict = NOT_RESOLVED
            note = f"r = {int(lo)} -> {int(hi)}: {_fmt(ends)}; no inner minimum resolved"
        note += f"; smallest mean at r = {best}"
        out.append({"claim": claim, "statement": statement, "model": model, "n": int(n),
                    "radius": best, "setup": setup, "verdict": verdict, "evidence": note,
                    "pairs": int(ends["pairs"]), "kernel": kernel})  # fmt: skip
    return out


def _baseline_claims(paired, model, claim, statement) -> list[dict]:
    """'The same or, at some parameters, even better quality' than global
    resampling: CPF - SIR at each r, per N, baseline method and estimator."""
    out = []
    measure = targets.ERROR_MEASURES[model]
    rows = paired[(paired["model"] == model) & (paired["comparison"] == "CPF - SIR")]
    rows = _configurations(rows[rows["measure"].str.startswith(measure)])
    for (n, method, estimator, setup), part in rows.groupby(
        ["n_a", "method_a", "estimator", "setup_a"]
    ):
        worse = part[part["verdict"] == HIGHER]
        better = part[part["verdict"] == LOWER]
        if not worse.empty:
            verdict = NOT_REPRODUCED
            note = "CPF worse at r = " + ", ".join(
                f"{int(r['radius_b'])}: {_fmt(r)}" for _, r in worse.iterrows()
            )
        elif len(better) == len(part):
            verdict = REPRODUCED
            note = "CPF better at every r: " + ", ".join(
                f"{int(r['radius_b'])}: {_fmt(r)}" for _, r in part.iterrows()
            )
        elif not better.empty:
            verdict = REPRODUCED
            at = ", ".join(str(int(r)) for r in better["radius_b"])
            every = ", ".join(f"{int(r['radius_b'])}: {_fmt(r)}" for _, r in part.iterrows())
            note = f"CPF better at r = {at}, not resolved at the others: {every}"
        else:
            verdict = NOT_RESOLVED
            note = "no r resolved: " + ", ".join(
                f"{int(r['radius_b'])}: {_fmt(r)}" for _, r in part.iterrows()
            )
        out.append({"claim": claim, "statement": statement, "model": model, "n": int(n),
                    "radius": None, "setup": setup, "verdict": verdict,
                    "evidence": f"against SIR + {method}, {ESTIMATOR_LABELS[estimator]}: {note}",
                    "pairs": int(part["pairs"].min()), "kernel": "",
                    "method": method, "estimator": estimator})  # fmt: skip
    return out


# The paper's statements this study judges: (claim, model, statement, judge).
CLAIMS = (
    ("fig9-radius", "growth",
     "Fig 9: 'at a given particle number with the increase of the neighbourhood size, the "
     "estimation quality improves'", _radius_claims),
    ("fig9-n", "growth",
     "Fig 9: 'using more than 4,096 particles slightly improves the quality of estimation'",
     _n_claims),
    ("fig10-u", "bot",
     "Fig 10: an optimal share ratio, the error 'descending and then increasing' in r "
     "('like the shape of letter U')", _u_claims),
    ("cpf-vs-sir-bot", "bot",
     "'the same or, at some parameters, even better quality' than resampling from the whole "
     "set (CPF >= SIR), BOT", _baseline_claims),
    ("cpf-vs-sir-growth", "growth",
     "'the same or, at some parameters, even better quality' than resampling from the whole "
     "set (CPF >= SIR), first model", _baseline_claims),
)  # fmt: skip
CLAIM_COLUMNS = ("claim", "statement", "model", "n", "radius", "setup", "method", "estimator",
                 "kernel", "verdict", "evidence", "pairs")  # fmt: skip


def claims_table(paired: pd.DataFrame) -> pd.DataFrame:
    """The paper's statements (``CLAIMS``), one row per (claim, N[, r,
    baseline, estimator]) that the cells of ``paired`` (:func:`paired_table`)
    test, with the verdict and the paired intervals it rests on. A claim
    without cells to test it has no row."""
    rows = []
    if not paired.empty:
        for claim, model, statement, judge in CLAIMS:
            rows += judge(paired, model, claim, statement)
    frame = pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))
    for col in ("n", "radius", "pairs"):
        frame[col] = frame[col].astype("Int64")
    frame["confidence_level"] = CONFIDENCE_LEVEL
    return frame
