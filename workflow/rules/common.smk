"""Shared pieces of the pipeline: scale selection, config checks, target lists.

No rules live here, only functions, constants and the wildcard constraints, so
that the rule files stay declarative; including this file resolves `scale` (and
lays config/quick.yaml over the config when it is quick). Everything that
computes a result lives in the pfresample library, called from scripts/*.py.
"""

import math
import os
import re

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from pfresample.backend import BACKEND_LABELS


# The quick-scale preset, found from the Snakefile's directory so that
# `snakemake --directory elsewhere` works.
QUICK_CONFIG = os.path.join(workflow.basedir, "config", "quick.yaml")

# Software environment of every job: the project's conda environment (DESIGN.md).
CONDA_ENV = "../../environment.yml"

# Lists that --config key=[a,b] passes as strings (snakemake parses nested
# --config values with YAML's BaseLoader); they are converted before validation.
_INTEGER_LIST_KEYS = ("segment_bytes", "filter_log2_n")

# The backend of the CPU reference path, as stated on figures.
CPU_BACKEND = BACKEND_LABELS["cpu"]
CUDA_BACKEND = BACKEND_LABELS["cuda"]


def cuda_device() -> tuple[bool, str]:
    """(visible, why): whether CuPy can be imported and sees a CUDA device."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy that cannot load CUDA
        return False, f"CuPy not importable ({type(exc).__name__})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no device
        return False, f"CuPy sees no CUDA device ({type(exc).__name__})"
    if count < 1:
        return False, "CuPy sees no CUDA device"
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    return True, f"CUDA device 0: {name}"


def _coerce_integer_lists(cfg):
    for key in _INTEGER_LIST_KEYS:
        values = cfg.get(key)
        if isinstance(values, list):
            cfg[key] = [
                int(v) if isinstance(v, str) and v.strip().lstrip("-").isdigit() else v
                for v in values
            ]


def apply_scale_preset(cfg) -> tuple[str, str]:
    """Resolve `scale` and, for the quick scale, overlay config/quick.yaml.

    Returns (scale, note), the note saying why, for figure captions; the log
    gets the full reason. Values given with --config keep precedence over
    quick.yaml because snakemake re-applies them after every configfile.
    """
    _coerce_integer_lists(cfg)
    requested = cfg.get("scale", "auto")
    if requested not in ("auto", "thesis", "quick"):
        return str(requested), ""  # validate() reports the bad value
    visible, why = cuda_device()
    if requested == "auto":
        scale = "thesis" if visible else "quick"
        note = "thesis (full grid)" if visible else "quick (reduced grid: no CUDA device visible)"
    else:
        scale = requested
        note = f"{scale} (set in the config)"
    if scale == "quick":
        workflow.configfile(QUICK_CONFIG)
        _coerce_integer_lists(cfg)
    applied = "config/quick.yaml applied" if scale == "quick" else "config/config.yaml"
    logger.info(f"pfresample: scale {note} ({why}); {applied}")
    return scale, note


def check_config(cfg):
    """Checks that span several keys (the JSON schema checks each key alone)."""
    from pfresample.weights import parse_distribution

    if cfg["log2_n_min"] > cfg["log2_n_max"]:
        raise WorkflowError(
            f"config: log2_n_min ({cfg['log2_n_min']}) must be <= "
            f"log2_n_max ({cfg['log2_n_max']})"
        )
    if cfg["fig2_3_sequence"] >= cfg["sequences"]:
        raise WorkflowError(
            f"config: fig2_3_sequence ({cfg['fig2_3_sequence']}) must be < "
            f"sequences ({cfg['sequences']})"
        )
    for key in DISTRIBUTION_LISTS:
        for name in cfg[key]:
            try:
                parse_distribution(name)
            except ValueError as exc:
                raise WorkflowError(f"config: {key}: {exc}") from exc
    variants = catalog_variants(cfg)
    for name, spec in cfg["dulger2017_figures"].items():
        check_figure(cfg, name, spec, variants)
    check_filter_catalog(cfg, variants)


# Config keys that hold lists of weight distributions; a figure names them.
DISTRIBUTION_LISTS = ("gamma_distributions", "eq233_distributions", "eq233_sweep_distributions")


def catalog_variants(cfg) -> dict:
    """The method variants of config `variants` by name (pfresample.experiments.Variant)."""
    from pfresample.experiments import expand_variants

    try:
        return expand_variants(cfg["variants"], cfg["segment_bytes"])
    except ValueError as exc:
        raise WorkflowError(f"config: variants: {exc}") from exc


def check_figure(cfg, name, spec, variants):
    """A figure's distributions, variants, baseline and match refer to what exists."""
    from pfresample.weights import parse_distribution

    def fail(why):
        raise WorkflowError(f"config: dulger2017_figures: {name}: {why}")

    for entry in spec["distributions"]:
        if entry not in DISTRIBUTION_LISTS:
            try:
                parse_distribution(entry)
            except ValueError as exc:
                fail(f"distributions: {entry!r} is neither one of {DISTRIBUTION_LISTS} nor {exc}")
    named = list(spec.get("variants", [])) + list(spec.get("operations", {}))
    named += [spec["baseline"]] if "baseline" in spec else []
    named += [spec["match"]["target"]] if "match" in spec else []
    for variant in named:
        if variant not in variants:
            fail(
                f"variant {variant!r} is not defined (variants: {', '.join(variants)}; "
                f"segmented methods get one variant per segment_bytes value, "
                f"segment_bytes = {cfg['segment_bytes']})"
            )
    for group in spec.get("match", {}).get("candidates", []):
        if group not in cfg["variants"]:
            fail(f"match: candidates: {group!r} is not an entry of variants")
    if "speedup" in spec["metrics"] and "baseline" not in spec:
        fail("metric speedup needs a baseline variant")
    if not spec.get("variants") and "match" not in spec:
        fail("needs variants or match")


def check_filter_catalog(cfg, variants):
    """The filter models, tables and figures refer to what exists (issue 5)."""
    from pfresample.models.scenarios import validate_spec

    def fail(where, why):
        raise WorkflowError(f"config: {where}: {why}")

    for name, spec in cfg["filter_models"].items():
        if spec["model"] == "radar":
            if "scenario" not in spec or "steps" in spec:
                fail(f"filter_models: {name}", "a radar model has a `scenario` (and no `steps`)")
            try:
                validate_spec(spec["scenario"])
            except ValueError as exc:
                fail(f"filter_models: {name}: scenario", exc)
        elif "steps" not in spec or "scenario" in spec:
            fail(f"filter_models: {name}", "a growth model has `steps` (and no `scenario`)")
    clash = set(cfg["dulger2017_figures"]) & (
        set(cfg["dulger2017_filter_tables"]) | set(cfg["dulger2017_filter_figures"])
    )
    if clash:
        fail("dulger2017_filter_tables", f"{sorted(clash)} also in dulger2017_figures")
    entries = [("dulger2017_filter_tables", n, s, s["variants"])
               for n, s in cfg["dulger2017_filter_tables"].items()]  # fmt: skip
    entries += [("dulger2017_filter_figures", n, s, [s["variant"]])
                for n, s in cfg["dulger2017_filter_figures"].items()]  # fmt: skip
    for key, name, spec, names in entries:
        if spec["model"] not in cfg["filter_models"]:
            fail(f"{key}: {name}", f"model {spec['model']!r} is not in filter_models "
                 f"({', '.join(cfg['filter_models'])})")  # fmt: skip
        for variant in names:
            if variant not in variants:
                fail(f"{key}: {name}", f"variant {variant!r} is not defined (variants: "
                     f"{', '.join(variants)}; segment_bytes = {cfg['segment_bytes']})")  # fmt: skip
            if not variants[variant].own_B:
                fail(f"{key}: {name}", f"variant {variant!r} derives its B (B_of or "
                     "B_scale); the filter needs a method's own B rule")  # fmt: skip
        for variant in spec.get("labels", {}):
            if variant not in names:
                fail(f"{key}: {name}", f"labels: {variant!r} is not one of its variants")
        if spec.get("kind") == "trajectory":
            if cfg["filter_models"][spec["model"]]["model"] != "radar":
                fail(f"{key}: {name}", "a trajectory figure needs a radar model")


def discard_corrupt_artifacts(root="results") -> list[str]:
    """Delete corrupt or truncated cached .npz artifacts (pfresample.io.check_npz)
    before the DAG is built, so that they are rebuilt instead of passed on; each
    deletion is logged. Returns the deleted paths, for the target rules to ask for
    again: Snakemake does not rebuild a missing intermediate file whose consumers
    are up to date, and a rebuilt one (newer) makes them rerun."""
    from pathlib import Path

    from pfresample import io

    paths = [p for p in Path(root).glob("**/*.npz") if not p.name.startswith(".")]
    removed = []
    for path, why in io.discard_corrupt(paths):
        logger.warning(f"pfresample: deleted corrupt artifact {path}, to be regenerated: {why}")
        removed.append(str(path))
    return removed


def pipeline_artifacts() -> set[str]:
    """Every .npz artifact the configured targets read."""
    out = set(uphill_ssd_tables()) | set(fig2_3_weights())
    for figure, spec in config["dulger2017_figures"].items():
        out |= set(figure_cells(figure))
        out |= {weight_dataset(d, n) for d in figure_distributions(spec) for n in n_grid()}
    out |= {trajectory_path(m) for m in config["filter_models"]}
    for name in config["dulger2017_filter_tables"]:
        out |= set(filter_table_cells(name))
    for name in config["dulger2017_filter_figures"]:
        for paths in filter_figure_inputs(name).values():
            out |= set([paths] if isinstance(paths, str) else paths)
    return out


def regenerate(paths) -> list[str]:
    """The deleted corrupt artifacts that the current configuration can rebuild."""
    known = pipeline_artifacts() if paths else set()
    return [p for p in paths if p in known]


def n_grid() -> list[int]:
    """The numbers of particles of the experiment grid."""
    return [2**e for e in range(config["log2_n_min"], config["log2_n_max"] + 1)]


def weights_mem_mb(n: int) -> int:
    """Memory of a weight-dataset job whose largest N is ``n`` (it holds one N at a
    time): the float32 array plus generation temporaries."""
    return 256 + math.ceil((4 * config["sequences"] * n + 48 * n) / 2**20)


def ssd_mem_mb(n) -> int:
    """Memory of the SSD-table job at its largest N: a few float64 arrays of length N."""
    return 256 + math.ceil(64 * n / 2**20)


# --- target lists ------------------------------------------------------------


def weight_dataset(dist, n) -> str:
    return f"results/weights/{dist}/{n}.npz"


def fig2_3_weights() -> list[str]:
    """The weight datasets that Fig 2.3 draws from."""
    return [weight_dataset(d, config["fig2_3_n"]) for d in config["gamma_distributions"]]


def fig2_3_outputs() -> list[str]:
    return [f"results/figures/dulger2017/fig2_3.{ext}" for ext in ("png", "pdf")]


def uphill_ssd_tables() -> list[str]:
    return [f"results/tuning/uphill_ssd/{n}.npz" for n in n_grid()]


def figure_distributions(spec) -> list[str]:
    """The distributions of a figure: config lists expanded, order kept."""
    out = []
    for entry in spec["distributions"]:
        for dist in config[entry] if entry in DISTRIBUTION_LISTS else [entry]:
            if dist not in out:
                out.append(dist)
    return out


def catalog_ladders(variants) -> dict[str, list[str]]:
    """Reduced-B ladders: ladder name -> the names of its rungs (variants that
    differ in B only, run together by one job)."""
    ladders = {}
    for name, v in variants.items():
        if v.ladder is not None:
            ladders.setdefault(v.ladder, []).append(name)
    return ladders


def group_members(group) -> list[str]:
    """The variants that one entry of config `variants` expands to."""
    return [name for name, v in VARIANTS.items() if v.group == group]


def figure_variants(spec) -> list[str]:
    """Every variant a figure reads: its lines, baseline, match target and candidates."""
    names = list(spec.get("variants", []))
    if "match" in spec:
        names.append(spec["match"]["target"])
        for group in spec["match"]["candidates"]:
            names += group_members(group)
    return list(dict.fromkeys(names))


def cell_path(variant, dist) -> str:
    return f"results/resample/{variant}/{dist}.npz"


def figure_cells(figure) -> list[str]:
    """The resampling cells (variant x distribution) one figure or table needs."""
    spec = config["dulger2017_figures"][figure]
    return [
        cell_path(v, d) for v in figure_variants(spec) for d in figure_distributions(spec)
    ]


def dulger2017_outputs(chapter) -> list[str]:
    """Tables (CSV) and figures (PNG, PDF) of one chapter of Dülger (2017)."""
    out = []
    for name in config["dulger2017_figures"]:
        if re.match(rf"(fig|table){chapter}_", name):
            out.append(f"results/tables/dulger2017/{name}.csv")
            out += [f"results/figures/dulger2017/{name}.{ext}" for ext in ("png", "pdf")]
    return out


# --- filter experiments (thesis §5.4, §6.9-6.10, chapter 7) --------------------


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
    return out


def alternatives(names) -> str:
    """A wildcard constraint matching exactly ``names`` (nothing when empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def filter_params(runs, backend) -> dict:
    """Keyword arguments of pfresample.filter_experiments.FilterSettings."""
    return {"runs": runs, "seed": config["seed"], "backend": backend}


def filter_mem_mb(model, n) -> int:
    """Memory of a filter job at N particles: a few float64 copies of the
    particles (4 columns for the radar) and the weights, at most 16 of them."""
    columns = 4 if config["filter_models"][model]["model"] == "radar" else 1
    return 512 + math.ceil(16 * 8 * columns * int(n) / 2**20)


def ssd_tables_for(variant_names) -> list[str]:
    """The Uphill SSD tables cells need: those of the N grid when one picks B by SSD."""
    needs = any(VARIANTS[v].needs_ssd_table() for v in variant_names)
    return uphill_ssd_tables() if needs else []


def cell_ssd_tables(wildcards) -> list[str]:
    return ssd_tables_for([wildcards.variant])


def cell_weights(wildcards) -> list[str]:
    return [weight_dataset(wildcards.dist, n) for n in n_grid()]


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
    """Keyword arguments of pfresample.experiments.CellSettings."""
    keys = ("draws", "seed", "backend", "timing_repeats", "timing_warmup")
    settings = {k: config[k] for k in keys}
    settings["chunk_elements"] = config["draw_chunk_elements"]
    settings["particle_summaries_max_n"] = config["particle_summaries_max_n"]
    return settings


def cell_backend_note() -> str:
    """The backend stated on chapter 5-6 figures."""
    if config["backend"] == "cuda" or (config["backend"] != "cpu" and CUDA_VISIBLE):
        return f"{CUDA_BACKEND} where a kernel exists, else {CPU_BACKEND}"
    return CPU_BACKEND


def gpu_devices() -> list[str]:
    """The devices that GPU jobs claim one each (pfresample.devices): those CuPy
    sees here, as CUDA_VISIBLE_DEVICES entries; none without a device."""
    if not CUDA_VISIBLE:
        return []
    import cupy

    from pfresample.devices import visible_devices

    return visible_devices(cupy.cuda.runtime.getDeviceCount())


SCALE, SCALE_NOTE = apply_scale_preset(config)
CUDA_VISIBLE = cuda_device()[0]
# A cell job asks for a GPU when the cells may run on one: a device is visible here,
# or `backend: cuda` says the jobs will find one (a cluster's CPU-only login node).
# `--resources gpu=N` then runs N at a time; on the CPU it asks for none.
CELL_GPUS = (
    1
    if config.get("backend", "auto") == "cuda"
    or (CUDA_VISIBLE and config.get("backend", "auto") != "cpu")
    else 0
)
# Each GPU job claims one of these before CUDA starts (one GPU per job, issue 6).
GPU_DEVICES = gpu_devices()


wildcard_constraints:
    dist=r"gamma-k[0-9.]+-s[0-9.]+|eq233-y-?[0-9.]+",
    n=r"[1-9][0-9]*",
