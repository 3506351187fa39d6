"""What the Das, Mazumdar & Banerjee (2014) configuration means: the model and
the grids of §3.2 and §4.3 from the keys of config/studies/d3_2014.yaml, the
cross-key checks, which cells each figure and table reads, and the paper's
published numbers (Tables 5-7, the CPM values, the RMSEs and the bias of
§3.2, Fig 11's mean) that our tables set beside ours. The keys are
documented in config/README.md."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

from pfresample.models.uuv import UuvModel
from pfresample.resampling.d3 import CDFS, NOISES
from pfresample.resampling.registry import REGISTRY

from ..pipeline.compare import TableRules

NUMBER_LIST_KEYS = ("d3_2014_table5_n", "d3_2014_table6_n", "d3_2014_threads", "d3_2014_regime_n",
                    "d3_2014_timing_loop_n")  # fmt: skip

# The filters of the paper's figures and Table 5: the SIR baseline and D3.
SIR_FILTER = "systematic"
D3_FILTER = "d3"
# The filters of Table 5's CPU columns (their timing cells).
TIMING_FILTERS = (SIR_FILTER, D3_FILTER)
# Table 1's sequential loop (impl loop), timed beside them at d3_2014_timing_loop_n.
LOOP_FILTER = "d3-loop"
# The paper's GPU algorithm among the filters (config/studies/d3_2014.yaml): Table 5's
# second GPU column.
PAPER_GPU = "d3-paper"
# Table 5's GPU column: "number of threads/block has been chosen as 160".
TABLE5_THREADS = 160
# Ratios 1 and 2 of Table 5 (results/tables/d3_2014/table5_speedups.csv, issue 62): the
# filters the best-CPU cells time with the best CPU code (native/d3_best.c on
# d3_2014_best_cpu_threads threads): Table 5's two CPU filters and the paper's GPU
# algorithm, so that each GPU algorithm also meets the best CPU code of its own kind.
BEST_CPU_FILTERS = (SIR_FILTER, D3_FILTER, PAPER_GPU)
BEST_CPU_CODE = "d3_best.c"  # native.py, native/d3_best.c
SPEEDUP_TABLE = "table5_speedups"

# Figures drawn from a table of their own (FIGURE_TABLES), and Fig 10 from Table 6.
TRAJECTORY_FIGURES = {"fig3": SIR_FILTER, "fig4": D3_FILTER}  # estimates vs truth
SNAPSHOT_FIGURES = {"fig5": SIR_FILTER, "fig6": D3_FILTER}  # particles at the snapshot
FIGURE_TABLES = (*TRAJECTORY_FIGURES, *SNAPSHOT_FIGURES, "fig11")
FIGURES = (*TRAJECTORY_FIGURES, *SNAPSHOT_FIGURES, "fig10", "fig11")
TABLES = ("table5", "table6", "table7", "methods")
# The regime experiment's tables (results/tables/d3_2014/regimes/{name}.csv;
# pfresample_studies.d3_2014.regimes): one row a cell, the summary per (regime, filter, N),
# the paired differences between the regimes, the error against time.
REGIME_TABLES = ("cells", "summary", "regime_pairs", "error_vs_time")
FIGURE_SOURCES = {"fig10": "table6"}  # a figure drawn from a table of TABLES
# Where a GPU run of the pipeline keeps Fig 10's rows inside an evidence folder: drawn
# where no GPU ran here (pipeline.evidence; the newest folder holding it).
# Table 5's speed-ups where no GPU ran here: the GPU rows of the newest committed run of
# bench/d3_best_cpu.py (its times.csv: GPU, one-thread and best-CPU rows of one host;
# tables.evidence_gpu_times reads its layout).
EVIDENCE_TABLES = {"fig10": "d3_2014/table6.csv", SPEEDUP_TABLE: "d3_2014/times.csv"}
TITLES = {
    "fig3": "Das et al. (2014) Fig 3: state estimates of the systematic-resampling filter",
    "fig4": "Das et al. (2014) Fig 4: state estimates of the D3-resampling filter",
    "fig5": "Das et al. (2014) Fig 5: particles after systematic resampling at the snapshot "
    "time (the paper's: t = 200 s)",
    "fig6": "Das et al. (2014) Fig 6: particles after D3 resampling at the snapshot time (the "
    "paper's: t = 200 s)",
    "fig10": "Das et al. (2014) Fig 10 / Table 6: GPU D3 run time against threads per block",
    "fig11": "Das et al. (2014) Fig 11: iterations per thread of the local-CDF search",
}

# --- the paper's numbers, as printed ------------------------------------------------
# Table 5, "Comparative summary of execution times", unit not stated (the text: "average
# over a set of 2,400 runs"; §4.3's CPM calls costs "Milli-secs of running time", but
# 204.738 ms for 36,000 steps of 50,000 particles on a CPU is not plausible: seconds
# are). N -> (systematic CPU, D3 CPU, D3 GPU at 160 threads per block).
PUBLISHED_TABLE5 = {
    500: (1.92156, 2.8468, 0.58757),
    1000: (3.88116, 5.67684, 0.712095),
    5000: (19.5552, 28.7204, 2.0303),
    10000: (38.5844, 57.5684, 3.85415),
    15000: (57.8555, 85.9349, 6.29413),
    20000: (81.8349, 114.363, 10.4578),
    50000: (204.738, 285.763, 61.6328),
}
# Table 6, "Execution time summary for different threads per block (TPB)", GPU D3, unit
# not stated; columns N, rows TPB. There is no 484 row.
TABLE6_N = (500, 1000, 1500, 2000, 5000, 10000, 15000, 20000, 50000)
PUBLISHED_TABLE6 = {
    160: (0.568, 0.716, 0.893, 1.080, 2.281, 5.002, 8.387, 14.195, 61.877),
    196: (0.763, 0.984, 1.068, 1.399, 3.115, 5.968, 9.393, 15.702, 61.864),
    232: (0.800, 1.119, 1.443, 1.689, 2.994, 5.616, 8.693, 11.472, 65.206),
    268: (1.018, 1.300, 1.609, 1.894, 3.855, 7.157, 10.492, 14.956, 65.665),
    304: (1.121, 1.405, 1.928, 2.139, 4.244, 7.982, 11.403, 16.433, 72.903),
    340: (1.258, 1.789, 1.999, 2.526, 4.672, 8.368, 12.427, 16.332, 68.030),
    376: (1.371, 1.879, 2.395, 2.596, 5.068, 9.109, 13.669, 17.658, 74.743),
    412: (1.508, 2.048, 2.482, 3.064, 5.487, 9.804, 14.764, 19.268, 66.738),
    448: (1.655, 2.204, 2.645, 3.146, 5.955, 10.571, 16.006, 20.805, 72.264),
    520: (2.461, 2.936, 3.450, 3.937, 6.977, 12.099, 17.994, 23.921, 82.288),
    556: (2.652, 3.130, 3.599, 4.064, 7.826, 13.477, 19.156, 25.630, 67.097),
    592: (2.874, 3.329, 3.815, 4.276, 7.967, 14.307, 20.063, 27.124, 70.792),
    628: (3.088, 3.547, 4.025, 4.487, 8.951, 15.097, 21.447, 27.779, 74.617),
    664: (3.300, 3.768, 4.258, 4.712, 9.099, 15.221, 22.498, 28.929, 78.254),
    700: (3.532, 4.007, 4.496, 5.723, 9.231, 16.245, 23.566, 30.674, 82.377),
    736: (3.775, 4.272, 4.761, 5.971, 10.567, 17.611, 24.748, 31.885, 87.491),
}  # fmt: skip
# Table 7, RMSE of X^ and Y^ (m/s) against TPB, GPU D3 (N = 50,000, §3.2's population);
# no 304 and no 484 row.
PUBLISHED_TABLE7 = {
    160: (1.2375, 1.1937), 196: (2.0805, 1.2555), 232: (0.5484, 0.5345),
    268: (1.0248, 1.0582), 340: (0.9501, 0.9759), 376: (0.4939, 0.4901),
    412: (0.9692, 0.9972), 448: (1.0359, 1.0735), 520: (0.4594, 0.4538),
    556: (0.4600, 0.4543), 592: (0.4599, 0.4542), 628: (0.4592, 0.4536),
    664: (1.0127, 1.0454), 700: (0.5204, 0.5314), 736: (0.9548, 0.9815),
}  # fmt: skip
# §4.3: CPM_{TPB|160}, the performing estimators against the fast one, and the N whose
# Table 6 column they use (their values reproduce from it: docs/d3_2014.md).
PUBLISHED_CPM = {520: 2.003, 556: 2.46, 592: 2.32, 628: 2.21}
CPM_REFERENCE_THREADS = 160
CPM_N = 50000
# §3.2: RMSE of the systematic-resampling filter (Fig 3) and of D3 (Fig 4), D3's bias,
# in m/s; the component (or norm) is not stated.
PUBLISHED_RMSE = {SIR_FILTER: 2.9535, D3_FILTER: 0.2681}
PUBLISHED_BIAS = {D3_FILTER: 0.025}
# §4.3, Fig 11: "the mean number of iterations (= 1,315)" over 5,000 threads.
PUBLISHED_FIG11 = {"threads": 5000, "mean_iterations": 1315.0}
PUBLISHED_NOTE = "as printed, unit not stated"


# --- the grid -------------------------------------------------------------------------


def model(cfg: Mapping) -> UuvModel:
    """The UUV model of the config (``d3_2014_model`` and ``d3_2014_duration``)."""
    spec = dict(cfg["d3_2014_model"])
    spec["x0"] = tuple(float(v) for v in spec["x0"])
    return UuvModel(duration=float(cfg["d3_2014_duration"]), **spec)


def timing_model(cfg: Mapping) -> UuvModel:
    """The model of the timing runs: the config's, ``d3_2014_timing_duration``
    seconds long. Its inputs are those of the first steps of :func:`model`'s
    (they depend on the step alone), so a timing run filters the first
    readings of a trajectory."""
    return truncated(model(cfg), float(cfg["d3_2014_timing_duration"]))


def truncated(m: UuvModel, duration: float) -> UuvModel:
    """``m`` over its first ``duration`` seconds."""
    return dataclasses.replace(m, duration=float(duration))


def step_at(cfg: Mapping, seconds: float) -> int:
    """The filter step k (1 ... T) at time ``seconds``: x_k is the state at k dt."""
    return int(round(float(seconds) / float(cfg["d3_2014_model"]["dt"])))


def snapshot_step(cfg: Mapping) -> int:
    return step_at(cfg, cfg["d3_2014_snapshot_time"])


def fig11_step(cfg: Mapping) -> int:
    return step_at(cfg, cfg["d3_2014_fig11_time"])


def filters(cfg: Mapping) -> dict[str, dict]:
    """Each filter label that runs (``d3_2014_method_filters``, every one when
    null) with its ``method`` and, for D3, ``noise`` and ``cdf`` (the
    library's defaults where not given), and any of ``threads``,
    ``threads_scope`` and ``filter_process_sd`` it sets."""
    return {label: spec for label, spec in all_filters(cfg).items()
            if label in method_filters(cfg)}  # fmt: skip


def all_filters(cfg: Mapping) -> dict[str, dict]:
    """Every filter of ``d3_2014_filters``, with the D3 defaults."""
    out = {}
    for label, spec in cfg["d3_2014_filters"].items():
        spec = dict(spec)
        if REGISTRY[spec["method"]].output == "particles":
            spec = {"noise": "eq5", "cdf": "prefix", **spec}
        out[label] = spec
    return out


def method_filters(cfg: Mapping) -> list[str]:
    """The labels that run: ``d3_2014_method_filters``, or every filter."""
    chosen = cfg.get("d3_2014_method_filters")
    return list(cfg["d3_2014_filters"]) if chosen is None else list(chosen)


def gpu_algorithms(cfg: Mapping) -> dict[str, dict]:
    """The GPU algorithms of Tables 5-7 and Fig 10 (``d3_2014_gpu_algorithms``):
    label -> the filter's spec, whose ``threads`` each TPB replaces."""
    every = all_filters(cfg)
    return {label: every[label] for label in cfg["d3_2014_gpu_algorithms"]}


def filter_process_sd(cfg: Mapping, spec: Mapping):
    """The filter's process noise of a filter spec: its own
    ``filter_process_sd`` where it sets one (null: the truth's), else the
    model's; None means the truth's."""
    if "filter_process_sd" in spec:
        return spec["filter_process_sd"]
    return cfg["d3_2014_model"].get("filter_process_sd")


def regime(cfg: Mapping, spec: Mapping) -> str:
    """ "paper" (no process noise in the filter), "ours" (the truth's) or
    "sd=<value>" (another)."""
    sd = filter_process_sd(cfg, spec)
    if sd is None or sd == cfg["d3_2014_model"]["process_sd"]:
        return "ours"
    return "paper" if sd == 0 else f"sd={sd:g}"


def trajectories(cfg: Mapping) -> list[int]:
    return list(range(int(cfg["d3_2014_trajectories"])))


def runs(cfg: Mapping) -> list[int]:
    return list(range(int(cfg["d3_2014_runs"])))


def figure_n(cfg: Mapping) -> int:
    return int(cfg["d3_2014_figure_n"])


def fig11_n(cfg: Mapping) -> int:
    return int(cfg["d3_2014_fig11_n"])


THRESHOLDS_GAMMA = "gamma"  # the printed thresholds' cell of gamma(2) weights (thresholds.py)


def thresholds_n(cfg: Mapping) -> int:
    """N of the printed thresholds' experiment (``d3_2014_thresholds_n``; null:
    Fig 11's)."""
    chosen = cfg.get("d3_2014_thresholds_n")
    return fig11_n(cfg) if chosen is None else int(chosen)


def thresholds_step(cfg: Mapping) -> int:
    """The D3 filter step of the printed thresholds' experiment: at
    ``d3_2014_thresholds_time`` (null: Fig 11's)."""
    chosen = cfg.get("d3_2014_thresholds_time")
    return fig11_step(cfg) if chosen is None else step_at(cfg, chosen)


def thresholds_draws(cfg: Mapping) -> int:
    return int(cfg["d3_2014_thresholds_draws"])


def table5_n(cfg: Mapping) -> list[int]:
    return sorted(int(n) for n in cfg["d3_2014_table5_n"])


def timing_loop_n(cfg: Mapping) -> list[int]:
    """The N at which Table 5's CPU columns time Table 1's loop
    (``d3_2014_timing_loop_n``; null: every N of Table 5)."""
    chosen = cfg.get("d3_2014_timing_loop_n")
    return table5_n(cfg) if chosen is None else sorted(int(n) for n in chosen)


def timing_filters(cfg: Mapping) -> dict[str, dict]:
    """The filters of Table 5's CPU timing cells: label -> spec of
    :func:`all_filters` (LOOP_FILTER where it times any N)."""
    every = all_filters(cfg)
    labels = [*TIMING_FILTERS, *([LOOP_FILTER] if timing_loop_n(cfg) else [])]
    return {label: every[label] for label in labels}


def table6_n(cfg: Mapping) -> list[int]:
    return sorted(int(n) for n in cfg["d3_2014_table6_n"])


def threads(cfg: Mapping) -> list[int]:
    return sorted(int(t) for t in cfg["d3_2014_threads"])


def best_cpu_threads(cfg: Mapping) -> int:
    """The threads of the best CPU code's cells (``d3_2014_best_cpu_threads``): ``all``,
    every logical CPU of the machine that parses the workflow, or the number given."""
    import os

    value = cfg.get("d3_2014_best_cpu_threads", "all")
    if value == "all":
        return os.cpu_count() or 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"d3_2014_best_cpu_threads must be 'all' or an integer >= 1, "
                         f"got {value!r}")  # fmt: skip
    return value


def best_cpu_repeats(cfg: Mapping) -> int:
    """Timed runs a filter of a best-CPU cell (``d3_2014_best_cpu_repeats``; the median is
    kept)."""
    value = cfg.get("d3_2014_best_cpu_repeats", 5)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"d3_2014_best_cpu_repeats must be an integer >= 1, got {value!r}")
    return value


def best_cpu_filters(cfg: Mapping) -> dict[str, dict]:
    """The filters of the best-CPU cells (``BEST_CPU_FILTERS`` that ``d3_2014_filters``
    has), label -> spec of :func:`all_filters`."""
    every = all_filters(cfg)
    return {label: every[label] for label in BEST_CPU_FILTERS if label in every}


def regimes(cfg: Mapping) -> dict:
    """The regime experiment's regimes: name -> the filter's process noise
    (``d3_2014_regimes``; None: the truth's)."""
    return dict(cfg["d3_2014_regimes"])


def regime_filters(cfg: Mapping) -> dict[str, dict]:
    """The regime experiment's filters (``d3_2014_regime_filters``, in their
    order): label -> spec of :func:`all_filters`."""
    every = all_filters(cfg)
    return {label: every[label] for label in cfg["d3_2014_regime_filters"]}


def regime_n(cfg: Mapping) -> list[int]:
    return sorted(int(n) for n in cfg["d3_2014_regime_n"])


def regime_trajectories(cfg: Mapping) -> list[int]:
    return list(range(int(cfg["d3_2014_regime_trajectories"])))


def regime_model(cfg: Mapping) -> UuvModel:
    """The model of a regime run: the config's over its first
    ``d3_2014_regime_duration`` seconds (a run filters the first readings of
    the study's trajectory, as the timing runs do; the whole of it at the
    paper's scale)."""
    return truncated(model(cfg), float(cfg["d3_2014_regime_duration"]))


def regime_snapshot_step(cfg: Mapping) -> int:
    """The step of a regime run's snapshot: the study's (t = 200 s at the
    paper's scale), or the run's last where it ends before."""
    return min(snapshot_step(cfg), regime_model(cfg).steps)


def gpu_n(cfg: Mapping) -> list[int]:
    """Every N of a GPU cell: Table 6's, Table 5's, and Table 7's (the figure N)."""
    return sorted(set(table6_n(cfg)) | set(table5_n(cfg)) | {figure_n(cfg)})


def gpu_cells(cfg: Mapping) -> dict[int, list[int]]:
    """N -> the threads per block its GPU cell runs (one job per N, so that a
    job starts CUDA, loads its kernels and warms up once): every TPB at
    Table 6's N and at the figure N (Table 7), 160 alone at an N of Table 5
    only."""
    every = set(table6_n(cfg)) | {figure_n(cfg)}
    return {n: threads(cfg) if n in every else [TABLE5_THREADS] for n in gpu_n(cfg)}


def gpu_full_run(cfg: Mapping, n: int) -> bool:
    """Whether the GPU cell at N runs the whole duration (the figure N: Table 7's
    RMSE is over the run, as the paper's) rather than the timing window."""
    return int(n) == figure_n(cfg)


def cpm(p_better: float, c_better: float, p_fast: float, c_fast: float) -> float:
    """§4.3's CPM of an estimator against another: (P_1 / P_2) / (C_1 / C_2),
    = (P_1 C_2) / (P_2 C_1), with P the performance (1 / the norm of the RMSEs)
    and C the cost (run time); e.g. CPM_{556|160} = P_556 C_160 / (P_160 C_556)."""
    return (p_better * c_fast) / (p_fast * c_better)


def performance(rmse_x: float, rmse_y: float) -> float:
    """§4.3: "reciprocal of the norm of RMSE(X^) and RMSE(Y^)"."""
    return 1.0 / math.hypot(rmse_x, rmse_y)


def published_cpm(threads_: int) -> float:
    """CPM_{threads|160} recomputed from the paper's own Tables 6 (N = 50,000) and 7."""
    col = TABLE6_N.index(CPM_N)
    ref = CPM_REFERENCE_THREADS
    return cpm(
        performance(*PUBLISHED_TABLE7[threads_]), PUBLISHED_TABLE6[threads_][col],
        performance(*PUBLISHED_TABLE7[ref]), PUBLISHED_TABLE6[ref][col],
    )  # fmt: skip


def check_config(cfg: Mapping) -> None:
    """Checks across keys, a ValueError naming the keys (the schema checks each key alone)."""
    try:
        m = model(cfg)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"d3_2014_model: {exc}") from None
    specs = cfg["d3_2014_filters"]
    chosen = method_filters(cfg)
    unknown = sorted(set(chosen) - set(specs)) + sorted(
        set(cfg["d3_2014_gpu_algorithms"]) - set(specs)
    )
    if unknown:
        raise ValueError(
            f"d3_2014_method_filters / d3_2014_gpu_algorithms name filters that "
            f"d3_2014_filters does not have: {', '.join(unknown)}"
        )
    for label in cfg["d3_2014_gpu_algorithms"]:
        if specs[label]["method"] != "d3":
            raise ValueError(f"d3_2014_gpu_algorithms: {label!r} is not a d3 filter")
    for label in (SIR_FILTER, D3_FILTER):
        if label not in specs or label not in chosen:
            raise ValueError(
                f"d3_2014_filters has no {label!r}: Figs 3-6 and Table 5 need the filters "
                f"{SIR_FILTER!r} and {D3_FILTER!r}"
            )
    if specs[SIR_FILTER]["method"] != "systematic" or specs[D3_FILTER]["method"] != "d3":
        raise ValueError(
            f"d3_2014_filters: {SIR_FILTER!r} must use method systematic and {D3_FILTER!r} "
            "method d3 (the paper's two filters)"
        )
    for label, spec in specs.items():
        method = REGISTRY.get(str(spec["method"]).lower())
        if method is None or method.name == "cellular":
            raise ValueError(
                f"d3_2014_filters.{label}: method {spec['method']!r} is not a global "
                "resampler of the registry (pfresample.methods(), not 'cellular')"
            )
        if method.output != "particles" and ({"noise", "cdf", "threads", "threads_scope",
                                              "components", "impl"} & set(spec)):  # fmt: skip
            raise ValueError(
                f"d3_2014_filters.{label}: noise, cdf, threads, threads_scope, components and "
                "impl are options of d3 only"
            )
        if spec.get("threads_scope") == "step" and "threads" not in spec:
            raise ValueError(
                f"d3_2014_filters.{label}: threads_scope step needs threads (every kernel of "
                "the step runs at it)"
            )
        if spec.get("noise", "eq5") not in NOISES or spec.get("cdf", "prefix") not in CDFS:
            raise ValueError(
                f"d3_2014_filters.{label}: noise must be one of {NOISES}, cdf one of {CDFS}"
            )
    for key, seconds in (("d3_2014_snapshot_time", cfg["d3_2014_snapshot_time"]),
                         ("d3_2014_fig11_time", cfg["d3_2014_fig11_time"]),
                         ("d3_2014_thresholds_time", cfg.get("d3_2014_thresholds_time")
                          or cfg["d3_2014_fig11_time"])):  # fmt: skip
        if not 1 <= step_at(cfg, seconds) <= m.steps:
            raise ValueError(
                f"{key} = {seconds} s is outside the run (d3_2014_duration = "
                f"{cfg['d3_2014_duration']} s, steps of {m.dt} s)"
            )
    timing = float(cfg["d3_2014_timing_duration"])
    if not (m.dt <= timing <= m.duration):
        raise ValueError(
            f"d3_2014_timing_duration = {timing} s must be within the run (one step of "
            f"{m.dt} s ... d3_2014_duration = {cfg['d3_2014_duration']} s): the timing runs "
            "filter the first readings of a trajectory"
        )
    check_regimes(cfg, m)
    loop_n = timing_loop_n(cfg)
    if set(loop_n) - set(table5_n(cfg)):
        raise ValueError(
            f"d3_2014_timing_loop_n = {loop_n} must be among d3_2014_table5_n = "
            f"{table5_n(cfg)} (Table 5's rows)"
        )
    if loop_n and specs.get(LOOP_FILTER, {}).get("impl") != "loop":
        raise ValueError(
            f"d3_2014_timing_loop_n times Table 1's loop: d3_2014_filters must have "
            f"{LOOP_FILTER!r} with impl loop"
        )
    if THRESHOLDS_GAMMA in regimes(cfg):
        raise ValueError(
            f"d3_2014_regimes: {THRESHOLDS_GAMMA!r} names the printed thresholds' cell of "
            "gamma(2) weights (results/d3_2014/thresholds/); call the regime otherwise"
        )
    best_cpu_threads(cfg)
    best_cpu_repeats(cfg)
    for label, spec in best_cpu_filters(cfg).items():
        if spec["method"] not in ("systematic", "d3") or spec.get("cdf", "prefix") not in (
            "prefix", "paper") or spec.get("components", "joint") != "joint":  # fmt: skip
            raise ValueError(
                f"d3_2014_filters.{label}: the best CPU code (native/d3_best.c, Table 5's "
                "speed-ups) runs method systematic, or d3 with cdf prefix or paper and joint "
                "components"
            )
    if TABLE5_THREADS not in threads(cfg):
        raise ValueError(
            f"d3_2014_threads must include {TABLE5_THREADS} (Table 5's GPU column runs at "
            f"{TABLE5_THREADS} threads per block)"
        )


def check_regimes(cfg: Mapping, m: UuvModel) -> None:
    """The regime experiment's keys against the rest (check_config)."""
    specs = cfg["d3_2014_filters"]
    chosen = list(cfg["d3_2014_regime_filters"])
    unknown = [label for label in chosen if label not in specs]
    if unknown:
        raise ValueError(
            f"d3_2014_regime_filters name filters that d3_2014_filters does not have: "
            f"{', '.join(unknown)}"
        )
    own = [label for label in chosen if "filter_process_sd" in specs[label]]
    if own:
        raise ValueError(
            f"d3_2014_regime_filters: {', '.join(own)} set filter_process_sd; in the regime "
            "experiment the regime sets it (d3_2014_regimes)"
        )
    if SIR_FILTER not in chosen or specs[SIR_FILTER]["method"] != "systematic":
        raise ValueError(
            f"d3_2014_regime_filters must include {SIR_FILTER!r} (method systematic): every "
            "other filter is paired against it"
        )
    duration = float(cfg["d3_2014_regime_duration"])
    if not (m.dt <= duration <= m.duration):
        raise ValueError(
            f"d3_2014_regime_duration = {duration} s must be within the run (one step of "
            f"{m.dt} s ... d3_2014_duration = {cfg['d3_2014_duration']} s): the regime runs "
            "filter the first readings of the study's trajectories"
        )
    width = float(cfg["d3_2014_regime_bin_seconds"])
    if not (m.dt <= width <= duration):
        raise ValueError(
            f"d3_2014_regime_bin_seconds = {width} s must be one step of {m.dt} s ... "
            f"d3_2014_regime_duration = {duration} s (at least one bin a run)"
        )


# --- what scripts/compare_results.py leaves out (pipeline.compare) ---
# The columns of the study's tables that are measurements: times per step and per
# run, their spreads and ratios, the speed-ups, the profiler's occupancy, and the
# fastest threads per block with the CPM against it (Table 7; picked by a time).
MEASURED_COLUMNS = (
    "seconds", "seconds_ci", "run_seconds",
    "cpu_systematic_ms_per_step", "cpu_d3_ms_per_step", "cpu_d3_loop_ms_per_step",
    "cpu_systematic_cpu_ms_per_step", "cpu_d3_cpu_ms_per_step", "cpu_d3_loop_cpu_ms_per_step",
    "cpu_d3_loop_over_systematic", "cpu_d3_over_systematic",
    "gpu_d3_ms_per_step", "gpu_d3_wall_ms_per_step", "gpu_paper_ms_per_step",
    "speedup_gpu_d3_vs_cpu_systematic", "speedup_gpu_d3_vs_cpu_d3",
    "speedup_gpu_paper_vs_cpu_systematic", "speedup_gpu_paper_vs_cpu_d3",
    "gpu_s", "gpu_s_min", "gpu_s_max", "doc_cpu_s", "best_cpu_s", "best_cpu_s_min",
    "best_cpu_s_max", "over_document", "over_best_cpu", "over_best_cpu_low",
    "over_best_cpu_high", "best_cpu_own_algorithm_s", "over_best_cpu_own_algorithm",
    "ms_per_step", "wall_ms_per_step", "ms_median", "ms_min", "ms_max", "occupancy",
    "fastest_threads", "cpm_vs_fastest",
)  # fmt: skip


def compare_rules(cfg: Mapping) -> TableRules:
    """The study's rules for comparing two results trees: its measured
    columns; no table's rows are picked by a measurement."""
    return TableRules(measured=MEASURED_COLUMNS)
