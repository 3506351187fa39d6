"""The profiler results of Dülger (2017), measured with Nsight Compute (ncu):
Tables 5.3-5.5 (L1 hit ratio of global loads, kernel time and the speed-up of
Metropolis-C1/C2 over Metropolis, with L1 caching of global loads on and off)
and Figs 6.24-6.26 (global load sectors per request and SM efficiency of
Uphill, Uphill-C1 and Uphill-CA, with the blocks of eq. 2.28 and with
32-thread blocks).

The thesis profiled with nvprof on a Tesla K40; nvprof does not profile
devices after Volta, so its metrics map onto ncu's (:data:`NVPROF_TO_NCU`,
docs/dulger2017.md). One measurement is one kernel launch, a *cell*
(:class:`Cell`): one method variant, one N, one weight sequence, one build of
the kernels (:data:`pfresample.cuda.kernels.GLOBAL_LOADS`), one L1/shared
carve-out and one block size. :func:`plan` lists the cells; a process per
build runs its cells in plan order under ncu (:func:`ncu_command`,
:func:`run_cells`), and ncu profiles every launch of the family's kernel, so
the i-th profiled launch is the i-th cell of that build (:func:`join`
checks the count and the kernel names). :func:`parse_ncu_csv` reads ncu's
``--csv`` output, :func:`build_tables` and :func:`profiler_figure` make the
tables and figures, beside the thesis's printed numbers
(``catalog.THESIS_*``).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from . import catalog

# The ncu metrics collected, and the column each becomes. ncu replays a
# kernel once per pass its metrics need, so the list is kept short.
METRICS = {
    "gpu__time_duration.sum": "duration",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct": "l1_hit_pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "ld_sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "ld_requests",
    "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed": "sm_efficiency_pct",
    "launch__shared_mem_config_size": "shared_config",
    "launch__block_size": "block_size",
}

# The thesis's nvprof metric -> ncu's (NVIDIA, Nsight Compute CLI, "nvprof
# Transition Guide", metric comparison table); docs/dulger2017.md explains each.
NVPROF_TO_NCU = {
    "l1_cache_global_hit_rate": "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
    "gld_transactions_per_request": (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
    ),
    "sm_efficiency": "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "kernel time (nvprof's summary)": "gpu__time_duration.sum",
}

# ncu's --kernel-name, on the demangled name: the family's kernel only, not
# the B kernels (reduce.cu's uphill_b, weight_stats) a call also launches.
KERNEL_REGEX = {
    "metropolis": r"^(void )?metropolis<",
    "uphill": r"^(void )?uphill<",
}

# Scale of ncu's units to the base unit (seconds, bytes); --print-units base
# asks for base units, the others are read in case a report has them.
UNITS = {
    "ns": 1e-9,  # what ncu 2025.3 writes with --print-units base
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "nsecond": 1e-9,  # older releases' spelling
    "usecond": 1e-6,
    "msecond": 1e-3,
    "second": 1.0,
    "byte": 1.0,
    "Kbyte": 1e3,
    "Mbyte": 1e6,
    "Gbyte": 1e9,
    "KiB": 1024.0,
    "MiB": 1024.0**2,
}

# The thesis's short names (Tables 5.1-5.5, Table 6.2).
_SHORT = {
    "metropolis": "M",
    "metropolis-c1": "C1",
    "metropolis-c2": "C2",
    "uphill": "Uphill",
    "uphill-c1": "UC1",
    "uphill-ca": "UCA",
}

# The target's files (results/dulger2017/profiler/): the plan, one raw ncu
# CSV per build, the tidy table, its Markdown and the figure of Figs 6.24-6.26.
PLAN = "plan.json"
TABLE = "profiler.csv"
MARKDOWN = "profiler.md"
FIGURE = "fig6_24_26.png"
BUILDS = ("l2", "l1", "nc")  # the order plan() uses them


def raw_name(loads: str) -> str:
    return f"ncu_{loads}.csv"


OUTPUTS = (PLAN, *(raw_name(b) for b in BUILDS), TABLE, MARKDOWN, FIGURE)

DEFAULT_CARVEOUT = -1  # CU_SHAREDMEM_CARVEOUT_DEFAULT: the driver chooses
# cuda.h's CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
CARVEOUT_ATTRIBUTE = 9
# Thesis eq. 2.28 keeps 16-thread blocks at N = 2^4 in Fig 6.26 too.
SMALL_BLOCK_MIN_N = 2**5

NCU_MISSING = (
    "dulger2017_profiler needs Nsight Compute (ncu) on PATH; it is part of the CUDA "
    "toolkit (or the nsight-compute package). Nothing was written."
)


class NcuMissing(RuntimeError):
    """ncu is not on PATH."""


@dataclass(frozen=True)
class Cell:
    """One profiled launch. ``part``: "table5" or "fig6"; ``loads``: the
    kernels' build (kernels.GLOBAL_LOADS); ``carveout``: the preferred
    shared-memory carve-out in percent (-1: the driver's choice); ``block``:
    threads per block (None: eq. 2.28)."""

    part: str
    variant: str
    method: str
    segment_bytes: int | None
    label: str
    n: int
    sequence: int
    loads: str
    carveout: int = DEFAULT_CARVEOUT
    block: int | None = None

    @property
    def family(self) -> str:
        return "uphill" if self.method.startswith("uphill") else "metropolis"

    @property
    def config(self) -> str:
        """The row name of the tables: the build and the carve-out or block."""
        if self.part == "fig6":
            return "eq. 2.28 blocks" if self.block is None else f"{self.block}-thread blocks"
        if self.loads == "l2":
            return "L1 off (ld.global.cg)"
        if self.loads == "nc":
            return "library (ld.global.nc)"
        if self.carveout == DEFAULT_CARVEOUT:
            return "L1 on, carve-out default"
        return f"L1 on, carve-out {self.carveout}%"


def short_label(method: str, segment_bytes: int | None) -> str:
    """The thesis's name of a variant: M, C1-128, UCA-2048, ..."""
    short = _SHORT.get(method, method)
    return short if segment_bytes is None else f"{short}-{segment_bytes}"


def plan(cfg: Mapping) -> list[Cell]:
    """Every cell of the profiler target, from the study's configuration:
    Tables 5.3-5.5 (``profiler_table5_*``: each variant at each N with the
    L1-off build, and the L1-on build at each carve-out, and the library's
    build) and Figs 6.24-6.26 (``profiler_fig6_*``: the library's build, the
    blocks of eq. 2.28 and ``profiler_small_block``-thread blocks), for
    ``profiler_sequences`` weight sequences each."""
    known = catalog.variants(cfg)
    cells = []
    table5_configs = [("l2", DEFAULT_CARVEOUT)]
    table5_configs += [("l1", c) for c in cfg["profiler_carveouts"]]
    table5_configs += [("nc", DEFAULT_CARVEOUT)]
    small = cfg["profiler_small_block"]
    for part, key, log2_ns, configs in (
        ("table5", "profiler_table5_variants", cfg["profiler_table5_log2_n"], table5_configs),
        ("fig6", "profiler_fig6_variants", cfg["profiler_fig6_log2_n"], None),
    ):
        # N and the weight sequence outermost: a process generates each once.
        for e in sorted(log2_ns):
            n = 2**e
            if configs is None:
                block = small if n >= SMALL_BLOCK_MIN_N else None
                settings = list(
                    dict.fromkeys([("nc", DEFAULT_CARVEOUT, None), ("nc", DEFAULT_CARVEOUT, block)])
                )
            else:
                settings = [(loads, c, None) for loads, c in configs]
            for s in range(cfg["profiler_sequences"]):
                for name in cfg[key]:
                    v = known[name]
                    label = short_label(v.method, v.segment_bytes)
                    for loads, carveout, block in settings:
                        cells.append(
                            Cell(
                                part,
                                name,
                                v.method,
                                v.segment_bytes,
                                label,
                                n,
                                s,
                                loads,
                                carveout,
                                block,
                            )  # fmt: skip
                        )
    return cells


def builds(cells: Sequence[Cell]) -> list[str]:
    """The builds the cells use, in plan order: one ncu process each."""
    return list(dict.fromkeys(c.loads for c in cells))


def cells_of(cells: Sequence[Cell], loads: str) -> list[Cell]:
    """The cells one build's process runs, in the order it launches them."""
    return [c for c in cells if c.loads == loads]


def cells_to_json(cells: Sequence[Cell]) -> list[dict]:
    return [asdict(c) for c in cells]


def cells_from_json(rows: Sequence[Mapping]) -> list[Cell]:
    return [Cell(**row) for row in rows]


# --- running ------------------------------------------------------------


def find_ncu() -> str:
    """The path of ncu, or :class:`NcuMissing` with the target's message."""
    path = shutil.which("ncu")
    if path is None:
        raise NcuMissing(NCU_MISSING)
    return path


def ncu_command(ncu: str, loads: str, cells: Sequence[Cell], csv_path, program: Sequence[str]):
    """The ncu command line that profiles the cells of one build: every
    launch of the families' kernels (``--launch-count`` the number of
    cells), the metrics of :data:`METRICS`, base units, CSV to ``csv_path``.
    ncu's defaults stay: caches flushed before each replay pass, clocks
    locked to base (so a time under ncu is not a free-running time)."""
    mine = cells_of(cells, loads)
    families = sorted({c.family for c in mine})
    regex = "|".join(KERNEL_REGEX[f] for f in families)
    return [
        ncu, "--csv", "--log-file", str(csv_path), "--print-units", "base",
        "--kernel-name-base", "demangled", "--kernel-name", f"regex:{regex}",
        "--launch-count", str(len(mine)), "--metrics", ",".join(METRICS),
        *program,
    ]  # fmt: skip


def _family_functions(family: str) -> list[str]:
    """Every float32 instantiation of a family's kernel, as kernels.py lists
    them for NVRTC (read there, so that a new template argument follows)."""
    from pfresample.cuda import kernels

    prefix = f"{family}<float,"
    return [name for name in kernels.templates(f"{family}.cu") if name.startswith(prefix)]


def set_carveout(family: str, percent: int) -> None:
    """Ask the driver for a shared-memory carve-out of ``percent`` (-1: its
    own choice) for every kernel of the family, on the function objects the
    launchers use (kernels.kernel is cached, so they are the same)."""
    from cupy_backends.cuda.api import driver

    from pfresample.cuda import kernels

    for name in _family_functions(family):
        fn = kernels.kernel(f"{family}.cu", name)
        driver.funcSetAttribute(fn.ptr, CARVEOUT_ATTRIBUTE, int(percent))


def run_cells(cells: Sequence[Cell], distribution: str, seed: int, log=print) -> None:
    """Run the cells of one build in order, one resampling call each (its
    family kernel launched once), on the GPU: the cells' global loads and
    each cell's block size given to the library as launch settings
    (``pfresample.cuda.settings.launch_settings``)."""
    import cupy

    from pfresample import api
    from pfresample.cuda.settings import launch_settings

    from .weights import generate

    if os.environ.get("CUPY_COMPILE_WITH_PTX"):
        raise RuntimeError("CUPY_COMPILE_WITH_PTX is set: ptxas's options would not apply")
    loads = {c.loads for c in cells}
    if len(loads) > 1:
        raise ValueError(f"cells of one build expected, got builds {sorted(loads)}")
    weights = {}
    for i, c in enumerate(cells):
        key = (c.n, c.sequence)
        if key not in weights:
            weights = {key: cupy.asarray(generate(distribution, c.n, c.sequence, seed))}
        with launch_settings(block=c.block, loads=c.loads):
            set_carveout(c.family, c.carveout)
            api.resample(
                weights[key], c.method, seed=seed + c.sequence, segment_bytes=c.segment_bytes
            )
        cupy.cuda.Device().synchronize()
        log(f"cell {i + 1}/{len(cells)}: {c.label} N={c.n} seq={c.sequence} {c.config}")


# --- parsing ------------------------------------------------------------


def _number(text: str) -> float:
    """A metric value of ncu's CSV: thousands separators dropped, "n/a" NaN."""
    text = text.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan", "-"):
        return math.nan
    return float(text)


def parse_ncu_csv(text: str) -> pd.DataFrame:
    """ncu's ``--csv`` report (the details page: one row per kernel and
    metric, columns "ID", ..., "Kernel Name", ..., "Metric Name",
    "Metric Unit", "Metric Value") as one row per profiled kernel: ``id``,
    ``kernel``, and one column per metric of :data:`METRICS` by its short
    name, in base units (seconds, bytes, percent, counts). Lines before the
    header and ncu's own ``==PROF==`` lines are skipped."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError('no ncu CSV header ("ID",...) found: was ncu run with --csv?')
    body = [line for line in lines[start:] if line.startswith('"')]
    rows: dict[int, dict] = {}
    for rec in csv.DictReader(io.StringIO("\n".join(body))):
        kid = int(_number(rec["ID"]))
        row = rows.setdefault(kid, {"id": kid, "kernel": rec["Kernel Name"]})
        name = rec["Metric Name"]
        if name not in METRICS:
            continue
        unit = rec.get("Metric Unit", "").strip()
        if name == "gpu__time_duration.sum" and unit not in UNITS:
            raise ValueError(f"ncu reports {name} in {unit!r}, a unit this parser does not know")
        value = _number(rec["Metric Value"]) * UNITS.get(unit, 1.0)
        row[METRICS[name]] = value
    frame = pd.DataFrame(sorted(rows.values(), key=lambda r: r["id"]))
    for column in METRICS.values():
        if column not in frame.columns:
            frame[column] = math.nan
    return frame


def join(cells: Sequence[Cell], measured: pd.DataFrame, loads: str) -> pd.DataFrame:
    """The cells of one build beside its profiled kernels, in launch order;
    a ``ValueError`` when the counts or the kernel families differ (a launch
    that was not a cell's, or a cell that launched no kernel)."""
    mine = cells_of(cells, loads)
    if len(mine) != len(measured):
        raise ValueError(f"build {loads}: {len(measured)} profiled kernels for {len(mine)} cells")
    frame = pd.DataFrame(cells_to_json(mine))
    frame["config"] = [c.config for c in mine]
    for c, kernel in zip(mine, measured["kernel"], strict=True):
        if not re.search(KERNEL_REGEX[c.family], kernel):
            raise ValueError(f"build {loads}: kernel {kernel!r} where {c.family} was expected")
    out = pd.concat([frame, measured.reset_index(drop=True)], axis=1)
    out["time_ms"] = out["duration"] * 1e3
    out["sectors_per_request"] = out["ld_sectors"] / out["ld_requests"].where(
        out["ld_requests"] > 0
    )
    out["shared_config_kib"] = out["shared_config"] / 1024.0
    return out


# --- tables -------------------------------------------------------------


def _averages(frame: pd.DataFrame, keys: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Means over the weight sequences, as the thesis's averages of 16."""
    return frame.groupby(list(keys), sort=False, dropna=False)[list(columns)].mean().reset_index()


def _thesis_rows(table: Mapping, metric: str) -> list[dict]:
    return [
        {"label": label, "config": f"thesis K40, {size}", "n": 2**e, metric: value}
        for (label, size), values in table.items()
        for e, value in zip(catalog.THESIS_PROFILER_LOG2_N, values, strict=True)
    ]


def build_tables(measured: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Tables 5.3-5.5 and the data of Figs 6.24-6.26 (tidy: one row per
    variant label, configuration and N), each with the thesis's printed
    numbers as rows whose config starts with "thesis"."""
    t5 = measured[measured["part"] == "table5"]
    keys = ["label", "config", "n"]
    avg = _averages(t5, keys, ["time_ms", "l1_hit_pct", "shared_config_kib"])
    baseline = avg[avg["label"] == "M"].set_index(["config", "n"])["time_ms"]
    speed = avg[avg["label"] != "M"].copy()
    index = pd.MultiIndex.from_frame(speed[["config", "n"]])
    speed["speedup"] = baseline.reindex(index).to_numpy() / speed["time_ms"].to_numpy()
    source = "measured"
    tables = {
        "table5_3": pd.concat(
            [
                avg[keys + ["l1_hit_pct", "shared_config_kib"]].assign(source=source),
                pd.DataFrame(_thesis_rows(catalog.THESIS_TABLE5_3, "l1_hit_pct")).assign(
                    source="thesis Table 5.3"
                ),
            ],
            ignore_index=True,
        ),  # fmt: skip
        "table5_4": pd.concat(
            [
                avg[keys + ["time_ms"]].assign(source=source),
                pd.DataFrame(_thesis_rows(catalog.THESIS_TABLE5_4, "time_ms")).assign(
                    source="thesis Table 5.4"
                ),
            ],
            ignore_index=True,
        ),  # fmt: skip
        "table5_5": pd.concat(
            [
                speed[keys + ["speedup"]].assign(source=source),
                pd.DataFrame(_thesis_rows(catalog.THESIS_TABLE5_5, "speedup")).assign(
                    source="thesis Table 5.5"
                ),
            ],
            ignore_index=True,
        ),  # fmt: skip
    }
    f6 = measured[measured["part"] == "fig6"]
    fig = _averages(f6, keys + ["block_size"], ["sectors_per_request", "sm_efficiency_pct"])
    thesis = [
        {"label": label, "config": "thesis K40, large N (§6.11)", "sectors_per_request": v}
        for label, v in catalog.THESIS_FIG6_24_CONVERGED.items()
    ]
    tables["fig6_24_26"] = pd.concat(
        [fig.assign(source=source), pd.DataFrame(thesis).assign(source="thesis §6.11 text")],
        ignore_index=True,
    )
    return tables


def tidy(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every table in one frame, a ``table`` column naming each."""
    return pd.concat([t.assign(table=name) for name, t in tables.items()], ignore_index=True)


_MD_TITLES = {
    "table5_3": ("Table 5.3: L1 hit ratio of global loads (%)", "l1_hit_pct", "{:.2f}"),
    "table5_4": ("Table 5.4: kernel time (ms)", "time_ms", "{:.4g}"),
    "table5_5": ("Table 5.5: speed-up, time of M / time of C1 or C2", "speedup", "{:.2f}"),
    "fig6_24": ("Fig 6.24: global load sectors per request", "sectors_per_request", "{:.2f}"),
    "fig6_25_26": ("Figs 6.25-6.26: SM efficiency (%)", "sm_efficiency_pct", "{:.1f}"),
}


def _pivot_markdown(frame: pd.DataFrame, value: str, fmt: str) -> list[str]:
    frame = frame.dropna(subset=[value])
    if frame.empty:
        return ["(no values)"]
    wide = frame.pivot_table(index=["label", "config"], columns="n", values=value, sort=False)
    ns = sorted(wide.columns)
    head = ["method", "configuration", *[f"2^{int(math.log2(n))}" for n in ns]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * len(ns)]
    for (label, config), row in wide.iterrows():
        cells = [fmt.format(row[n]) if np.isfinite(row[n]) else "" for n in ns]
        lines.append("| " + " | ".join([label, config, *cells]) + " |")
    return lines


def markdown(tables: Mapping[str, pd.DataFrame], header: str) -> str:
    """Tables 5.3-5.5 and the data of Figs 6.24-6.26 laid out as the thesis's
    tables (methods and configurations by N), the thesis's rows beside ours."""
    out = [f"# Dülger (2017) profiler results\n\n{header}\n"]
    fig = tables["fig6_24_26"]
    parts = {
        "table5_3": tables["table5_3"],
        "table5_4": tables["table5_4"],
        "table5_5": tables["table5_5"],
        "fig6_24": fig[fig["source"] == "measured"],
        "fig6_25_26": fig[fig["source"] == "measured"],
    }
    for name, frame in parts.items():
        title, value, fmt = _MD_TITLES[name]
        out += [f"## {title}", "", *_pivot_markdown(frame, value, fmt), ""]
    converged = ", ".join(f"{k} {v}" for k, v in catalog.THESIS_FIG6_24_CONVERGED.items())
    out.append(
        f"Thesis, Fig 6.24 at large N (§6.11 text): {converged}; Fig 6.25: the SMX "
        f"efficiency approaches {catalog.THESIS_FIG6_25_LARGE_N:g}% at large N (§6.12)."
    )
    return "\n".join(out) + "\n"


# --- figure -------------------------------------------------------------


def profiler_figure(fig_table: pd.DataFrame, caption: str | None = None):
    """Figs 6.24-6.26 in three panels, in the style of the study's other
    figures: sectors per request (eq. 2.28 blocks), SM efficiency with the
    blocks of eq. 2.28, and with 32-thread blocks (eq. 2.28's as dashed
    lines), N on a log2 axis, one line per variant."""
    import seaborn as sns
    from matplotlib.figure import Figure

    from ..pipeline.plots import add_caption

    data = fig_table[fig_table["source"] == "measured"]
    default = data[data["config"] == "eq. 2.28 blocks"]
    # Below SMALL_BLOCK_MIN_N the thesis's Fig 6.26 keeps eq. 2.28's blocks.
    small = pd.concat(
        [data[data["config"] != "eq. 2.28 blocks"], default[default["n"] < SMALL_BLOCK_MIN_N]]
    )
    order = list(dict.fromkeys(data["label"]))
    palette = dict(zip(order, sns.color_palette(n_colors=max(len(order), 1)), strict=True))
    panels = [
        (
            "Fig 6.24: eq. 2.28 blocks",
            default,
            "sectors_per_request",
            "global load sectors / request",
        ),
        ("Fig 6.25: eq. 2.28 blocks", default, "sm_efficiency_pct", "SM efficiency (%)"),
        (
            "Fig 6.26: 32-thread blocks (dashed: eq. 2.28)",
            small,
            "sm_efficiency_pct",
            "SM efficiency (%)",
        ),
    ]
    with sns.axes_style("whitegrid"), sns.plotting_context("paper"):
        fig = Figure(figsize=(3.4 * 3, 3.2), layout="constrained")
        axes = fig.subplots(1, 3)
        for ax, (title, part, column, ylabel) in zip(axes, panels, strict=True):
            for label in order:
                line = part[part["label"] == label].sort_values("n")
                ax.plot(line["n"], line[column], marker="o", ms=3, label=label,
                        color=palette[label])  # fmt: skip
                if title.startswith("Fig 6.26"):
                    ref = default[default["label"] == label].sort_values("n")
                    ax.plot(ref["n"], ref[column], ls="--", lw=0.8, color=palette[label])
            ax.set_xscale("log", base=2)
            ax.set_xlabel("N (particles)")
            ax.set_ylabel(ylabel)
            ax.set_title(title, fontsize=8)
        handles, labels = axes[0].get_legend_handles_labels()
        if labels:
            fig.legend(handles, labels, loc="outside right upper", fontsize=7)
        fig.suptitle(
            "Global load sectors per request and SM efficiency of Uphill, Uphill-C1 and Uphill-CA",
            fontsize=9,
        )
        if caption:
            add_caption(fig, caption)
    return fig
