#!/usr/bin/env python3
"""The paper's GPU thresholds (Das et al. 2014, Figs 8-9; ``cdf="paper"``) on
the CPU reference, issue 39: their bias and Fig 11's iterations.

On the weights of the D3 filter's step at t = 200 s at N = 5,000 (Fig 11's
step, ``experiments.step_weights``) in each regime, and on gamma(2) weights:

* ``bias.csv``: over ``--draws`` seeds, per stride rule (``prefix``: our
  systematic; ``paper``: Figs 8-9's at 160 threads a block), the mean share
  of slots whose stride lies in the first half of the weights' mass (an
  unbiased stride gives that half's mass), the normalised offspring bias
  ||E[o] - N w||^2 / N over the draws (thesis eq. 2.32's ||Bias||^2 / N;
  the Monte Carlo part of it, tr Var / (K N), beside), and the bias of the
  mean of the strides' particles, mean_i x(j_i) - sum_k w_k x_k, per
  velocity component, with its 99 % interval over the draws;
* ``fig11.csv``: per regime, the mean iterations per thread of the local
  search with the systematic thresholds (``cdf="local"``) and with the
  printed ones, and N_eff.

    python bench/d3_paper_thresholds.py --out results/bench/d3_2014/thresholds

(the committed run: evidence/2026-11-26-xeon2-ba6cc49/d3_2014/thresholds/)
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample.metrics import confidence_interval
from pfresample.resampling import d3
from pfresample.rng import seed_keys
from pfresample_studies.d3_2014 import catalog, experiments
from pfresample_studies.pipeline.tables import write_csv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import d3_2014_config as config  # noqa: E402

REGIMES = catalog.regimes(config())  # the filter's process noise (None: the truth's)

THREADS = 160  # Table 5's block size


def key_of(seed: int) -> tuple[int, int]:
    return tuple(int(k[0]) for k in seed_keys([seed]))


def bias_rows(label: str, x: np.ndarray, w: np.ndarray, draws: int) -> list[dict]:
    n = w.size
    w = w / w.sum()
    half = np.cumsum(w) <= 0.5
    target = n * w
    weighted = w @ x
    rows = []
    for cdf in ("prefix", "paper"):
        counts = np.zeros(n)
        squares = np.zeros(n)
        share, mean_err = [], []
        for s in range(draws):
            j = d3.plan(w, w, key_of(s), cdf=cdf, threads=THREADS)[0]
            o = np.bincount(j, minlength=n)
            counts += o
            squares += o * o.astype(np.float64)
            share.append(half[j].mean())
            mean_err.append(x[j].mean(axis=0) - weighted)
        mean_o = counts / draws
        var_o = squares / draws - mean_o**2
        err = np.array(mean_err)
        row = {"weights": label, "n": n, "cdf": cdf, "threads": THREADS if cdf == "paper" else "",
               "draws": draws, "first_half_mass": float(w[half].sum()),
               "first_half_share": float(np.mean(share)),
               "bias2_per_n": float(((mean_o - target) ** 2).sum() / n),
               "mc_part_per_n": float(var_o.sum() / (draws * n))}  # fmt: skip
        for d, c in enumerate("xy"):
            mean, hw = confidence_interval(err[:, d])
            row[f"mean_bias_{c}"], row[f"mean_bias_{c}_ci99"] = mean, hw
        rows.append(row)
        print(row, flush=True)
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--draws", type=int, default=2000)
    p.add_argument("--n", type=int, default=None, help="particles (default: Fig 11's 5,000)")
    args = p.parse_args(argv)
    cfg = config()
    n = args.n or catalog.fig11_n(cfg)
    step = catalog.fig11_step(cfg)
    traj, _ = experiments.trajectory(catalog.model(cfg), cfg["seed"], 0)
    spec = catalog.filters(cfg)["d3"]
    bias, fig11 = [], []
    for regime, sd in REGIMES.items():
        model = replace(catalog.model(cfg), filter_process_sd=sd)
        x, w, pw, s = experiments.step_weights(model, traj, spec, n, step, seed=cfg["seed"])
        key = key_of(s)
        local = d3.plan(w, pw, key, cdf="local")[0] + 1
        paper = d3.plan(w, pw, key, cdf="paper", threads=THREADS)[0] + 1
        fig11.append({"regime": regime, "n": n, "step": step, "t": step * model.dt,
                      "ess": 1.0 / float(w @ w), "mean_iterations_local": local.mean(),
                      "mean_iterations_paper_thresholds": paper.mean(), "threads": THREADS,
                      "paper_printed_mean": catalog.PUBLISHED_FIG11["mean_iterations"],
                      })  # fmt: skip
        print(fig11[-1], flush=True)
        bias += bias_rows(f"D3 filter step at t = {step * model.dt:g} s, regime {regime}", x, w,
                          args.draws)  # fmt: skip
    rng = np.random.default_rng(2014)
    x = rng.normal(size=(n, 2)) + np.arange(n)[:, None] / n  # values that rise with the index
    bias += bias_rows("gamma(2), values rising with the index", x, rng.gamma(2.0, size=n),
                      args.draws)  # fmt: skip
    write_csv(pd.DataFrame(bias), args.out / "bias.csv")
    write_csv(pd.DataFrame(fig11), args.out / "fig11.csv")


if __name__ == "__main__":
    main()
