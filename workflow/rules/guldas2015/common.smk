"""Helpers of the Güldaş (2015) rules (single_step.smk, filters.smk): the artifact paths,
the cells each figure reads, the memory of each job. No rules live here; the
grids and their checks are Python (pfresample_studies.guldas2015.catalog)."""

import os

from pfresample_studies.guldas2015 import catalog as guldas2015_catalog
from pfresample_studies.guldas2015 import gpu_runs as guldas2015_gpu_runs
from pfresample_studies.guldas2015 import gpu_tables as guldas2015_gpu_tables


def guldas2015_radix2_cell(n) -> str:
    return f"results/guldas2015/radix2/n{n}.npz"


def guldas2015_sweep_cell() -> str:
    return f"results/guldas2015/sweep/n{guldas2015_catalog.sweep_n(config)}.npz"


def guldas2015_speed_cell(target, n) -> str:
    return f"results/guldas2015/speed/{target}/n{n}.npz"


def guldas2015_speed_cells(target) -> list[str]:
    return [guldas2015_speed_cell(target, n) for n in guldas2015_catalog.speed_n(config)]


def guldas2015_filter_cell(kind, n) -> str:
    return f"results/guldas2015/filters/{kind}/n{n}.npz"


def guldas2015_interaction_cell() -> str:
    return f"results/guldas2015/interaction/n{guldas2015_catalog.interaction_n(config)}.npz"


def guldas2015_smcem_cell(n) -> str:
    return f"results/guldas2015/smcem/n{n}.npz"


GULDAS2015_SMCEM_REFERENCE = "results/guldas2015/smcem/reference.npz"


def guldas2015_log32_cell(part, target, n) -> str:
    return f"results/guldas2015/log32/{part}/{target}/n{n}.npz"


def guldas2015_log32_cells(part) -> list[str]:
    """The float32-stability cells of ``part`` (exact, draws), set by set (then N): the
    order of its table's rows."""
    grid = guldas2015_catalog.log32_exact_n if part == "exact" else guldas2015_catalog.log32_draws_n
    return [guldas2015_log32_cell(part, t, n) for t in ("gaussian", "poisson") for n in grid(config)]


def guldas2015_log32_tables() -> list[str]:
    return [f"results/tables/guldas2015/log32/{t}.csv" for t in guldas2015_catalog.LOG32_TABLES]


def guldas2015_exact_em_cell(m) -> str:
    return f"results/guldas2015/exact_em/s{m}.npz"


def guldas2015_exact_em_cells() -> list[str]:
    return [guldas2015_exact_em_cell(m) for m in guldas2015_catalog.exact_em_sequences(config)]


def guldas2015_exact_em_tables() -> list[str]:
    return [
        f"results/tables/guldas2015/exact_em/{t}.csv" for t in guldas2015_catalog.EXACT_EM_TABLES
    ]


def guldas2015_filter_inputs(plot) -> list[str]:
    """The cells of the filter figures (Figs 4.9-4.12)."""
    if plot in guldas2015_catalog.FILTER_FIGURES:
        kind = guldas2015_catalog.FILTER_FIGURES[plot]
        return [guldas2015_filter_cell(kind, n) for n in guldas2015_catalog.filter_n(config)]
    if plot == "fig4_11":
        return [guldas2015_interaction_cell()]
    cells = [guldas2015_smcem_cell(n) for n in guldas2015_catalog.smcem_n(config)]
    return [GULDAS2015_SMCEM_REFERENCE, *cells]


def guldas2015_table_inputs(plot) -> list[str]:
    """The cells one figure's table reads."""
    if plot in guldas2015_catalog.FILTER_STUDY_FIGURES:
        return guldas2015_filter_inputs(plot)
    if plot == "fig4_1":
        return [guldas2015_radix2_cell(n) for n in guldas2015_catalog.histogram_n(config)]
    if plot == "fig4_2":
        return [guldas2015_radix2_cell(n) for n in guldas2015_catalog.radix2_n(config)]
    if plot in ("fig4_3", "fig4_4"):
        return [guldas2015_sweep_cell()]
    return guldas2015_speed_cells(guldas2015_catalog.SPEED_FIGURES[plot][0])


def guldas2015_figure_outputs(plots) -> list[str]:
    """The figures (PNG, PDF) and tidy tables (CSV) of ``plots``."""
    out = []
    for plot in plots:
        out.append(f"results/tables/guldas2015/{plot}.csv")
        out += [f"results/figures/guldas2015/{plot}.{ext}" for ext in ("png", "pdf")]
    return out


def guldas2015_filters_in_study() -> bool:
    """Whether the study's target `guldas2015` (and `all`) builds Figs 4.9-4.12: at
    quick scale, or where the filters run on a GPU. At thesis scale on a CPU their
    cells take hours: target `guldas2015_filters` builds them on purpose."""
    from pfresample.backend import cuda_device

    return SCALE == "quick" or (config["backend"] != "cpu" and cuda_device() is not None)


def guldas2015_filter_outputs() -> list[str]:
    """Figs 4.9-4.12 and EM's convergence (its exact EM needs Fig 4.12's reference)."""
    out = guldas2015_figure_outputs(guldas2015_catalog.FILTER_STUDY_FIGURES)
    return out + guldas2015_exact_em_tables()


def guldas2015_outputs() -> list[str]:
    """The study's figures and tables: Figs 4.1-4.8 and the float32-stability tables, and
    Figs 4.9-4.12 with EM's convergence where guldas2015_filters_in_study()."""
    out = ["results/tables/guldas2015/radix_timings.csv"]
    out += guldas2015_figure_outputs(guldas2015_catalog.SINGLE_STEP_FIGURES)
    out += guldas2015_log32_tables()
    if guldas2015_filters_in_study():
        out += guldas2015_filter_outputs()
    return out


def guldas2015_log32_artifacts() -> set[str]:
    return set(guldas2015_log32_cells("exact")) | set(guldas2015_log32_cells("draws"))


def guldas2015_exact_em_artifacts() -> set[str]:
    return {GULDAS2015_SMCEM_REFERENCE, *guldas2015_exact_em_cells()}


def guldas2015_filter_artifacts() -> set[str]:
    out = guldas2015_exact_em_artifacts()
    for plot in guldas2015_catalog.FILTER_STUDY_FIGURES:
        out |= set(guldas2015_filter_inputs(plot))
    return out


def guldas2015_artifacts() -> set[str]:
    """Every .npz artifact the study's target reads."""
    out = {guldas2015_radix2_cell(n) for n in guldas2015_catalog.radix2_n(config)}
    out.add(guldas2015_sweep_cell())
    for target in ("gaussian", "poisson"):
        out |= set(guldas2015_speed_cells(target))
    out |= guldas2015_log32_artifacts()
    if guldas2015_filters_in_study():
        out |= guldas2015_filter_artifacts()
    return out


def guldas2015_mem_mb(n, arrays=16) -> int:
    """Memory of a cell job at N: a few float64 arrays of length N (particles,
    log-weights, weights, ancestors and the resampler's temporaries)."""
    return 512 + math.ceil(arrays * 8 * int(n) / 2**20)


def guldas2015_cell_params() -> dict:
    return {"seed": config["seed"], "backend": config["backend"]}


# The GPU experiment (gpu.smk): its files, the committed run it draws from.
GULDAS2015_GPU_SCRIPT = "../../../scripts/guldas2015/gpu.py"
GULDAS2015_GPU_RUNS = "results/guldas2015/gpu_runs"


def guldas2015_gpu_run_files() -> list[str]:
    return [f"{GULDAS2015_GPU_RUNS}/{name}" for name in guldas2015_gpu_runs.names(config)]


def guldas2015_gpu_committed(relative) -> list[str]:
    """The newest committed file ``relative`` (a list of one path; none where evidence/
    holds none, and the job says so)."""
    found = newest_evidence(relative)
    return [str(found.path)] if found is not None else []


def guldas2015_gpu_cpu_files() -> dict[str, list[str]]:
    """The committed CPU run's exact ratios and, in the same folder, its SMC-EM reference
    cell (the GPU's SMC-EM runs on it)."""
    exact = guldas2015_gpu_committed(guldas2015_gpu_tables.CPU_EXACT)
    if not exact:
        return {"exact": [], "reference": []}
    folder = exact[0][: -len(guldas2015_gpu_tables.CPU_EXACT)]
    reference = os.path.join(folder, guldas2015_gpu_tables.CPU_REFERENCE)
    return {"exact": exact, "reference": [reference] if os.path.isfile(reference) else []}


def guldas2015_gpu_tables_outputs() -> list[str]:
    out = [f"results/tables/guldas2015/gpu/{t}.csv" for t in guldas2015_gpu_tables.TABLES]
    return out + [f"results/tables/guldas2015/gpu/{t}.md" for t in ("log32", "smcem")]
