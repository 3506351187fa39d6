"""What the Güldaş (2015) configuration means: the grids of §4.1 from the
keys of config/studies/guldas2015.yaml, the cross-key checks, and which
cells each figure reads. The keys are documented in config/README.md."""

from __future__ import annotations

from collections.abc import Mapping

from ..pipeline.compare import Picked, TableRules
from .targets import Target, gaussian, poisson

NUMBER_LIST_KEYS = (
    "guldas2015_histogram_log2_n",
    "guldas2015_sweep_log2_radix",
    "guldas2015_smcem_log2_n",
    "guldas2015_gpu_log32_log2_n",
    "guldas2015_gpu_smcem_log2_n",
)

# Figs 4.5-4.8: (particle-weight set, method family); panels a / b are float32 / float64.
SPEED_FIGURES = {
    "fig4_5": ("gaussian", "multinomial"),
    "fig4_6": ("poisson", "multinomial"),
    "fig4_7": ("gaussian", "systematic"),
    "fig4_8": ("poisson", "systematic"),
}
# Figs 4.9-4.10: the filter kind of each (filter_experiments.FILTER_KINDS).
FILTER_FIGURES = {"fig4_9": "bootstrap", "fig4_10": "adaptive"}
SINGLE_STEP_FIGURES = ("fig4_1", "fig4_2", "fig4_3", "fig4_4", *SPEED_FIGURES)  # §4.1
FILTER_STUDY_FIGURES = (*FILTER_FIGURES, "fig4_11", "fig4_12")  # §4.2-4.3
FIGURES = SINGLE_STEP_FIGURES + FILTER_STUDY_FIGURES
TITLES = {
    "fig4_1": "Güldaş (2015) Fig 4.1: radix-2 errors scaled by √(N/log₂N)",
    "fig4_2": "Güldaş (2015) Fig 4.2: radix-2 LMSE × N/log₂N",
    "fig4_3": "Güldaş (2015) Fig 4.3: fixed radix, variable depth",
    "fig4_4": "Güldaş (2015) Fig 4.4: mixed radix, depth 2",
    "fig4_5": "Güldaş (2015) Fig 4.5: standard vs butterfly multinomial, Gaussian g",
    "fig4_6": "Güldaş (2015) Fig 4.6: standard vs butterfly multinomial, Poisson g",
    "fig4_7": "Güldaş (2015) Fig 4.7: standard vs butterfly systematic, Gaussian g",
    "fig4_8": "Güldaş (2015) Fig 4.8: standard vs butterfly systematic, Poisson g",
    "fig4_9": "Güldaş (2015) Fig 4.9: bootstrap filters, multinomial vs butterfly",
    "fig4_10": "Güldaş (2015) Fig 4.10: adaptive-resampling filters, multinomial vs butterfly",
    "fig4_11": "Güldaş (2015) Fig 4.11: ESS and interaction level of the adaptive filters",
    "fig4_12": "Güldaş (2015) Fig 4.12: SMC-EM, multinomial vs one-stage butterfly",
}


def targets(cfg: Mapping) -> dict[str, Target]:
    """The particle-weight sets by role: §4.1.2-4.1.3 take x ~ U[-2σ, 2σ],
    §4.1.4 x ~ U[-σ, σ] (Gaussian) and x ~ Poisson(λ)."""
    sigma, lam = cfg["guldas2015_sigma"], cfg["guldas2015_poisson_lambda"]
    return {
        "theory": gaussian(2 * sigma, sigma),
        "gaussian": gaussian(sigma, sigma),
        "poisson": poisson(lam),
    }


def radix2_n(cfg: Mapping) -> list[int]:
    """Figs 4.1-4.2: N = 2, 4, ..., 2^guldas2015_radix2_log2_n_max."""
    return [2**e for e in range(1, cfg["guldas2015_radix2_log2_n_max"] + 1)]


def histogram_n(cfg: Mapping) -> list[int]:
    return [2**e for e in cfg["guldas2015_histogram_log2_n"]]


def sweep_n(cfg: Mapping) -> int:
    return 2 ** cfg["guldas2015_sweep_log2_n"]


def depth_sweep(cfg: Mapping) -> list[tuple[int, ...]]:
    """Fig 4.3: (r, ..., r) of depth D with r^D = N, for each configured r."""
    e = cfg["guldas2015_sweep_log2_n"]
    return [(2**k,) * (e // k) for k in cfg["guldas2015_sweep_log2_radix"]]


def mixed_sweep(cfg: Mapping) -> list[tuple[int, ...]]:
    """Fig 4.4: (2^d, 2^(D-d)) for d = 1 ... D - 1, N = 2^D."""
    e = cfg["guldas2015_sweep_log2_n"]
    return [(2**d, 2 ** (e - d)) for d in range(1, e)]


def sweep_radices(cfg: Mapping) -> list[tuple[int, ...]]:
    """Every radix sequence of Figs 4.3-4.4, each once, in figure order."""
    out = []
    for radix in depth_sweep(cfg) + mixed_sweep(cfg):
        if radix not in out:
            out.append(radix)
    return out


def speed_n(cfg: Mapping) -> list[int]:
    lo, hi = cfg["guldas2015_speed_log2_n_min"], cfg["guldas2015_speed_log2_n_max"]
    return [2**e for e in range(lo, hi + 1)]


def filter_n(cfg: Mapping) -> list[int]:
    """Figs 4.9-4.10: N = 2^guldas2015_filter_log2_n_min ... 2^..._max."""
    lo, hi = cfg["guldas2015_filter_log2_n_min"], cfg["guldas2015_filter_log2_n_max"]
    return [2**e for e in range(lo, hi + 1)]


def interaction_n(cfg: Mapping) -> int:
    return 2 ** cfg["guldas2015_interaction_log2_n"]


def smcem_n(cfg: Mapping) -> list[int]:
    return [2**e for e in cfg["guldas2015_smcem_log2_n"]]


def log32_exact_n(cfg: Mapping) -> list[int]:
    """The float32-stability experiment's exact part: N = 2^min ... 2^exact_max."""
    lo, hi = cfg["guldas2015_log32_log2_n_min"], cfg["guldas2015_log32_exact_log2_n_max"]
    return [2**e for e in range(lo, hi + 1)]


def log32_draws_n(cfg: Mapping) -> list[int]:
    """The float32-stability experiment's draws: N = 2^min ... 2^draws_max."""
    lo, hi = cfg["guldas2015_log32_log2_n_min"], cfg["guldas2015_log32_draws_log2_n_max"]
    return [2**e for e in range(lo, hi + 1)]


def log32_exact_sets(cfg: Mapping, n: int) -> int:
    """Particle sets of the exact part at N (log32.exact_sets)."""
    from .log32 import exact_sets

    return exact_sets(n, cfg["guldas2015_log32_exact_weights"],
                      cfg["guldas2015_log32_exact_sets_min"],
                      cfg["guldas2015_log32_exact_sets_max"])  # fmt: skip


LOG32_TABLES = ("exact", "draws")
EXACT_EM_TABLES = ("ml_points", "exact_em", "exact_em_convergence")


def exact_em_sequences(cfg: Mapping) -> list[int]:
    """The sequences of the exact EM runs: Fig 4.12's, 0 ... M - 1."""
    return list(range(cfg["guldas2015_smcem_sequences"]))


def check_config(cfg: Mapping) -> None:
    """Checks across keys, a ValueError naming the keys (the schema checks each key alone)."""
    top = cfg["guldas2015_radix2_log2_n_max"]
    outside = [e for e in cfg["guldas2015_histogram_log2_n"] if not 1 <= e <= top]
    if outside:
        raise ValueError(
            f"guldas2015_histogram_log2_n has {outside}, outside 1 ... "
            f"guldas2015_radix2_log2_n_max = {top}: the histograms show N of the radix-2 grid"
        )
    e = cfg["guldas2015_sweep_log2_n"]
    bad = [k for k in cfg["guldas2015_sweep_log2_radix"] if e % k]
    if bad:
        raise ValueError(
            f"guldas2015_sweep_log2_radix has {bad}, which do not divide "
            f"guldas2015_sweep_log2_n = {e}: Fig 4.3 needs r^D = N = 2^{e}"
        )
    if e < 2:
        raise ValueError(
            f"guldas2015_sweep_log2_n must be >= 2 (Fig 4.4's (2^d, 2^(D-d))), got {e}"
        )
    lo = cfg["guldas2015_log32_log2_n_min"]
    for part in ("exact", "draws"):
        hi = cfg[f"guldas2015_log32_{part}_log2_n_max"]
        if lo > hi:
            raise ValueError(f"guldas2015_log32_log2_n_min = {lo} exceeds "
                             f"guldas2015_log32_{part}_log2_n_max = {hi}")  # fmt: skip
    fewest, most = cfg["guldas2015_log32_exact_sets_min"], cfg["guldas2015_log32_exact_sets_max"]
    if fewest > most:
        raise ValueError(f"guldas2015_log32_exact_sets_min = {fewest} exceeds "
                         f"guldas2015_log32_exact_sets_max = {most}")  # fmt: skip
    for grid in ("speed", "filter"):
        lo, hi = cfg[f"guldas2015_{grid}_log2_n_min"], cfg[f"guldas2015_{grid}_log2_n_max"]
        if lo > hi:
            raise ValueError(
                f"guldas2015_{grid}_log2_n_min = {lo} exceeds guldas2015_{grid}_log2_n_max = {hi}"
            )


# --- what scripts/compare_results.py leaves out (pipeline.compare) ---
# The columns of the study's tables that are measurements: times, error x time,
# the fastest radix's margin and near-ties, and which candidate was fastest.
MEASURED_COLUMNS = (
    "time_ms", "lmse_x_time", "mse_x_time", "radix_margin", "radix_tie_factors",
    "time_per_iteration_ms", "chosen",
    "butterfly_time_ms", "ms_butterfly", "ms_multinomial", "time_float32_ms", "time_log32_ms",
    "time_ratio_log32_float32", "butterfly_speed_over_float32", "butterfly_speed_over_log32",
    "butterfly_lmse_time_over_log32", "speed_butterfly_min", "speed_butterfly_median",
    "speed_butterfly_max",
)  # fmt: skip
# Figs 4.5-4.8 (tables.speed_table): the butterfly's radix is the fastest candidate
# of radix_timings, a timing; its depth, first-order factor and errors follow it.
RADIX_DEPENDENT_COLUMNS = (
    "depth", "first_order_factor",
    "lmse", "lmse_ci", "lmse_q10", "lmse_q90", "mse", "mse_ci", "mse_q10", "mse_q90",
)  # fmt: skip
# radix_timings (tables.candidates_table) lists the candidates fastest first.
RADIX_TIMINGS_KEYS = ("target", "n", "method", "precision", "radix")


def compare_rules(cfg: Mapping) -> TableRules:
    """The study's rules for comparing two results trees: its measured columns;
    in Figs 4.5-4.8 a row's errors are compared where both trees picked the
    same radix; radix_timings' rows compared in the order of their keys."""
    picked = Picked("radix", RADIX_DEPENDENT_COLUMNS)
    return TableRules(
        measured=MEASURED_COLUMNS,
        order={"radix_timings": RADIX_TIMINGS_KEYS},
        picked=dict.fromkeys(SPEED_FIGURES, picked),
    )
