"""The experiment catalog of Dülger (2017) in ``config/studies/dulger2017.yaml``:
the checks that span several keys (the JSON schema checks each key alone),
and what the rules read from it. Every failure is a ``ValueError`` that
names the key and the entry.
"""

from __future__ import annotations

from collections.abc import Mapping

from pfresample.models.scenarios import validate_spec

from ..pipeline.compare import TableRules
from .experiments import Variant, expand_variants
from .filter_tables import TIME_COLUMNS as FILTER_TIME_COLUMNS
from .tables import TIME_COLUMNS
from .weights import parse_distribution

# Config keys that hold lists of weight distributions; a figure names them.
DISTRIBUTION_LISTS = ("gamma_distributions", "eq233_distributions", "eq233_sweep_distributions")

# The columns of the study's tables that are measurements (times, speed-ups);
# the last: Fig 6.23's speed-ups over the document's and the best CPU code.
SPEEDUP_TIME_COLUMNS = ("gpu_s", "doc_cpu_s", "best_cpu_s", "over_document", "over_best_cpu",
                        "uphill_cpu_s", "over_uphill_cpu")  # fmt: skip
MEASURED_COLUMNS = (*TIME_COLUMNS, *FILTER_TIME_COLUMNS, *SPEEDUP_TIME_COLUMNS)

# Lists that `--config key=[a,b]` passes as strings; converted before validation.
NUMBER_LIST_KEYS = (
    "segment_bytes",
    "filter_log2_n",
    "filter_best_cpu_log2_n",
    "profiler_table5_log2_n",
    "profiler_fig6_log2_n",
    "profiler_carveouts",
)


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
    check_profiler(cfg, known)


# The families the profiler target runs (Tables 5.3-5.5: the Metropolis
# family; Figs 6.24-6.26: the Uphill family), as the kernels are named.
PROFILER_FAMILIES = {"profiler_table5_variants": "metropolis", "profiler_fig6_variants": "uphill"}


def check_profiler(cfg: Mapping, known: Mapping) -> None:
    """The profiler target's variants exist, have their own B and belong to
    the family its tables measure; its distribution is a known one."""
    try:
        parse_distribution(cfg["profiler_distribution"])
    except ValueError as exc:
        raise ValueError(f"config: profiler_distribution: {exc}") from exc
    for key, family in PROFILER_FAMILIES.items():
        for variant in cfg[key]:
            if variant not in known:
                raise ValueError(
                    f"config: {key}: variant {variant!r} is not defined (variants: "
                    f"{', '.join(known)}; segment_bytes = {cfg['segment_bytes']})"
                )
            v = known[variant]
            if not v.own_B or not v.method.startswith(family):
                raise ValueError(
                    f"config: {key}: variant {variant!r} must be a {family} method "
                    "with its own B rule"
                )


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


# --- the thesis's printed profiler numbers (Tesla K40, nvprof; §5.5, §6.11-6.12) ---
# Tables 5.3-5.5: eq. 2.33 with y = 4, columns log2 N.
THESIS_PROFILER_LOG2_N = (10, 11, 12, 13, 14, 15, 16, 18, 20)
# Table 5.3: L1 cache global loads hit ratio (%), by (method, L1 size).
# C2-128 / 48 KB at log2 N = 12 reads "99.3 2" in the text extraction: 99.32.
THESIS_TABLE5_3 = {
    ("M", "16 KB"): (99.72, 99.80, 99.85, 51.01, 26.29, 13.61, 7.07, 1.80, 0.45),
    ("M", "32 KB"): (99.73, 99.82, 99.84, 99.87, 51.79, 26.41, 13.49, 3.44, 0.91),
    ("M", "48 KB"): (99.73, 99.81, 99.85, 99.87, 77.52, 39.65, 20.20, 5.15, 1.36),
    ("C1-128", "16 KB"): (95.64, 96.36, 96.61, 96.62, 96.75, 96.82, 96.80, 96.81, 96.80),
    ("C1-128", "32 KB"): (94.98, 96.13, 96.44, 96.55, 96.77, 96.82, 96.82, 96.85, 96.84),
    ("C1-128", "48 KB"): (95.54, 96.32, 96.63, 96.60, 96.75, 96.79, 96.84, 96.86, 96.85),
    ("C1-2048", "16 KB"): (99.51, 99.56, 99.59, 74.79, 54.75, 43.99, 38.57, 34.51, 33.49),
    ("C1-2048", "32 KB"): (99.48, 99.57, 99.61, 99.63, 92.66, 85.11, 80.25, 76.18, 75.09),
    ("C1-2048", "48 KB"): (99.51, 99.55, 99.62, 99.63, 99.47, 98.28, 96.94, 95.49, 95.05),
    ("C2-128", "16 KB"): (98.92, 99.11, 99.27, 65.33, 36.82, 20.80, 12.38, 5.96, 4.30),
    ("C2-128", "32 KB"): (98.89, 99.19, 99.30, 99.38, 81.46, 62.07, 49.21, 38.33, 35.54),
    ("C2-128", "48 KB"): (98.88, 99.13, 99.32, 99.37, 97.15, 88.58, 80.01, 70.98, 68.55),
    ("C2-2048", "16 KB"): (99.54, 99.64, 99.71, 53.34, 27.42, 13.85, 7.04, 1.83, 0.51),
    ("C2-2048", "32 KB"): (99.53, 99.65, 99.69, 99.72, 57.79, 30.60, 16.12, 4.99, 2.41),
    ("C2-2048", "48 KB"): (99.49, 99.64, 99.71, 99.74, 85.90, 51.70, 30.05, 11.33, 7.20),
}
# Table 5.4: execution time (ms); "NO" is the thesis's default, L1 caching off.
THESIS_TABLE5_4 = {
    ("M", "NO"): (0.36, 0.48, 0.88, 1.99, 3.39, 6.17, 10.5, 37.8, 305),
    ("M", "16 KB"): (0.31, 0.44, 0.57, 2.24, 5.58, 9.96, 18.0, 68.2, 317),
    ("M", "32 KB"): (0.30, 0.41, 0.56, 0.94, 3.86, 8.33, 16.6, 67.4, 308),
    ("M", "48 KB"): (0.35, 0.42, 0.56, 0.97, 2.77, 6.95, 15.4, 65.8, 307),
    ("C1-128", "NO"): (0.26, 0.29, 0.34, 0.65, 0.99, 1.61, 2.89, 10.9, 43.1),
    ("C1-128", "16 KB"): (0.22, 0.26, 0.29, 0.53, 0.77, 1.27, 2.26, 8.52, 33.4),
    ("C1-128", "32 KB"): (0.23, 0.24, 0.29, 0.52, 0.78, 1.27, 2.27, 8.51, 33.3),
    ("C1-128", "48 KB"): (0.22, 0.25, 0.29, 0.51, 0.77, 1.28, 2.27, 8.53, 33.4),
    ("C1-2048", "NO"): (0.34, 0.39, 0.50, 1.00, 1.48, 2.47, 4.43, 17.0, 67.0),
    ("C1-2048", "16 KB"): (0.30, 0.35, 0.42, 0.96, 1.71, 3.03, 5.66, 21.9, 87.0),
    ("C1-2048", "32 KB"): (0.29, 0.34, 0.42, 0.78, 1.31, 2.42, 4.56, 17.7, 70.0),
    ("C1-2048", "48 KB"): (0.28, 0.34, 0.40, 0.78, 1.16, 2.01, 3.73, 14.4, 57.3),
    ("C2-128", "NO"): (0.35, 0.42, 0.47, 1.00, 1.55, 2.64, 4.77, 18.1, 73.4),
    ("C2-128", "16 KB"): (0.31, 0.36, 0.41, 0.99, 1.61, 2.84, 5.27, 20.8, 85.0),
    ("C2-128", "32 KB"): (0.33, 0.38, 0.42, 0.82, 1.43, 2.47, 4.53, 17.7, 73.9),
    ("C2-128", "48 KB"): (0.32, 0.34, 0.44, 0.84, 1.31, 2.33, 4.27, 16.8, 70.3),
    ("C2-2048", "NO"): (0.45, 0.58, 0.70, 1.42, 2.20, 3.70, 6.74, 26.0, 114),
    ("C2-2048", "16 KB"): (0.42, 0.46, 0.55, 1.66, 3.09, 5.87, 11.7, 47.0, 189),
    ("C2-2048", "32 KB"): (0.38, 0.47, 0.54, 1.14, 2.30, 4.86, 10.6, 46.3, 187),
    ("C2-2048", "48 KB"): (0.38, 0.51, 0.54, 1.13, 1.98, 3.85, 9.11, 43.5, 178),
}
# Table 5.5: speed-up, time of M / time of C1 or C2, same cache setting.
THESIS_TABLE5_5 = {
    ("C1-128", "NO"): (1.38, 1.66, 2.59, 3.06, 3.42, 3.83, 3.63, 3.47, 7.08),
    ("C1-128", "16 KB"): (1.41, 1.69, 1.97, 4.23, 7.25, 7.84, 7.96, 8.00, 9.49),
    ("C1-128", "32 KB"): (1.30, 1.71, 1.93, 1.81, 4.95, 6.56, 7.31, 7.92, 9.25),
    ("C1-128", "48 KB"): (1.59, 1.68, 1.93, 1.90, 3.60, 5.43, 6.78, 7.71, 9.19),
    ("C1-2048", "NO"): (1.06, 1.23, 1.76, 1.99, 2.29, 2.50, 2.37, 2.22, 4.55),
    ("C1-2048", "16 KB"): (1.03, 1.26, 1.36, 2.33, 3.26, 3.29, 3.18, 3.11, 3.64),
    ("C1-2048", "32 KB"): (1.03, 1.21, 1.33, 1.21, 2.95, 3.44, 3.64, 3.81, 4.40),
    ("C1-2048", "48 KB"): (1.25, 1.24, 1.40, 1.24, 2.39, 3.46, 4.13, 4.57, 5.36),
    ("C2-128", "NO"): (1.03, 1.14, 1.87, 1.99, 2.19, 2.34, 2.20, 2.09, 4.16),
    ("C2-128", "16 KB"): (1.00, 1.22, 1.39, 2.26, 3.47, 3.51, 3.42, 3.28, 3.73),
    ("C2-128", "32 KB"): (0.91, 1.08, 1.33, 1.15, 2.70, 3.37, 3.66, 3.81, 4.17),
    ("C2-128", "48 KB"): (1.09, 1.24, 1.27, 1.15, 2.11, 2.98, 3.61, 3.92, 4.37),
    ("C2-2048", "NO"): (0.80, 0.83, 1.26, 1.40, 1.54, 1.67, 1.56, 1.45, 2.68),
    ("C2-2048", "16 KB"): (0.74, 0.96, 1.04, 1.35, 1.81, 1.70, 1.54, 1.45, 1.68),
    ("C2-2048", "32 KB"): (0.79, 0.87, 1.04, 0.82, 1.68, 1.71, 1.57, 1.46, 1.65),
    ("C2-2048", "48 KB"): (0.92, 0.82, 1.04, 0.86, 1.40, 1.81, 1.69, 1.51, 1.72),
}
# Fig 6.24 is a plot; §6.11's text gives where each line converges at large N
# (global load transactions per request).
THESIS_FIG6_24_CONVERGED = {
    "Uphill": 26.43,
    "UC1-128": 1.34,
    "UCA-128": 5.13,
    "UC1-2048": 10.49,
    "UCA-2048": 15.61,
}
# §6.12: at large N the SMX efficiency "approaches to 99%" (Fig 6.25).
THESIS_FIG6_25_LARGE_N = 99.0


def compare_rules(cfg: Mapping) -> TableRules:
    """The study's rules for comparing two results trees: its measured columns
    (MEASURED_COLUMNS) and the time-matched rows of Figs 5.13-5.14
    (:func:`time_matched_rows`)."""
    return TableRules(measured=MEASURED_COLUMNS, rows=time_matched_rows(cfg["dulger2017_figures"]))
