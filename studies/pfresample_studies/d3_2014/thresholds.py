"""The paper's printed GPU thresholds (Das et al. 2014, Figs 8-9;
``cdf="paper"`` of :func:`pfresample.resampling.d3.plan`) on the CPU
reference: their bias, and Fig 11's iterations in each regime.
The pipeline's target ``d3_2014_thresholds`` (workflow/rules/d3_2014/).

* :func:`step_cell`: on the weights of the D3 filter's step at Fig 11's time
  (``d3_2014_thresholds_time``) at N (``experiments.step_weights``) in one
  regime of ``d3_2014_regimes``: the stride's bias over ``draws`` seeds
  (:func:`bias`), and Fig 11's mean iterations per thread of the local search
  with the systematic thresholds (``cdf="local"``) and with the printed ones
  at THREADS a block;
* :func:`gamma_cell`: the stride's bias on gamma(2) weights whose values rise
  with the index (seed GAMMA_SEED);
* :func:`tables`: ``bias.csv`` (per weights and stride rule -- ``prefix``, our
  systematic, and ``paper``, Figs 8-9's: the mean share of slots whose stride
  lies in the first half of the weights' mass, which an unbiased stride gives
  that half's mass; the normalised offspring bias ||E[o] - N w||^2 / N over
  the draws, thesis eq. 2.32's ||Bias||^2 / N, with its Monte Carlo part
  tr Var / (K N) beside; the bias of the mean of the strides' particles,
  mean_i x(j_i) - sum_k w_k x_k, per velocity component, with its 99 %
  interval over the draws) and ``fig11.csv`` (per regime).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from pfresample.metrics import confidence_interval
from pfresample.resampling import d3
from pfresample.rng import seed_keys

from . import catalog, experiments

THREADS = catalog.TABLE5_THREADS  # Figs 8-9's thresholds at Table 5's block size (160)
CDFS = ("prefix", "paper")  # our systematic stride, the printed one
GAMMA = "gamma"  # the cell of gamma(2) weights, beside the regimes' cells
GAMMA_SEED = 2014
GAMMA_LABEL = "gamma(2), values rising with the index"
TABLES = ("bias", "fig11")
COMPONENTS = "xy"


def key_of(seed: int) -> tuple[int, ...]:
    return tuple(int(k[0]) for k in seed_keys([seed]))


def bias(x: np.ndarray, w: np.ndarray, draws: int, threads: int = THREADS) -> dict:
    """Per stride rule of CDFS (arrays in that order): over seeds 0 ... draws - 1,
    ``first_half_share``, ``bias2_per_n``, ``mc_part_per_n``, ``mean_bias`` and
    ``mean_bias_ci99`` (rule x component), and ``first_half_mass``."""
    n = w.size
    w = w / w.sum()
    half = np.cumsum(w) <= 0.5
    target = n * w
    weighted = w @ x
    out = {k: [] for k in ("first_half_share", "bias2_per_n", "mc_part_per_n", "mean_bias",
                           "mean_bias_ci99")}  # fmt: skip
    for cdf in CDFS:
        counts = np.zeros(n)
        squares = np.zeros(n)
        share, mean_err = [], []
        for s in range(draws):
            j = d3.plan(w, w, key_of(s), cdf=cdf, threads=threads)[0]
            o = np.bincount(j, minlength=n)
            counts += o
            squares += o * o.astype(np.float64)
            share.append(half[j].mean())
            mean_err.append(x[j].mean(axis=0) - weighted)
        mean_o = counts / draws
        var_o = squares / draws - mean_o**2
        err = np.array(mean_err)
        intervals = [confidence_interval(err[:, d]) for d in range(x.shape[1])]
        out["first_half_share"].append(float(np.mean(share)))
        out["bias2_per_n"].append(float(((mean_o - target) ** 2).sum() / n))
        out["mc_part_per_n"].append(float(var_o.sum() / (draws * n)))
        out["mean_bias"].append([m for m, _ in intervals])
        out["mean_bias_ci99"].append([h for _, h in intervals])
    arrays = {f"bias_{k}": np.asarray(v, dtype=np.float64) for k, v in out.items()}
    arrays["first_half_mass"] = np.float64(w[half].sum())
    return arrays


def step_cell(model, traj, regime: str, filter_process_sd, spec: dict, n: int, step: int, *,
              seed: int, draws: int, threads: int = THREADS):  # fmt: skip
    """The D3 filter's (``spec``) weights of step ``step`` at N on trajectory 0
    (``traj``) in regime ``regime`` (the filter's process noise
    ``filter_process_sd``; None: the truth's): :func:`bias` and Fig 11's mean
    iterations. Returns ``(arrays, metadata)``."""
    experiments.check_trajectory(traj, "thresholds.step_cell")
    model = replace(model, filter_process_sd=filter_process_sd)
    x, w, pw, s = experiments.step_weights(model, traj, spec, n, step, seed=seed)
    key = key_of(s)
    local = d3.plan(w, pw, key, cdf="local")[0] + 1
    paper = d3.plan(w, pw, key, cdf="paper", threads=threads)[0] + 1
    arrays = bias(x, w, draws, threads) | {
        "ess": np.float64(1.0 / float(w @ w)),
        "mean_iterations_local": np.float64(local.mean()),
        "mean_iterations_paper_thresholds": np.float64(paper.mean()),
    }  # fmt: skip
    t = step * model.dt
    metadata = {"study": "d3_2014", "experiment": "thresholds", "regime": regime,
                "weights": f"D3 filter step at t = {t:g} s, regime {regime}", "n": int(n),
                "step": int(step), "t": float(t), "draws": int(draws),
                "threads": int(threads), "seed": int(seed), "backend": "cpu",
                "device": experiments.device_name("cpu")}  # fmt: skip
    return arrays, metadata


def gamma_cell(n: int, *, draws: int, threads: int = THREADS):
    """:func:`bias` on gamma(2) weights, values rising with the index."""
    rng = np.random.default_rng(GAMMA_SEED)
    x = rng.normal(size=(n, 2)) + np.arange(n)[:, None] / n
    arrays = bias(x, rng.gamma(2.0, size=n), draws, threads)
    metadata = {"study": "d3_2014", "experiment": "thresholds", "regime": None,
                "weights": GAMMA_LABEL, "n": int(n), "draws": int(draws),
                "threads": int(threads), "seed": GAMMA_SEED, "backend": "cpu",
                "device": experiments.device_name("cpu")}  # fmt: skip
    return arrays, metadata


def bias_rows(cell) -> list[dict]:
    arrays, meta = cell
    rows = []
    for i, cdf in enumerate(CDFS):
        row = {"weights": meta["weights"], "n": meta["n"], "cdf": cdf,
               "threads": meta["threads"] if cdf == "paper" else "", "draws": meta["draws"],
               "first_half_mass": float(arrays["first_half_mass"]),
               "first_half_share": float(arrays["bias_first_half_share"][i]),
               "bias2_per_n": float(arrays["bias_bias2_per_n"][i]),
               "mc_part_per_n": float(arrays["bias_mc_part_per_n"][i])}  # fmt: skip
        for d, c in enumerate(COMPONENTS):
            row[f"mean_bias_{c}"] = float(arrays["bias_mean_bias"][i, d])
            row[f"mean_bias_{c}_ci99"] = float(arrays["bias_mean_bias_ci99"][i, d])
        rows.append(row)
    return rows


def fig11_row(cell) -> dict:
    arrays, meta = cell
    return {"regime": meta["regime"], "n": meta["n"], "step": meta["step"], "t": meta["t"],
            "ess": float(arrays["ess"]),
            "mean_iterations_local": float(arrays["mean_iterations_local"]),
            "mean_iterations_paper_thresholds":
                float(arrays["mean_iterations_paper_thresholds"]),
            "threads": meta["threads"],
            "paper_printed_mean": catalog.PUBLISHED_FIG11["mean_iterations"]}  # fmt: skip


def tables(step_cells, gamma) -> dict[str, pd.DataFrame]:
    """``bias`` (the regimes' cells in their order, then the gamma cell) and
    ``fig11`` (one row a regime)."""
    bias_frame = pd.DataFrame([r for cell in (*step_cells, gamma) for r in bias_rows(cell)])
    return {"bias": bias_frame, "fig11": pd.DataFrame([fig11_row(c) for c in step_cells])}
