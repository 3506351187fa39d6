"""Moazeni (2013) chapter 4: Table 5 and the tidy tables and figures of Figs 19 and
26-40 from the runs of ``hashtable_workloads.run_cell`` (one row a run: backend,
threads, key distribution and variance, hash, layout, tables, batch, mix; its mean
seconds, Mops/s, upload and counters). Each figure reads the runs ``plan`` adds for
it; a figure none of whose runs were made (the GPU's, where no GPU ran) is empty and
says so. Speed-ups pair runs of the same keys (``run_cell`` draws them from the key
distribution, batch and mix alone)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import catalog
from . import hashtable_workloads as w
from .figures import LOCAL, captioned, legend_label, lines, sources_of

TITLES = {
    "fig19": "Fig 19: GPU_BASIC over CPU_BASIC against the keys' variance (33 % search)",
    "fig26": "Fig 26: GPU_PH insert throughput against PH",
    "fig27": "Fig 27: GPU_PH insert speed-up over CPU_BASIC",
    "fig28": "Fig 28: GPU_PH insert time against PH for each variance (largest batch)",
    "fig29": "Fig 29: GPU_PH search speed-up over CPU_BASIC",
    "fig30": "Fig 30: GPU_PH throughput of the five mixes against PH (largest batch)",
    "fig31": "Fig 31: GPU_PH (top PH) over GPU_BASIC, each mix",
    "fig32": "Fig 32: GPU_PH over CPU_PH (top PH), each mix",
    "fig33": "Fig 33: GPU_PH (top PH) over GPU_BASIC against the variance (33 % search)",
    "fig34": "Fig 34: GPU_PH throughput against PH for each hash (33 % search)",
    "fig35": "Fig 35: GPU_PH (top PH) over GPU_BASIC, inserts, normal and uniform keys",
    "fig36": "Fig 36: GPU_PH over GPU_BIG of the same buckets (33 % search)",
    "fig37": "Fig 37: throughput of GPU_PH and GPU_BIG against PH (33 % search)",
    "fig38": "Fig 38: GPU_PH (PH = 50) over GPU_BIG against the variance (33 % search)",
    "fig39": "Fig 39: 2^20 operations in batches of each size (33 % search)",
    "fig40": "Fig 40: a batch's GPU time and its upload, each mix (top PH)",
    "cpu_threads": "CPU_BASIC and CPU_PH (top PH) against their threads (33 % search)",
    "applications": "§4.6.2.9: GPU_PH (top PH) over GPU_BASIC on the applications' keys",
}
HEAD_BYTES = np.dtype(np.uint32).itemsize  # a bucket's head: a node index (hashtable.py)


def frame(cells) -> pd.DataFrame:
    """The runs of every cell, one row each, with the device that ran them."""
    frames = [pd.DataFrame({k: np.asarray(v) for k, v in arrays.items()}).assign(
              device=meta.get("device", "CPU")) for arrays, meta in cells]  # fmt: skip
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=["backend", "tables", "batch", "mix", "seconds", "mops"])
    return pd.concat(frames, ignore_index=True)


def _pick(runs, backend="gpu", layout="ph", distribution="normal", variance=None, hash="dek",
          **equal) -> pd.DataFrame:  # fmt: skip
    """The runs of one backend and layout, normal keys of the base variance and
    DEK unless named, and ``equal`` column values."""
    if runs.empty:
        return runs
    keep = (runs["backend"] == backend) & (runs["layout"] == layout)
    keep &= runs["distribution"] == distribution
    if distribution == "normal":
        keep &= np.isclose(runs["variance"], catalog.CH4_VARIANCE if variance is None
                           else variance)  # fmt: skip
    keep &= runs["hash"] == hash
    for key, value in equal.items():
        keep &= runs[key] == value
    return runs[keep]


def _ratio(num: pd.DataFrame, den: pd.DataFrame, on: list[str], keep=()) -> pd.DataFrame:
    """num's and den's seconds joined on ``on`` (num's ``keep`` columns kept);
    ``speedup`` = den / num (> 1: num faster)."""
    both = num[[*on, *keep, "seconds"]].merge(den[[*on, "seconds"]], on=on,
                                              suffixes=("", "_baseline"))  # fmt: skip
    both["speedup"] = both["seconds_baseline"] / both["seconds"]
    return both


def _variance_sweep(runs, num_kw, den_kw, variances) -> pd.DataFrame:
    out = []
    for var in variances:
        for dist in ("normal", "uniform"):
            if dist == "uniform" and var != variances[0]:
                continue
            v = None if dist == "uniform" else var
            num = _pick(runs, distribution=dist, variance=v, **num_kw)
            den = _pick(runs, distribution=dist, variance=v, **den_kw)
            r = _ratio(num, den, ["batch", "mix"])
            out.append(r.assign(distribution=dist, variance=0.0 if v is None else var))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def table5(cfg) -> pd.DataFrame:
    """Table 5: the memory of the bucket heads of PH tables of 1,024 buckets
    (ours: a 4-byte index a head) beside the printed KB."""
    rows = []
    for ph in sorted(set(catalog.PUBLISHED_TABLE5) | set(catalog.ch4_tables(cfg))):
        rows.append({"tables": ph, "ours_kb": ph * w.BUCKETS * HEAD_BYTES / 1024,
                     "printed_kb": catalog.PUBLISHED_TABLE5.get(ph, np.nan),
                     "printed_hardware": catalog.CH4_HARDWARE})  # fmt: skip
    return pd.DataFrame(rows)


def tables(runs: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Every figure's tidy table (empty where its runs are missing). Where the GPU ran,
    its runs are the figures' (GPU_PH, GPU_BASIC, GPU_BIG; the CPU's the baselines of
    Figs 19, 27, 29 and 32); where it did not, the CPU's twins of them (``plan`` with
    ``gpu=False``: CPU_PH, CPU_BASIC, CPU_BIG) draw every figure that compares the
    structures with each other, and the four GPU-over-CPU figures stay empty here."""
    top, big = catalog.ch4_top_tables(cfg), max(catalog.ch4_batches(cfg))
    variances = catalog.ch4_variances(cfg)
    out = {"table5": table5(cfg)}
    if runs.empty:
        for name in TITLES:
            out[name] = pd.DataFrame()
        return out
    on = "gpu" if (runs["backend"] == "gpu").any() else "cpu"
    word = on.upper()
    all_runs = runs
    # the figures compare the CPU at its configured threads; the sweep is its own table
    runs = runs[(runs["backend"] != "cpu") | (runs["threads"] == catalog.ch4_cpu_threads(cfg))]

    def pick(**kw):
        return _pick(runs, **{"backend": on, **kw})

    cpu1 = {"backend": "cpu", "tables": 1}
    empty = pd.DataFrame()
    over_cpu = on == "gpu"  # Figs 19, 27, 29, 32: the GPU over the CPU
    out["fig19"] = _variance_sweep(runs, {"tables": 1, "mix": 33}, {**cpu1, "mix": 33},
                                   variances) if over_cpu else empty  # fmt: skip
    ins = pick(mix=0)
    out["fig26"] = ins[["tables", "batch", "mops"]].sort_values(["batch", "tables"])
    out["fig27"] = _ratio(ins, _pick(runs, **cpu1, mix=0), ["batch"], keep=["tables"]) \
        if over_cpu else empty  # fmt: skip
    out["fig28"] = pd.concat([pick(mix=0, batch=big, variance=v)[
        ["tables", "variance", "seconds"]] for v in variances], ignore_index=True)  # fmt: skip
    search = pick(mix=100)
    out["fig29"] = _ratio(search, _pick(runs, **cpu1, mix=100), ["batch"], keep=["tables"]) \
        if over_cpu else empty  # fmt: skip
    mixes = pick(batch=big)
    out["fig30"] = mixes[mixes["mix"].isin(catalog.CH4_MIXES)][["tables", "mix", "mops"]]
    combined = pick()[pick()["mix"].isin(catalog.CH4_MIXES)]
    out["fig31"] = _ratio(combined[combined["tables"] == top],
                          combined[combined["tables"] == 1], ["batch", "mix"])  # fmt: skip
    out["fig32"] = _ratio(combined[combined["tables"] == top],
                          _pick(runs, backend="cpu", tables=top), ["batch", "mix"]) \
        if over_cpu else empty  # fmt: skip
    variance_kw = {"backend": on}
    out["fig33"] = _variance_sweep(runs, {**variance_kw, "tables": top, "mix": 33, "batch": big},
                                   {**variance_kw, "tables": 1, "mix": 33, "batch": big},
                                   variances)  # fmt: skip
    out["fig34"] = pd.concat([pick(hash=h, mix=33, batch=big)[["tables", "hash", "mops"]]
                              for h in catalog.ch4_hashes(cfg)], ignore_index=True)  # fmt: skip
    out["fig35"] = pd.concat([_ratio(pick(distribution=d, tables=top, mix=0),
                                     pick(distribution=d, tables=1, mix=0),
                                     ["batch"]).assign(distribution=d)
                              for d in ("normal", "uniform")], ignore_index=True)  # fmt: skip
    ph, bigt = pick(mix=33, batch=big), pick(layout="big", mix=33, batch=big)
    out["fig36"] = _ratio(ph, bigt, ["tables", "batch"])
    out["fig37"] = pd.concat([ph.assign(structure=f"{word}_PH"),
                              bigt.assign(structure=f"{word}_BIG")])[
        ["structure", "tables", "mops"]]  # fmt: skip
    out["fig38"] = pd.concat([_ratio(
        pick(variance=v, tables=catalog.CH4_FIG38_TABLES, mix=33, batch=big),
        pick(layout="big", variance=v, tables=catalog.CH4_FIG38_TABLES, mix=33, batch=big),
        ["tables", "batch"]).assign(variance=v) for v in variances], ignore_index=True)  # fmt: skip
    f39 = pick(mix=33)
    f39 = f39[f39["tables"].isin([1, top])][["tables", "batch", "seconds"]].copy()
    f39["batches"] = catalog.CH4_FIG39_TOTAL // f39["batch"]
    f39["total_s"] = f39["batches"] * f39["seconds"]  # the median batch's time, times the count
    out["fig39"] = f39
    out["fig40"] = combined[combined["tables"] == top][["mix", "batch", "seconds", "upload_s"]]
    cpu = _pick(all_runs, backend="cpu", mix=33, batch=big)
    out["cpu_threads"] = cpu[cpu["tables"].isin([1, top])][["tables", "threads", "mops"]]
    out["applications"] = pd.concat([_ratio(pick(distribution=d, tables=top, mix=33),
                                            pick(distribution=d, tables=1, mix=33),
                                            ["batch"]).assign(distribution=d)
                                     for d in (*w.APPLICATIONS, "normal", "uniform")],
                                    ignore_index=True)  # fmt: skip
    return out


# name -> (x, y, the line's column, log y)
AXES = {
    "fig19": ("variance", "speedup", "distribution", False),
    "fig26": ("tables", "mops", "batch", False),
    "fig27": ("tables", "speedup", "batch", True),
    "fig28": ("tables", "seconds", "variance", True),
    "fig29": ("tables", "speedup", "batch", True),
    "fig30": ("tables", "mops", "mix", False),
    "fig31": ("batch", "speedup", "mix", False),
    "fig32": ("batch", "speedup", "mix", False),
    "fig33": ("variance", "speedup", "distribution", False),
    "fig34": ("tables", "mops", "hash", False),
    "fig35": ("batch", "speedup", "distribution", False),
    "fig36": ("tables", "speedup", "batch", False),
    "fig37": ("tables", "mops", "structure", False),
    "fig38": ("variance", "speedup", "tables", False),
    "fig39": ("batch", "total_s", "tables", True),
    "fig40": ("batch", "seconds", "mix", True),
    "cpu_threads": ("threads", "mops", "tables", False),
    "applications": ("batch", "speedup", "distribution", False),
}


def draw(name: str, table: pd.DataFrame, scale: str, gpus: list[str], evidence=None,
         fill: str = "") -> Figure:  # fmt: skip
    """The figure of one tidy table (AXES), captioned as chapter 3's are (``overlaid``
    with a committed run's rows where ``evidence`` is given). Where no GPU ran here,
    this machine's lines are the CPU's twins of the GPU structures (``tables``)."""
    fig = captioned(6, table, scale, gpus, evidence, fill)
    if table.empty:
        return fig
    ax = fig.subplots()
    x, y, by, logy = AXES[name]
    lines(ax, table, x, y, by, logx=x in ("tables", "batch", "threads"), logy=logy)
    if name == "fig40":
        for source in sources_of(table):
            mine = table if source is None else table[table["source"] == source]
            for key, part in mine.groupby("mix"):
                part = part.sort_values("batch")
                if (part["upload_s"].fillna(0) > 0).any():  # the CPU uploads nothing
                    ax.plot(part["batch"], part["upload_s"], ls=":",
                            label=legend_label(f"upload, mix {key}", source, True))  # fmt: skip
        ax.legend(fontsize=6)
    local = table.get("source", pd.Series([LOCAL])) == LOCAL
    if not gpus and name != "cpu_threads" and local.any():
        ax.set_title("this machine: the CPU's twins (CPU_PH, CPU_BASIC, CPU_BIG)", fontsize=7)
    return fig
