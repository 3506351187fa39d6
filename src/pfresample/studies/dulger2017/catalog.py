"""The experiment catalog of Dülger (2017) in ``config/studies/dulger2017.yaml``:
the checks that span several keys (the JSON schema checks each key alone),
and what the rules read from it. Every failure is a ``ValueError`` that
names the key and the entry.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...models.scenarios import validate_spec
from .experiments import Variant, expand_variants
from .filter_tables import TIME_COLUMNS as FILTER_TIME_COLUMNS
from .tables import TIME_COLUMNS
from .weights import parse_distribution

# Config keys that hold lists of weight distributions; a figure names them.
DISTRIBUTION_LISTS = ("gamma_distributions", "eq233_distributions", "eq233_sweep_distributions")

# The columns of the study's tables that are measurements (times, speed-ups).
MEASURED_COLUMNS = (*TIME_COLUMNS, *FILTER_TIME_COLUMNS)

# Lists that `--config key=[a,b]` passes as strings; converted before validation.
INTEGER_LIST_KEYS = ("segment_bytes", "filter_log2_n")


def variants(cfg: Mapping) -> dict[str, Variant]:
    """The method variants of config ``variants`` by name."""
    try:
        return expand_variants(cfg["variants"], cfg["segment_bytes"])
    except ValueError as exc:
        raise ValueError(f"config: variants: {exc}") from exc


def check_config(cfg: Mapping) -> None:
    """Every cross-key rule of the study's configuration."""
    if cfg["log2_n_min"] > cfg["log2_n_max"]:
        raise ValueError(
            f"config: log2_n_min ({cfg['log2_n_min']}) must be <= log2_n_max ({cfg['log2_n_max']})"
        )
    if cfg["fig2_3_sequence"] >= cfg["sequences"]:
        raise ValueError(
            f"config: fig2_3_sequence ({cfg['fig2_3_sequence']}) must be < "
            f"sequences ({cfg['sequences']})"
        )
    for key in DISTRIBUTION_LISTS:
        for name in cfg[key]:
            try:
                parse_distribution(name)
            except ValueError as exc:
                raise ValueError(f"config: {key}: {exc}") from exc
    known = variants(cfg)
    for name, spec in cfg["dulger2017_figures"].items():
        check_figure(cfg, name, spec, known)
    check_filter_catalog(cfg, known)


def check_figure(cfg: Mapping, name: str, spec: Mapping, known: Mapping) -> None:
    """A figure's distributions, variants, baseline and match refer to what exists."""

    def fail(why):
        raise ValueError(f"config: dulger2017_figures: {name}: {why}")

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
        if variant not in known:
            fail(
                f"variant {variant!r} is not defined (variants: {', '.join(known)}; "
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


def check_filter_catalog(cfg: Mapping, known: Mapping) -> None:
    """The filter models, tables and figures refer to what exists."""

    def fail(where, why):
        raise ValueError(f"config: {where}: {why}")

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
    tables, figures = cfg["dulger2017_filter_tables"], cfg["dulger2017_filter_figures"]
    clash = set(cfg["dulger2017_figures"]) & (set(tables) | set(figures))
    if clash:
        fail("dulger2017_filter_tables", f"{sorted(clash)} also in dulger2017_figures")
    entries = [("dulger2017_filter_tables", n, s, s["variants"]) for n, s in tables.items()]
    entries += [("dulger2017_filter_figures", n, s, [s["variant"]]) for n, s in figures.items()]
    for key, name, spec, names in entries:
        where = f"{key}: {name}"
        if spec["model"] not in cfg["filter_models"]:
            models = ", ".join(cfg["filter_models"])
            fail(where, f"model {spec['model']!r} is not in filter_models ({models})")
        for variant in names:
            if variant not in known:
                fail(
                    where,
                    f"variant {variant!r} is not defined (variants: {', '.join(known)}; "
                    f"segment_bytes = {cfg['segment_bytes']})",
                )
            if not known[variant].own_B:
                fail(
                    where,
                    f"variant {variant!r} derives its B (B_of or B_scale); "
                    "the filter needs a method's own B rule",
                )
        for variant in spec.get("labels", {}):
            if variant not in names:
                fail(where, f"labels: {variant!r} is not one of its variants")
        if spec.get("kind") == "trajectory":
            if cfg["filter_models"][spec["model"]]["model"] != "radar":
                fail(where, "a trajectory figure needs a radar model")


def figure_distributions(cfg: Mapping, spec: Mapping) -> list[str]:
    """The distributions of a figure: config lists expanded, order kept."""
    out = []
    for entry in spec["distributions"]:
        for dist in cfg[entry] if entry in DISTRIBUTION_LISTS else [entry]:
            if dist not in out:
                out.append(dist)
    return out


def ladders(known: Mapping[str, Variant]) -> dict[str, list[str]]:
    """Reduced-B ladders: ladder name -> the names of its rungs (variants that
    differ in B only, run together by one job)."""
    out: dict[str, list[str]] = {}
    for name, v in known.items():
        if v.ladder is not None:
            out.setdefault(v.ladder, []).append(name)
    return out


def group_members(known: Mapping[str, Variant], group: str) -> list[str]:
    """The variants that one entry of config ``variants`` expands to."""
    return [name for name, v in known.items() if v.group == group]


def figure_variants(known: Mapping[str, Variant], spec: Mapping) -> list[str]:
    """Every variant a figure reads: its lines, baseline, match target and candidates."""
    names = list(spec.get("variants", []))
    if "match" in spec:
        names.append(spec["match"]["target"])
        for group in spec["match"]["candidates"]:
            names += group_members(known, group)
    return list(dict.fromkeys(names))


def time_matched_rows(figures: Mapping) -> dict[str, tuple[str, str]]:
    """Tables whose rows are picked by a measurement, from the catalog's
    ``dulger2017_figures``: Figs 5.13-5.14 show the reduced-B Metropolis whose
    *time* matches C1/C2, so only the target's rows are fixed by the
    configuration (table name -> ("variant", target))."""
    return {
        name: ("variant", spec["match"]["target"])
        for name, spec in figures.items()
        if spec.get("match", {}).get("by") == "time"
    }
