"""Shared pieces of the pipeline: scale selection, config checks, target lists.

No rules live here, only functions, constants and the wildcard constraints, so
that the rule files stay declarative; including this file resolves `scale` (and
lays config/quick.yaml over the config when it is quick). Everything that
computes a result lives in the pfresample library, called from scripts/*.py.
"""

import math
import os

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger


# The quick-scale preset, found from the Snakefile's directory so that
# `snakemake --directory elsewhere` works.
QUICK_CONFIG = os.path.join(workflow.basedir, "config", "quick.yaml")

# Software environment of every job: the project's conda environment (DESIGN.md).
CONDA_ENV = "../../environment.yml"

# Lists that --config key=[a,b] passes as strings (snakemake parses nested
# --config values with YAML's BaseLoader); they are converted before validation.
_INTEGER_LIST_KEYS = ("segment_bytes",)

# The backend of the CPU reference path, as stated on figures.
CPU_BACKEND = "CPU (NumPy)"


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
    for key in ("gamma_distributions", "eq233_distributions", "eq233_sweep_distributions"):
        for name in cfg[key]:
            try:
                parse_distribution(name)
            except ValueError as exc:
                raise WorkflowError(f"config: {key}: {exc}") from exc


def n_grid() -> list[int]:
    """The numbers of particles of the experiment grid."""
    return [2**e for e in range(config["log2_n_min"], config["log2_n_max"] + 1)]


def weights_mem_mb(wildcards) -> int:
    """Memory of a weight-dataset job: the float32 array plus generation temporaries."""
    n = int(wildcards.n)
    return 256 + math.ceil((4 * config["sequences"] * n + 48 * n) / 2**20)


def ssd_mem_mb(wildcards) -> int:
    """Memory of an SSD-table job: a few float64 arrays of length N."""
    return 256 + math.ceil(64 * int(wildcards.n) / 2**20)


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


SCALE, SCALE_NOTE = apply_scale_preset(config)


wildcard_constraints:
    dist=r"gamma-k[0-9.]+-s[0-9.]+|eq233-y-?[0-9.]+",
    n=r"[1-9][0-9]*",
