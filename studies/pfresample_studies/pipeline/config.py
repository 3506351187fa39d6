"""The configuration rules every study shares, as plain functions the
Snakefile calls (and tests check): the scale preset, lists given on the
command line, and whether cell jobs ask for a GPU."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping

SCALES = ("auto", "thesis", "quick")


def coerce_number_lists(cfg: MutableMapping, keys: Iterable[str]) -> None:
    """Turn the strings of ``--config key=[a,b]`` lists into integers, or
    floats where they are not integers: Snakemake parses nested ``--config``
    values with YAML's BaseLoader. A string that is no number stays (the
    schema names it)."""
    for key in keys:
        values = cfg.get(key)
        if isinstance(values, list):
            cfg[key] = [_number(v) if isinstance(v, str) else v for v in values]


def _number(text: str):
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def resolve_scale(requested, cuda_visible: bool) -> tuple[str, str]:
    """``(scale, note)``: "auto" is the thesis grid where a CUDA device is
    visible and the quick grid elsewhere; the note says which and why, for
    figure captions. An unknown value comes back as it is (the schema
    reports it)."""
    if requested not in SCALES:
        return str(requested), ""
    if requested == "auto":
        if cuda_visible:
            return "thesis", "thesis (full grid)"
        return "quick", "quick (reduced grid: no CUDA device visible)"
    return requested, f"{requested} (set in the config)"


def cell_gpus(backend: str, cuda_visible: bool) -> int:
    """GPUs a cell job asks for: one where the cells may run on a GPU (a
    device is visible here, or ``backend: cuda`` says the jobs will find one,
    as on a cluster's CPU-only login node), else none."""
    return int(backend == "cuda" or (cuda_visible and backend != "cpu"))
