"""Helpers of the Dülger (2017) rules (resampling.smk, filter.smk): the
artifact paths, the target lists, the catalog's variants and the memory of
each job. No rules live here; the catalog's checks are Python
(pfresample_studies.dulger2017.catalog)."""


import math

from pfresample_studies.dulger2017 import best_cpu, catalog, filter_experiments, schedule

VARIANTS = catalog.variants(config)
LADDERS = catalog.ladders(VARIANTS)
SINGLE_VARIANTS = [name for name, v in VARIANTS.items() if v.ladder is None]


def n_grid() -> list[int]:
    """The numbers of particles of the experiment grid."""
    return [2**e for e in range(config["log2_n_min"], config["log2_n_max"] + 1)]


def weight_dataset(dist, n) -> str:
    return f"results/weights/{dist}/{n}.npz"


def fig2_3_weights() -> list[str]:
    """The weight datasets that Fig 2.3 draws from."""
    return [weight_dataset(d, config["fig2_3_n"]) for d in config["gamma_distributions"]]


def fig2_3_outputs() -> list[str]:
    return [f"results/figures/dulger2017/fig2_3.{ext}" for ext in ("png", "pdf")]


def uphill_ssd_tables() -> list[str]:
    return [f"results/tuning/uphill_ssd/{n}.npz" for n in n_grid()]


def cell_path(variant, dist) -> str:
    return f"results/resample/{variant}/{dist}.npz"


def variant_dists() -> dict[str, list[str]]:
    """Every distribution some figure needs of each single variant (a variant that
    no figure draws is left out): the cells of a `resample_jobs: per_variant` job."""
    out = {}
    for figure, spec in config["dulger2017_figures"].items():
        for v in catalog.figure_variants(VARIANTS, spec):
            if VARIANTS[v].ladder is None:
                out.setdefault(v, set()).update(figure_distributions(spec))
    return {v: sorted(dists) for v, dists in sorted(out.items())}


def variant_rule(variant) -> str:
    """The name of a variant's `resample_jobs: per_variant` rule (a rule name is a word)."""
    word = re.sub(r"\W", "_", variant)
    return f"resample_variant_{word}"


def figure_distributions(spec) -> list[str]:
    return catalog.figure_distributions(config, spec)


def figure_cells(figure) -> list[str]:
    """The resampling cells (variant x distribution) one figure or table needs."""
    spec = config["dulger2017_figures"][figure]
    variants = catalog.figure_variants(VARIANTS, spec)
    return [cell_path(v, d) for v in variants for d in figure_distributions(spec)]


def dulger2017_outputs(chapter) -> list[str]:
    """Tables (CSV) and figures (PNG, PDF) of one chapter of Dülger (2017)."""
    out = []
    for name in config["dulger2017_figures"]:
        if re.match(rf"(fig|table){chapter}_", name):
            out.append(f"results/tables/dulger2017/{name}.csv")
            out += [f"results/figures/dulger2017/{name}.{ext}" for ext in ("png", "pdf")]
    return out


def ssd_tables_for(variant_names) -> list[str]:
    """The Uphill SSD tables cells need: those of the N grid when one picks B by SSD."""
    needs = any(VARIANTS[v].needs_ssd_table() for v in variant_names)
    return uphill_ssd_tables() if needs else []


def cell_weights(wildcards) -> list[str]:
    return [weight_dataset(wildcards.dist, n) for n in n_grid()]


def weights_mem_mb(n: int) -> int:
    """Memory of a weight-dataset job whose largest N is ``n`` (it holds one N at a
    time): the float32 array plus generation temporaries."""
    return 256 + math.ceil((4 * config["sequences"] * n + 48 * n) / 2**20)


def ssd_mem_mb(n) -> int:
    """Memory of the SSD-table job at its largest N: a few float64 arrays of length N."""
    return 256 + math.ceil(64 * n / 2**20)


def cell_mem_mb(wildcards, rungs=1) -> int:
    """Memory of a cell job at its largest N: the weights, one chunk of draws
    per rung of a ladder (int32 ancestors), the temporaries of summarising one
    chunk on the CPU (about 36 bytes per ancestor: int64 indices and counts,
    float64 differences and squares) and a few float64 arrays of length N."""
    n = 2 ** config["log2_n_max"]
    chunk = max(n, config["draw_chunk_elements"])
    held = 4 * config["sequences"] * n + (36 + 4 * (rungs - 1)) * chunk + 64 * n * rungs
    return 512 + math.ceil(held / 2**20)


def cell_settings() -> dict:
    """Keyword arguments of experiments.CellSettings."""
    keys = ("draws", "seed", "backend", "timing_repeats", "timing_warmup")
    settings = {k: config[k] for k in keys}
    settings["chunk_elements"] = config["draw_chunk_elements"]
    settings["particle_summaries_max_n"] = config["particle_summaries_max_n"]
    return settings


# The first chapter whose figures the resampling cells draw (schedule: earlier
# chapters first).
RESAMPLING_CHAPTER = 5


def cell_band(on_gpu) -> int:
    """The priority band of a cell job (schedule): GPU cells before CPU cells."""
    return schedule.GPU if on_gpu else schedule.CPU


def resample_priority(variant_names) -> float:
    """Priority of a resampling cell or ladder job: its expected seconds."""
    seconds = max(schedule.resample_seconds(VARIANTS[v].method) for v in variant_names)
    return schedule.priority(seconds, cell_band(CELL_GPUS), RESAMPLING_CHAPTER)


def resampling_artifacts() -> set[str]:
    """Every .npz artifact the resampling targets read."""
    out = set(uphill_ssd_tables()) | set(fig2_3_weights())
    for figure, spec in config["dulger2017_figures"].items():
        out |= set(figure_cells(figure))
        out |= {weight_dataset(d, n) for d in figure_distributions(spec) for n in n_grid()}
    return out



# --- filter experiments (thesis §5.4, §6.9-6.10, chapter 7) ------------------


def filter_n_grid() -> list[int]:
    """The numbers of particles of the filter experiments."""
    return sorted(2**e for e in config["filter_log2_n"])


def trajectory_path(model) -> str:
    return f"results/trajectories/{model}.npz"


def filter_cell_path(model, variant, n) -> str:
    return f"results/filter/{model}/{variant}/n{n}.npz"


def filter_speedup_path(backend, model, variant, n) -> str:
    return f"results/filter_speedup/{backend}/{model}/{variant}/n{n}.npz"


def filter_table_cells(name) -> list[str]:
    """The filter cells (variant x N) of one filter table."""
    spec = config["dulger2017_filter_tables"][name]
    return [filter_cell_path(spec["model"], v, n) for v in spec["variants"] for n in filter_n_grid()]


def speedup_backends() -> list[str]:
    """The backends Fig 6.23 measures: the CPU, and CUDA when the cells may
    run on a GPU (as CELL_GPUS decides: a visible device or `backend: cuda`)."""
    return ["cpu", "cuda"] if CELL_GPUS else ["cpu"]


def filter_figure_inputs(name) -> dict:
    """Inputs of a filter figure: the trajectory set and the estimate's cell
    (smallest N) of Figs 7.1-7.2, or the speed-up cells of Fig 6.23."""
    spec = config["dulger2017_filter_figures"][name]
    if spec["kind"] == "trajectory":
        return {
            "trajectories": trajectory_path(spec["model"]),
            "cell": filter_cell_path(spec["model"], spec["variant"], min(filter_n_grid())),
        }
    return {
        b: [filter_speedup_path(b, spec["model"], spec["variant"], n) for n in filter_n_grid()]
        for b in speedup_backends()
    }


def dulger2017_filter_outputs(chapter) -> list[str]:
    """Filter tables (CSV, Markdown) and figures (PNG, PDF) of one chapter."""
    out = []
    for name in config["dulger2017_filter_tables"]:
        if name.startswith(f"table{chapter}_"):
            out += [f"results/tables/dulger2017/{name}.{ext}" for ext in ("csv", "md")]
    for name, spec in config["dulger2017_filter_figures"].items():
        if name.startswith(f"fig{chapter}_"):
            out += [f"results/figures/dulger2017/{name}.{ext}" for ext in ("png", "pdf")]
            if spec["kind"] == "speedup":
                out.append(f"results/tables/dulger2017/{name}.csv")
                out += [best_cpu_table_path(name, ext) for ext in ("csv", "md")]
    return out


# --- Fig 6.23 against the best CPU code (issue 62; studies/dulger2017/best_cpu.py) ----


def best_cpu_cell_path(sfigure) -> str:
    return f"results/filter_best_cpu/{sfigure}.npz"


def best_cpu_table_path(sfigure, ext) -> str:
    return f"results/tables/dulger2017/{sfigure}_speedups.{ext}"


def best_cpu_numpy_n() -> list[int]:
    """The N of the table where Fig 6.23's CPU cells do not run: there the best-CPU
    cell measures the document's kind of baseline (the NumPy filter) itself."""
    return [n for n in best_cpu.table_n(config) if n not in filter_n_grid()]


def best_cpu_table_inputs(sfigure) -> dict:
    """The best-CPU cell, Fig 6.23's cells at the table's N (the CPU ones; the GPU ones
    where the cells have a GPU) and, where some N of the table has no GPU cell here,
    the newest committed bench run with GPU rows (an input, so that a new evidence
    folder rewrites the table)."""
    spec = FILTER_FIGURES[sfigure]
    shared = [n for n in best_cpu.table_n(config) if n in filter_n_grid()]
    inputs = {"cell": best_cpu_cell_path(sfigure)}
    for b in speedup_backends():
        inputs[b] = [filter_speedup_path(b, spec["model"], spec["variant"], n) for n in shared]
    if not CELL_GPUS or len(shared) < len(best_cpu.table_n(config)):
        found = best_cpu_evidence()
        inputs["evidence"] = [str(found.path)] if found is not None else []
    return inputs


@functools.cache
def best_cpu_evidence():
    """The newest committed bench run with Fig 6.23's GPU rows (None where none has)."""
    return best_cpu.find_gpu_evidence(EVIDENCE_ROOT)


def filter_params(runs, backend, timed_runs=None) -> dict:
    """Keyword arguments of studies/dulger2017/filter_experiments.FilterSettings."""
    settings = {"runs": runs, "seed": config["seed"], "backend": backend}
    return settings | {"timed_runs": timed_runs}


def filter_priority(wildcards, runs, on_gpu, share=1.0) -> float:
    """Priority of a filter job: the expected seconds (schedule) of ``share`` of
    the filter_trajectories x ``runs`` runs of the job's N (wildcard ``n``, or
    every N of the grid for a per_variant job), in the GPU or the CPU band."""
    spec = FILTER_MODELS[wildcards.model]
    steps = filter_experiments.model_steps(spec)
    method = VARIANTS[wildcards.variant].method
    total = share * runs * config["filter_trajectories"]
    n_values = [int(wildcards.n)] if "n" in wildcards.keys() else filter_n_grid()
    seconds = sum(
        schedule.filter_seconds(
            method, spec["model"], n, steps, total, "cuda" if on_gpu else "cpu"
        )
        for n in n_values
    )
    return schedule.priority(seconds, cell_band(on_gpu), FILTER_CHAPTERS[wildcards.model])


def filter_cell_priority(wildcards) -> float:
    """Priority of a table cell job (filter_cell, filter_cells)."""
    return filter_priority(wildcards, config["filter_runs"], CELL_GPUS)


def speedup_cell_priority(wildcards) -> float:
    """Priority of a Fig 6.23 cell job (filter_speedup_cell, filter_speedup_cells)."""
    return filter_priority(wildcards, config["filter_speedup_runs"], wildcards.backend == "cuda")


def speedup_part_priority(wildcards) -> float:
    """Priority of one part of a CPU cell of Fig 6.23."""
    share = 1 / int(wildcards.parts)
    return filter_priority(wildcards, config["filter_speedup_runs"], False, share)


def speedup_parts(n) -> int:
    """How many jobs one CPU cell of Fig 6.23 is split into (one per
    filter_cpu_part_particles of N; filter_experiments.cpu_cell_parts)."""
    return filter_experiments.cpu_cell_parts(
        int(n),
        config["filter_trajectories"],
        config["filter_speedup_runs"],
        config["filter_cpu_part_particles"],
    )


def speedup_part_paths(model, variant, n) -> list[str]:
    """The part files of one CPU cell of Fig 6.23."""
    parts = speedup_parts(n)
    return [
        f"results/filter_speedup_parts/cpu/{model}/{variant}/n{n}/part{p}of{parts}.npz"
        for p in range(parts)
    ]


def filter_mem_mb(model, n) -> int:
    """Memory of a filter job at N particles: a few float64 copies of the
    particles (4 columns for the radar) and the weights, at most 16 of them."""
    columns = 4 if config["filter_models"][model]["model"] == "radar" else 1
    return 512 + math.ceil(16 * 8 * columns * int(n) / 2**20)



def filter_artifacts() -> set[str]:
    """Every .npz artifact the filter targets read."""
    out = {trajectory_path(m) for m in config["filter_models"]}
    for name in config["dulger2017_filter_tables"]:
        out |= set(filter_table_cells(name))
    for name in config["dulger2017_filter_figures"]:
        for paths in filter_figure_inputs(name).values():
            out |= set([paths] if isinstance(paths, str) else paths)
    out |= {best_cpu_cell_path(name) for name in SPEEDUP_FIGURES}
    return out


FILTER_MODELS = config["filter_models"]
FILTER_TABLES = config["dulger2017_filter_tables"]
FILTER_FIGURES = config["dulger2017_filter_figures"]


def first_chapter(model) -> int:
    """The first chapter of the thesis whose filter tables or figures use ``model``."""
    names = [n for n, s in {**FILTER_TABLES, **FILTER_FIGURES}.items() if s["model"] == model]
    chapters = [int(n.split("_")[0].removeprefix("table").removeprefix("fig")) for n in names]
    return min(chapters, default=schedule.LAST_CHAPTER)


FILTER_CHAPTERS = {model: first_chapter(model) for model in FILTER_MODELS}
TRAJECTORY_FIGURES = [f for f, s in FILTER_FIGURES.items() if s["kind"] == "trajectory"]
SPEEDUP_FIGURES = [f for f, s in FILTER_FIGURES.items() if s["kind"] == "speedup"]
# The thesis's names of the variants (Table 5.1: "M", Table 6.2: "Metropolis").
FILTER_LABELS = {
    v: spec.get("labels", {}).get(v, v) for spec in FILTER_TABLES.values() for v in spec["variants"]
}
# Why Fig 6.23 has no GPU times, when it has none.
SPEEDUP_NOTE = (
    None
    if CELL_GPUS
    else "backend: cpu set in the config: speed-up not measured"
    if CUDA_VISIBLE
    else "no CUDA device: speed-up not measured"
)

