"""Fig 6.23 against the best CPU filter we can write: the pipeline's cell of
``native/sir_growth.c`` and the table ``results/tables/dulger2017/fig6_23_speedups.csv``.

Fig 6.23 (``fig6_23.csv``) divides the GPU filter's time into the library's NumPy filter on
one core, the document's kind of baseline (ratio 1). The table adds ratio 2, the GPU over
the best CPU code on every core: ``sir_growth.c`` with Systematic resampling (the best
algorithm for this filter: O(N), exact, no B), with Uphill beside it (the GPU's own
algorithm), both from :mod:`.native` (OpenMP, ``filter_best_cpu_threads`` threads, default
every CPU). One row per N and stage (the whole filter and its resampling stage, the two
curves of Fig 6.23).

* the best CPU code: :func:`measure_cell`, the median of ``repeats`` runs after
  ``warmup`` (at least one) untimed short runs, repeat r on trajectory r mod J with the
  pipeline's seed of that run (``filter_experiments.run_seed``), as
  ``bench/dulger2017_best_cpu.py``;
* the document's kind: the fig6_23 CPU cell of this run where its grid has the N (the mean
  of its runs); else :func:`measure_cell`'s own NumPy ``run_filter`` on one thread (the
  quick grid: Fig 6.23's N are 2^8 and 2^10, the committed GPU rows start at 2^14);
* the GPU: the fig6_23 GPU cell of this run where one ran at that N; else the newest
  committed run of the bench (``evidence/<folder>/dulger2017/timings.csv``, its
  ``run_filter cuda`` rows: :func:`evidence_gpu_rows`), labelled as such, and then
  ``one_host`` is False: this machine's CPU set against a GPU on another host, not the
  headline (the headline is the committed one-host run, docs/dulger2017.md)."""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pfresample.timing import cpu_name

from ..pipeline import speedups
from . import filter_experiments

EVIDENCE_TABLE = "dulger2017/timings.csv"  # the bench's timings inside an evidence folder
EVIDENCE_GPU_CODE = "run_filter cuda (fig6_23's GPU cell)"
BEST = "systematic"  # the best algorithm: the headline
SIDES = ("systematic", "uphill", "numpy")
CODES = {
    "systematic": "sir_growth.c Systematic (OpenMP)",
    "uphill": "sir_growth.c Uphill (OpenMP)",
    "numpy": "NumPy run_filter Uphill, one thread",
}
STAGES = {"whole filter": "", "resampling": "_resampling"}
WARMUP_STEPS = 5  # an untimed short run first: the bench's and the fig6_23 cells'
COLUMNS = ["n", "log2_n", "stage", "gpu_s", "gpu_source", "doc_cpu_s", "doc_cpu_source",
           "best_cpu_s", "best_cpu_code", "best_cpu_threads", "cpu", "over_document",
           "over_best_cpu", "uphill_cpu_s", "over_uphill_cpu", "one_host"]  # fmt: skip


def threads(cfg: Mapping) -> int:
    """The cell's threads: ``filter_best_cpu_threads``, or every CPU (null)."""
    value = cfg.get("filter_best_cpu_threads")
    return int(value) if value else (os.cpu_count() or 1)


def table_n(cfg: Mapping) -> list[int]:
    """The N of the table (``filter_best_cpu_log2_n``)."""
    return sorted(2**e for e in cfg["filter_best_cpu_log2_n"])


def _median(runs: list[tuple[float, float, float]], prefix: str) -> dict:
    """The medians of the runs' (whole-filter seconds, resampling seconds, RMSE)."""
    total, res, err = zip(*runs, strict=True)
    return {f"{prefix}_s": statistics.median(total),
            f"{prefix}_resampling_s": statistics.median(res),
            f"{prefix}_repeats": len(runs), f"{prefix}_rmse": float(np.mean(err))}  # fmt: skip


def _nan(prefix: str) -> dict:
    nan = float("nan")
    return {f"{prefix}_s": nan, f"{prefix}_resampling_s": nan, f"{prefix}_repeats": 0,
            f"{prefix}_rmse": nan}  # fmt: skip


def measure_cell(trajectories: Mapping, n_values: Sequence[int], numpy_n: Sequence[int], *,
                 threads: int, repeats: int, numpy_repeats: int, warmup: int, seed: int,
                 model: str = "growth") -> tuple[dict, dict]:  # fmt: skip
    """The best CPU code (Systematic and Uphill on ``threads`` threads) at every N of
    ``n_values``, and the NumPy filter (Uphill, one thread) at those of ``numpy_n``, on the
    growth model's ``trajectories`` (``y``, ``truth``), each side after ``warmup`` (at
    least one) untimed runs of WARMUP_STEPS steps. Returns (arrays, metadata) for
    ``artifacts.save_npz``: per N and side (SIDES) the median whole-filter and resampling
    seconds, the repeats (0: not measured, seconds NaN) and the mean RMSE. Without a C
    compiler the C sides are NaN and the metadata's ``best_cpu_error`` says why."""
    from pfresample.filters import SIR_OPTIONS, run_filter
    from pfresample.models import GrowthModel
    from pfresample.tuning import cached_ssd_table

    if model != "growth":
        raise ValueError(f"native/sir_growth.c runs the growth model only, not {model!r}")
    truth, y = np.asarray(trajectories["truth"]), np.asarray(trajectories["y"])
    J, warmup = y.shape[0], max(1, int(warmup))  # a warm-up always: thread pools, caches
    error, math_build = None, None
    try:
        from . import native

        native.library()
        math_build = native.MATH
    except RuntimeError as exc:  # no C compiler: the NumPy side still runs
        error = str(exc)
    rows = []
    for n in map(int, n_values):
        row = {"n": n}
        plan = [(j % J, filter_experiments.run_seed(seed, model, n, j % J, j))
                for j in range(repeats)]  # fmt: skip
        for method in ("systematic", "uphill"):
            if error is not None:
                row |= _nan(method)
                continue
            table = cached_ssd_table(n) if method == "uphill" else None  # outside the clock
            f = native.GrowthFilter(n, threads)
            for w in range(warmup):
                f.run(y[0, :WARMUP_STEPS], w + 1, method, ssd_table=table)
            runs = []
            for j, s in plan:
                r = f.run(y[j], s, method, ssd_table=table)
                err = filter_experiments.run_rmse(model, r.estimates, truth[j])
                runs.append((r.total_seconds, float(r.stage_seconds[:, 3].sum()), err))
            row |= _median(runs, method)
        if n in numpy_n:
            before = os.environ.get("PFRESAMPLE_THREADS")
            os.environ["PFRESAMPLE_THREADS"] = "1"
            try:
                m = GrowthModel()
                for w in range(warmup):
                    run_filter(m, y[0, :WARMUP_STEPS], n, "uphill", seed=w + 1, backend="cpu",
                               **SIR_OPTIONS)  # fmt: skip
                runs = []
                for j, s in plan[:numpy_repeats]:
                    r = run_filter(m, y[j], n, "uphill", seed=s, backend="cpu", **SIR_OPTIONS)
                    stages = np.asarray(r.stage_seconds, dtype=np.float64).sum(axis=0)
                    err = filter_experiments.run_rmse(model, r.estimates, truth[j])
                    runs.append((float(r.total_seconds), float(stages[3]), err))
                row |= _median(runs, "numpy")
            finally:
                if before is None:
                    del os.environ["PFRESAMPLE_THREADS"]
                else:
                    os.environ["PFRESAMPLE_THREADS"] = before
        else:
            row |= _nan("numpy")
        rows.append(row)
    arrays = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    metadata = {"cpu": cpu_name(), "cpu_count": os.cpu_count(), "threads": int(threads),
                "codes": CODES, "math": math_build, "best_cpu_error": error,
                "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "model": model,
                "steps": int(y.shape[1]), "warmup": int(warmup)}  # fmt: skip
    return arrays, metadata


def evidence_gpu_rows(path) -> pd.DataFrame:
    """The GPU rows of a committed ``bench/dulger2017_best_cpu.py`` run (its timings.csv):
    per N the median whole-filter and resampling seconds of ``run_filter`` on CUDA with
    Uphill (the fig6_23 GPU cell's call) and the device; empty where it ran no GPU."""
    frame = pd.read_csv(path)
    keep = (frame["section"] == "filter") & (frame["code"] == EVIDENCE_GPU_CODE) & (
        frame["method"] == "uphill")  # fmt: skip
    gpu = frame.loc[keep, ["n", "seconds", "resampling_s", "device"]]
    gpu = gpu.rename(columns={"seconds": "gpu_s", "resampling_s": "gpu_resampling_s"})
    return gpu.astype({"n": int}).drop_duplicates("n", keep="last").reset_index(drop=True)


def find_gpu_evidence(root):
    """The newest evidence folder under ``root`` whose ``dulger2017/timings.csv`` has GPU
    rows (:func:`evidence_gpu_rows`), as ``pipeline.evidence.Evidence``; None if none has."""
    from ..pipeline import evidence

    for found in evidence.candidates(EVIDENCE_TABLE, root):
        if not evidence_gpu_rows(found.path).empty:
            return found
    return None


def evidence_source(found) -> str:
    """``gpu_source`` of a committed row: ``evidence/<folder> (<device>, <date>)``."""
    return f"evidence/{found.folder} ({found.device}, {found.date})"


def speedups_frame(cell: tuple[Mapping, Mapping], doc: pd.DataFrame | None,
                   gpu: pd.DataFrame | None, committed=None) -> pd.DataFrame:  # fmt: skip
    """The table: per N of the cell and stage (STAGES) the convention's columns.

    ``cell``: :func:`measure_cell`'s (arrays, metadata); ``doc``: Fig 6.23's CPU rows of
    this run (``filter_tables.filter_table``: n, exec_s, resampling_s) or None; ``gpu``:
    its GPU rows of this run (the same columns and ``device``) or None; ``committed``: the
    ``Evidence`` of the committed GPU rows (:func:`find_gpu_evidence`) or None."""
    arrays, meta = cell
    local_cpu = {} if doc is None else doc.set_index("n")
    local_gpu = {} if gpu is None or gpu.empty else gpu.set_index("n")
    far = None if committed is None else evidence_gpu_rows(committed.path).set_index("n")
    rows = []
    for i, n in enumerate(map(int, arrays["n"])):
        for stage, suffix in STAGES.items():
            frame_col = "exec_s" if not suffix else "resampling_s"
            if n in getattr(local_gpu, "index", ()):
                gpu_s, source = float(local_gpu.loc[n, frame_col]), speedups.THIS_RUN
            elif far is not None and n in far.index:
                gpu_s, source = float(far.loc[n, f"gpu{suffix}_s"]), evidence_source(committed)
            else:
                gpu_s, source = float("nan"), "none"
            if n in getattr(local_cpu, "index", ()):
                doc_s = float(local_cpu.loc[n, frame_col])
                doc_source = "fig6_23 CPU cell, this run (mean of its runs)"
            else:
                doc_s = float(arrays[f"numpy{suffix}_s"][i])
                k = int(arrays["numpy_repeats"][i])
                doc_source = f"this cell, this run (median of {k})" if k else "none"
            best = float(arrays[f"{BEST}{suffix}_s"][i])
            uphill = float(arrays[f"uphill{suffix}_s"][i])
            measured = np.isfinite([gpu_s, doc_s, best]).all()
            rows.append({
                "n": n, "log2_n": int(round(math.log2(n))), "stage": stage, "gpu_s": gpu_s,
                "gpu_source": source, "doc_cpu_s": doc_s, "doc_cpu_source": doc_source,
                "best_cpu_s": best, "best_cpu_code": meta["codes"][BEST],
                "best_cpu_threads": int(meta["threads"]), "cpu": meta["cpu"],
                "over_document": doc_s / gpu_s, "over_best_cpu": best / gpu_s,
                "uphill_cpu_s": uphill, "over_uphill_cpu": uphill / gpu_s,
                "one_host": bool(source == speedups.THIS_RUN and measured),
            })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def _x(value: float) -> str:
    return "–" if not np.isfinite(value) else f"{value:.3g}x"


def _s(value: float) -> str:
    return "–" if not np.isfinite(value) else f"{value:.3g}"


def speedups_markdown(frame: pd.DataFrame, title: str = "") -> str:
    """The table as Markdown with its caption: where the GPU rows came from, and plainly
    when the ratios set this machine's CPU against a GPU on another host."""
    head = ["N", "stage", "GPU s", "document's kind s", "best CPU s", "Uphill C s",
            "GPU over document's kind", "GPU over best CPU", "GPU over Uphill C",
            "one host"]  # fmt: skip
    lines = [f"# {title}" if title else "# Fig 6.23 against the best CPU code", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in frame.itertuples(index=False):
        cells = [f"2^{r.log2_n}", r.stage, *map(_s, (r.gpu_s, r.doc_cpu_s, r.best_cpu_s,
                 r.uphill_cpu_s)), *map(_x, (r.over_document, r.over_best_cpu,
                 r.over_uphill_cpu)), str(r.one_host)]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    first = frame.iloc[0] if len(frame) else None
    lines.append("")
    if first is not None:
        lines.append(f"Seconds per run (whole filter, or its resampling stage). Best CPU code: "
                     f"{first['best_cpu_code']} on {first['best_cpu_threads']} thread(s) of "
                     f"{first['cpu']}; the Uphill column is the same C file with the "
                     "GPU's algorithm. Document's kind: the NumPy filter, Uphill, one "
                     "thread.")  # fmt: skip
    sources = sorted(set(frame["gpu_source"]) - {speedups.THIS_RUN, "none"})
    if sources:
        lines.append("")
        lines.append(f"**Not the headline.** The GPU rows come from committed evidence "
                     f"({'; '.join(sources)}), not from this run: these ratios set this "
                     "machine's CPU against a committed GPU run on another host. The "
                     "headline is the committed one-host run (docs/dulger2017.md).")  # fmt: skip
    if (frame["gpu_source"] == "none").any():
        lines.append("")
        lines.append("–: no GPU ran here and no committed GPU row has that N.")
    return "\n".join(lines) + "\n"
