#!/usr/bin/env python3
"""GPU timings of every pfresample method next to peers, in one run on one device.

For N = 2^16 ... 2^26 and two weight families (eq. 2.33 with y = 4, gamma with
shape 1), every method of the registry with a CUDA kernel is timed by
``pfresample.timing.time_resample``: CUDA events around the kernels thesis §6.5
counts (the method's kernel, and the kernels for B, w_max or the prefix sum),
``--warmup`` untimed calls, median of ``--repeats``. B is chosen on the device
as in the experiments (Metropolis family: eps = 1/100; Uphill family: the SSD
match, with the SSD table of N computed on the GPU), so a coalesced variant
runs with its parent's B. Iterative methods also get candidate evaluations
per second, N*B/time. Segmented methods use SS = ``--segment-bytes``.

Peers, timed in the same run with CUDA events:
* ``cupy.systematic``: CuPy's ``cumsum`` + ``searchsorted`` (normalised prefix
  sum, N sorted positions ``(k + u) / N``);
* ``torch.multinomial``: ``torch.multinomial(w, N, replacement=True)``, where
  PyTorch is installed (it takes at most 2^24 categories);
* ``copy.1GiB``: a 1 GiB device-to-device copy, the bandwidth ceiling
  (reported as GB/s of read + write traffic).

Afterwards the issue's targets are checked on the numbers of this run.

    python bench/gpu_resamplers.py                              # the full table
    python bench/gpu_resamplers.py --sizes 2^20 --repeats 5     # a quick look
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

from pfresample import tuning
from pfresample.api import time_resample
from pfresample.backend import cuda_device
from pfresample.resampling.registry import REGISTRY, ancestor_methods
from pfresample.timing import cuda_event_times
from pfresample_studies.dulger2017 import weights

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402 -- sibling module
    DISTRIBUTIONS,
    cuda_device_info,
    default_call,
    parse_size,
    write_rows,
)

COPY_BYTES = 1 << 30
TORCH_MAX_CATEGORIES = 1 << 24
FIELDS = [
    "date", "device", "cuda", "cupy", "library", "method", "distribution", "n",
    "segment_bytes", "B", "median_ms", "evals_per_s", "first_call_ms", "repeats", "note",
]  # fmt: skip


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--sizes", nargs="+", type=parse_size, default=[2**k for k in (16, 20, 22, 24, 26)]
    )
    p.add_argument("--distributions", nargs="+", default=list(DISTRIBUTIONS))
    p.add_argument("--methods", nargs="+", help="only these methods (default: all with a kernel)")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--segment-bytes", type=int, default=128)
    p.add_argument("--csv", type=Path, default=Path("results/bench/gpu_resamplers.csv"))
    args = p.parse_args(argv)
    gpu_methods = [name for name, m in ancestor_methods().items() if m.gpu is not None]
    args.methods = args.methods or gpu_methods
    unknown = sorted(set(args.methods) - set(gpu_methods))
    if unknown:
        p.error(f"no CUDA kernel for {unknown}; choose from {gpu_methods}")
    if args.repeats < 1 or args.warmup < 1:
        p.error("--repeats and --warmup must be >= 1")
    return args


def event_median_ms(fn, repeats: int, warmup: int) -> float:
    """Median time of ``fn()`` between two CUDA events on the current stream."""
    return statistics.median(cuda_event_times(fn, repeats, warmup))


def cupy_systematic(w, u: float):
    """The peer: systematic resampling with CuPy's own scan and binary search."""
    import cupy

    c = cupy.cumsum(w)
    c /= c[-1]
    positions = (cupy.arange(w.size, dtype=w.dtype) + u) / w.size
    return cupy.searchsorted(c, positions)


def torch_multinomial_ms(w_host: np.ndarray, repeats: int, warmup: int) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    if w_host.size > TORCH_MAX_CATEGORIES or not torch.cuda.is_available():
        return None
    t = torch.as_tensor(w_host, device="cuda")
    torch.manual_seed(0)
    for _ in range(warmup):
        torch.multinomial(t, t.numel(), replacement=True)
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        begin.record()
        torch.multinomial(t, t.numel(), replacement=True)
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return statistics.median(times)


def copy_bandwidth(repeats: int) -> tuple[float, float]:
    """(ms, GB/s) of a 1 GiB device-to-device copy (read + write counted)."""
    import cupy

    src = cupy.ones(COPY_BYTES, dtype=np.uint8)
    dst = cupy.empty_like(src)
    kind = cupy.cuda.runtime.memcpyDeviceToDevice

    def copy():
        cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, COPY_BYTES, kind, 0)

    ms = event_median_ms(copy, repeats, 2)
    return ms, 2 * COPY_BYTES / (ms * 1e-3) / 1e9


def run(args) -> list[dict]:
    import cupy

    info = cuda_device_info()
    rows = []

    def emit(**row):
        row = {**info, "repeats": args.repeats, "note": "", **row}
        rows.append(row)
        ms = row.get("median_ms")
        evals = row.get("evals_per_s")
        print(
            f"{row['library']:10} {row['method']:14} {row.get('distribution') or '':12} "
            f"N=2^{int(np.log2(row['n'])) if row.get('n') else 0:<3} B={row.get('B') or '':<6} "
            f"{ms:10.4f} ms" + (f"  {evals:.3e} evals/s" if evals else "") + f"  {row['note']}",
            flush=True,
        )

    ms, gbs = copy_bandwidth(args.repeats)
    emit(library="cupy", method="copy.1GiB", n=COPY_BYTES, median_ms=ms, note=f"{gbs:.0f} GB/s")
    for n in args.sizes:
        table = tuning.ssd_table(n, xp=cupy)  # the Uphill B table of N, on the GPU
        for dist in args.distributions:
            w_host = weights.generate(dist, n, 0, seed=0)
            w = cupy.asarray(w_host)
            peer = event_median_ms(lambda w=w: cupy_systematic(w, 0.5), args.repeats, args.warmup)
            emit(library="cupy", method="systematic", distribution=dist, n=n, median_ms=peer)
            torch_ms = torch_multinomial_ms(w_host, args.repeats, args.warmup)
            if torch_ms is not None:
                emit(
                    library="torch",
                    method="multinomial",
                    distribution=dist,
                    n=n,
                    median_ms=torch_ms,
                )
            for name in args.methods:
                m = REGISTRY[name]
                B, kw = default_call(w, m, args.segment_bytes, table)
                t = time_resample(w, name, seed=1, repeats=args.repeats, warmup=args.warmup, **kw)
                emit(
                    library="pfresample",
                    method=name,
                    distribution=dist,
                    n=n,
                    segment_bytes=kw.get("segment_bytes"),
                    B=B,
                    median_ms=t.median_ms,
                    evals_per_s=n * B / (t.median_ms * 1e-3) if B else None,
                    first_call_ms=t.first_call_ms,
                )
            del w
            cupy.get_default_memory_pool().free_all_blocks()
    return rows


def check_targets(rows: list[dict]) -> list[str]:
    """The issue's targets, on this run's numbers (eq. 2.33, y = 4 weights)."""

    def ms(library, method, n, dist="eq233-y4"):
        for r in rows:
            if (r["library"], r["method"], r.get("n"), r.get("distribution")) == (
                library,
                method,
                n,
                dist,
            ):
                return r["median_ms"]
        return None

    lines = []

    def report(what, value, target, ok):
        if value is None:
            lines.append(f"{what}: not measured in this run")
        else:
            lines.append(
                f"{what}: {value:.3g} (target {target}) {'MET' if ok(value) else 'MISSED'}"
            )

    for n, label in ((2**22, "2^22"), (2**24, "2^24")):
        ours, peer = ms("pfresample", "systematic", n), ms("cupy", "systematic", n)
        ratio = peer / ours if ours and peer else None
        report(
            f"systematic speed-up over cupy cumsum+searchsorted, N={label}",
            ratio,
            ">= 4x",
            lambda v: v >= 4,
        )
    for n, label, limit in ((2**22, "2^22", 9.0), (2**24, "2^24", 80.0)):
        report(
            f"metropolis ms, eps=0.01, N={label}",
            ms("pfresample", "metropolis", n),
            f"<= {limit} ms",
            lambda v, lim=limit: v <= lim,
        )
    for child, parent, goal in (
        ("metropolis-c1", "metropolis", 6),
        ("metropolis-c2", "metropolis", 3),
        ("uphill-ca", "uphill", 3),
        ("uphill-c1", "uphill", 6),
    ):
        a, b = ms("pfresample", parent, 2**24), ms("pfresample", child, 2**24)
        report(
            f"{child} speed-up over {parent}, SS=128, N=2^24",
            a / b if a and b else None,
            f">= {goal}x",
            lambda v, g=goal: v >= g,
        )
    return lines  # fmt: skip


def main(argv=None) -> int:
    args = parse_args(argv)
    if cuda_device() is None:
        print("gpu_resamplers.py: no CUDA device visible (CuPy missing or no GPU)", file=sys.stderr)
        return 2
    rows = run(args)
    write_rows(args.csv, rows, FIELDS)
    for line in check_targets(rows):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
