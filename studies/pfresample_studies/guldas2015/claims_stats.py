"""Statistics docs/guldas2015.md quotes that no committed table carries, derived from the
committed evidence (no new measurement):

* ``speed_ratios.csv``: Figs 4.5-4.8 at thesis scale (the H200 tables): per figure,
  precision and N, the butterfly's speed-up over its standard method, its radix's depth and
  first-order LMSE factor, the MSE ratio, the LMSE ratio
  butterfly / standard with its 99 % interval and the LMSE x time ratio with the same
  relative interval (unpaired over the particle sets, delta method on the log, the times
  taken as the medians they are), and the MSE x time ratio;
* ``log32_buy.csv``: the butterfly against the thesis's float32 log-domain scan (the H100
  run, 300 sets a point): the same LMSE and LMSE x time ratios with their intervals, at
  the raw log g's level the run used, and projected to level 0 by the exact ratio the CPU
  computed (``exact.csv``, other particle sets): LMSE at level 0 = float64's LMSE x that
  ratio, the log scan's time unchanged (the level costs no operation);
* ``smcem_paired.csv``: SMC-EM's Monte Carlo part, butterfly against multinomial, paired
  over the 10 sequences: the mean difference of squared errors with its 99 % t interval
  and its Bonferroni-corrected one over the family of tests (each device's rows x the two
  parameters), the exact sign-flip p and its Holm adjustment, and how many sequences have
  the butterfly's error above multinomial's; each scheme's mean with the study tables'
  normal-approximation 99 % half-width (``mc_*_ci``);
* ``smcem_pooled.csv``: one test per parameter over the GPU's six N: per sequence the mean
  over N of N x (butterfly's squared error - multinomial's) (the Monte Carlo part falls
  as 1/N, so each N weighs alike), its sign-flip p over the 10 sequences (the unit the
  six N share);
* ``smcem_stop.csv``: the stopping rule (window 20, tolerance 1e-4) applied afterwards to
  every recorded SMC-EM trace, which the runs themselves never consult (a fixed 100
  iterations).

    python -m pfresample_studies.guldas2015.claims_stats --out evidence/<folder>/guldas2015
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from pfresample.filters.common import stop_iteration
from pfresample_studies.pipeline import artifacts, multiplicity

from .experiments import parse_radix
from .tables import first_order_factor, sign_flip_p

REPO = Path(__file__).resolve().parents[3]
H200 = REPO / "evidence/2026-11-24-h200-8fc2744/guldas2015"
H100 = REPO / "evidence/2026-11-26-h100-804d6d3/guldas2015"
CPU = REPO / "evidence/2026-11-26-xeon2-bc8d0b2/guldas2015"
LEVEL = 0.99
Z = stats.norm.ppf(0.5 + LEVEL / 2)
SPEED_FIGURES = {"fig4_5": "gaussian", "fig4_6": "poisson", "fig4_7": "gaussian",
                 "fig4_8": "poisson"}  # fmt: skip
STOP_WINDOW, STOP_TOLERANCE = 20, 1e-4


def ratio_ci(num, num_ci, den, den_ci) -> tuple[float, float]:
    """num / den and the half-width of its 99 % interval, unpaired (delta method on the
    log: the relative half-widths add in quadrature)."""
    r = num / den
    return r, r * float(np.hypot(num_ci / num, den_ci / den))


def speed_ratios(folder: Path = H200) -> pd.DataFrame:
    rows = []
    for fig, target in SPEED_FIGURES.items():
        df = pd.read_csv(folder / f"{fig}.csv")
        for (n, precision), cell in df.groupby(["n", "precision"]):
            std = cell[cell.scheme == "standard"].iloc[0]
            fly = cell[cell.scheme == "butterfly"].iloc[0]
            lmse, lmse_ci = ratio_ci(fly.lmse, fly.lmse_ci, std.lmse, std.lmse_ci)
            speed = std.time_ms / fly.time_ms
            radix = parse_radix(fly.radix)
            rows.append({"figure": fig, "target": target, "n": n, "log2_n": int(np.log2(n)),
                         "precision": precision, "method": std.method, "radix": fly.radix,
                         "depth": len(radix), "first_order_factor": first_order_factor(radix, n),
                         "mse_ratio": fly.mse / std.mse,
                         "speedup": speed, "lmse_ratio": lmse, "lmse_ratio_ci": lmse_ci,
                         "lmse_x_time_ratio": lmse / speed,
                         "lmse_x_time_ratio_ci": lmse_ci / speed,
                         "mse_x_time_ratio": fly.mse_x_time / std.mse_x_time})  # fmt: skip
    out = pd.DataFrame(rows)
    out["excludes_1"] = (out.lmse_x_time_ratio - out.lmse_x_time_ratio_ci > 1) | (
        out.lmse_x_time_ratio + out.lmse_x_time_ratio_ci < 1
    )
    return out


def log32_buy(folder: Path = H100 / "log32_gpu", exact: Path = CPU / "log32_cpu/exact.csv"):
    runs = pd.read_csv(folder / "runs.csv")
    ex = pd.read_csv(exact).set_index(["target", "n", "kernel"])
    rows = []
    for (target, n), cell in runs.groupby(["target", "n"], sort=False):
        by = {(r.method, r.precision): r for r in cell.itertuples()}
        fly, log = by[("butterfly-multinomial", "float32")], by[("multinomial", "log32")]
        f64 = by[("multinomial", "float64")]
        lmse, lmse_ci = ratio_ci(fly.lmse, fly.lmse_ci, log.lmse, log.lmse_ci)
        speed = log.time_ms / fly.time_ms
        raw = ex.loc[(target, n, "log32-thesis-level")]
        zero = ex.loc[(target, n, "log32-level-0")]
        lmse0 = f64.lmse * zero.lmse_ratio_to_float64
        rows.append({"target": target, "n": n, "log2_n": int(np.log2(n)),
                     "sets": fly.particle_sets,
                     "lmse_butterfly": fly.lmse, "lmse_log32": log.lmse,
                     "lmse_ratio": lmse, "lmse_ratio_ci": lmse_ci,
                     "speedup_over_log32": speed,
                     "lmse_x_time_ratio": lmse / speed, "lmse_x_time_ratio_ci": lmse_ci / speed,
                     "exact_ratio_raw_level": raw.lmse_ratio_to_float64,
                     "exact_ratio_level0": zero.lmse_ratio_to_float64,
                     "exact_ratio_level0_ci": zero.lmse_ratio_ci,
                     "lmse_x_time_ratio_level0": fly.lmse * fly.time_ms / (lmse0 * log.time_ms),
                     "device": fly.device})  # fmt: skip
    out = pd.DataFrame(rows)
    hi = out.lmse_x_time_ratio + out.lmse_x_time_ratio_ci
    out["below_1"] = hi < 1
    out["above_1"] = out.lmse_x_time_ratio - out.lmse_x_time_ratio_ci > 1
    return out


def _errors(cell: Path, ref, ref_meta):
    """Per (filter, start, scheme, parameter) the 10 final Monte Carlo errors, and the
    traces, of one SMC-EM cell."""
    arrays, meta = artifacts.load_npz(cell)
    last = meta["iterations"]
    errors, traces = {}, {}
    for a, arm in enumerate(meta["arms"]):
        for j, start in enumerate(meta["starts"]):
            k = ref_meta["starts"].index(start)
            key = (arm["filter"], start, arm["scheme"])
            traces[key] = (arrays["alpha"][a, j], arrays["sigma"][a, j])
            for p in ("alpha", "sigma"):
                errors[(*key, p)] = arrays[p][a, j][:, last] - ref[p][k][:, last]
    return meta, errors, traces


def _z_half(x) -> float:
    """The normal-approximation 99 % half-width the study's tables give (``_mean_ci``)."""
    return float(Z * x.std(ddof=1) / np.sqrt(x.size))


def smcem(reference: Path = CPU / "smcem_cpu/reference_smcem.npz"):
    ref, ref_meta = artifacts.load_npz(reference)
    cells = {"cpu": [CPU / "smcem_cpu/smcem_n512.npz", CPU / "smcem_cpu_2048/smcem_n2048.npz"],
             "gpu": sorted((H100 / "smcem_gpu").glob("smcem_n*.npz"),
                           key=lambda p: int(p.stem[7:]))}  # fmt: skip
    paired, stops, pooled = [], [], []
    for device, paths in cells.items():
        family = []
        scaled = {}
        for path in paths:
            meta, errors, traces = _errors(path, ref, ref_meta)
            n = meta["n"]
            for key, (alpha, sigma) in traces.items():
                at = [stop_iteration(a, s, STOP_WINDOW, STOP_TOLERANCE)
                      for a, s in zip(alpha, sigma, strict=True)]  # fmt: skip
                hit = [i for i in at if i is not None]
                stops.append({"device": device, "n": n, "filter": key[0], "start": key[1],
                              "scheme": key[2], "runs": len(at), "stopped": len(hit),
                              "first_stop": min(hit) if hit else np.nan,
                              "median_stop": float(np.median(hit)) if hit else np.nan})  # fmt: skip
            for filt, start, scheme, p in errors:
                if scheme != "butterfly":
                    continue
                own = errors[(filt, start, "butterfly", p)] ** 2
                base = errors[(filt, start, "multinomial", p)] ** 2
                d = own - base
                family.append({"device": device, "n": n, "log2_n": int(np.log2(n)),
                               "filter": filt, "start": start, "parameter": p,
                               "sequences": d.size, "mc_multinomial": base.mean(),
                               "mc_butterfly": own.mean(), "mc_multinomial_ci": _z_half(base),
                               "mc_butterfly_ci": _z_half(own), "ratio": own.mean() / base.mean(),
                               "diff": d.mean(), "diff_ci": multiplicity.t_half(d, LEVEL),
                               "p": sign_flip_p(d),
                               "butterfly_above": int((d > 0).sum())})  # fmt: skip
                scaled.setdefault((filt, start, p), []).append(n * d)
        tests = len(family)
        adjusted = multiplicity.holm([r["p"] for r in family])
        for r, h in zip(family, adjusted, strict=True):
            d_level = 1 - (1 - LEVEL) / tests
            r |= {"tests": tests, "p_holm": h, "corrected_level": d_level}
            paired.append(r)
        if device == "gpu":
            for (filt, start, p), parts in scaled.items():
                per_seq = np.mean(parts, axis=0)
                pooled.append({"device": device, "filter": filt, "start": start,
                               "parameter": p, "n_values": len(parts),
                               "sequences": per_seq.size,
                               "mean_scaled_diff": per_seq.mean(),
                               "butterfly_above": int((per_seq > 0).sum()),
                               "p": sign_flip_p(per_seq)})  # fmt: skip
    paired = pd.DataFrame(paired)
    # the corrected interval from the same differences, recomputed at the family's level
    paired["diff_ci_corrected"] = paired.diff_ci * (
        stats.t.ppf(0.5 + paired.corrected_level / 2, paired.sequences - 1)
        / stats.t.ppf(0.5 + LEVEL / 2, paired.sequences - 1)
    )
    return paired, pd.DataFrame(pooled), pd.DataFrame(stops)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the CSVs")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    paired, pooled, stops = smcem()
    for name, frame in {"speed_ratios": speed_ratios(), "log32_buy": log32_buy(),
                        "smcem_paired": paired, "smcem_pooled": pooled,
                        "smcem_stop": stops}.items():  # fmt: skip
        frame.to_csv(args.out / f"{name}.csv", index=False, float_format="%.6g")
        print(f"{name}.csv: {len(frame)} rows")


if __name__ == "__main__":
    main()
