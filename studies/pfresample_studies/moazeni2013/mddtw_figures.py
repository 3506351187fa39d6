"""Moazeni (2013) chapter 7: the tidy tables and figures from the cells of
``mddtw_experiments``. Quality tables give each method's mean over queries (or
seeds) with a 95 % t-interval and, where runs share their queries, the paired
difference MD-DTW - EDT with its interval; the thesis's printed values (on its
private recordings) stand beside as rows of their own. Figures whose runs were not
made (the GPU's, where no GPU ran) are empty and say so."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .figures import captioned, legend_label, lines, sources_of
from .tv_experiments import unpack

TITLES = {
    "fig58": "Fig 58: planted scenarios, the first ten results of MD-DTW and EDT",
    "fig60": "Fig 60: GPU time of the DTW of every pair against the recording's length (99 dims)",
    "fig62": "Fig 62: GPU time against the recording's length (9 dims; Daphnet marked)",
    "fig63": "Fig 63: GPU over one compiled CPU thread: the same exact DTW, and the pruned search",
    "fig64": "Fig 64: GPU time against the dimensions, nr fixed and nr = k",
    "planted": "Chapter 7: recall of the planted occurrences in the top 6 and top 20",
}
HARDWARE = "private shoe and activity-monitor recordings (thesis)"
# Tables 11 (the shoe) and 14 (the activity monitor's positions): nDCG@20, mean and +-;
# 12 and the table after 14 (recall: MD-DTW, + segmentation, + exhausting); 13 (precision
# and recall of limping), as printed.
PUBLISHED_NDCG = {"Walk": (0.86, 0.03, 0.78, 0.04), "Run": (0.94, 0.02, 0.92, 0.02),
                  "Jump": (0.80, 0.04, 0.67, 0.05)}  # fmt: skip
PUBLISHED_TABLE14 = {"Arm": (0.89, 0.03, 0.72, 0.04), "Waist": (0.95, 0.02, 0.91, 0.02),
                     "Leg": (0.96, 0.02, 0.88, 0.03)}  # fmt: skip
PUBLISHED_RECALL = {"Walk": (0.80, 0.83, 0.84), "Run": (0.86, 0.88, 0.89),
                    "Jump": (0.70, 0.72, 0.74), "Arm": (0.70, 0.72, 0.74),
                    "Waist": (0.90, 0.91, 0.95), "Leg": (0.90, 0.92, 0.93)}  # fmt: skip
PUBLISHED_TABLE13 = {"Limp Right": (0.86, 0.60, 0.73, 0.62), "Limp Left": (0.78, 0.59, 0.70, 0.63)}
PUBLISHED_SPEEDUP = 25.0  # Fig 63: "up to 25X" over a pruned CPU DTW
ALL = "all classes"  # a table's row pooling every query of its recording
# (column, minuend, subtrahend) of each table's paired differences over the same queries
VERSUS_EDT = (("diff", "md_dtw", "edt"),)
GAINS = (("segmentation_gain", "segmentation", "md_dtw"),
         ("exhausting_gain", "exhausting", "md_dtw"))  # fmt: skip


def _interval(values) -> tuple[float, float, int]:
    """Mean and the half-width of its 95 % t-interval (0 for fewer than 2 values)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float(v.mean()) if v.size else np.nan, 0.0, int(v.size)
    half = stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return float(v.mean()), float(half), int(v.size)


def _metric_table(frame: pd.DataFrame, by: list[str], metrics: dict, pooled: bool = True):
    """A row a group of ``by`` (and, with ``pooled``, a row a group of ``by[:-1]`` over
    every label, ``ALL``): for each metric (name -> (methods, differences)) each
    method's mean over the queries with its 95 % t-interval (``<metric>_<method>``,
    ``..._pm``) and the paired differences over the same queries
    (``<metric>_<column>``, ``..._pm``)."""
    groups = list(frame.groupby(by, sort=False))
    if pooled:
        outer = by[:-1]
        pools = frame.groupby(outer, sort=False) if outer else [((), frame)]
        for key, part in pools:
            key = key if isinstance(key, tuple) else (key,)
            groups.append(((*key, ALL), part))
    rows = []
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key, strict=True))
        for metric, (methods, differences) in metrics.items():
            wide = part.pivot_table(index="episode", columns="method", values=metric)
            for method in methods:
                if method in wide:
                    mean, half, row["queries"] = _interval(wide[method])
                    row[f"{metric}_{method}"], row[f"{metric}_{method}_pm"] = mean, half
            for name, a, b in differences:
                if a in wide and b in wide:
                    row[f"{metric}_{name}"], row[f"{metric}_{name}_pm"], _ = _interval(
                        wide[a] - wide[b])  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def _on_off(frame: pd.DataFrame) -> pd.DataFrame:
    """z-normalisation as a column of words ("on", "off"), first in the table."""
    if "normalise" not in frame:
        return frame
    words = frame["normalise"].map({True: "on", False: "off"})
    return frame.drop(columns=["normalise"]).assign(znorm=words)[
        ["znorm", *[c for c in frame.columns if c != "normalise"]]]  # fmt: skip


def _znorm_effect(frame: pd.DataFrame) -> pd.DataFrame:
    """z-normalisation off against on, paired over the same queries: for each method,
    metric and label (and every label, ``ALL``), both means with their 95 % t-intervals
    and the paired difference off - on with its interval."""
    rows = []
    parts = [*frame.groupby("label", sort=False), (ALL, frame)]
    for label, part in parts:
        for method, mp in part.groupby("method", sort=False):
            for metric in ("ndcg", "recall"):
                wide = mp.pivot_table(index="episode", columns="normalise", values=metric)
                if True not in wide or False not in wide:
                    continue
                wide = wide.dropna()
                row = {"label": label, "method": method, "metric": metric}
                row["on"], row["on_pm"], row["queries"] = _interval(wide[True])
                row["off"], row["off_pm"], _ = _interval(wide[False])
                row["off_minus_on"], row["off_minus_on_pm"], _ = _interval(wide[False] - wide[True])
                rows.append(row)
    return pd.DataFrame(rows)


def tables(search_cells, timing_cells, choice_cells=()) -> dict[str, pd.DataFrame]:
    activity, planted = unpack(search_cells, "activity"), unpack(search_cells, "planted")
    timing = unpack(timing_cells, "timing")
    out = {"ch7_choices": _choices(unpack(choice_cells, "choices"))}
    printed_ndcg = pd.DataFrame([{"label": k, "ndcg_md_dtw": a, "ndcg_md_dtw_pm": b,
                                  "ndcg_edt": c, "ndcg_edt_pm": d, "source": HARDWARE}
                                 for k, (a, b, c, d) in PUBLISHED_NDCG.items()])  # fmt: skip
    printed14 = pd.DataFrame([{"orientation": k, "ndcg_md_dtw": a, "ndcg_md_dtw_pm": b,
                               "ndcg_edt": c, "ndcg_edt_pm": d,
                               "recall_md_dtw": PUBLISHED_RECALL[k][0],
                               "recall_segmentation": PUBLISHED_RECALL[k][1],
                               "recall_exhausting": PUBLISHED_RECALL[k][2], "source": HARDWARE}
                              for k, (a, b, c, d) in PUBLISHED_TABLE14.items()])  # fmt: skip
    printed_recall = pd.DataFrame([{"label": k, "recall_md_dtw": a, "recall_segmentation": b,
                                    "recall_exhausting": c, "source": HARDWARE}
                                   for k, (a, b, c) in PUBLISHED_RECALL.items()
                                   if k in PUBLISHED_NDCG])  # fmt: skip
    printed13 = pd.DataFrame([{"label": k, "precision_at_10_md_dtw": a, "recall_at_10_md_dtw": b,
                               "precision_at_10_edt": c, "recall_at_10_edt": d, "source": HARDWARE}
                              for k, (a, b, c, d) in PUBLISHED_TABLE13.items()])  # fmt: skip
    both = ("md_dtw", "edt")
    every = ("md_dtw", "segmentation", "exhausting", "edt")
    if activity.empty:
        note = pd.DataFrame([{"label": "aeon not installed: no BasicMotions rows"}])
        out["table11"] = pd.concat([note, printed_ndcg], ignore_index=True)
        out["table12"] = pd.concat([note, printed_recall], ignore_index=True)
        out["table13"] = pd.concat([note, printed13], ignore_index=True)
        out["table14"] = pd.concat([note, printed14], ignore_index=True)
        out["ch7_znorm"] = note
    else:
        if "normalise" not in activity:  # a cell from before the setting: z-normalised
            activity = activity.assign(normalise=True)
        activity = activity.assign(normalise=activity["normalise"].astype(bool))
        allrec = activity[activity["recording"] == "all"]
        t11 = _metric_table(
            allrec,
            ["normalise", "label"],
            {"ndcg": (both, VERSUS_EDT), "recall": (both, VERSUS_EDT)},
        )
        out["table11"] = pd.concat([_on_off(t11).assign(source="BasicMotions (ours)"),
                                    printed_ndcg], ignore_index=True)  # fmt: skip
        t12 = _metric_table(allrec, ["normalise", "label"], {"recall": (every, GAINS)})
        effect = _znorm_effect(allrec)
        out["ch7_znorm"] = effect if not effect.empty else pd.DataFrame(
            [{"label": "one z-normalisation setting ran: no pairs"}])  # fmt: skip
        out["table12"] = pd.concat([_on_off(t12).assign(source="BasicMotions (ours)"),
                                    printed_recall], ignore_index=True)  # fmt: skip
        rare = activity[activity["recording"] == "rare"]
        t13 = _metric_table(rare, ["normalise", "label"],
                            {"precision_at_10": (both, VERSUS_EDT),
                             "recall_at_10": (both, VERSUS_EDT)}, pooled=False)  # fmt: skip
        out["table13"] = pd.concat(
            [_on_off(t13).assign(source="BasicMotions, the rare class (ours)"), printed13],
            ignore_index=True,
        )
        turned = activity[activity["recording"] == "orientation"]
        if turned.empty:
            out["table14"] = pd.concat([pd.DataFrame([{"orientation": "no orientation runs"}]),
                                        printed14], ignore_index=True)  # fmt: skip
        else:
            t14 = _metric_table(turned, ["normalise", "label", "orientation"],
                                {"ndcg": (every, VERSUS_EDT), "recall": (every, VERSUS_EDT)},
                                pooled=False)  # fmt: skip
            out["table14"] = pd.concat([_on_off(t14).assign(
                source="BasicMotions' accelerometer, each episode turned (ours)"), printed14],
                ignore_index=True)  # fmt: skip
    if planted.empty:
        out["planted"] = pd.DataFrame()
    else:
        planted = planted.assign(top6=(planted["rank"] > 0) & (planted["rank"] <= 6),
                                 top20=planted["rank"] > 0)  # fmt: skip
        per_seed = planted.groupby(["k", "scenario", "method", "seed"])[["top6", "top20"]].mean()
        per_seed = per_seed.reset_index()
        rows = []
        for (k, scenario), part in per_seed.groupby(["k", "scenario"]):
            row = {"k": k, "scenario": scenario}
            for method, mp in part.groupby("method"):
                row[f"{method}_top6"], row[f"{method}_top6_pm"], row["seeds"] = _interval(
                    mp["top6"]
                )
                row[f"{method}_top20"], _, _ = _interval(mp["top20"])
            rows.append(row)
        out["planted"] = pd.DataFrame(rows)
    out["fig58"] = _fig58(search_cells)
    if timing.empty:
        for name in ("fig60", "fig62", "fig63", "fig64"):
            out[name] = pd.DataFrame()
        return out
    walk = timing[timing["recording"].str.startswith("random walk")]
    out["fig60"] = walk[walk["k"] == walk["k"].max()]
    out["fig62"] = timing[(timing["k"] == 9) & ~timing["recording"].str.startswith("fig64")]
    speed = timing.dropna(subset=["cpu_s"]) if "cpu_s" in timing else timing.iloc[0:0]
    if len(speed):
        speed = speed.assign(speedup=speed["cpu_s"] / speed["gpu_s"],
                             speedup_over_pruned=speed["cpu_pruned_s"] / speed["gpu_s"],
                             speedup_over_peer=speed["peer_s"] / speed["gpu_s"]
                             if "peer_s" in speed else np.nan,
                             thesis_speedup=PUBLISHED_SPEEDUP)  # fmt: skip
    out["fig63"] = speed
    out["fig64"] = timing[timing["recording"].str.startswith("fig64")]
    return out


def _choices(frame: pd.DataFrame) -> pd.DataFrame:
    """Each choice's nDCG@20 and recall, mean and 95 % interval over the queries, and
    the paired difference from ours (the same queries)."""
    if frame.empty:
        return pd.DataFrame([{"choice": "no GPU ran (or aeon not installed): no rows"}])
    ours = frame[frame["choice"] == "ours"].set_index("episode")
    rows = []
    for (choice, value), part in frame.groupby(["choice", "value"], sort=False):
        part = part.set_index("episode")
        row = {"choice": choice, "value": value, "m": part["m"].iloc[0],
               "p": part["p"].iloc[0], "band": part["band"].iloc[0],
               "normalise": part["normalise"].iloc[0]}  # fmt: skip
        for metric in ("ndcg", "recall"):
            row[metric], row[f"{metric}_pm"], row["queries"] = _interval(part[metric])
            diff = (part[metric] - ours[metric]).dropna()
            row[f"{metric}_diff"], row[f"{metric}_diff_pm"], _ = _interval(diff)
        rows.append(row)
    return pd.DataFrame(rows)


def _fig58(cells) -> pd.DataFrame:
    """The first planted recording's samples (long form) and each method's
    first ten starts, for the drawing."""
    for arrays, _ in cells:
        if "fig58/db" in arrays:
            db = arrays["fig58/db"]
            rows = [{"kind": "sample", "dim": d, "t": t, "value": v}
                    for d in range(db.shape[0]) for t, v in enumerate(db[d])]  # fmt: skip
            for p, name in zip(arrays["fig58/positions"], arrays["fig58/order"], strict=True):
                rows.append({"kind": "planted", "t": int(p), "scenario": str(name)})
            for method in ("md_dtw", "edt"):
                for r, t in enumerate(arrays[f"fig58/{method}"], 1):
                    rows.append({"kind": method, "t": int(t), "rank": r})
            m = arrays["fig58/motif"].shape[1]
            return pd.DataFrame(rows).assign(m=m)
    return pd.DataFrame()


def draw(name: str, table: pd.DataFrame, scale: str, gpus: list[str], evidence=None,
         fill: str = "") -> Figure:  # fmt: skip
    """The figure of one tidy table, captioned as chapter 3's are (``overlaid`` with a
    committed run's rows where ``evidence`` is given)."""
    fig = captioned(9, table, scale, gpus, evidence, fill)
    if table.empty:
        return fig
    ax = fig.subplots()
    if name == "fig58":
        samples = table[table["kind"] == "sample"]
        for d, part in samples.groupby("dim"):
            ax.plot(part["t"], part["value"] + 6 * d, lw=0.5, color="black")
        m = int(table["m"].iloc[0])
        top = 6 * samples["dim"].max() + 8
        for _, r in table[table["kind"] == "planted"].iterrows():
            ax.axvspan(r["t"], r["t"] + m, color="grey", alpha=0.15)
            ax.text(r["t"], top, r["scenario"], fontsize=6)
        for method, colour, dy in (("md_dtw", "blue", 2), ("edt", "red", 4)):
            for _, r in table[table["kind"] == method].iterrows():
                ax.add_patch(__import__("matplotlib").patches.Rectangle(
                    (r["t"], -6 + dy), m, 1.5, color=colour, alpha=0.5))  # fmt: skip
                ax.text(r["t"], -6 + dy, str(int(r["rank"])), fontsize=5, color=colour)
        ax.set(xlabel="t", ylabel="dimension (offset); blue MD-DTW, red EDT ranks")
        return fig
    if name == "planted":
        cols = [c for c in table.columns if c.endswith("_top6") and not c.endswith("_pm")]
        long = table.melt(id_vars=["k", "scenario"], value_vars=cols, var_name="method",
                          value_name="recall")  # fmt: skip
        long["line"] = long["method"] + " k=" + long["k"].astype(str)
        for key, part in long.groupby("line"):
            ax.plot(part["scenario"], part["recall"], marker="o", label=key)
        ax.legend(fontsize=5, ncols=2)
        ax.set_ylabel("recall in the top 6")
        return fig
    if name in ("fig60", "fig62"):
        lines(ax, table.assign(query=table["m"]), "n", "gpu_s", "query", logy=True)
    elif name == "fig63":
        part = table[table["recording"].str.startswith("random walk")]
        part = part[part["k"] == part["k"].max()]
        part = part.assign(query=part["m"])
        exact = part.assign(query="exact DTW both, query " + part["m"].astype(str))
        lines(ax, exact, "n", "speedup", "query", logy=True, named=False)
        sources = sources_of(part)
        for source in sources:
            mine = part if source is None else part[part["source"] == source]
            for key, sub in mine.groupby("query"):
                sub = sub.sort_values("n")
                ax.plot(sub["n"], sub["speedup_over_pruned"], ls="--", marker="x",
                        label=legend_label(f"over the pruned search, query {key}", source,
                                           len(sources) > 1))  # fmt: skip
                if sub["speedup_over_peer"].notna().any():
                    ax.plot(sub["n"], sub["speedup_over_peer"], ls=":", marker="+",
                            label=legend_label(f"over dtaidistance, query {key}", source,
                                               len(sources) > 1))  # fmt: skip
        ax.axhline(PUBLISHED_SPEEDUP, color="grey", ls=":",
                   label=f"thesis: up to {PUBLISHED_SPEEDUP:g}x over a pruned CPU DTW")  # fmt: skip
        ax.legend(fontsize=5)
        ax.set_ylabel("GPU over one compiled CPU thread")
    elif name == "fig64":
        lines(
            ax, table.assign(pairs_rule=table["recording"]), "k", "gpu_s", "pairs_rule", logy=True
        )
    return fig


CH7_KEYS = ("k", "n", "m", "gpu_scope")
# The GPU's two scopes (bench/moazeni2013_ch7_best_cpu.py): the distance kernel alone
# between CUDA events (the thesis's and Fig 63's scope; the pipeline's timing cell), and
# the top-p task (the kernel, the device's argsort, the candidates copied to the host and
# the selection there: what every CPU side computes; the bench's, wall time).
KERNEL, TOP_P = "kernel (CUDA events)", "top-p task (wall)"
CH7_BASELINE = ("dtw.c's exact DTW of every window on one thread, timed as the pipeline's "
                "timing cell times it: moazeni2013_ch7_cpu_pairs pairs, a pair's time every "
                "pair's; the thesis's one CPU thread. `gpu_scope` says what the GPU's time "
                "holds: the kernel alone, the thesis's scope, or the top-p task that every CPU "
                "side computes")  # fmt: skip
CH7_HEADLINE = ("evidence/2026-11-28-h200-45f3754/ch7 and its rerun without spinning threads, "
                "evidence/2026-11-28-h200-cb91f83/ch7_passive, one H200 with its 16 Xeon "
                "cores; docs/moazeni2013.md")  # fmt: skip
_GPU_COLUMNS = [*CH7_KEYS, "gpu_s", "gpu_device"]


def evidence_gpu_rows(frame: pd.DataFrame, device: str) -> pd.DataFrame:
    """The GPU's rows of a committed bench run (bench/moazeni2013_ch7_best_cpu.py's
    ``ch7_timings.csv``: one row a (case, side, code)) as the speed-up table's GPU side:
    (k, n, m, gpu_scope, gpu_s, gpu_device), the kernel's and the top-p task's medians."""
    if frame.empty or "side" not in frame:
        return pd.DataFrame(columns=_GPU_COLUMNS)
    gpu = frame[frame["side"] == "gpu"]
    code = gpu["code"].astype(str)
    scope = np.where(code.str.startswith("gpu_kernel"), KERNEL,
                     np.where(code.str.startswith("gpu_top_p"), TOP_P, ""))  # fmt: skip
    names = gpu["device"].fillna(device).astype(str) if "device" in gpu else device
    out = pd.DataFrame({"k": gpu["k"].astype(np.int64), "n": gpu["n"].astype(np.int64),
                        "m": gpu["m"].astype(np.int64), "gpu_scope": scope,
                        "gpu_s": gpu["seconds"].astype(float), "gpu_device": names})  # fmt: skip
    return out[out["gpu_scope"] != ""].reset_index(drop=True)


def gpu_kernel_rows(timing: pd.DataFrame) -> pd.DataFrame:
    """This run's GPU side: the timing cell's random-walk rows (the kernel alone, CUDA
    events, at nr = moazeni2013_ch7_nr) as (k, n, m, gpu_scope, gpu_s, gpu_device)."""
    if timing.empty or "recording" not in timing:
        return pd.DataFrame(columns=_GPU_COLUMNS)
    walk = timing[timing["recording"].astype(str).str.startswith("random walk")]
    out = pd.DataFrame({"k": walk["k"].astype(np.int64), "n": walk["n"].astype(np.int64),
                         "m": walk["m"].astype(np.int64), "gpu_scope": KERNEL,
                         "gpu_s": walk["gpu_s"].astype(float),
                         "gpu_device": walk["device"].astype(str)})  # fmt: skip
    return out.reset_index(drop=True)


def ch7_speedups(gpu: pd.DataFrame, best_cell, *, gpu_source: str,
                 one_host: bool) -> pd.DataFrame:  # fmt: skip
    """Chapter 7's speed-ups at each (k, n, m) the best-CPU cell ran and the GPU has, a
    row a GPU scope: the GPU over the document's kind of baseline (the cell's dtw.c, one
    thread, the timing cell's method) and over the best CPU code on every core (the
    faster of dtw_best_search and dtw_best_all, named in ``best_cpu_code``; both times
    beside), the thesis's printed "up to 25x" (over a pruned CPU search) beside them."""
    from . import speedups

    arrays, meta = best_cell
    extra = ("gpu_device", "doc_cpu_code", "dtw_best_search_s", "dtw_best_all_s",
             "printed_speedup")  # fmt: skip
    cpu = unpack([best_cell], "best_cpu")
    if cpu.empty or gpu.empty:
        return speedups.empty(CH7_KEYS, extra)
    keys = ["k", "n", "m"]
    cpu = cpu.astype({k: np.int64 for k in keys})
    doc = cpu[keys].assign(doc_cpu_s=cpu["doc_cpu_s"].astype(float))
    best = cpu[keys].assign(best_cpu_s=cpu["best_cpu_s"].astype(float),
                            best_cpu_threads=cpu["threads"].astype(np.int64),
                            dtw_best_search_s=cpu["dtw_best_search_s"].astype(float),
                            dtw_best_all_s=cpu["dtw_best_all_s"].astype(float),
                            _code=cpu["best_cpu_code"].astype(str))  # fmt: skip
    scopes = gpu[[*keys, "gpu_scope"]].astype({k: np.int64 for k in keys})
    doc, best = doc.merge(scopes, on=keys), best.merge(scopes, on=keys)
    gpu = gpu.astype({k: np.int64 for k in keys})
    frame = speedups.join(CH7_KEYS, gpu, doc, best, gpu_source=gpu_source,
                          best_code=meta["code"], cpu=meta["cpu"], one_host=one_host,
                          extra={"doc_cpu_code": "dtw.c, 1 thread",
                                 "printed_speedup": PUBLISHED_SPEEDUP})  # fmt: skip
    frame["best_cpu_code"] = [f"dtw_best.c {c} (native.{c})" for c in frame.pop("_code")]
    return frame[[*CH7_KEYS, *speedups.COLUMNS, *extra]]
