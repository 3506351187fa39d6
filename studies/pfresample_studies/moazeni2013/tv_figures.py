"""Moazeni (2013) chapters 5 and 6: the tidy tables and figures from the cells of
``tv_experiments`` (each table a CSV, each figure drawn from its table). The
thesis's printed numbers stand beside ours in Tables 7-10 (their device named);
Figs 49-53 print no values in the text, so only their headline claims are quoted
(docs/moazeni2013.md). A table none of whose runs were made (the GPU's, where no
GPU ran) is empty and its figure says so."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import sharedmem
from .figures import captioned, lines
from .tv_experiments import unpack

TITLES = {
    "fig45": "Fig 45: the interference graphs of the shared arrays, coloured (16 x 16 tiles)",
    "reuse": "Chapter 5: time saved by reuse against the carve-out (16 x 16 tiles)",
    "fig49": "Fig 49: GPU:GlobalSync over the compiled single-thread solver",
    "fig50": "Fig 50: GPU:GlobalSync's kernels, time an iteration",
    "fig51": "Fig 51: GPU:ThreadSync and GPU:UnSync over the compiled solver",
    "fig52": "Fig 52: GPU:ThreadSync and GPU:UnSync, time an iteration",
    "fig53": "Fig 53: every solver's time an iteration",
    "ch6_quality": "Chapter 6: tensor RMSE and FA error against iterations and time",
    "ch6_parameters": "Chapter 6: final tensor RMSE against lambda and eps (the choice)",
}
HARDWARE = "Quadro FX 5600 (CUDA 2.0) vs Core2 Duo 2.33 GHz, gcc -O3 (thesis)"
# Table 10 as printed (100 iterations at 128^3, 16 x 16 blocks):
# kernel -> (calls, ms, utilisation %, % of GPU time, shared KB a block, registers)
PUBLISHED_TABLE10 = {
    "LLT": (100, 258.13, 100, 7.0, 0, 9),
    "TVnorm": (600, 888.21, 100, 21.0, 2, 10),
    "Reduction": (100, 178.19, 66, 2.86, 2, 4),
    "P": (600, 1800.0, 66, 54.14, 6, 10),
    "Solver": (600, 557.79, 33, 13.03, 0, 27),
}
# Table 7 (bytes a block, straightforward and with reuse) and Tables 8-9 (us).
PUBLISHED_TABLE7 = {"Denoising": (6220, 3916), "Segmentation": (6220, 3916),
                    "Registration": (13596, 13596)}  # fmt: skip
PUBLISHED_TABLE8 = {16: (25.2, 19.53), 32: (74.89, 60.96), 64: (390.7, 319.59),
                    128: (3033.3, 2532.85)}  # fmt: skip
PUBLISHED_TABLE9 = {64: (35.3, 22.14), 128: (39.0, 27.39), 256: (70.5, 61.2),
                    512: (185.0, 181.76)}  # fmt: skip
# §6.5's headline speed-ups over the CPU version, and §6.6's whole run
PUBLISHED_CH6 = {"global_sync": 266.0, "thread_sync": 128.0, "unsync": 134.0}
MAX_THREADS_PER_SM = 2048  # Hopper and Ampere's resident threads an SM (occupancy's base)


def _table7() -> pd.DataFrame:
    rows = []
    for name, make in (("curvature3d (kernel P)", sharedmem.curvature3d),
                       ("curvature2d (Chan-Vese)", sharedmem.curvature2d)):  # fmt: skip
        for tile in (8, 16):
            kernel = make(tile)
            plan = sharedmem.plan(kernel)
            rows.append({"kernel": name, "tile": tile, "arrays": len(kernel.arrays),
                         "partitions": len(plan.sizes), "bytes_before": plan.bytes_before,
                         "bytes_after": plan.bytes_after, "saving": plan.saving,
                         "device": "ours (sharedmem.plan)"})  # fmt: skip
    # §5.3.1's registration benchmark as its text describes it (not built: no timing)
    for label, reordered in (
        ("registration 16 x 24 (§5.3.1's description)", False),
        ("registration 16 x 24, reordered (§5.3.2's remark)", True),
    ):
        kernel = sharedmem.registration(reordered=reordered)
        plan = sharedmem.plan(kernel)
        rows.append({"kernel": label, "tile": 16, "arrays": len(kernel.arrays),
                     "partitions": len(plan.sizes), "bytes_before": plan.bytes_before,
                     "bytes_after": plan.bytes_after, "saving": plan.saving,
                     "device": "ours (sharedmem.plan)"})  # fmt: skip
    for name, (before, after) in PUBLISHED_TABLE7.items():
        rows.append({"kernel": name, "tile": 16, "bytes_before": before, "bytes_after": after,
                     "saving": 1 - after / before, "device": HARDWARE})  # fmt: skip
    return pd.DataFrame(rows)


def _reuse_table(ch5: pd.DataFrame, kernel: str, printed: dict) -> pd.DataFrame:
    """Straightforward and reuse side by side per size, tile and carve-out, with
    the thesis's microseconds beside (its 16 x 16 tile)."""
    thesis = pd.DataFrame([{"size": s, "tile": 16, "us_plain": a, "us_reuse": b,
                            "reduction": 1 - b / a, "device": HARDWARE}
                           for s, (a, b) in printed.items()])  # fmt: skip
    if ch5.empty:
        return thesis
    part = ch5[ch5["kernel"] == kernel]
    keys = ["size", "tile", "carveout", "device"]
    values = ["seconds", "blocks_per_sm", "shared_bytes"]
    wide = part.pivot_table(index=keys, columns="reuse", values=values).reset_index()
    wide.columns = [f"{a}_{'reuse' if b is True else 'plain'}" if b != "" else a
                    for a, b in wide.columns]  # fmt: skip
    wide["us_plain"] = wide.pop("seconds_plain") * 1e6
    wide["us_reuse"] = wide.pop("seconds_reuse") * 1e6
    wide["reduction"] = 1 - wide["us_reuse"] / wide["us_plain"]
    return pd.concat([wide, thesis], ignore_index=True)


def ch5_tables(cells) -> dict[str, pd.DataFrame]:
    ch5 = unpack(cells, "ch5")
    out = {"table7": _table7(), "fig45": _fig45_table()}
    gpu = ch5[ch5["carveout"] == -1] if not ch5.empty else ch5
    if not gpu.empty:  # the compiler's bytes beside the tool's (they must agree)
        bytes_ = gpu.groupby(["kernel", "tile", "reuse"])["shared_bytes"].first()
        names = {"curvature3d (kernel P)": "curvature3d", "curvature2d (Chan-Vese)": "chanvese"}
        t7 = out["table7"]
        for label, kind in names.items():
            for tile in (8, 16):
                at = (t7["kernel"] == label) & (t7["tile"] == tile)
                for reuse, column in ((False, "compiled_before"), (True, "compiled_after")):
                    if (kind, tile, reuse) in bytes_.index:
                        t7.loc[at, column] = bytes_[(kind, tile, reuse)]
    out["table8"] = _reuse_table(ch5, "curvature3d", PUBLISHED_TABLE8)
    out["table9"] = _reuse_table(ch5, "chanvese", PUBLISHED_TABLE9)
    reuse = pd.concat([out["table8"].assign(kernel="curvature3d"),
                       out["table9"].assign(kernel="chanvese")], ignore_index=True)  # fmt: skip
    out["reuse"] = reuse[(reuse["device"] != HARDWARE) & (reuse["tile"] == 16)]
    return out


def _fig45_table() -> pd.DataFrame:
    rows = []
    for kernel in (sharedmem.curvature3d(16), sharedmem.curvature2d(16)):
        plan, live = sharedmem.plan(kernel), sharedmem.live_ranges(kernel)
        graph = sharedmem.interference(kernel)
        for name in kernel.arrays:
            rows.append({"kernel": kernel.name, "array": name, "partition": plan.slots[name],
                         "live": " ".join(str(s) for s in sorted(live[name])),
                         "neighbours": " ".join(sorted(graph[name]))})  # fmt: skip
    return pd.DataFrame(rows)


def ch6_tables(cpu, native, peer, gpu) -> dict[str, pd.DataFrame]:
    """Every chapter 6 table from the cells (``gpu`` empty where no GPU ran)."""
    timing, kernels = unpack(gpu, "timing"), unpack(gpu, "kernels")
    native_t = unpack(native, "native")
    out = {}
    # Table 10: our GlobalSync's kernels beside the printed ones
    t10 = kernels[kernels["variant"] == "global_sync"].copy() if not kernels.empty else kernels
    if not t10.empty:
        totals = t10.groupby(["size", "tile"])["seconds"].transform("sum")
        t10["ms"] = t10["seconds"] * 1e3
        t10["gpu_time_share"] = t10["seconds"] / totals
        t10["occupancy"] = t10["blocks_per_sm"] * t10["threads"] / MAX_THREADS_PER_SM
        t10["shared_kb"] = t10["shared_bytes"] / 1024
        t10 = t10[["size", "tile", "kernel", "calls", "ms", "gpu_time_share", "occupancy",
                   "shared_kb", "registers", "local_bytes", "blocks_per_sm", "device"]]  # fmt: skip
    printed = pd.DataFrame([{"size": 128, "tile": 16, "kernel": k, "calls": c, "ms": ms,
                             "gpu_time_share": share / 100, "occupancy": u / 100,
                             "shared_kb": kb, "registers": r, "device": HARDWARE}
                            for k, (c, ms, u, share, kb, r)
                            in PUBLISHED_TABLE10.items()])  # fmt: skip
    out["table10"] = pd.concat([t10, printed], ignore_index=True)
    # speed-ups: the GPU's seconds an iteration against the compiled solver's, same size
    speed = timing.merge(native_t[["size", "seconds"]].rename(columns={"seconds": "cpu_s"}),
                         on="size") if not timing.empty else timing  # fmt: skip
    if not speed.empty:
        speed["speedup"] = speed["cpu_s"] / speed["seconds"]
        speed["thesis_speedup"] = speed["variant"].map(PUBLISHED_CH6)
    out["fig49"] = speed[speed["variant"] == "global_sync"] if not speed.empty else speed
    out["fig51"] = speed[speed["variant"] != "global_sync"] if not speed.empty else speed
    per_kernel = t10.assign(ms_per_iteration=t10["ms"] / (
        t10["calls"] / t10["kernel"].map({"TVnorm": 6, "P": 6}).fillna(1)))  if not t10.empty \
        else t10  # fmt: skip
    out["fig50"] = per_kernel
    out["fig52"] = timing[timing["variant"] != "global_sync"] if not timing.empty else timing
    # every solver's time an iteration: the GPU's and the compiled single-thread C's
    native_rows = native_t[["size", "seconds"]].assign(
        variant="compiled C, 1 thread", tile=0, device="CPU") if not native_t.empty \
        else native_t  # fmt: skip
    out["fig53"] = pd.concat([f for f in (timing, native_rows) if len(f)], ignore_index=True) \
        if len(timing) or len(native_rows) else timing  # fmt: skip
    out["ch6_quality"] = _quality(cpu, gpu, timing)
    out["ch6_parameters"] = unpack(cpu, "sweep")
    out["ch6_peer"] = _peer(peer, gpu, timing)
    out["ch6_check"] = unpack(gpu, "check")
    out["ch6_noisy"] = unpack(cpu, "noisy")
    return out


def _quality(cpu, gpu, timing) -> pd.DataFrame:
    """The quality curves with their time axis: the GPU's (each size; seconds from
    the variant's measured time an iteration) and NumPy's (no time axis)."""
    numpy_q = unpack(cpu, "quality").assign(source="numpy float64", seconds=np.nan)
    gpu_q = unpack(gpu, "quality")
    if not gpu_q.empty:
        per = timing.set_index(["size", "variant", "tile"])["seconds"]
        gpu_q["seconds"] = [
            it * per[(s, v, t)]
            for s, v, t, it in gpu_q[["size", "variant", "tile", "iteration"]].itertuples(
                index=False
            )
        ]
        gpu_q["source"] = "gpu float32"
    return pd.concat([numpy_q, gpu_q], ignore_index=True)


def _peer(peer, gpu, timing) -> pd.DataFrame:
    """scikit-image's best RMSE over its weights, and the time our compiled solver
    (and the GPU's GlobalSync, where it ran at the same size) needs to reach it."""
    sk, ours = unpack(peer, "peer"), unpack(peer, "ours")
    rows = []
    if sk.empty:
        return pd.DataFrame([{"method": "scikit-image not installed: no peer rows"}])
    best = sk.loc[sk["tensor_rmse"].idxmin()]
    size = int(best["size"])
    for _, r in sk.iterrows():
        rows.append({"method": "skimage denoise_tv_chambolle", "size": size,
                     "weight": r["weight"], "seconds": r["seconds"],
                     "tensor_rmse": r["tensor_rmse"], "fa_error": r["fa_error"],
                     "device": r["device"]})  # fmt: skip
    reached = ours[ours["tensor_rmse"] <= best["tensor_rmse"]]
    first = reached.iloc[0] if len(reached) else ours.iloc[-1]
    rows.append({"method": "ours, compiled single thread (GlobalSync)", "size": size,
                 "iterations": int(first["iteration"]), "seconds": first["seconds"],
                 "tensor_rmse": first["tensor_rmse"], "fa_error": first["fa_error"],
                 "reached_peer_best": bool(len(reached)), "device": first["device"]})  # fmt: skip
    beaten = sk[sk["tensor_rmse"] <= ours.iloc[-1]["tensor_rmse"]]
    if len(beaten):  # the other way round: the peer's fastest run as good as our last
        fast = beaten.loc[beaten["seconds"].idxmin()]
        rows.append({"method": "skimage, fastest weight at or below our final RMSE",
                     "size": size, "weight": fast["weight"], "seconds": fast["seconds"],
                     "tensor_rmse": fast["tensor_rmse"], "fa_error": fast["fa_error"],
                     "device": fast["device"]})  # fmt: skip
    final = ours.iloc[-1]
    rows.append({"method": "ours, compiled single thread, last iteration", "size": size,
                 "iterations": int(final["iteration"]), "seconds": final["seconds"],
                 "tensor_rmse": final["tensor_rmse"], "fa_error": final["fa_error"],
                 "device": final["device"]})  # fmt: skip
    gq = unpack(gpu, "quality")
    if not gq.empty:
        g = gq[(gq["size"] == size) & (gq["variant"] == "global_sync")]
        for tile, part in g.groupby("tile"):
            hit = part[part["tensor_rmse"] <= best["tensor_rmse"]].sort_values("iteration")
            if len(hit):
                it = int(hit.iloc[0]["iteration"])
                per = timing.set_index(["size", "variant", "tile"])["seconds"][
                    (size, "global_sync", tile)]  # fmt: skip
                rows.append({"method": f"ours, GPU GlobalSync {tile}x{tile}", "size": size,
                             "iterations": it, "seconds": it * per,
                             "tensor_rmse": hit.iloc[0]["tensor_rmse"],
                             "fa_error": hit.iloc[0]["fa_error"], "reached_peer_best": True,
                             "device": hit.iloc[0]["device"]})  # fmt: skip
    return pd.DataFrame(rows)


def _draw_graph(ax, part: pd.DataFrame, title: str) -> None:
    import matplotlib

    names = list(part["array"])
    angle = np.linspace(0, 2 * np.pi, len(names), endpoint=False)
    pos = {n: (np.cos(a), np.sin(a)) for n, a in zip(names, angle, strict=True)}
    for _, r in part.iterrows():
        for m in r["neighbours"].split():
            if names.index(m) > names.index(r["array"]):
                (x0, y0), (x1, y1) = pos[r["array"]], pos[m]
                ax.plot([x0, x1], [y0, y1], color="grey", lw=0.5, zorder=1)
    colours = matplotlib.colormaps["tab10"]
    for _, r in part.iterrows():
        x, y = pos[r["array"]]
        ax.scatter([x], [y], s=500, color=colours(int(r["partition"]) % 10), zorder=2)
        ax.text(x, y, f"{r['array']}\nP{int(r['partition'])}", ha="center", va="center",
                fontsize=6, zorder=3)  # fmt: skip
    ax.set_title(title, fontsize=8)
    ax.set_axis_off()


def draw(name: str, table: pd.DataFrame, scale: str, gpus: list[str], evidence=None,
         fill: str = "") -> Figure:  # fmt: skip
    """The figure of one tidy table, captioned as chapter 3's are (``overlaid`` with a
    committed run's rows where ``evidence`` is given)."""
    fig = captioned(9, table, scale, gpus, evidence, fill)
    if table.empty:
        return fig
    if name == "fig45":
        axes = fig.subplots(1, 2)
        for ax, (kernel, part) in zip(axes, table.groupby("kernel", sort=False), strict=True):
            parts = part["partition"].nunique()
            _draw_graph(ax, part, f"{kernel}: {len(part)} arrays, {parts} partitions")
        return fig
    if name == "reuse":
        ax = fig.subplots()
        table = table.assign(line=table["kernel"] + " carve-out " + table["carveout"].astype(
            int).astype(str))  # fmt: skip
        lines(ax, table, "size", "reduction", "line", named=False)
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_ylabel("time saved by reuse (1 - reuse / plain)")
        return fig
    if name == "ch6_quality":
        axes = fig.subplots(1, 3)
        last = table[table["source"] == "gpu float32"]
        last = last[last["size"] == last["size"].max()] if len(last) else table
        line = last["variant"] + " " + last["tile"].astype(int).astype(str)
        last = last.assign(line=line)
        lines(axes[0], last, "iteration", "tensor_rmse", "line", logx=False, named=False)
        lines(axes[1], last, "iteration", "fa_error", "line", logx=False, named=False)
        if last["seconds"].notna().any():
            lines(axes[2], last, "seconds", "tensor_rmse", "line", logx=False, named=False)
        size = int(last["size"].max())
        axes[0].set_title(f"{last['source'].iloc[0]}, {size}^3", fontsize=8)
        return fig
    if name == "ch6_parameters":
        ax = fig.subplots()
        line = "eps " + table["eps"].astype(str) + ", step " + table["step"].astype(str)
        lines(ax, table.assign(line=line), "lam", "tensor_rmse", "line", named=False)
        return fig
    ax = fig.subplots()
    if "variant" in table:
        tile = table["tile"].fillna(0).astype(int).astype(str)
        line = (table["variant"] + " " + tile + "x" + tile).where(tile != "0", table["variant"])
    else:
        line = table["kernel"]
    table = table.assign(line=line)
    if name in ("fig49", "fig51"):
        lines(ax, table, "size", "speedup", "line", logy=True, named=False)
        for variant, value in PUBLISHED_CH6.items():
            if variant in set(table["variant"]):
                ax.axhline(value, color="grey", ls=":", lw=0.8)
                ax.text(table["size"].min(), value, f" thesis {variant} {value:g}x", fontsize=6)
        ax.set_ylabel("speed-up (seconds an iteration)")
    elif name == "fig50":
        table = table.assign(line=table["kernel"] + " " + table["tile"].astype(int).astype(str))
        lines(ax, table, "size", "ms_per_iteration", "line", logy=True, named=False)
    elif name in ("fig52", "fig53"):
        lines(
            ax,
            table.assign(ms=table["seconds"] * 1e3),
            "size",
            "ms",
            "line",
            logy=True,
            named=False,
        )
        ax.set_ylabel("ms an iteration")
    ax.set_xlabel("side of the volume (voxels)")
    return fig


CH6_KEYS = ("size",)
CH6_BASELINE = ("tv.c, GlobalSync's solver compiled with gcc -O3 on one thread, as §6.5's "
                "CPU version; seconds an iteration")  # fmt: skip
CH6_HEADLINE = ("evidence/2026-11-28-h100-202cbb3, one H100 with its 16 Xeon cores; "
                "docs/moazeni2013.md")  # fmt: skip


def gpu_global_sync(timing: pd.DataFrame) -> pd.DataFrame:
    """The GPU's seconds an iteration at each size: GlobalSync (the solver tv.c and
    tv_best.c compute) at its faster tile, as the one-host run kept it (``timing``: the
    GPU cell's timing rows, or Fig 53's table, whose CPU rows are left out)."""
    if timing.empty or "variant" not in timing:
        return pd.DataFrame(columns=["size", "gpu_s", "gpu_tile", "gpu_device"])
    gs = timing[timing["variant"] == "global_sync"]
    if gs.empty:
        return pd.DataFrame(columns=["size", "gpu_s", "gpu_tile", "gpu_device"])
    fastest = gs.loc[gs.groupby("size")["seconds"].idxmin()]
    return pd.DataFrame({"size": fastest["size"].astype(np.int64).to_numpy(),
                         "gpu_s": fastest["seconds"].astype(float).to_numpy(),
                         "gpu_tile": fastest["tile"].astype(np.int64).to_numpy(),
                         "gpu_device": fastest["device"].astype(str).to_numpy()})  # fmt: skip


def ch6_speedups(gpu: pd.DataFrame, native, best_cell, *, gpu_source: str,
                 one_host: bool) -> pd.DataFrame:  # fmt: skip
    """Chapter 6's speed-ups at each size all three sides ran, seconds an iteration: the
    GPU (``gpu_global_sync``'s rows) over the document's baseline (the native cell's tv.c,
    one thread) and over the best CPU code on every core (the best-CPU cell's tv_best.c),
    the thesis's printed 266x (GlobalSync) beside them (``speedups.join``)."""
    from . import speedups

    arrays, meta = best_cell
    extra = ("gpu_tile", "gpu_device", "doc_cpu_code", "printed_speedup")
    best = unpack([best_cell], "best_cpu")
    doc = unpack(native, "native")
    if best.empty or doc.empty or gpu.empty:
        return speedups.empty(CH6_KEYS, extra)
    doc = pd.DataFrame({"size": doc["size"].astype(np.int64),
                        "doc_cpu_s": doc["seconds"].astype(float)})  # fmt: skip
    best = pd.DataFrame({"size": best["size"].astype(np.int64),
                         "best_cpu_s": best["seconds"].astype(float),
                         "best_cpu_threads": best["threads"].astype(np.int64)})  # fmt: skip
    gpu = gpu.astype({"size": np.int64})
    return speedups.join(CH6_KEYS, gpu, doc, best, gpu_source=gpu_source,
                         best_code=f"{meta['code']} (native.tv_best_solve)", cpu=meta["cpu"],
                         one_host=one_host,
                         extra={"doc_cpu_code": "tv.c, 1 thread",
                                "printed_speedup": PUBLISHED_CH6["global_sync"]})  # fmt: skip
