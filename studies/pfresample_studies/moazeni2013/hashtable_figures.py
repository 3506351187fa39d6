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
    out = pd.concat(frames, ignore_index=True)
    if "byte_order" not in out:  # runs made before the order was a key: the default's
        out["byte_order"] = w.ht.DEFAULT_BYTE_ORDER
    out["byte_order"] = out["byte_order"].fillna(w.ht.DEFAULT_BYTE_ORDER)
    return out


def _pick(runs, backend="gpu", layout="ph", distribution="normal", variance=None, hash="dek",
          byte_order="lsb", **equal) -> pd.DataFrame:  # fmt: skip
    """The runs of one backend and layout, normal keys of the base variance and
    DEK fed the key's bytes least significant first unless named, and ``equal``
    column values."""
    if runs.empty:
        return runs
    keep = (runs["backend"] == backend) & (runs["layout"] == layout)
    keep &= runs["distribution"] == distribution
    if distribution == "normal":
        keep &= np.isclose(runs["variance"], catalog.CH4_VARIANCE if variance is None
                           else variance)  # fmt: skip
    keep &= runs["hash"] == hash
    if "byte_order" in runs:
        keep &= runs["byte_order"] == byte_order
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
    out["fig34"] = pd.concat([
        pick(hash=h, byte_order=o, mix=33, batch=big)[["tables", "hash", "byte_order", "mops"]]
        .assign(series=h if h not in w.ht.BYTE_WISE else f"{h} {o}")
        for h in catalog.ch4_hashes(cfg)
        for o in (catalog.ch4_byte_orders(cfg) if h in w.ht.BYTE_WISE else ["lsb"])],
        ignore_index=True)  # fmt: skip
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
    "fig34": ("tables", "mops", "series", False),
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


# The speed-up table (issue 62's ratios 1 and 2; ``speedups``): a row a configuration and
# GPU hash, GPU_PH at the top PH with DEK (the thesis's hash) and with ``mix`` (ours).
CH4_KEYS = ("distribution", "batch", "mix", "gpu_code")
GPU_CODES = {"dek": "GPU_PH dek", "mix": "GPU_PH mix"}  # bench/moazeni2013_ch4_best_cpu.py's
THESIS_THREADS = 8  # the thesis's CPU_PH threads (§4.6: two quad-core Xeons), ratio 1's
CH4_BASELINE = ("the thesis's CPU_PH, native/hashtable.cpp: Michael's lists in `doc_cpu_tables` "
                "tables of 1,024 buckets, DEK, std::threads started inside the timed batch, on "
                "`doc_cpu_threads` threads (the thesis's 8 on the full grid), this run's CPU "
                "cell; every row's CPU sides run on the same keys, `preload` keys preloaded "
                "(hashtable_workloads.batch_keys). `gpu_code` names the GPU's hash: DEK, the "
                "thesis's, or `mix`, murmur3's finaliser (ours). Each best-CPU time is the "
                "median of `best_cpu_repeats` runs after a warm-up (min and max "
                "beside)")  # fmt: skip
CH4_HEADLINE = ("evidence/2026-11-28-h200-45f3754/ch4, one H200 with its 16 Xeon cores: the "
                "columns `evidence_over_document` and `evidence_over_best_cpu` of the rows it "
                "fills; docs/moazeni2013.md, chapter 4's best CPU code")  # fmt: skip
# Cells of a committed bench run whose best-CPU median measured a stall of about 3 ms, not
# the code (docs/moazeni2013.md, chapter 4, "What in this run looks wrong"): their
# evidence_over_best_cpu is the stall's, and the row's note says so.
STALLED = {"2026-11-28-h200-45f3754": {("uniform", 4096, 60), ("uniform", 262144, 90),
                                       ("normal", 16384, 0)}}  # fmt: skip
STALL_NOTE = ("the evidence host's best-CPU median here is a ~3 ms stall, not the code "
              "(docs/moazeni2013.md, chapter 4): its evidence_over_best_cpu measures the "
              "stall")  # fmt: skip
_CELL = ["distribution", "batch", "mix"]
_EVIDENCE = ["evidence_doc_cpu_s", "evidence_doc_cpu_threads", "evidence_best_cpu_s",
             "evidence_best_cpu_threads", "evidence_cpu", "note"]  # fmt: skip
_GPU = [*CH4_KEYS, "gpu_s", "gpu_device", "gpu_tables", "gpu_preload", *_EVIDENCE]
CH4_EXTRA = ("gpu_device", "gpu_tables", "gpu_preload", "doc_cpu_code", "doc_cpu_tables",
             "doc_cpu_threads", "preload", "same_workload", "best_cpu_s_min", "best_cpu_s_max",
             "best_cpu_repeats", "evidence_doc_cpu_s", "evidence_best_cpu_s",
             "evidence_over_document", "evidence_over_best_cpu", "evidence_doc_cpu_threads",
             "evidence_best_cpu_threads", "evidence_cpu", "note")  # fmt: skip


def evidence_gpu_rows(frame: pd.DataFrame, device: str, folder: str = "") -> pd.DataFrame:
    """The GPU's rows of a committed bench run (bench/moazeni2013_ch4_best_cpu.py's
    ``timings.csv``: one row a measurement, ``section`` bound, best, document or gpu) as
    the speed-up table's GPU side, keyed (distribution, batch, mix, gpu_code): GPU_PH with
    DEK and with ``mix`` (``gpu_s``: the median), its tables (the CPU_PH rows' code names
    them; the bench's ``--tables`` is both sides') and preload (the bench's, PRELOAD), and
    that host's own CPU sides of the same cell beside (``evidence_*``: its CPU_PH on the
    thesis's 8 threads where it ran them, else its fewest, and its best CPU code), from
    which the table computes that host's one-host ratios. ``folder`` names the evidence
    folder, for the cells known to have stalled (STALLED)."""
    if frame.empty or "section" not in frame:
        return pd.DataFrame(columns=_GPU)
    frame = frame.astype({"batch": np.int64, "mix": np.int64, "threads": np.int64})
    gpu = frame[(frame["section"] == "gpu") & frame["code"].isin(GPU_CODES.values())]
    doc = frame[frame["section"] == "document"]
    if not doc.empty:  # the thesis's 8 threads where the run has them (ratio 1's)
        counts = sorted(set(doc["threads"]))
        doc = doc[doc["threads"] == (THESIS_THREADS if THESIS_THREADS in counts else counts[0])]
    tables = doc["code"].astype(str).str.extract(r"CPU_PH (\d+)")[0].dropna().astype(int)
    best = frame[frame["section"] == "best"]
    out = pd.DataFrame({"distribution": gpu["distribution"].astype(str), "batch": gpu["batch"],
                        "mix": gpu["mix"], "gpu_code": gpu["code"].astype(str),
                        "gpu_s": gpu["seconds"].astype(float),
                        "gpu_device": gpu["device"].fillna(device).astype(str)
                        if "device" in gpu else device,
                        "gpu_tables": int(tables.iloc[0]) if len(tables) else np.nan,
                        "gpu_preload": w.PRELOAD})  # fmt: skip
    side = doc[_CELL].assign(evidence_doc_cpu_s=doc["seconds"].astype(float),
                             evidence_doc_cpu_threads=doc["threads"])  # fmt: skip
    out = out.merge(side, on=_CELL, how="left")
    side = best[_CELL].assign(evidence_best_cpu_s=best["seconds"].astype(float),
                              evidence_best_cpu_threads=best["threads"],
                              evidence_cpu=best["cpu"].astype(str) if "cpu" in best
                              else "")  # fmt: skip
    out = out.merge(side, on=_CELL, how="left")
    stalled = STALLED.get(folder, set())
    out["note"] = [STALL_NOTE if (d, b, m) in stalled else ""
                   for d, b, m in out[_CELL].itertuples(index=False)]  # fmt: skip
    return out[_GPU].reset_index(drop=True)


def gpu_rows(runs: pd.DataFrame, top: int, preload: int) -> pd.DataFrame:
    """This run's GPU side: the GPU cell's GPU_PH runs at ``top`` tables with DEK or
    ``mix``, normal keys of the base variance or uniform keys (``frame``'s rows)."""
    if runs.empty or "backend" not in runs:
        return pd.DataFrame(columns=_GPU)
    keep = (runs["backend"] == "gpu") & (runs["layout"] == "ph") & (runs["tables"] == top)
    keep &= runs["hash"].isin(list(GPU_CODES))
    if "byte_order" in runs:  # the speed-ups' DEK is the default order's
        keep &= runs["byte_order"] == w.ht.DEFAULT_BYTE_ORDER
    keep &= (runs["distribution"] == "uniform") | (
        (runs["distribution"] == "normal") & np.isclose(runs["variance"], catalog.CH4_VARIANCE)
    )
    gpu = runs[keep]
    out = pd.DataFrame({"distribution": gpu["distribution"].astype(str),
                        "batch": gpu["batch"].astype(np.int64),
                        "mix": gpu["mix"].astype(np.int64), "gpu_code": gpu["hash"].map(GPU_CODES),
                        "gpu_s": gpu["seconds"].astype(float),
                        "gpu_device": gpu["device"].astype(str), "gpu_tables": int(top),
                        "gpu_preload": int(preload)})  # fmt: skip
    for column in _EVIDENCE:
        out[column] = "" if column in ("evidence_cpu", "note") else np.nan
    return out[_GPU].reset_index(drop=True)


def doc_rows(runs: pd.DataFrame, top: int, threads: int) -> pd.DataFrame:
    """The document's kind of baseline: the CPU cell's CPU_PH runs (``top`` tables, DEK,
    ``threads`` threads; normal keys of the base variance or uniform keys)."""
    columns = [*_CELL, "doc_cpu_s", "doc_cpu_tables", "doc_cpu_threads"]
    if runs.empty or "backend" not in runs:
        return pd.DataFrame(columns=columns)
    keep = (runs["backend"] == "cpu") & (runs["layout"] == "ph") & (runs["tables"] == top)
    keep &= (runs["hash"] == "dek") & (runs["threads"] == threads)
    if "byte_order" in runs:
        keep &= runs["byte_order"] == w.ht.DEFAULT_BYTE_ORDER
    keep &= (runs["distribution"] == "uniform") | (
        (runs["distribution"] == "normal") & np.isclose(runs["variance"], catalog.CH4_VARIANCE)
    )
    cpu = runs[keep]
    return pd.DataFrame({"distribution": cpu["distribution"].astype(str),
                         "batch": cpu["batch"].astype(np.int64), "mix": cpu["mix"].astype(np.int64),
                         "doc_cpu_s": cpu["seconds"].astype(float), "doc_cpu_tables": int(top),
                         "doc_cpu_threads": int(threads)})[columns]  # fmt: skip


def ch4_speedups(gpu: pd.DataFrame, doc: pd.DataFrame, best_cell, *, gpu_source: str,
                 one_host: bool) -> pd.DataFrame:  # fmt: skip
    """Chapter 4's speed-ups at each (distribution, batch, mix) where the GPU side
    (``gpu_rows`` or ``evidence_gpu_rows``), the thesis's CPU_PH (``doc_rows``) and the
    best-CPU cell (``hashtable_workloads.best_cpu_cell``) all have it, a row a GPU hash
    (``gpu_code``): over the document's kind of baseline and over the best CPU code on every
    core (``speedups.join``); ``same_workload`` says whether the CPU sides' preload and
    CPU_PH's tables are the GPU side's (the quick grid's are smaller than the committed
    run's); where the GPU rows are committed evidence, that host's own ratios beside
    (``evidence_over_document``, ``evidence_over_best_cpu``: one host, one workload)."""
    from . import speedups

    arrays, meta = best_cell
    cpu = pd.DataFrame({k: np.asarray(v) for k, v in arrays.items()})
    if cpu.empty or gpu.empty or doc.empty:
        return speedups.empty(CH4_KEYS, CH4_EXTRA)
    keep = np.isclose(cpu["variance"].astype(float), catalog.CH4_VARIANCE)
    cpu = cpu[(cpu["distribution"] == "uniform") | keep]
    cpu = cpu.astype({"batch": np.int64, "mix": np.int64})
    codes = gpu[list(CH4_KEYS)].astype({"batch": np.int64, "mix": np.int64})
    best = cpu[_CELL].assign(best_cpu_s=cpu["best_cpu_s"].astype(float),
                             best_cpu_threads=cpu["threads"].astype(np.int64),
                             preload=int(meta["preload"]),
                             best_cpu_s_min=cpu["best_cpu_s_min"].astype(float),
                             best_cpu_s_max=cpu["best_cpu_s_max"].astype(float),
                             best_cpu_repeats=cpu["repeats"].astype(np.int64))  # fmt: skip
    doc = doc.astype({"batch": np.int64, "mix": np.int64}).merge(codes, on=_CELL)
    best = best.merge(codes, on=_CELL)
    gpu = gpu.astype({"batch": np.int64, "mix": np.int64})
    frame = speedups.join(CH4_KEYS, gpu, doc, best, gpu_source=gpu_source,
                          best_code="hashset_best.c (hashtable_best.BestHashSet)",
                          cpu=meta["cpu"], one_host=one_host)  # fmt: skip
    frame["doc_cpu_code"] = [f"hashtable.cpp CPU_PH ({t} tables, DEK)"
                             for t in frame["doc_cpu_tables"]]  # fmt: skip
    frame["same_workload"] = (frame["preload"] == frame["gpu_preload"]) & (
        frame["doc_cpu_tables"] == frame["gpu_tables"]
    )
    frame["evidence_over_document"] = frame["evidence_doc_cpu_s"].astype(float) / frame["gpu_s"]
    frame["evidence_over_best_cpu"] = frame["evidence_best_cpu_s"].astype(float) / frame["gpu_s"]
    return frame[[*CH4_KEYS, *speedups.COLUMNS, *CH4_EXTRA]]


def ch4_notes(frame: pd.DataFrame) -> list[str]:
    """The Markdown twin's paragraphs beside the caption: where the CPU sides' workload is
    not the GPU side's, and what the evidence host's own ratios are."""
    notes = []
    if frame.empty:
        return notes
    other = frame[~frame["same_workload"].astype(bool)]
    if len(other):
        r = other.iloc[0]
        notes.append(
            f"**Not the same workload.** In {len(other)} of {len(frame)} rows this run's CPU "
            f"sides had {int(r['preload']):,} keys preloaded (CPU_PH in "
            f"{int(r['doc_cpu_tables'])} tables) and the GPU side {int(r['gpu_preload']):,} "
            f"(GPU_PH in {int(r['gpu_tables'])} tables): "
            f"{r['preload'] / (r['doc_cpu_tables'] * w.BUCKETS):.2f} keys a bucket against "
            f"{r['gpu_preload'] / (r['gpu_tables'] * w.BUCKETS):.2f}, and the best code's "
            "table sized for its own preload, so these rows compare two workloads: "
            "indicative only."
        )
    if frame["evidence_over_best_cpu"].notna().any():
        notes.append(
            "`evidence_over_document` and `evidence_over_best_cpu`: the committed run's own "
            "ratios, its GPU over its own CPU_PH (on `evidence_doc_cpu_threads` threads) and "
            "over its own best CPU code (on `evidence_best_cpu_threads`), one host, one "
            "workload: the figures to quote. A row's `note` says where that host's best-CPU "
            "time measured a stall."
        )
    return notes


# the columns beyond the convention's that the Markdown twin shows
CH4_SHOWN = ("doc_cpu_tables", "doc_cpu_threads", "preload", "gpu_preload",
             "evidence_over_document", "evidence_over_best_cpu")  # fmt: skip
