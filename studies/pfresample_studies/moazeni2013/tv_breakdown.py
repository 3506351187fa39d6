"""Moazeni (2013), chapter 6, Fig 53 on the CPU: the split of a solver iteration's time
between function P (the curvature of eq. 10, the thesis's Curvature3D) and the rest of
the solver, for each of the three solvers.

§6.5.2 reads Fig 53 as "the gap between execution time of function P and the overall
execution time of kernel Solver", larger for GPU:UnSync than for GPU:ThreadSync. Here the
same split is measured on the CPU, phase by phase (Table 10's kernels: LLT, TVnorm, P,
Reduction, Solver):

* ``tv.c`` (GlobalSync, one thread, float32): its loops timed by the monotonic clock
  between them (``native.tv_solve_phases``);
* NumPy (float64), every variant: ``gradient_phases`` is ``tv.gradient`` step by step
  with a clock between the steps (checked equal to it, bit for bit, in the tests); the
  secondary approaches' energies are ``tv.variant_blocks``'.

``python -m pfresample_studies.moazeni2013.tv_breakdown --out DIR`` writes
``fig53_breakdown.csv`` (seconds an iteration of each phase: the median over repeats, with
P's share of the iteration) and ``fig53_breakdown.png``."""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from . import tv
from .tv_experiments import make_case

LOG = logging.getLogger(__name__)
PHASES = ("LLT", "TVnorm", "P", "Reduction", "Solver")
SETTINGS = {"lam": 3.0, "eps": 0.01, "step": 0.003}  # config/studies/moazeni2013.yaml


def gradient_phases(
    L: np.ndarray, d_hat: np.ndarray, lam: float, eps: float, *, curv_block=None, norm_block=None
) -> tuple[np.ndarray, dict[str, float]]:
    """``tv.gradient`` with the seconds of each phase: LLT (D = L L^T), TVnorm (the
    channels' TV norms), Reduction (R), P (each channel's curvature, scaled), Solver
    (the fidelity term and the chain rule to dG/dL)."""
    tv.check_blocks(L.shape[:3], curv_block, norm_block)
    seconds = dict.fromkeys(PHASES, 0.0)
    mark = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal mark
        t = time.perf_counter()
        seconds[phase] += t - mark
        mark = t

    d = tv.tensor(L)
    lap("LLT")
    tvs = np.stack([tv._block_sum(tv._norm(d[..., c], eps, curv_block)[1], norm_block)
                    for c in range(6)])  # fmt: skip
    lap("TVnorm")
    weights = tv.WEIGHTS.astype(d.dtype)
    r = np.sqrt((weights.reshape(6, 1, 1, 1) * tvs**2).sum(axis=0))
    lap("Reduction")
    dgd = np.empty_like(d)
    for c in range(6):
        scale = tv._spread(weights[c] * tvs[c] / r, d.shape[:3], norm_block)
        dgd[..., c] = scale * tv.tv_gradient(d[..., c], eps, curv_block)
    lap("P")
    for c in range(6):
        dgd[..., c] += lam * weights[c] * (d[..., c] - d_hat[..., c])
    S = np.zeros(d.shape[:-1] + (3, 3), dtype=d.dtype)
    for c, (i, j) in enumerate(tv.PAIRS):
        if i == j:
            S[..., i, i] = dgd[..., c]
        else:
            S[..., i, j] = S[..., j, i] = dgd[..., c] / 2
    full = np.zeros_like(S)
    for c, (i, j) in enumerate(tv.PAIRS):
        full[..., i, j] = L[..., c]
    g = 2 * S @ full
    out = np.stack([g[..., i, j] for i, j in tv.PAIRS], axis=-1)
    lap("Solver")
    return out, seconds


def _rows(source: str, variant: str, tile: int, size: int, runs: list[dict]) -> list[dict]:
    """One row a phase: the median, least and most seconds an iteration over the runs,
    and the phase's share of the iteration from the least times (a phase's least time is
    the one least disturbed by other work on the machine; the shares add up to 1)."""
    least = {phase: min(r[phase] for r in runs) for phase in PHASES}
    whole = sum(least.values())
    rows = []
    for phase in PHASES:
        values = [r[phase] for r in runs]
        rows.append({"source": source, "variant": variant, "tile": tile, "size": size,
                     "phase": phase, "seconds": float(np.median(values)),
                     "seconds_min": least[phase], "seconds_max": max(values),
                     "iteration_seconds_min": whole, "share": least[phase] / whole,
                     "repeats": len(runs)})  # fmt: skip
    return rows


def measure_native(size: int, iterations: int, repeats: int, seed: int) -> list[dict]:
    """tv.c's phases at ``size``: each run ``iterations`` steps from the same start,
    seconds an iteration, after one untimed run (the build, the pages' first touch)."""
    from . import native

    case = make_case(size, seed, 12, 0.05)
    L0, d_hat = case.L0.astype(np.float32), case.d_hat.astype(np.float32)
    native.tv_solve_phases(L0, d_hat, iterations=1, **SETTINGS)
    runs = []
    for _ in range(repeats):
        _, phases = native.tv_solve_phases(L0, d_hat, iterations=iterations, **SETTINGS)
        runs.append({k: v / iterations for k, v in phases.items()})
    return _rows("tv.c, 1 thread, float32", "global_sync", 0, size, runs)


def measure_numpy(size: int, variant: str, tile: int, repeats: int, seed: int) -> list[dict]:
    """NumPy's phases of one gradient (and the step, in Solver) at ``size``."""
    case = make_case(size, seed, 12, 0.05)
    blocks = tv.variant_blocks(variant, tile)
    L, d_hat = case.L0.copy(), case.d_hat
    gradient_phases(L, d_hat, SETTINGS["lam"], SETTINGS["eps"], **blocks)  # warm-up
    runs = []
    for _ in range(repeats):
        g, phases = gradient_phases(L, d_hat, SETTINGS["lam"], SETTINGS["eps"], **blocks)
        begin = time.perf_counter()
        L = L - SETTINGS["step"] * g
        phases["Solver"] += time.perf_counter() - begin
        runs.append(phases)
    return _rows("numpy float64", variant, tile if variant != "global_sync" else 0, size, runs)


def run(native_sizes: Sequence[int], numpy_sizes: Sequence[int], tiles: Sequence[int], *,
        iterations: int = 3, repeats: int = 5, seed: int = 2017) -> pd.DataFrame:  # fmt: skip
    rows = []
    for size in native_sizes:
        rows += measure_native(size, iterations, repeats, seed)
        LOG.info("tv.c at %d^3 done", size)
    for size in numpy_sizes:
        for variant in tv.VARIANTS:
            for tile in tiles if variant != "global_sync" else tiles[:1]:
                rows += measure_numpy(size, variant, tile, repeats, seed)
            LOG.info("numpy %s at %d^3 done", variant, size)
    return pd.DataFrame(rows)


def measure_gpu(size: int, tiles: Sequence[int], repeats: int, seed: int) -> list[dict]:
    """Fig 53 on the GPU at ``size``: GlobalSync's kernels (``Solver.profile``, one
    iteration a run), and each secondary solver's whole launch beside its function P
    alone (tv.cu's P_ONLY: the TV norms and the curvature, no LLT, fidelity, step or
    store), each launch timed behind the delay kernel; run i pairs the i-th launch of
    each, P's time and the rest (whole minus P)."""
    from pfresample.backend import cuda_device

    from . import tv_gpu
    from .tv_experiments import _time_launches

    case = make_case(size, seed, 12, 0.05)
    device = f"GPU: {cuda_device()}"
    rows = []
    for tile in tiles:
        solver = tv_gpu.Solver(case.L0, case.d_hat, "global_sync", tile, **SETTINGS)
        solver.iterate(1)
        runs = [{k: sec for k, (_, sec) in solver.profile(1).items()} for _ in range(repeats)]
        rows += _rows(device, "global_sync", tile, size, runs)
    for variant in ("thread_sync", "unsync"):
        for tile in tiles:
            solver = tv_gpu.Solver(case.L0, case.d_hat, variant, tile, **SETTINGS)
            solver.iterate(1)  # ThreadSync's P alone reads the D a full launch left
            whole = _launch_times(solver.launches()[0][1], repeats, _time_launches)
            state = solver.L.copy()
            alone = _launch_times(solver.launches(p_only=True)[0][1], repeats, _time_launches)
            if not bool((solver.L == state).all()):
                raise RuntimeError(f"{variant} tile {tile}: P alone changed L")
            runs = [{**dict.fromkeys(PHASES, 0.0), "P": a, "Solver": max(w - a, 0.0)}
                    for w, a in zip(whole, alone, strict=True)]  # fmt: skip
            rows += _rows(device, variant, tile, size, runs)
    return rows


def _launch_times(launch, repeats: int, time_launches) -> list[float]:
    """``repeats`` device seconds of one launch, each behind the delay kernel."""
    return [time_launches(launch, 1)[0] for _ in range(repeats)]


CAPTION = (
    "Each phase's share of an iteration from its least seconds over the runs (tv.c: "
    "runs of 3 iterations; NumPy: one gradient and step a run); above each bar the "
    "iteration's least ms. P = each channel's curvature (Curvature3D), scaled; in tv.c "
    "the TVnorm loop also writes the normalised gradient P reads."
)


CAPTION_GPU = (
    "Each phase's share of an iteration from its least device seconds over the "
    "runs, each launch behind a delay kernel: GlobalSync's five kernels; "
    "ThreadSync's and UnSync's one kernel split into function P alone (TV norms and "
    "curvature, tv.cu's P_ONLY) and the rest (whole launch minus P)."
)


def draw(table: pd.DataFrame, path: Path, caption: str = CAPTION) -> None:
    """Stacked bars: each solver's iteration split by phase (shares of the least
    times), P hatched, one panel a source (the thesis's Fig 53 shows P against the
    whole Solver); the iteration's least ms above each bar."""
    from matplotlib.figure import Figure

    sources = list(dict.fromkeys(table["source"]))
    fig = Figure(figsize=(5 * len(sources), 4.2))
    axes = fig.subplots(1, len(sources), squeeze=False)[0]
    colours = dict(zip(PHASES, ("#9ecae1", "#6baed6", "#d94801", "#c6dbef", "#3182bd"),
                       strict=True))  # fmt: skip
    for ax, source in zip(axes, sources, strict=True):
        part = table[table["source"] == source]
        bars = list(dict.fromkeys(zip(part["variant"], part["tile"], part["size"], strict=True)))
        labels = [f"{v}\n{t}x{t}, {s}^3" if t else f"{v}\n{s}^3" for v, t, s in bars]

        def pick(v, t, s, phase, column, part=part):
            at = (part["variant"] == v) & (part["tile"] == t) & (part["size"] == s)
            return float(part[at & (part["phase"] == phase)][column].iloc[0])

        bottom = np.zeros(len(bars))
        for phase in PHASES:
            share = np.array([100 * pick(v, t, s, phase, "share") for v, t, s in bars])
            ax.bar(
                range(len(bars)),
                share,
                bottom=bottom,
                color=colours[phase],
                label=phase,
                hatch="//" if phase == "P" else None,
                edgecolor="black",
                linewidth=0.3,
            )
            bottom += share
        for x, (v, t, s) in enumerate(bars):
            ms = 1e3 * pick(v, t, s, "P", "iteration_seconds_min")
            p_share = pick(v, t, s, "P", "share")
            ax.text(x, 101, f"{ms:.3g} ms\nP {p_share:.0%}", ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(bars)), labels, fontsize=6, rotation=30)
        ax.set_ylim(0, 118)
        ax.set_ylabel("% of an iteration")
        ax.set_title(source, fontsize=8)
        ax.legend(fontsize=6, loc="lower right")
    fig.suptitle("Fig 53 on the CPU: each solver's iteration split by phase (P hatched)",
                 fontsize=9)  # fmt: skip
    fig.text(0.01, 0.005, caption, fontsize=6, wrap=True)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    fig.savefig(path, dpi=120)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--native-sizes", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--numpy-sizes", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--tiles", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--redraw", type=Path, help="only draw the figure of this CSV")
    parser.add_argument(
        "--gpu-sizes",
        type=int,
        nargs="+",
        help="on a CUDA device: Fig 53's split there (fig53_gpu.csv, .png)",
    )
    args = parser.parse_args(argv)
    if args.redraw:
        draw(pd.read_csv(args.redraw), args.out / "fig53_breakdown.png")
        return
    if args.gpu_sizes:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
        rows = []
        for size in args.gpu_sizes:
            rows += measure_gpu(size, args.tiles, args.repeats, 2017)
            LOG.info("GPU at %d^3 done", size)
        table = pd.DataFrame(rows)
        args.out.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out / "fig53_gpu.csv", index=False)
        draw(table, args.out / "fig53_gpu.png", CAPTION_GPU)
        shares = table[table["phase"] == "P"][["variant", "tile", "size", "share"]]
        LOG.info("P's share of an iteration on the GPU:\n%s", shares.to_string(index=False))
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    table = run(args.native_sizes, args.numpy_sizes, args.tiles, repeats=args.repeats)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "fig53_breakdown.csv", index=False)
    draw(table, args.out / "fig53_breakdown.png")
    shares = table[table["phase"] == "P"][["source", "variant", "tile", "size", "share"]]
    LOG.info("P's share of an iteration:\n%s", shares.to_string(index=False))


if __name__ == "__main__":
    main()
