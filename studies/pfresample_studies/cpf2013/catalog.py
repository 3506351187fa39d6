"""What the Gelencsér-Horváth et al. (2013) configuration means: the grid of
"Evaluation and results" from the keys of config/studies/cpf2013.yaml, the
cross-key checks, which cells each figure reads, and the paper's published
numbers (Table 1 and the text) that Table 1 of the pipeline sets ours beside.
The keys are documented in config/README.md."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pfresample.cuda.geometry import CPF_MAX_RADIUS
from pfresample.resampling.registry import ancestor_methods

from ..pipeline.compare import TableRules

NUMBER_LIST_KEYS = ("cpf2013_n", "cpf2013_radii", "cpf2013_large_n", "cpf2013_timing_n")

# The growth model's start (cpf2013_growth_setup; models/growth.py):
# "paper": the particles that meet z_1 are N(0, 10) draws, "the same distribution as
# n_t" ("GPU CPF algorithm"), weighted before any prediction (Fig 6: the kernel
# weighs, resamples, then predicts); "thesis": the library's former start, x_0 ~
# N(0, 2) (Dülger §2.6) predicted by eq. 2.34 before the first weighting.
SETUPS = ("paper", "thesis")
# The CPF kernels Figs 11-12 time (cpf2013_timing_kernels): "<precision>-<neighbourhood>"
# of filters.cellular (PRECISIONS x NEIGHBOURHOODS, float32 without the search).
# "float64-search" is the library's default; "float32-divide" the paper's own: single
# precision and a running sum of L_j / W_i, one division a neighbour (Fig 6, III.5).

# The paper's figures: what each shows, and which model.
TRAJECTORY_FIGURES = {"fig7": "growth", "fig8": "bot"}  # one trajectory and its estimate
ERROR_FIGURES = {"fig9": "growth", "fig10": "bot"}  # error vs kernel time per step
TIMING_FIGURES = ("fig11", "fig12")  # growth model: kernel time, whole-run time vs N
FIGURES = (*TRAJECTORY_FIGURES, *ERROR_FIGURES, *TIMING_FIGURES)
TABLES = ("table1", "baselines", "paired", "claims", "speedup")
# The speed-up table (results/tables/cpf2013/speedup.csv): where the timing cells ran no
# GPU here, its GPU side is the newest committed run of the best-CPU bench holding this
# table (bench/cpf2013_best_cpu.py's timings.csv: GPU, NumPy-CPF and best-CPU rows on one
# host; pipeline.evidence).
EVIDENCE_TABLES = {"speedup": "cpf2013/timings.csv"}
TIMING_MODEL = "growth"  # Figs 11-12 time "the first model"
TITLES = {
    "fig7": "Gelencsér-Horváth et al. (2013) Fig 7: a trajectory of the first (growth) model",
    "fig8": "Gelencsér-Horváth et al. (2013) Fig 8: a trajectory of the BOT model",
    "fig9": "Gelencsér-Horváth et al. (2013) Fig 9: estimation quality, first model",
    "fig10": "Gelencsér-Horváth et al. (2013) Fig 10: estimation quality, BOT model",
    "fig11": "Gelencsér-Horváth et al. (2013) Fig 11: kernel time per step, with and "
    "without fast math",
    "fig12": "Gelencsér-Horváth et al. (2013) Fig 12: whole-run time, first model",
}

# The configurations the paper's own numbers are of (abstract; Table 1's last row):
# (model, N, r). Table 1 of the pipeline runs the nearest configuration of the grid.
# The text gives no r for its 2,048-particle BOT row; we read it as the abstract's r = 256.
PAPER_CONFIGURATIONS = (("bot", 2048, 256), ("bot", 16384, 256), ("growth", 16384, 256))

# Table 1 of the paper, row by row as its text prints it (the SM and core columns are
# empty in the text), one entry per particle number given; the reference of each row is
# read from the prose around the table (refs [12]-[17]; the last row is the paper's own).
# Ranges of position errors are (low, high); a single value has low == high. Values
# as printed, including "16,382 particles" (probably 16,384).
PUBLISHED_TABLE1 = (
    {"reference": "[12] Chu et al. 2011", "gpu": "GTX 280", "gpu_clock": "1.3 GHz",
     "computes": "All; spreading-narrowing technique", "model": "BOT model, 25 time steps",
     "time_included": "Sampling + weight normalization + resampling",
     "particles": 1050, "time_ms": 79.4, "position_error": (0.06245, 0.06245)},
    {"reference": "[12] Chu et al. 2011", "gpu": "GTX 280", "gpu_clock": "1.3 GHz",
     "computes": "All; spreading-narrowing technique", "model": "BOT model, 25 time steps",
     "time_included": "Sampling + weight normalization + resampling",
     "particles": 2000, "time_ms": 124.8, "position_error": (0.06226, 0.06226)},
    {"reference": "[13] Lee et al. 2010", "gpu": "GTX 280", "gpu_clock": "1.3 GHz",
     "computes": "All; sequential resampling", "model": "A factor stochastic volatility model",
     "time_included": "SMC algorithm: no further details", "particles": 8192, "time_ms": 82.0},
    {"reference": "[13] Lee et al. 2010", "gpu": "GTX 280", "gpu_clock": "1.3 GHz",
     "computes": "All; sequential resampling", "model": "A factor stochastic volatility model",
     "time_included": "SMC algorithm: no further details", "particles": 16382,
     "time_ms": 144.0},
    {"reference": "[13] Lee et al. 2010", "gpu": "GTX 280", "gpu_clock": "1.3 GHz",
     "computes": "All; sequential resampling", "model": "A factor stochastic volatility model",
     "time_included": "SMC algorithm: no further details", "particles": 65536,
     "time_ms": 465.0},
    {"reference": "[14] Cabido et al. 2009", "gpu": "8800 GTS", "gpu_clock": "1.2 GHz",
     "computes": "All; resampling uses offline-initiated texture",
     "model": "Skin detection + spreading region of interest",
     "time_included": "Object tracking time; no further details",
     "note": "1.44 - 13.55 speed-up in fps compared to CPU. Best 90 fps for multiple- and "
     "225 fps for single-object tracking."},
    {"reference": "[15] Otsuka and Yamato 2008", "gpu": "8800 GTX", "gpu_clock": "1.35 GHz",
     "computes": "Weight calculation", "model": "Face tracking model",
     "time_included": "Face tracking algorithm time; no further details",
     "note": "No execution time measurements for particle filter"},
    {"reference": "[16] Chao et al. 2010", "gpu": "", "gpu_clock": "450 MHz",
     "computes": "All; random numbers from CPU", "model": "BOT model, 25 time steps",
     "time_included": "Sampling + weighting + weight normalization + resampling",
     "particles": 2048, "time_ms": 168.3, "position_error": (0.078, 0.083),
     "note": "best time"},
    {"reference": "[16] Chao et al. 2010", "gpu": "", "gpu_clock": "450 MHz",
     "computes": "All; random numbers from CPU", "model": "BOT model, 25 time steps",
     "time_included": "Sampling + weighting + weight normalization + resampling",
     "particles": 4096, "time_ms": 168.0, "position_error": (0.077, 0.081),
     "note": "best time"},
    {"reference": "[17] Chitchian et al. 2013", "gpu": "GTX 580", "gpu_clock": "2 GHz",
     "computes": "All; distributed resampling",
     "model": "Dynamic equations to model a robotic arm",
     "time_included": "Sum of kernels: random number generation + sampling + local sort + "
     "global estimate + exchange + resampling", "particles": 64000, "time_ms": 0.3},
    {"reference": "this paper (Table 1)", "gpu": "GTX 550 Ti", "gpu_clock": "1.8 GHz",
     "computes": "All; all parallel", "model": "BOT model, 24 time steps",
     "time_included": "All operations (including memory transfers, PF steps and file I/O)",
     "particles": 2048, "radius": 256, "time_ms": 77.0, "position_error": (0.09, 0.09)},
    {"reference": "this paper (Table 1)", "gpu": "GTX 550 Ti", "gpu_clock": "1.8 GHz",
     "computes": "All; all parallel", "model": "BOT model, 24 time steps",
     "time_included": "All operations (including memory transfers, PF steps and file I/O)",
     "particles": 16384, "radius": 256, "time_ms": 77.0, "position_error": (0.07, 0.07)},
    {"reference": "this paper (abstract)", "gpu": "GTX 550 Ti", "gpu_clock": "1.8 GHz",
     "computes": "All; all parallel", "model": "BOT model, 24 time steps",
     "time_included": "kernel time per state; global running time for all states",
     "particles": 16384, "radius": 256, "time_ms": 77.0, "kernel_us": 411.0},
    {"reference": "this paper (abstract)", "gpu": "GTX 550 Ti", "gpu_clock": "1.8 GHz",
     "computes": "All; all parallel", "model": "first (growth) model, 100 time steps",
     "time_included": "kernel time per state; global running time for all states",
     "particles": 16384, "radius": 256, "time_ms": 124.0, "kernel_us": 266.0},
)  # fmt: skip


def n_grid(cfg: Mapping) -> list[int]:
    """The particle numbers N of the configurations, ascending."""
    return sorted(int(n) for n in cfg["cpf2013_n"])


def radii(cfg: Mapping) -> list[int]:
    """The neighbourhood radii r of the configurations, ascending."""
    return sorted(int(r) for r in cfg["cpf2013_radii"])


def configurations(cfg: Mapping) -> list[tuple[int, int]]:
    """Every (N, r) pair: "24 pairs of these are composed" (the grid is 4 x 4)."""
    return [(n, r) for n in n_grid(cfg) for r in radii(cfg)]


def large_n(cfg: Mapping) -> list[int]:
    """N beyond the paper's grid (ascending, not in it): Fig 9's growth-model CPF
    cells at every radius, so that its time axis reaches a full GPU."""
    paper = set(n_grid(cfg))
    return sorted(int(n) for n in cfg["cpf2013_large_n"] if int(n) not in paper)


def growth_configurations(cfg: Mapping) -> list[tuple[int, int]]:
    """Fig 9's (N, r): the paper's configurations and the large N at every radius."""
    return configurations(cfg) + [(n, r) for n in large_n(cfg) for r in radii(cfg)]


def model_configurations(cfg: Mapping, name: str) -> list[tuple[int, int]]:
    """The CPF cells of model ``name``: Fig 9's for the growth model, Fig 10's the paper's."""
    return growth_configurations(cfg) if name == "growth" else configurations(cfg)


def timing_n_grid(cfg: Mapping) -> list[int]:
    """The N of Figs 11-12 (one timing cell each), ascending."""
    return sorted(int(n) for n in cfg["cpf2013_timing_n"])


def timing_kernels(cfg: Mapping) -> list[tuple[str, str]]:
    """Figs 11-12's CPF kernels as (precision, neighbourhood), in the key's order."""
    return [parse_kernel(k) for k in cfg["cpf2013_timing_kernels"]]


def parse_kernel(name: str) -> tuple[str, str]:
    """ "float32-divide" -> ("float32", "divide"); ValueError naming the key otherwise."""
    from pfresample.filters.cellular import check_kernel

    precision, _, neighbourhood = str(name).partition("-")
    try:
        check_kernel(precision, neighbourhood)
    except ValueError as error:
        raise ValueError(f"cpf2013_timing_kernels has {name!r}: {error}") from None
    return precision, neighbourhood


def kernel_name(precision: str, neighbourhood: str) -> str:
    return f"{precision}-{neighbourhood}"


def best_cpu_threads(cfg: Mapping) -> int:
    """The threads of the best CPU code's cells (cpf2013_best_cpu_threads): ``all``, every
    logical CPU of the machine that parses the workflow, or the number given."""
    import os

    value = cfg.get("cpf2013_best_cpu_threads", "all")
    if value == "all":
        return os.cpu_count() or 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"cpf2013_best_cpu_threads must be 'all' or an integer >= 1, "
                         f"got {value!r}")  # fmt: skip
    return value


def numpy_timing_n(cfg: Mapping) -> list[int]:
    """The N of the timing grid at which the best-CPU cells also time the NumPy CPF (the
    document's kind of baseline, ratio 1): the paper's N (cpf2013_n) only; beyond them a
    one-process NumPy run takes minutes (0.94 s at 16,384, r = 256, on a 16-CPU Xeon)."""
    paper = set(n_grid(cfg))
    return [n for n in timing_n_grid(cfg) if n in paper]


def setup(cfg: Mapping) -> str:
    """The growth model's start (``SETUPS``)."""
    return str(cfg["cpf2013_growth_setup"])


def trajectories(cfg: Mapping, name: str) -> int:
    return int(cfg[f"cpf2013_{name}_trajectories"])


def steps(cfg: Mapping, name: str) -> int:
    return int(cfg[f"cpf2013_{name}_steps"])


def trajectory_configuration(cfg: Mapping) -> tuple[int, int]:
    """Figs 7-8: the largest N and r of the grid."""
    return n_grid(cfg)[-1], radii(cfg)[-1]


def nearest(values, target: int) -> int:
    """The grid value closest to ``target`` on a log scale (ties: the larger)."""
    return min(values, key=lambda v: (abs(math.log(v / target)), -v))


def table1_configurations(cfg: Mapping) -> list[dict]:
    """The configurations Table 1 of the pipeline runs: for each of the
    paper's (model, N, r) (``PAPER_CONFIGURATIONS``) the nearest (N, r) of
    the grid (itself at paper scale)."""
    out = []
    for name, n, r in PAPER_CONFIGURATIONS:
        ran = (nearest(n_grid(cfg), n), nearest(radii(cfg), r))
        if not any(c["model"] == name and (c["n"], c["radius"]) == ran for c in out):
            out.append({"model": name, "n": ran[0], "radius": ran[1], "paper_n": n, "paper_r": r})
    return out


def check_config(cfg: Mapping) -> None:
    """Checks across keys, a ValueError naming the keys (the schema checks each key alone)."""
    for key in ("cpf2013_n", "cpf2013_large_n", "cpf2013_timing_n"):
        if not cfg[key]:
            continue
        smallest = min(int(n) for n in cfg[key])
        too_wide = [r for r in radii(cfg) if r > smallest - 1]
        if too_wide:
            raise ValueError(
                f"cpf2013_radii has {too_wide}, wider than the ring of the smallest {key} "
                f"= {smallest} allows (r <= N - 1)"
            )
    if setup(cfg) not in SETUPS:
        raise ValueError(f"cpf2013_growth_setup must be one of {SETUPS}, got {setup(cfg)!r}")
    best_cpu_threads(cfg)
    kernels = timing_kernels(cfg)
    if not kernels:
        raise ValueError("cpf2013_timing_kernels is empty: Figs 11-12 time at least one kernel")
    if cfg.get("backend", "auto") != "cpu":
        beyond = [r for r in radii(cfg) if r > CPF_MAX_RADIUS]
        if beyond:
            raise ValueError(
                f"cpf2013_radii has {beyond}, beyond the GPU CPF's largest radius "
                f"{CPF_MAX_RADIUS}: a figure would mix GPU and CPU cells (set backend: cpu "
                "to run them all on the CPU)"
            )
    known = ancestor_methods()
    for key in ("cpf2013_baselines", "cpf2013_timing_baselines"):
        unknown = [m for m in cfg[key] if m not in known or m == "cellular"]
        if unknown:
            raise ValueError(
                f"{key} has {unknown}: each must be a global resampler of the "
                "registry that returns ancestors (pfresample.methods(), not 'cellular')"
            )
    _check_campaign(cfg)


# The paired CPU campaign (target cpf2013_campaign; its tables: campaign.py): its cells,
# expanded from the config's groups here, where the config is checked.
CAMPAIGN_CPF_DEFAULTS = {"precision": "float64", "neighbourhood": "search", "fast_math": False}


def campaign_key(cell: Mapping) -> str:
    """The name of a campaign cell (its artifact's file name without .npz)."""
    if cell["kind"] == "sir":
        return f"sir-{cell['model']}-n{cell['n']}-{cell['method']}-{cell['setup']}"
    fast = "-fast" if cell["fast_math"] else ""
    return (f"cpf-{cell['model']}-n{cell['n']}-r{cell['radius']}-{cell['setup']}-"
            f"{cell['precision']}-{cell['neighbourhood']}{fast}")  # fmt: skip


def campaign_cells(cfg: Mapping) -> dict[str, dict]:
    """The campaign's cells in the config's order, by :func:`campaign_key` (duplicates once)."""
    out = {}
    default_setup = str(cfg["cpf2013_growth_setup"])
    for group in cfg.get("cpf2013_campaign") or []:
        base = {"model": group["model"], "setup": str(group.get("setup", default_setup))}
        if "radius" in group:
            base |= {"kind": "cpf"} | {k: group.get(k, v) for k, v in CAMPAIGN_CPF_DEFAULTS.items()}
            specs = [base | {"n": int(n), "radius": int(r)}
                     for n in group["n"] for r in group["radius"]]  # fmt: skip
        else:
            specs = [base | {"kind": "sir", "n": int(n), "method": str(m)}
                     for n in group["n"] for m in group["method"]]  # fmt: skip
        for spec in specs:
            out.setdefault(campaign_key(spec), spec)
    return out


def _check_campaign(cfg: Mapping) -> None:
    """The campaign's cells (cpf2013_campaign), a ValueError naming the key."""
    known = ancestor_methods()
    for name, c in campaign_cells(cfg).items():
        if c["setup"] not in SETUPS:
            raise ValueError(f"cpf2013_campaign: {name} has setup {c['setup']!r}, "
                             f"not one of {SETUPS}")  # fmt: skip
        if c["kind"] == "sir":
            if c["method"] not in known or c["method"] == "cellular":
                raise ValueError(f"cpf2013_campaign: {name}'s method must be a global "
                                 "resampler of the registry that returns ancestors")  # fmt: skip
            continue
        if not 1 <= c["radius"] <= c["n"] - 1:
            raise ValueError(f"cpf2013_campaign: {name} needs 1 <= radius <= N - 1")
        parse_kernel(f"{c['precision']}-{c['neighbourhood']}")


# --- what scripts/compare_results.py leaves out (pipeline.compare) ---
# The columns of the study's tables that are measurements: kernel and whole-run
# times, their quantiles and ratios, and the speed-ups built from them.
MEASURED_COLUMNS = (
    "sir_step_us", "sir_wall_ms", "cpf_step_us", "cpf_wall_ms", "step_ratio", "wall_ratio",
    "step_us", "step_us_median", "step_us_q25", "step_us_q75",
    "wall_ms", "wall_ms_q25", "wall_ms_q75",
    "fast_math_ratio", "fast_math_ratio_low", "fast_math_ratio_high",
    "gpu_s", "gpu_s_min", "gpu_s_max", "doc_cpu_s", "doc_cpu_s_min", "doc_cpu_s_max",
    "best_cpu_s", "best_cpu_s_min", "best_cpu_s_max",
    "over_document", "over_document_low", "over_document_high",
    "over_best_cpu", "over_best_cpu_low", "over_best_cpu_high",
    "time_ms", "kernel_us",
    "cpu_wall_s", "cpu_wall_s_min", "cpu_wall_s_max", "cpu_speedup",
    "gpu_wall_ms", "gpu_wall_ms_q25", "gpu_wall_ms_q75", "speedup", "median_ratio", "sir_ratio",
)  # fmt: skip


def compare_rules(cfg: Mapping) -> TableRules:
    """The study's rules for comparing two results trees: no row or value of
    its tables is picked by a measurement, so its measured columns alone."""
    return TableRules(measured=MEASURED_COLUMNS)
