"""Helpers of the Moazeni (2013) rules (cells.smk, outputs.smk, gpu.smk): the artifact paths and
the outputs of each chapter. No rules live here; the grid and its checks are Python
(pfresample_studies.moazeni2013.catalog)."""

from pfresample_studies.moazeni2013 import catalog as moazeni2013_catalog
from pfresample_studies.moazeni2013 import fair_peers as moazeni2013_fair_peers
from pfresample_studies.moazeni2013 import fig63_end_to_end as moazeni2013_fig63
from pfresample_studies.moazeni2013 import hashtable_workloads as moazeni2013_workloads
from pfresample_studies.moazeni2013 import real_instances as moazeni2013_real_instances


def moazeni2013_ch3_order_cell(order) -> str:
    return f"results/moazeni2013/ch3/cpu/{order}.npz"


def moazeni2013_ch3_native_cell() -> str:
    return "results/moazeni2013/ch3/native.npz"


def moazeni2013_ch3_best_cpu_cell() -> str:
    return "results/moazeni2013/ch3/best_cpu.npz"


def moazeni2013_ch3_gpu_cells() -> dict[str, list[str]]:
    """The GPU cells (none where the cells have no GPU, CELL_GPUS): the orders'
    and Fig 12's."""
    if not CELL_GPUS:
        return {"gpu": [], "fig12": []}
    return {"gpu": ["results/moazeni2013/ch3/gpu.npz"],
            "fig12": ["results/moazeni2013/ch3/fig12.npz"]}  # fmt: skip


def moazeni2013_ch3_outputs() -> list[str]:
    """Chapter 3's tables (CSV) and figures (PNG, PDF)."""
    return moazeni2013_outputs(moazeni2013_catalog.CH3_TABLES, moazeni2013_catalog.CH3_FIGURES)


def moazeni2013_ch4_cells() -> dict[str, list[str]]:
    """Chapter 4's cells: the CPU runs and the best CPU code always, the GPU runs where
    the cells have a GPU."""
    return {"cpu": ["results/moazeni2013/ch4/cpu.npz"],
            "best_cpu": ["results/moazeni2013/ch4/best_cpu.npz"],
            "gpu": ["results/moazeni2013/ch4/gpu.npz"] if CELL_GPUS else []}  # fmt: skip


def moazeni2013_ch4_params() -> dict:
    """The keyword arguments of hashtable_workloads.run_cell that the config sets."""
    return {"preload": config["moazeni2013_ch4_preload"],
            "repeats": config["moazeni2013_ch4_repeats"], "seed": config["seed"]}  # fmt: skip


def moazeni2013_ch4_outputs() -> list[str]:
    """Chapter 4's tables (CSV) and figures (PNG, PDF)."""
    return moazeni2013_outputs(moazeni2013_catalog.CH4_TABLES, moazeni2013_catalog.CH4_FIGURES)


def moazeni2013_ch56_cells() -> dict[str, list[str]]:
    """Chapters 5 and 6's cells: the CPU ones always, the GPU ones where the cells have a GPU."""
    gpu = bool(CELL_GPUS)
    return {"cpu": ["results/moazeni2013/ch6/cpu.npz"],
            "native": ["results/moazeni2013/ch6/native.npz"],
            "peer": ["results/moazeni2013/ch6/peer.npz"],
            "best_cpu": ["results/moazeni2013/ch6/best_cpu.npz"],
            "gpu": ["results/moazeni2013/ch6/gpu.npz"] if gpu else [],
            "ch5": ["results/moazeni2013/ch5/gpu.npz"] if gpu else []}  # fmt: skip


def moazeni2013_ch7_cells() -> dict[str, list[str]]:
    """Chapter 7's cells: the search (on the GPU where the cells have one, else the
    CPU) always, the timing where the cells have a GPU."""
    return {"search": ["results/moazeni2013/ch7/search.npz"],
            "best_cpu": ["results/moazeni2013/ch7/best_cpu.npz"],
            "timing": ["results/moazeni2013/ch7/timing.npz"] if CELL_GPUS else [],
            "choices": ["results/moazeni2013/ch7/choices.npz"] if CELL_GPUS else []}  # fmt: skip


def moazeni2013_evidence(figures) -> dict[str, str]:
    """figure -> the committed table of its GPU rows drawn beside this machine's, for
    the figures of ``figures`` with GPU rows, where the cells have no GPU."""
    tables = moazeni2013_catalog.EVIDENCE_TABLES
    return committed_tables({f: tables[f] for f in figures if f in tables})


def moazeni2013_outputs(tables, figures) -> list[str]:
    """A chapter's tables (CSV) and figures (CSV, PNG, PDF)."""
    out = [f"results/tables/moazeni2013/{t}.csv" for t in tables]
    out += [f"results/tables/moazeni2013/{t}.md" for t in tables
            if t in moazeni2013_catalog.SPEEDUP_TABLES]
    for figure in figures:
        out.append(f"results/tables/moazeni2013/{figure}.csv")
        out += [f"results/figures/moazeni2013/{figure}.{ext}" for ext in ("png", "pdf")]
    return out


def moazeni2013_artifacts() -> set[str]:
    """Every .npz artifact the study's target reads."""
    cells = {moazeni2013_ch3_order_cell(o) for o in moazeni2013_catalog.ORDERS}
    gpu = {p for paths in moazeni2013_ch3_gpu_cells().values() for p in paths}
    ch4 = {p for paths in moazeni2013_ch4_cells().values() for p in paths}
    ch56 = {p for paths in moazeni2013_ch56_cells().values() for p in paths}
    ch7 = {p for paths in moazeni2013_ch7_cells().values() for p in paths}
    ch3 = {moazeni2013_ch3_native_cell(), moazeni2013_ch3_best_cpu_cell()}
    return cells | ch3 | gpu | ch4 | ch56 | ch7


# The one-host experiments (gpu.smk): each module's files, the committed run it draws from.
MOAZENI2013_GPU_SCRIPT = "../../../scripts/moazeni2013/gpu_targets.py"
MOAZENI2013_GPU_RUNS = "results/moazeni2013/gpu_runs"


def moazeni2013_gpu_run_files(experiment, runs_module) -> list[str]:
    return [f"{MOAZENI2013_GPU_RUNS}/{experiment}/{name}" for name in runs_module.NAMES]


def moazeni2013_gpu_tables(experiment, runs_module) -> dict[str, str]:
    return {t: f"results/tables/moazeni2013/{experiment}/{t}.csv" for t in runs_module.TABLES}


def moazeni2013_gpu_committed(runs_module) -> list[str]:
    """The newest committed file of ``runs_module.MARKER`` (a list of one path; none where
    evidence/ holds none, and the job says so)."""
    found = newest_evidence(runs_module.MARKER)
    return [str(found.path)] if found is not None else []


MOAZENI2013_GPU_EXPERIMENTS = {
    "ch3_real": moazeni2013_real_instances,
    "ch7_fig63": moazeni2013_fig63,
    "ch4_peers": moazeni2013_fair_peers,
}


def moazeni2013_gpu_params(experiment, prefix) -> dict:
    runs_module = MOAZENI2013_GPU_EXPERIMENTS[experiment]
    return {
        "gpu": bool(CELL_GPUS),
        "cfg": {k: v for k, v in config.items() if k.startswith(prefix) or k == "seed"},
        "base": runs_module.BASE,
        "devices": GPU_DEVICES,
    }
