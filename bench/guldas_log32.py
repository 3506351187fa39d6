"""Güldaş (2015) §4.1.4 on the CPU: is standard resampling "numerically
unstable" in float32 on the thesis's own kernel, the log-domain scan of
Appendix A (precision "log32", resampling/log_scan.py)? (issue 40)

Two measurements on the particle-weight sets of Figs 4.5-4.8 (the study's
targets and generators: x ~ U[-sigma, sigma] with g = exp(-x^2 / 2 sigma^2),
and x ~ Poisson(100) with g = 100^x / x!):

* ``exact.csv``, no draws. A prefix sum r (count * C / C_N) defines the
  distribution multinomial resampling draws from, p'_i = (r_i - r_{i-1}) / N;
  the exact one is p_i = w_i / sum w. Per set and kernel -- the log-domain
  scan at the thesis's level (the raw log g: log_offset = max log g) and at
  level 0, our tiled float32 scan, float64 -- the bias b = sum (p'_i -
  p_i) x_i of the resampled mean against the set's importance-sampling
  estimate, the total-variation distance, and the exact LMSE (eq. 4.6) of
  multinomial resampling from p': Var_p'(x) / N + b^2. Averaged over S sets
  per N (99 % intervals over the sets). Up to N = 2^22.
* ``draws.csv``: the study's replicate_errors (LE of eq. 4.3) for
  multinomial and systematic in float32, log32 and float64 on T sets per N,
  LMSE with its interval, and the paired difference log32 - float64 on the
  same sets: the measured instability, against the exact column above.

    python bench/guldas_log32.py --out DIR [--max-log2-n 22] [--draws-max-log2-n 18]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pfresample.metrics import confidence_interval
from pfresample.resampling import log_scan
from pfresample.resampling.cumulative import scaled_prefix_sum
from pfresample.timing import cpu_name
from pfresample_studies.guldas2015 import catalog, experiments

SEED = 2017
CONFIG = {"guldas2015_sigma": 10, "guldas2015_poisson_lambda": 100}


def _ratios(kernel: str, lw: np.ndarray) -> np.ndarray:
    """r = N C / C_N of one set's raw log g by ``kernel``, float64."""
    n = lw.size
    w64 = np.exp(lw - lw.max())
    if kernel == "log32-thesis-level":
        return log_scan.ratios(log_scan.log_prefix_sum(lw.astype(np.float32)), n).astype(float)
    if kernel == "log32-level-0":
        values = log_scan.log_values(w64, 0.0)
        return log_scan.ratios(log_scan.log_prefix_sum(values), n).astype(float)
    if kernel == "float32-tiled":
        return scaled_prefix_sum(w64.astype(np.float32), np.dtype(np.float32), n)[0].astype(float)
    c = np.cumsum(w64)
    return n * c / c[-1]


KERNELS = ("log32-thesis-level", "log32-level-0", "float32-tiled", "float64")


def exact(out: Path, max_log2_n: int) -> None:
    targets = catalog.targets(CONFIG)
    rows = []
    for name in ("gaussian", "poisson"):
        target = targets[name]
        for e in range(11, max_log2_n + 1):
            n = 2**e
            sets = max(4, min(40, 2**24 // n))
            rng = np.random.default_rng([SEED, e, len(name)])
            per = {k: {"lmse": [], "b2": [], "tv": []} for k in KERNELS}
            started = time.perf_counter()
            for _ in range(sets):
                x = target.draw(rng, n).astype(np.float64)
                lw = target.log_g(x, np).astype(np.float64)
                w = np.exp(lw - lw.max())
                p = w / w.sum()
                importance = p @ x
                for k in KERNELS:
                    r = _ratios(k, lw)
                    q = np.diff(np.concatenate([[0.0], r])) / n
                    b = q @ x - importance
                    var = q @ (x * x) - (q @ x) ** 2
                    per[k]["lmse"].append(var / n + b * b)
                    per[k]["b2"].append(b * b)
                    per[k]["tv"].append(0.5 * np.abs(q - p).sum())
            exact_lmse = np.array(per["float64"]["lmse"])
            for k in KERNELS:
                lmse = np.array(per[k]["lmse"])
                ratio, ratio_ci = confidence_interval(lmse / exact_lmse)
                rows.append({
                    "target": name, "n": n, "sets": sets, "kernel": k,
                    "lmse": lmse.mean(), "lmse_ratio_to_float64": ratio,
                    "lmse_ratio_ci": ratio_ci, "bias2": np.mean(per[k]["b2"]),
                    "bias2_share": np.mean(np.array(per[k]["b2"]) / lmse),
                    "tv_distance": np.mean(per[k]["tv"]),
                    "level": float(lw.max()) if k == "log32-thesis-level" else 0.0,
                })  # fmt: skip
            print(f"{name} 2^{e}: {sets} sets, {time.perf_counter() - started:.0f} s", flush=True)
            pd.DataFrame(rows).to_csv(out / "exact.csv", index=False, float_format="%.6g")


def draws(out: Path, max_log2_n: int, replicates: int) -> None:
    targets = catalog.targets(CONFIG)
    rows = []
    for name in ("gaussian", "poisson"):
        target = targets[name]
        for e in range(11, max_log2_n + 1):
            n = 2**e
            arms = [experiments.Arm(m, p) for m in ("multinomial", "systematic")
                    for p in ("float32", experiments.LOG32, "float64")]  # fmt: skip
            started = time.perf_counter()
            _, local = experiments.replicate_errors(
                target, n, arms, replicates=replicates, seed=SEED,
                stream=experiments.stream_of(f"log32-{name}", n), backend="cpu",
            )  # fmt: skip
            base = {a.method: local[k] for k, a in enumerate(arms) if a.precision == "float64"}
            for k, arm in enumerate(arms):
                lmse, half = confidence_interval(local[k] ** 2)
                diff, diff_half = confidence_interval(local[k] ** 2 - base[arm.method] ** 2)
                rows.append({
                    "target": name, "n": n, "particle_sets": replicates, "method": arm.method,
                    "precision": arm.precision, "lmse": lmse, "lmse_ci": half,
                    "diff_vs_float64": diff, "diff_vs_float64_ci": diff_half,
                })  # fmt: skip
            print(f"draws {name} 2^{e}: {time.perf_counter() - started:.0f} s", flush=True)
            pd.DataFrame(rows).to_csv(out / "draws.csv", index=False, float_format="%.6g")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--part", choices=("exact", "draws", "both"), default="both")
    parser.add_argument("--max-log2-n", type=int, default=22)
    parser.add_argument("--draws-max-log2-n", type=int, default=18)
    parser.add_argument("--replicates", type=int, default=100)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"CPU: {cpu_name()}", flush=True)
    if args.part in ("exact", "both"):
        exact(out, args.max_log2_n)
    if args.part in ("draws", "both"):
        draws(out, args.draws_max_log2_n, args.replicates)


if __name__ == "__main__":
    main()
