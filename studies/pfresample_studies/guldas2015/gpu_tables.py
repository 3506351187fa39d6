"""Güldaş (2015) on the GPU: the GPU run's derived tables (:mod:`.gpu_runs`' files, this
run's or the committed run's) as docs/guldas2015.md quotes them, computed by the pipeline's
rule ``guldas2015_gpu_tables`` (target ``guldas2015_gpu``) into
results/tables/guldas2015/gpu/, each with its ``gpu_source`` (``pipeline.gpu_runs``) and the
committed CPU run it read (``cpu_source``):

* ``log32_summary.csv`` from ``log32_gpu/runs.csv``: per
  particle-weight set, N and standard method, the LMSE (eq. 4.6) on the
  float32 log-domain scan (Appendix A, at the raw log g's level) over
  float64's, the paired difference with its 99 % interval over the 300 sets
  (``resolved``: the interval excludes 0), the exact ratio the CPU computed
  for the same kernel (``log32_cpu/exact.csv``, ``log32-thesis-level``,
  other particle sets), the same paired difference for our tiled float32
  scan, the time of a call on the log scan over our float32 scan's (medians
  of 21 calls), and float32 butterfly multinomial's LMSE over log-scan
  multinomial's with ``separated``: their 99 % intervals do not overlap.
* ``smcem_summary.csv`` from ``smcem_gpu/fig4_12.csv`` and the cells:
  per N, the wall time per EM iteration of each scheme (median over the 10
  sequences of each run's mean) and multinomial's over the butterfly's per
  sequence (median, min, max); the Monte Carlo part of each parameter's MSE
  (SMC-EM_100 - exact EM_100)^2 with the paired ratio and sign-flip p-value
  of ``tables.smcem_table``, and the largest single sequence's share of it;
  and ``smcem_slopes.csv``: the least-squares slope of log(Monte Carlo
  MSE) on log N over the six N, with its standard error (1/N Monte Carlo
  variance gives -1; descriptive, six points).

Both as Markdown too (``log32.md``, ``smcem.md``), their sources last.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pfresample_studies.pipeline import artifacts, gpu_runs

METHODS = ("multinomial", "systematic")
# The committed CPU run the tables read beside the GPU run (paths inside an evidence
# folder): float32 stability's exact ratios, and the SMC-EM reference cell (ML points and
# exact EM) the GPU's SMC-EM ran on, in the same folder.
CPU_EXACT = "guldas2015/log32_cpu/exact.csv"
CPU_REFERENCE = "guldas2015/smcem_cpu/reference_smcem.npz"
GPU_RUN = "guldas2015/log32_gpu/runs.csv"  # marks the committed GPU run
TABLES = ("log32_summary", "smcem_summary", "smcem_slopes")
FORMATS = {"smcem_slopes": "%.4g"}  # the rest at 6 digits


def log32_summary(folder: Path, exact: pd.DataFrame) -> pd.DataFrame:
    df = pd.read_csv(folder / "runs.csv")
    thesis = exact[exact.kernel == "log32-thesis-level"].set_index(["target", "n"])
    rows = []
    for (target, n), cell in df.groupby(["target", "n"], sort=False):
        by = {(r.method, r.precision): r for r in cell.itertuples()}
        fly = by[("butterfly-multinomial", "float32")]
        for method in METHODS:
            log, f32, f64 = (by[(method, p)] for p in ("log32", "float32", "float64"))
            row = {
                "target": target, "n": n, "method": method, "sets": log.particle_sets,
                "lmse_float64": f64.lmse, "lmse_log32": log.lmse,
                "ratio_log32": log.lmse / f64.lmse,
                "diff_log32": log.diff_vs_float64, "diff_log32_ci": log.diff_vs_float64_ci,
                "resolved_log32": abs(log.diff_vs_float64) > log.diff_vs_float64_ci,
                "diff_float32": f32.diff_vs_float64, "diff_float32_ci": f32.diff_vs_float64_ci,
                "resolved_float32": abs(f32.diff_vs_float64) > f32.diff_vs_float64_ci,
                "time_ratio_log32_float32": log.time_ms / f32.time_ms,
                "time_log32_ms": log.time_ms, "time_float32_ms": f32.time_ms,
                "device": log.device,
            }  # fmt: skip
            if (target, n) in thesis.index and method == "multinomial":
                e = thesis.loc[(target, n)]
                row |= {"exact_ratio_cpu": e.lmse_ratio_to_float64,
                        "exact_ratio_cpu_ci": e.lmse_ratio_ci}  # fmt: skip
            if method == "multinomial":
                row |= {
                    "butterfly_over_log32": fly.lmse / log.lmse,
                    "separated": fly.lmse + fly.lmse_ci < log.lmse - log.lmse_ci
                    or log.lmse + log.lmse_ci < fly.lmse - fly.lmse_ci,
                    "butterfly_time_ms": fly.time_ms,
                    "butterfly_speed_over_log32": log.time_ms / fly.time_ms,
                    "butterfly_speed_over_float32": f32.time_ms / fly.time_ms,
                    "butterfly_lmse_time_over_log32": (fly.lmse * fly.time_ms)
                    / (log.lmse * log.time_ms),
                }  # fmt: skip
            rows.append(row)
    return pd.DataFrame(rows)


def log32_markdown(s: pd.DataFrame) -> str:
    out = []
    for method in METHODS:
        out.append(f"\n{method}: LMSE on the log-domain scan / float64's [paired difference "
                   "± 99 % interval; * resolved] (time / our float32 scan's)\n")  # fmt: skip
        ns = sorted(s.n.unique())
        out.append("| | " + " | ".join(f"2^{int(np.log2(n))}" for n in ns) + " |")
        out.append("|---" * (len(ns) + 1) + "|")
        for target in ("gaussian", "poisson"):
            cells = []
            for n in ns:
                r = s[(s.target == target) & (s.n == n) & (s.method == method)].iloc[0]
                star = "*" if r.resolved_log32 else ""
                cells.append(f"{r.ratio_log32:.2f} [{r.diff_log32:.1e} ± {r.diff_log32_ci:.1e}"
                             f"{star}] ({r.time_ratio_log32_float32:.1f}×)")  # fmt: skip
            out.append(f"| {target} | " + " | ".join(cells) + " |")
        if method == "multinomial":
            for target in ("gaussian", "poisson"):
                cells = []
                for n in ns:
                    r = s[(s.target == target) & (s.n == n) & (s.method == method)].iloc[0]
                    cells.append(f"{r.exact_ratio_cpu:.3g} ± {r.exact_ratio_cpu_ci:.2g}"
                                 if not np.isnan(r.exact_ratio_cpu) else "—")  # fmt: skip
                out.append(f"| {target}, exact (CPU) | " + " | ".join(cells) + " |")
            for target in ("gaussian", "poisson"):
                cells = []
                for n in ns:
                    r = s[(s.target == target) & (s.n == n) & (s.method == method)].iloc[0]
                    cells.append(f"{r.butterfly_over_log32:.2f}{' (sep.)' if r.separated else ''}")
                out.append(f"| {target}, butterfly float32 / log-scan multinomial | "
                           + " | ".join(cells) + " |")  # fmt: skip
            for target in ("gaussian", "poisson"):
                cells = []
                for n in ns:
                    r = s[(s.target == target) & (s.n == n) & (s.method == method)].iloc[0]
                    cells.append(f"{r.butterfly_speed_over_log32:.2f}× / "
                                 f"{r.butterfly_speed_over_float32:.2f}×, "
                                 f"{r.butterfly_lmse_time_over_log32:.2f}")  # fmt: skip
                out.append(f"| {target}, butterfly speed-up over log-scan / float32 multinomial, "
                           "LMSE × time over log-scan multinomial's | "
                           + " | ".join(cells) + " |")  # fmt: skip
    f32 = s.resolved_float32
    out.append(f"\nOur tiled float32 scan - float64, paired: resolved at {int(f32.sum())} of "
               f"{f32.size} points; largest |difference| / float64's LMSE "
               f"{(s.diff_float32.abs() / s.lmse_float64).max():.3f}.")  # fmt: skip
    return "\n".join(out) + "\n"


def smcem_summary(folder: Path, reference: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    table = pd.read_csv(folder / "fig4_12.csv")
    ref, ref_meta = artifacts.load_npz(reference)
    rows = []
    for n, cell in table.groupby("n"):
        arrays, meta = artifacts.load_npz(folder / f"smcem_n{n}.npz")
        arms = [a["scheme"] for a in meta["arms"]]
        j = meta["starts"].index("ml")
        k = ref_meta["starts"].index("ml")
        sec = {s: arrays["seconds"][arms.index(s), j] for s in arms}  # (M,)
        per_seq = sec["multinomial"] / sec["butterfly"]
        mult = cell[cell.scheme == "multinomial"].iloc[0]
        fly = cell[cell.scheme == "butterfly"].iloc[0]
        row = {
            "n": n, "device": mult.device, "sequences": int(mult.sequences),
            "ms_multinomial": 1e3 * np.median(sec["multinomial"]),
            "ms_butterfly": 1e3 * np.median(sec["butterfly"]),
            "speed_butterfly_median": np.median(per_seq),
            "speed_butterfly_min": per_seq.min(), "speed_butterfly_max": per_seq.max(),
        }  # fmt: skip
        for p in ("alpha", "sigma"):
            row |= {f"{p}_mc_multinomial": mult[f"{p}_mc_mse"],
                    f"{p}_mc_multinomial_ci": mult[f"{p}_mc_mse_ci"],
                    f"{p}_mc_butterfly": fly[f"{p}_mc_mse"],
                    f"{p}_mc_butterfly_ci": fly[f"{p}_mc_mse_ci"],
                    f"{p}_ratio": fly[f"{p}_mc_ratio"], f"{p}_p": fly[f"{p}_mc_p"],
                    f"{p}_mse_total_multinomial": mult[f"{p}_mse"],
                    f"{p}_ml_mse": mult[f"{p}_ml_mse"]}  # fmt: skip
            for s in arms:
                last = arrays[p][arms.index(s), j][:, -1]
                d2 = (last - ref[p][k][:, meta["iterations"]]) ** 2  # both at iteration 100
                row[f"{p}_top_sequence_{s}"] = int(d2.argmax())
                row[f"{p}_top_share_{s}"] = d2.max() / d2.sum()
        rows.append(row)
    s = pd.DataFrame(rows)
    slopes = []
    x = np.log(s.n.to_numpy(float))
    for p in ("alpha", "sigma"):
        for scheme in ("multinomial", "butterfly"):
            y = np.log(s[f"{p}_mc_{scheme}"].to_numpy(float))
            (b, a), cov = np.polyfit(x, y, 1, cov=True)
            slopes.append({"parameter": p, "scheme": scheme, "slope": b,
                           "slope_se": float(np.sqrt(cov[0, 0])), "points": x.size})  # fmt: skip
    return s, pd.DataFrame(slopes)


def smcem_markdown(s: pd.DataFrame, slopes: pd.DataFrame) -> str:
    out = [f"\nSMC-EM, bootstrap filter, from the ML point, {s.device.iloc[0]}\n",
           "| N | ms / EM iteration: multinomial / butterfly | butterfly speed (median, range) "
           "| α: multinomial | α: butterfly | ratio, p | σ: multinomial | σ: butterfly "
           "| ratio, p | largest sequence's share of α (mult. / butt.) |",
           "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in s.itertuples():
        out.append(
            f"| 2^{int(np.log2(r.n))} | {r.ms_multinomial:.2f} / {r.ms_butterfly:.2f} "
            f"| {r.speed_butterfly_median:.2f}× ({r.speed_butterfly_min:.2f}–"
            f"{r.speed_butterfly_max:.2f}) "
            f"| {r.alpha_mc_multinomial:.1e} ± {r.alpha_mc_multinomial_ci:.1e} "
            f"| {r.alpha_mc_butterfly:.1e} ± {r.alpha_mc_butterfly_ci:.1e} "
            f"| {r.alpha_ratio:.2f}, {r.alpha_p:.3f} "
            f"| {r.sigma_mc_multinomial:.1e} ± {r.sigma_mc_multinomial_ci:.1e} "
            f"| {r.sigma_mc_butterfly:.1e} ± {r.sigma_mc_butterfly_ci:.1e} "
            f"| {r.sigma_ratio:.2f}, {r.sigma_p:.3f} "
            f"| seq {r.alpha_top_sequence_multinomial} {r.alpha_top_share_multinomial:.0%} / "
            f"seq {r.alpha_top_sequence_butterfly} {r.alpha_top_share_butterfly:.0%} |"
        )  # fmt: skip
    for p in ("alpha", "sigma"):
        ratio, pv = s[f"{p}_ratio"], s[f"{p}_p"]
        out.append(f"\n{p}: butterfly / multinomial above 1 at {int((ratio > 1).sum())} of "
                   f"{ratio.size} N (range {ratio.min():.2f}–{ratio.max():.2f}); smallest p "
                   f"{pv.min():.3f}; p < 0.05 at {int((pv < 0.05).sum())}, p < 0.01 at "
                   f"{int((pv < 0.01).sum())}.")  # fmt: skip
    out.append("\nlog(Monte Carlo MSE) on log N, least squares over the six N:")
    for r in slopes.itertuples():
        out.append(f"* {r.parameter}, {r.scheme}: slope {r.slope:.2f} ± {r.slope_se:.2f} (s.e.)")
    r = s.iloc[-1]
    out.append(f"\nAt 2^{int(np.log2(r.n))}: total MSE (multinomial) "
               f"α {r.alpha_mse_total_multinomial:.4f}, σ {r.sigma_mse_total_multinomial:.4f}; "
               f"the data's part α {r.alpha_ml_mse:.4f}, "
               f"σ {r.sigma_ml_mse:.4f}.")  # fmt: skip
    return "\n".join(out) + "\n"


def tables(runs: Path, exact: pd.DataFrame, reference: Path, cpu_source: str):
    """The derived tables (TABLES) and their Markdown (``log32``, ``smcem``) from the GPU
    run's files under ``runs`` (with their ``sources.csv``), the CPU's exact ratios and the
    reference cell, labelled."""
    runs = Path(runs)
    sources = gpu_runs.read_sources(runs / gpu_runs.SOURCES)
    log32 = log32_summary(runs / "log32_gpu", exact)
    smcem, slopes = smcem_summary(runs / "smcem_gpu", reference)
    cells = sorted(n for n in sources if n.startswith("smcem_gpu/") and n.endswith(".npz"))
    read = {"log32_summary": ["log32_gpu/runs.csv"],
            "smcem_summary": ["smcem_gpu/fig4_12.csv", *cells],
            "smcem_slopes": ["smcem_gpu/fig4_12.csv"]}  # fmt: skip
    frames = {name: gpu_runs.labelled(frame, sources, read[name]).assign(cpu_source=cpu_source)
              for name, frame in zip(TABLES, (log32, smcem, slopes), strict=True)}  # fmt: skip

    def note(names):
        return (f"\nGPU: {gpu_runs.label(sources, names)}. CPU (exact ratios, reference): "
                f"{cpu_source}.\n")  # fmt: skip

    markdown = {"log32": log32_markdown(log32) + note(read["log32_summary"]),
                "smcem": smcem_markdown(smcem, slopes) + note(read["smcem_summary"])}  # fmt: skip
    return frames, markdown
