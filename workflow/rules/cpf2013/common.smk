"""Helpers of the Gelencsér-Horváth et al. (2013) rules (cells.smk, outputs.smk): the
artifact paths, the cells each figure and table reads, the memory of each job. No rules
live here; the grid and its checks are Python (pfresample_studies.cpf2013.catalog)."""

import math

from pfresample_studies.cpf2013 import campaign as cpf2013_campaign
from pfresample_studies.cpf2013 import catalog as cpf2013_catalog
from pfresample_studies.cpf2013 import gpu_runs as cpf2013_gpu_runs
from pfresample_studies.cpf2013 import gpu_tables as cpf2013_gpu_tables
from pfresample_studies.cpf2013 import targets as cpf2013_targets

CPF2013_MODELS = tuple(cpf2013_targets.MODELS)


def cpf2013_trajectories(model) -> str:
    return f"results/cpf2013/trajectories/{model}.npz"


def cpf2013_cpf_cell(model, n, r) -> str:
    return f"results/cpf2013/cpf/{model}/n{n}_r{r}.npz"


def cpf2013_sir_cell(model, method, n) -> str:
    return f"results/cpf2013/sir/{model}/{method}/n{n}.npz"


def cpf2013_timing_cell(model, n) -> str:
    return f"results/cpf2013/timing/{model}/n{n}.npz"


def cpf2013_best_cpu_cell(model, n) -> str:
    return f"results/cpf2013/best_cpu/{model}/n{n}.npz"


def cpf2013_best_cpu_cells() -> list[str]:
    """The best-CPU cells: one per N of the timing grid (Figs 11-12), every radius."""
    model = cpf2013_catalog.TIMING_MODEL
    return [cpf2013_best_cpu_cell(model, n) for n in cpf2013_catalog.timing_n_grid(config)]


def cpf2013_cpf_cells(model) -> list[str]:
    """Every configuration (N, r) of ``model`` (the growth model's large N too)."""
    return [
        cpf2013_cpf_cell(model, n, r)
        for n, r in cpf2013_catalog.model_configurations(config, model)
    ]


def cpf2013_sir_cells(model) -> list[str]:
    """Every baseline method at every N of ``model``."""
    return [
        cpf2013_sir_cell(model, method, n)
        for method in config["cpf2013_baselines"]
        for n in cpf2013_catalog.n_grid(config)
    ]


def cpf2013_timing_cells() -> list[str]:
    model = cpf2013_catalog.TIMING_MODEL
    return [cpf2013_timing_cell(model, n) for n in cpf2013_catalog.timing_n_grid(config)]


def cpf2013_table_inputs(figure) -> dict[str, list[str]]:
    """The artifacts one figure's table reads, by role."""
    if figure in cpf2013_catalog.TRAJECTORY_FIGURES:
        model = cpf2013_catalog.TRAJECTORY_FIGURES[figure]
        n, r = cpf2013_catalog.trajectory_configuration(config)
        return {"trajectories": [cpf2013_trajectories(model)],
                "cpf": [cpf2013_cpf_cell(model, n, r)], "sir": []}  # fmt: skip
    if figure in cpf2013_catalog.ERROR_FIGURES:
        model = cpf2013_catalog.ERROR_FIGURES[figure]
        return {"trajectories": [], "cpf": cpf2013_cpf_cells(model),
                "sir": cpf2013_sir_cells(model)}  # fmt: skip
    return {"trajectories": [], "cpf": cpf2013_timing_cells(), "sir": []}


def cpf2013_table1_cells() -> list[str]:
    return [
        cpf2013_cpf_cell(c["model"], c["n"], c["radius"])
        for c in cpf2013_catalog.table1_configurations(config)
    ]


def cpf2013_outputs() -> list[str]:
    """The study's figures (PNG, PDF) and tables (CSV; Table 1 also Markdown)."""
    out = []
    for figure in cpf2013_catalog.FIGURES:
        out.append(f"results/tables/cpf2013/{figure}.csv")
        out += [f"results/figures/cpf2013/{figure}.{ext}" for ext in ("png", "pdf")]
    out += ["results/tables/cpf2013/table1.csv", "results/tables/cpf2013/table1.md"]
    out.append("results/tables/cpf2013/baselines.csv")
    out += ["results/tables/cpf2013/speedup.csv", "results/tables/cpf2013/speedup.md"]
    out += ["results/tables/cpf2013/paired.csv", "results/tables/cpf2013/claims.csv"]
    return out


def cpf2013_artifacts() -> set[str]:
    """Every .npz artifact the study's target reads."""
    out = {cpf2013_trajectories(model) for model in CPF2013_MODELS}
    for model in CPF2013_MODELS:
        out |= set(cpf2013_cpf_cells(model)) | set(cpf2013_sir_cells(model))
    return out | set(cpf2013_timing_cells()) | set(cpf2013_best_cpu_cells())


def cpf2013_campaign_trajectories(model) -> str:
    return f"results/cpf2013/campaign/trajectories/{model}.npz"


def cpf2013_campaign_cell(name) -> str:
    return f"results/cpf2013/campaign/{name}.npz"


def cpf2013_campaign_cells() -> list[str]:
    """The paired campaign's cells (cpf2013_campaign), in the config's order."""
    return [cpf2013_campaign_cell(name) for name in cpf2013_campaign.cells(config)]


def cpf2013_campaign_tables() -> dict[str, str]:
    """The paired campaign's tables (target cpf2013_campaign), by name; runs gzipped."""
    return {t: f"results/tables/cpf2013/campaign/{t}.csv" + (".gz" if t == "runs" else "")
            for t in cpf2013_campaign.TABLES}  # fmt: skip


def cpf2013_mem_mb(n, model) -> int:
    """Memory of a cell job at N: the trajectory set (1,000 x 101 or 100 x 25 x 4
    float64, under 1 MiB), a few float64 arrays of N states and log-weights and the
    CPU filter's temporaries, and CuPy's context on the GPU."""
    rows = 4 if model == "bot" else 1
    return 768 + math.ceil(24 * rows * 8 * int(n) / 2**20)


def cpf2013_cell_params() -> dict:
    return {"seed": config["seed"], "backend": config["backend"],
            "setup": cpf2013_catalog.setup(config)}  # fmt: skip


# The GPU experiment (gpu.smk): its files, the committed run it draws from.
CPF2013_GPU_SCRIPT = "../../../scripts/cpf2013/gpu.py"
CPF2013_GPU_RUNS = "results/cpf2013/gpu_runs"


def cpf2013_gpu_run_files() -> list[str]:
    return [f"{CPF2013_GPU_RUNS}/{name}" for name in cpf2013_gpu_runs.NAMES]


def cpf2013_gpu_committed() -> list[str]:
    """The newest committed GPU run's marker (a list of one path; none where evidence/
    holds none, and the job says so)."""
    found = newest_evidence(cpf2013_gpu_tables.GPU_RUN)
    return [str(found.path)] if found is not None else []


def cpf2013_gpu_outputs() -> list[str]:
    out = [f"results/tables/cpf2013/gpu/{t}.csv" for t in cpf2013_gpu_tables.TABLES]
    return out + [
        f"results/figures/cpf2013/gpu/{f}.{ext}"
        for f in cpf2013_catalog.FIGURES
        for ext in ("png", "pdf")
    ]
