"""Moazeni (2013): the study's configuration keys, their checks across keys,
and the thesis's published numbers (chapter 3), each with where it is printed."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..pipeline.compare import TableRules
from .dp import DTYPES

NUMBER_LIST_KEYS = ("moazeni2013_ch3_numpy_n", "moazeni2013_ch3_native_n",
                     "moazeni2013_ch3_block_sizes", "moazeni2013_ch3_gpu_n",
                     "moazeni2013_ch3_gpu_block_sizes", "moazeni2013_ch3_fig12_sizes",
                     "moazeni2013_ch4_tables", "moazeni2013_ch4_batches",
                     "moazeni2013_ch4_variances", "moazeni2013_ch4_thread_sweep",
                     "moazeni2013_ch6_tiles", "moazeni2013_ch6_sweep_lambdas",
                     "moazeni2013_ch6_sweep_eps", "moazeni2013_ch6_sweep_steps",
                     "moazeni2013_ch6_native_sizes",
                     "moazeni2013_ch6_peer_weights", "moazeni2013_ch6_gpu_sizes",
                     "moazeni2013_ch5_sizes_3d", "moazeni2013_ch5_sizes_2d",
                     "moazeni2013_ch5_tiles", "moazeni2013_ch5_carveouts",
                     "moazeni2013_ch7_planted_widths", "moazeni2013_ch7_timing_widths",
                     "moazeni2013_ch7_timing_lengths", "moazeni2013_ch7_choice_m",
                     "moazeni2013_ch7_choice_p", "moazeni2013_ch7_choice_sf",
                     "moazeni2013_ch7_timing_queries")  # fmt: skip
ORDERS = ("bottom_up", "divide_and_conquer", "recursive")
# Chapter 3's outputs: the tables and figures the study draws (Fig 12, the rectangular
# kernel against cuBLAS, and Fig 18, the GPUs compared, are empty where no GPU ran), and
# the speed-ups over the document's baseline and over the best CPU code (a Markdown twin
# with its caption beside the CSV: SPEEDUP_TABLES).
CH3_TABLES = ("table1", "table3", "ch3_speedups")
SPEEDUP_TABLES = ("ch3_speedups", "ch4_speedups", "ch6_speedups", "ch7_speedups")
CH3_FIGURES = ("fig12", "fig13", "fig15", "fig16", "fig17", "fig18")
# Chapter 4's outputs (hashtable_figures: Table 5 and Figs 19, 26-40), and the speed-ups
# over the document's baseline and over the best CPU code (SPEEDUP_TABLES).
CH4_TABLES = ("table5", "ch4_speedups")
CH4_FIGURES = ("fig19", *(f"fig{i}" for i in range(26, 41)), "cpu_threads", "applications")
# Chapters 5 and 6's outputs (tv_figures): Tables 7-9, Fig 45 and the reuse figure;
# Table 10, Figs 49-53, and the quality, parameter, peer and check tables the thesis lacks.
CH5_TABLES = ("table7", "table8", "table9")
CH5_FIGURES = ("fig45", "reuse")
CH6_TABLES = ("table10", "ch6_peer", "ch6_check", "ch6_noisy", "ch6_speedups")
CH6_FIGURES = ("fig49", "fig50", "fig51", "fig52", "fig53", "ch6_quality", "ch6_parameters")
# Chapter 7's outputs (mddtw_figures): Tables 11-14 (14: walking queries with the sensor's
# orientation varied), z-normalisation off against on (ch7_znorm), the planted recall table,
# Figs 58, 60, 62-64, and the speed-ups over the document's baseline and over the best CPU
# code (SPEEDUP_TABLES).
CH7_TABLES = ("table11", "table12", "table13", "table14", "ch7_znorm", "ch7_choices",
              "ch7_speedups")  # fmt: skip
CH7_FIGURES = ("fig58", "fig60", "fig62", "fig63", "fig64", "planted")
# The figures with GPU rows, and where a GPU run of the pipeline keeps each one's table
# inside an evidence folder (evidence/<date>-<device>-<commit>/): where no GPU ran here,
# the newest folder holding it is drawn beside this machine's rows (pipeline.evidence).
# Chapter 4's CPU thread sweep has no GPU rows: this machine's alone.
EVIDENCE_TABLES = {
    **{f: f"ch3_pipeline/tables/{f}.csv" for f in CH3_FIGURES},
    **{f: f"ch4_pipeline/tables/{f}.csv" for f in CH4_FIGURES if f != "cpu_threads"},
    "reuse": "ch56_pipeline/tables/reuse.csv",
    **{f: f"ch56_pipeline/tables/{f}.csv" for f in ("fig49", "fig50", "fig51", "fig52", "fig53")},
    **{f: f"ch7_pipeline/tables/{f}.csv" for f in ("fig60", "fig62", "fig63", "fig64")},
    # the speed-up tables' GPU rows: the GPU cell of the host whose best-CPU run is the
    # headline (evidence/2026-11-28-h100-202cbb3), in the cell's own layout (the orders'
    # rows: tables.evidence_gpu_orders reads it)
    "ch3_speedups": "ch3_gpu_cell.csv",
    # chapter 4's: the one-host bench run's rows (bench/moazeni2013_ch4_best_cpu.py's
    # layout: GPU_PH with DEK and with mix, and that host's CPU sides beside;
    # hashtable_figures.evidence_gpu_rows reads it)
    "ch4_speedups": "ch4/timings.csv",
    # chapter 6's: Fig 53's table (GlobalSync at its faster tile: tv_figures.gpu_global_sync)
    "ch6_speedups": "ch56_pipeline/tables/fig53.csv",
    # chapter 7's: the one-host bench run's rows (bench/moazeni2013_ch7_best_cpu.py's
    # layout, the kernel's and the top-p task's: mddtw_figures.evidence_gpu_rows reads it)
    "ch7_speedups": "ch7/ch7_timings.csv",
}
# The target that measures each chapter's GPU rows (a blank figure names it).
CHAPTER_TARGETS = {**dict.fromkeys((*CH3_FIGURES, "ch3_speedups"), "moazeni2013_ch3"),
                   **dict.fromkeys((*CH4_FIGURES, "ch4_speedups"), "moazeni2013_ch4"),
                   **dict.fromkeys(CH5_FIGURES, "moazeni2013_ch5"),
                   **dict.fromkeys((*CH6_FIGURES, "ch6_speedups"), "moazeni2013_ch6"),
                   **dict.fromkeys((*CH7_FIGURES, "ch7_speedups"), "moazeni2013_ch7")}  # fmt: skip


def evidence_rows(figure: str, frame):
    """The GPU rows of a committed table, the ones drawn beside this machine's (chapter
    3's mixed tables keep their CUDA rows: this machine ran the NumPy and C ones)."""
    if figure in ("fig13", "fig15", "fig16", "fig17") and "implementation" in frame:
        return frame[frame["implementation"].astype(str).str.startswith("CUDA")]
    return frame


def fill_command(figure: str) -> str:
    """What would measure a figure's rows: its chapter's target on a machine with a GPU."""
    return (f"run `snakemake --cores all {CHAPTER_TARGETS[figure]}` on a machine with a "
            "CUDA device")  # fmt: skip


# Fig 18's block sizes, as §3.6.2 chose them: 32 for n < 512, 64 above.
FIG18_BLOCK = {"below_512": 32, "from_512": 64}

# Table 1 (iterative bottom-up vs divide and conquer, block size 256 on a Tesla C1060):
# n -> (triangular calls, triangular us, rectangular calls, rectangular us) per order.
PUBLISHED_TABLE1 = {
    "bottom_up": {
        1024: (6, 748_822, 4, 2_177),
        2048: (28, 3_616_350, 56, 30_690),
        4096: (120, 15_572_900, 560, 306_875),
        8192: (496, 64_884_000, 4960, 2_727_580),
    },
    "divide_and_conquer": {
        1024: (6, 749_021, 4, 2_181),
        2048: (36, 4_650_060, 28, 29_906),
        4096: (216, 27_870_300, 172, 311_124),
        8192: (1296, 171_049_000, 1036, 2_923_350),
    },
}
TABLE1_BLOCK = 256  # the block size (and threshold M) of Table 1's counts
# Table 3: speed-up of the bottom-up order over divide and conquer.
PUBLISHED_TABLE3 = {1024: 1.01, 2048: 1.49, 4096: 2.34, 8192: 3.92}
# §3.6: "up to 228x speedup" over one thread of an Intel Core i7 965 (Tesla C1060).
PUBLISHED_SPEEDUP = 228.0
PUBLISHED_HARDWARE = "Tesla C1060 (CUDA 3.2) vs one thread of an Intel Core i7 965"


# Chapter 4 (§4.6, GTX 480 against two quad-core Xeon E5405 on 8 threads).
CH4_HARDWARE = "GTX 480 (CUDA 4.0) vs 8 threads of two Xeon E5405"
CH4_VARIANCE = 0.05  # the normal keys' variance unless a figure sweeps it (§4.6.1)
CH4_MIXES = (33, 50, 60, 80, 90)  # search % of the combined batches (§4.6.2.3)
CH4_FIG38_TABLES = 50  # Fig 38: PH = 50 against GPU_BIG of 50 x 1,024 buckets
CH4_FIG39_TOTAL = 2**20  # Fig 39: operations in all, in batches of each size
# Table 5: extra memory (KB) against the number of tables, 1,024 buckets each, as printed
# (64 -> 521 is printed; 512 = 64 x 1,024 x 8 bytes is what the other entries follow).
PUBLISHED_TABLE5 = {4: 32, 16: 128, 64: 521, 128: 1024, 256: 2048}
# The headline ratios as the text states them (the figures' values are not in the text).
PUBLISHED_CH4 = {
    "fig31": "GPU_PH (320) over GPU_BASIC: 25-170x",
    "fig32": "GPU_PH over CPU_PH (320 tables, 8 threads): 5-27x",
    "fig33": "GPU_PH (320) over GPU_BASIC across variances: 80-120x",
    "fig36": "GPU_PH over GPU_BIG of the same memory: ~3.5x",
}


def numpy_n(cfg: Mapping) -> list[int]:
    return [int(n) for n in cfg["moazeni2013_ch3_numpy_n"]]


def native_n(cfg: Mapping) -> list[int]:
    return [int(n) for n in cfg["moazeni2013_ch3_native_n"]]


def native_threads(cfg: Mapping) -> int:
    """Threads of the compiled baseline's many-thread run (null: every CPU)."""
    value = cfg.get("moazeni2013_ch3_native_threads")
    return int(value) if value else (os.cpu_count() or 1)


def best_cpu_threads(cfg: Mapping) -> int:
    """Threads of the best CPU code's cells, every chapter's (null: every CPU of the host)."""
    value = cfg.get("moazeni2013_best_cpu_threads")
    return int(value) if value else (os.cpu_count() or 1)


def ch7_best_cpu_cases(cfg: Mapping) -> list[str]:
    """Chapter 7's best-CPU cases, ``"K:N:M"`` (the schema checks the form; the cell,
    mddtw_experiments.parse_cases, that M <= N)."""
    return [str(c) for c in cfg["moazeni2013_ch7_best_cpu_cases"]]


def block_sizes(cfg: Mapping) -> list[int]:
    return [int(s) for s in cfg["moazeni2013_ch3_block_sizes"]]


def gpu_n(cfg: Mapping) -> list[int]:
    return [int(n) for n in cfg["moazeni2013_ch3_gpu_n"]]


def gpu_block_sizes(cfg: Mapping) -> list[int]:
    return [int(s) for s in cfg["moazeni2013_ch3_gpu_block_sizes"]]


def fig12_sizes(cfg: Mapping) -> list[int]:
    return [int(p) for p in cfg["moazeni2013_ch3_fig12_sizes"]]


def other_gpu_cells(cfg: Mapping) -> list[str]:
    return [str(p) for p in cfg.get("moazeni2013_ch3_other_gpu_cells") or []]


def ch4_tables(cfg: Mapping) -> list[int]:
    return sorted(int(t) for t in cfg["moazeni2013_ch4_tables"])


def ch4_top_tables(cfg: Mapping) -> int:
    return int(cfg["moazeni2013_ch4_top_tables"])


def ch4_batches(cfg: Mapping) -> list[int]:
    return sorted(int(b) for b in cfg["moazeni2013_ch4_batches"])


def ch4_variances(cfg: Mapping) -> list[float]:
    return sorted(float(v) for v in cfg["moazeni2013_ch4_variances"])


def ch4_hashes(cfg: Mapping) -> list[str]:
    return [str(h) for h in cfg["moazeni2013_ch4_hashes"]]


def ch4_byte_orders(cfg: Mapping) -> list[str]:
    """Fig 34's byte orders of the byte-wise hashes (absent: the default's alone)."""
    from .hashtable import DEFAULT_BYTE_ORDER

    return [str(o) for o in cfg.get("moazeni2013_ch4_byte_orders", [DEFAULT_BYTE_ORDER])]


def ch4_cpu_threads(cfg: Mapping) -> int:
    """Threads of the CPU runs (null: every CPU of the host; the thesis's 8)."""
    value = cfg.get("moazeni2013_ch4_cpu_threads")
    return int(value) if value else (os.cpu_count() or 1)


def ch4_thread_sweep(cfg: Mapping) -> list[int]:
    """Thread counts of the CPU runs' sweep (CPU_BASIC and CPU_PH, largest batch)."""
    return sorted(int(t) for t in cfg["moazeni2013_ch4_thread_sweep"])


def check_ch4(cfg: Mapping) -> None:
    """Chapter 4's checks across keys, a ValueError naming the keys."""
    from .hashtable import BYTE_ORDERS, HASHES

    if ch4_top_tables(cfg) not in ch4_tables(cfg):
        raise ValueError(f"moazeni2013_ch4_top_tables {ch4_top_tables(cfg)} must be one of "
                         f"moazeni2013_ch4_tables {ch4_tables(cfg)}")  # fmt: skip
    if 1 not in ch4_tables(cfg):
        raise ValueError("moazeni2013_ch4_tables must hold 1 (GPU_BASIC and CPU_BASIC)")
    preload = int(cfg["moazeni2013_ch4_preload"])
    big = [b for b in ch4_batches(cfg) if b > preload]
    if big:
        raise ValueError(f"moazeni2013_ch4_batches {big} exceed moazeni2013_ch4_preload "
                         f"{preload} (a search-only batch searches preloaded keys)")  # fmt: skip
    bad = [h for h in ch4_hashes(cfg) if h not in HASHES]
    if bad:
        raise ValueError(f"moazeni2013_ch4_hashes: {bad} not in {tuple(HASHES)}")
    if "dek" not in ch4_hashes(cfg):
        raise ValueError("moazeni2013_ch4_hashes must hold dek (the thesis's default)")
    bad = [o for o in ch4_byte_orders(cfg) if o not in BYTE_ORDERS]
    if bad:
        raise ValueError(f"moazeni2013_ch4_byte_orders: {bad} not in {tuple(BYTE_ORDERS)}")
    odd = [v for v in ch4_variances(cfg) if not 0 < v <= 1]
    if odd:
        raise ValueError(f"moazeni2013_ch4_variances must lie in (0, 1], got {odd}")


def ch6_settings(cfg: Mapping) -> dict:
    """The keyword arguments of tv_experiments.Settings that the config sets."""
    return {"lam": float(cfg["moazeni2013_ch6_lambda"]), "eps": float(cfg["moazeni2013_ch6_eps"]),
            "step": float(cfg["moazeni2013_ch6_step"]),
            "iterations": int(cfg["moazeni2013_ch6_iterations"])}  # fmt: skip


def ch6_phantom(cfg: Mapping) -> dict:
    """The phantom's keys (tv_experiments.make_case) and the seed."""
    return {"seed": int(cfg["seed"]), "directions": int(cfg["moazeni2013_ch6_directions"]),
            "noise": float(cfg["moazeni2013_ch6_noise"])}  # fmt: skip


def ch6_tiles(cfg: Mapping) -> list[int]:
    return sorted(int(t) for t in cfg["moazeni2013_ch6_tiles"])


def ints(cfg: Mapping, key: str) -> list[int]:
    return [int(v) for v in cfg[key]]


def floats(cfg: Mapping, key: str) -> list[float]:
    return [float(v) for v in cfg[key]]


def check_ch6(cfg: Mapping) -> None:
    """Chapter 6's checks across keys: every volume a variant solves is a whole
    number of its blocks (UnSync's are 2 x 2 tile x 2 tile)."""
    unit = 2 * max(ch6_tiles(cfg))
    sizes = {"moazeni2013_ch6_cpu_size": [int(cfg["moazeni2013_ch6_cpu_size"])],
             "moazeni2013_ch6_gpu_sizes": ints(cfg, "moazeni2013_ch6_gpu_sizes"),
             "moazeni2013_ch6_check_size": [int(cfg["moazeni2013_ch6_check_size"])]}  # fmt: skip
    for key, values in sizes.items():
        odd = [v for v in values if v % unit]
        if odd:
            raise ValueError(f"{key} {odd}: each must be a multiple of {unit} (twice the "
                             f"largest of moazeni2013_ch6_tiles {ch6_tiles(cfg)})")  # fmt: skip


def ch7_search(cfg: Mapping) -> dict:
    """The keyword arguments of mddtw.Search that the config sets (the band from SF)."""
    m = int(cfg["moazeni2013_ch7_m"])
    return {"nr": int(cfg["moazeni2013_ch7_nr"]), "p": int(cfg["moazeni2013_ch7_p"]),
            "band": max(1, round(float(cfg["moazeni2013_ch7_sf"]) * m)),
            "alpha": float(cfg["moazeni2013_ch7_alpha"])}  # fmt: skip


def ch7_choices(cfg: Mapping) -> dict:
    """The values of each open choice that chapter 7's choice runs try."""
    return {"m": ints(cfg, "moazeni2013_ch7_choice_m"), "p": ints(cfg, "moazeni2013_ch7_choice_p"),
            "sf": floats(cfg, "moazeni2013_ch7_choice_sf"),
            "normalise": [bool(v) for v in cfg["moazeni2013_ch7_choice_normalise"]]}  # fmt: skip


def ch7_exhaust_band(cfg: Mapping) -> int:
    return max(1, round(float(cfg["moazeni2013_ch7_exhaust_sf"]) * int(cfg["moazeni2013_ch7_m"])))


def fig18_block(n: int) -> int:
    """§3.6.2's block size at n: 32 below 512, 64 from 512 on."""
    return FIG18_BLOCK["below_512"] if n < 512 else FIG18_BLOCK["from_512"]


def check_config(cfg: Mapping) -> None:
    """Checks across keys, a ValueError naming the keys (the schema checks each key alone)."""
    for key, sizes in (("moazeni2013_ch3_block_sizes", block_sizes(cfg)),
                       ("moazeni2013_ch3_gpu_block_sizes", gpu_block_sizes(cfg))):  # fmt: skip
        odd = [s for s in sizes if s & (s - 1)]
        if odd:
            raise ValueError(f"{key}: block sizes must be powers of 2, got {odd}")
    missing = [p for p in other_gpu_cells(cfg) if not os.path.isfile(p)]
    if missing:
        raise ValueError(f"moazeni2013_ch3_other_gpu_cells: no such file {missing}")
    base = int(cfg["moazeni2013_ch3_recursive_base"])
    small = [s for s in block_sizes(cfg) if s < base]
    if small:
        raise ValueError(
            f"moazeni2013_ch3_block_sizes {small} are below moazeni2013_ch3_recursive_base {base}"
        )
    too_small = [n for n in numpy_n(cfg) if n < 2 * max(block_sizes(cfg))]
    if too_small:
        raise ValueError(
            f"moazeni2013_ch3_numpy_n {too_small} must be at least twice the largest block "
            f"size {max(block_sizes(cfg))} (one off-diagonal block)"
        )
    bad = [d for d in cfg["moazeni2013_ch3_dtypes"] if d not in DTYPES]
    if bad:
        raise ValueError(f"moazeni2013_ch3_dtypes: {bad} not in {DTYPES}")
    check_ch4(cfg)
    check_ch6(cfg)
    m, length = int(cfg["moazeni2013_ch7_m"]), int(cfg["moazeni2013_ch7_planted_length"])
    if length < 8 * m:
        raise ValueError(f"moazeni2013_ch7_planted_length {length} must be at least 8 x "
                         f"moazeni2013_ch7_m ({8 * m}): six occurrences, well apart")  # fmt: skip
    if m > 100:
        raise ValueError(f"moazeni2013_ch7_m {m}: BasicMotions' episodes are 100 long")
    cases = [str(c).split(":") for c in cfg.get("moazeni2013_ch7_best_cpu_cases", [])]
    long = [":".join(c) for c in cases if len(c) == 3 and int(c[2]) > int(c[1])]
    if long:
        raise ValueError(f"moazeni2013_ch7_best_cpu_cases {long}: a query (M) longer than its "
                         "recording (N)")  # fmt: skip


# --- what scripts/compare_results.py leaves out (pipeline.compare) ---
# The columns of the study's tables that are measurements: times, rates (Mops,
# GOP/s), the shares of a time, and the speed-ups and reductions built from them.
MEASURED_COLUMNS = (
    "seconds", "seconds_baseline", "speedup", "total_s", "upload_s", "seconds_with_upload",
    "gpu_s", "gpu_upload_s", "doc_cpu_s", "best_cpu_s", "best_cpu_s_min", "best_cpu_s_max",
    "over_document", "over_best_cpu", "dtw_best_search_s", "dtw_best_all_s",
    "mops", "gop_per_s", "diagonal_share", "triangular_share", "rectangular_share",
    "one_thread_s", "speedup_over_one_thread", "all_threads_s", "speedup_over_all_threads",
    "triangular_s", "rectangular_s", "bottom_up_s", "divide_and_conquer_s",
    "minplus_s", "matmul_s", "minplus_over_matmul",
    "us_plain", "us_reuse", "reduction", "ms", "gpu_time_share",
)  # fmt: skip


def compare_rules(cfg: Mapping) -> TableRules:
    """The study's rules for comparing two results trees: its measured
    columns; no table's rows are picked by a measurement."""
    return TableRules(measured=MEASURED_COLUMNS)
