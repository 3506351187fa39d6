"""What every study's rules share: the scale preset, the checks of the config,
corrupt-artifact handling, the GPU resources of cell jobs. No rules live here.

Everything that computes a result lives in the pfresample library and the
study packages (studies/pfresample_studies/<study>/), called from scripts/<study>/.
"""

import functools
import os
import re

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from pfresample.backend import BACKEND_LABELS, cuda_status
from pfresample_studies.pipeline import config as pipeline_config

# The quick-scale preset, found from the Snakefile's directory so that
# `snakemake --directory elsewhere` works.
QUICK_CONFIG = os.path.join(workflow.basedir, "config", "quick.yaml")

# Software environment of every job: the project's conda environment (DESIGN.md),
# as an absolute path so that rule files in any folder name the same one.
CONDA_ENV = os.path.join(workflow.basedir, "environment.yml")

# The backends as figures and tables name them.
CPU_BACKEND = BACKEND_LABELS["cpu"]
CUDA_BACKEND = BACKEND_LABELS["cuda"]


def apply_scale_preset(cfg, integer_list_keys) -> tuple[str, str]:
    """Resolve `scale` and, for the quick scale, overlay config/quick.yaml.

    Returns (scale, note), the note saying why, for figure captions; the log
    gets the full reason. Values given with --config keep precedence over
    quick.yaml because snakemake re-applies them after every configfile.
    """
    pipeline_config.coerce_number_lists(cfg, integer_list_keys)
    device, why = cuda_status()
    scale, note = pipeline_config.resolve_scale(cfg.get("scale", "auto"), device is not None)
    if scale == "quick":
        workflow.configfile(QUICK_CONFIG)
        pipeline_config.coerce_number_lists(cfg, integer_list_keys)
    applied = "config/quick.yaml applied" if scale == "quick" else "config/config.yaml"
    logger.info(f"pfresample: scale {note} ({why}); {applied}")
    return scale, note


def check(checker, cfg):
    """Run a study's cross-key checks (a tested Python function that raises
    ValueError), reporting a failure as Snakemake's configuration error."""
    try:
        checker(cfg)
    except ValueError as exc:
        raise WorkflowError(str(exc)) from exc


def discard_corrupt_artifacts(root="results") -> list[str]:
    """Delete corrupt or truncated cached .npz artifacts (pipeline.artifacts.check_npz)
    before the DAG is built, so that they are rebuilt instead of passed on; each
    deletion is logged. Returns the deleted paths, for the target rules to ask for
    again: Snakemake does not rebuild a missing intermediate file whose consumers
    are up to date, and a rebuilt one (newer) makes them rerun."""
    from pathlib import Path

    from pfresample_studies.pipeline import artifacts

    paths = [p for p in Path(root).glob("**/*.npz") if not p.name.startswith(".")]
    removed = []
    for path, why in artifacts.discard_corrupt(paths):
        logger.warning(f"pfresample: deleted corrupt artifact {path}, to be regenerated: {why}")
        removed.append(str(path))
    return removed


def regenerate(paths, known_artifacts) -> list[str]:
    """The deleted corrupt artifacts that the configured targets can rebuild
    (``known_artifacts()``: every .npz the studies' targets read)."""
    known = known_artifacts() if paths else set()
    return [p for p in paths if p in known]


def alternatives(names) -> str:
    """A wildcard constraint matching exactly ``names`` (nothing when empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def gpu_devices() -> list[str]:
    """The devices that GPU jobs claim one each (pipeline.devices): those CuPy
    sees here, as CUDA_VISIBLE_DEVICES entries; none without a device."""
    if not CUDA_VISIBLE:
        return []
    import cupy

    from pfresample_studies.pipeline.devices import visible_devices

    return visible_devices(cupy.cuda.runtime.getDeviceCount())


CUDA_VISIBLE = cuda_status()[0] is not None
# A cell job asks for a GPU when the cells may run on one: a device is visible here,
# or `backend: cuda` says the jobs will find one (a cluster's CPU-only login node).
# `--resources gpu=N` then runs N at a time; on the CPU it asks for none.
CELL_GPUS = pipeline_config.cell_gpus(config.get("backend", "auto"), CUDA_VISIBLE)
# Each GPU job claims one of these before CUDA starts (one GPU per job).
GPU_DEVICES = gpu_devices()


# The committed measurements (evidence/<date>-<device>-<commit>/): a figure whose GPU rows
# do not run here draws the newest committed table of them (pfresample_studies.pipeline.evidence).
EVIDENCE_ROOT = os.path.join(workflow.basedir, "evidence")


@functools.cache
def newest_evidence(relative: str):
    """``pipeline.evidence.find`` under EVIDENCE_ROOT, once a table a parse: the
    outputs rules' inputs and params and the run report all ask for the same tables."""
    from pfresample_studies.pipeline import evidence

    return evidence.find(relative, EVIDENCE_ROOT)


def committed_tables(relatives: dict) -> dict[str, str]:
    """figure -> the newest committed table of its GPU rows (``relatives``: figure -> the
    table's path inside an evidence folder), for the figures that have one, where the
    cells have no GPU (with one, nothing: the GPU's rows are this run's). The paths are
    the outputs rules' inputs too, so that a new evidence folder redraws the figure."""
    if CELL_GPUS:
        return {}
    found = {name: newest_evidence(rel) for name, rel in relatives.items()}
    return {name: str(e.path) for name, e in found.items() if e is not None}


def report_figures() -> dict[str, dict]:
    """The run report's figures (workflow/rules/report.smk): PNG -> its study, name and
    the newest committed table of its GPU rows ("" where a study names none: its
    catalog's EVIDENCE_TABLES), for every figure of the studies' targets."""
    from pathlib import Path

    out = {}
    for study in STUDIES:
        tables = getattr(CATALOGS[study], "EVIDENCE_TABLES", {})
        for path in map(str, getattr(rules, study).input):
            if not (path.endswith(".png") and f"results/figures/{study}/" in path):
                continue
            name = Path(path).stem
            found = newest_evidence(tables[name]) if name in tables else None
            out[path] = {"study": study, "figure": name,
                         "committed": str(found.path) if found else ""}  # fmt: skip
    return out


def cell_backend_note() -> str:
    """The backend stated on figures of resampling cells."""
    if CELL_GPUS:
        return f"{CUDA_BACKEND} where a kernel exists, else {CPU_BACKEND}"
    return CPU_BACKEND


wildcard_constraints:
    n=r"[1-9][0-9]*",
