#!/usr/bin/env python3
"""The quality-time frontier: MSE/N against time per call for
every method of the registry, in one run on one device.

For each N of ``--sizes``, each weight family of the GPU benchmarks
(eq. 2.33 with y = 4 and gamma with shape 1, ``weights.generate``, sequence 0),
each precision of the weights (float32, float64) and every method of the
registry that returns ancestors and runs on the backend:

* **time per call**: the median of ``--repeats`` calls of
  ``pfresample.api.time_resample`` after ``--warmup`` untimed ones; on the GPU
  CUDA events around the kernels thesis §6.5 counts, as
  ``bench/gpu_resamplers.py`` times them; on the CPU backend the host's clock
  around the whole call;
* **MSE/N**: sum_i (o_i - N w_i / sum w)^2 / N (thesis eqs. 2.29-2.30 over N),
  the mean over ``--mse-calls`` calls with seeds 1, 2, ... (the first is the
  timed call's seed), accumulated where the weights are
  (``pfresample.metrics.OffspringStats``);

B as the library chooses it by default (Metropolis family: Murray et al.'s
rule with epsilon = 1/100; Uphill family: the SSD match, the SSD table of N
computed once on the backend), s-segments of ``--segment-bytes``.

With ``--peer-binary``, the Megopolis repository's ``resample_test`` (see
``bench/peers/megopolis_repo.py``) runs in the same process on float32
eq. 2.33 weights of the same y at each N, with the B of our Metropolis
family on our weights, C1/C2 s-segments of ``--segment-bytes`` / 4 weights
and ``--repeats`` calls: its rows (library "megopolis-repo") give the mean
of its host clock around a call and its own MSE/N.

    python bench/frontier.py                                    # the full run (GPU)
    python bench/frontier.py --backend cpu --sizes 2^12 --repeats 3
    python bench/frontier_figure.py                             # the figure of the CSV
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
from pathlib import Path

import numpy as np

import pfresample as pr
from pfresample import tuning
from pfresample.api import time_resample
from pfresample.backend import cuda_device
from pfresample.metrics import OffspringStats
from pfresample.resampling.registry import REGISTRY, ancestor_methods
from pfresample.timing import cpu_name
from pfresample_studies.dulger2017 import weights
from pfresample_studies.pipeline.jobs import git_revision

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE / "peers"))
from _common import (  # noqa: E402 -- sibling module
    DISTRIBUTIONS,
    cuda_device_info,
    default_call,
    parse_size,
    write_rows,
)

PRECISIONS = ("float32", "float64")
PEER_DISTRIBUTION = "eq233-y4"  # the family the peer's resample_test draws (its RelativeVar)
FIELDS = [
    "date", "device", "commit", "backend", "cuda", "cupy", "library", "method",
    "distribution", "precision", "n", "B", "segment_bytes", "time_ms", "time_stat",
    "clock", "repeats", "first_call_ms", "mse_per_n", "mse_calls",
]  # fmt: skip


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", nargs="+", type=parse_size, default=[2**k for k in (20, 22, 24)])
    p.add_argument("--distributions", nargs="+", default=list(DISTRIBUTIONS))
    p.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=list(PRECISIONS))
    p.add_argument(
        "--methods", nargs="+", help="only these methods (default: every one the backend runs)"
    )
    p.add_argument(
        "--backend", choices=("cuda", "cpu"), help="default: cuda where a device is visible"
    )
    p.add_argument("--repeats", type=int, default=20, help="timed calls a cell (their median)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--mse-calls", type=int, default=10, help="calls a cell whose MSE/N is averaged")
    p.add_argument("--segment-bytes", type=int, default=128)
    p.add_argument("--seed", type=int, default=0, help="seed of the weight sequences")
    p.add_argument("--peer-binary", type=Path, help="the Megopolis repository's resample_test")
    p.add_argument("--peer-timeout", type=float, default=600.0, help="seconds for one peer run")
    p.add_argument("--commit", help="the commit measured (default: git rev-parse of this checkout)")
    p.add_argument("--csv", type=Path, default=Path("results/bench/frontier.csv"))
    args = p.parse_args(argv)
    if args.backend is None:
        args.backend = "cuda" if cuda_device() is not None else "cpu"
        print(f"frontier.py: backend {args.backend} (no --backend given)", flush=True)
    elif args.backend == "cuda" and cuda_device() is None:
        p.error("--backend cuda: no CUDA device visible (CuPy missing or no GPU)")
    runnable = [
        name for name, m in ancestor_methods().items() if args.backend == "cpu" or m.gpu is not None
    ]
    args.methods = args.methods or runnable
    unknown = sorted(set(args.methods) - set(runnable))
    if unknown:
        p.error(f"{unknown} do not run on the {args.backend} backend; choose from {runnable}")
    if args.repeats < 1 or args.warmup < 0 or args.mse_calls < 1:
        p.error("need --repeats >= 1, --warmup >= 0 and --mse-calls >= 1")
    if args.peer_binary is not None:
        if args.backend != "cuda":
            p.error(
                "--peer-binary: the peer runs on a CUDA device, so does this run (--backend cuda)"
            )
        if not args.peer_binary.is_file():
            p.error(
                f"--peer-binary {args.peer_binary} is not a file (bench/device/megopolis_build.sh)"
            )
    if args.commit is None:
        revision = git_revision(HERE)
        args.commit = revision[:7] if revision else ""
    return args


def run_info(args) -> dict:
    """The columns every row of this run shares."""
    if args.backend == "cuda":
        info = cuda_device_info()
    else:
        info = {
            "date": datetime.date.today().isoformat(),
            "device": cpu_name(),
            "cuda": "",
            "cupy": "",
        }
    return {**info, "commit": args.commit, "backend": args.backend}


def mse_per_n_of_calls(w, method: str, seeds, backend: str, kw: dict) -> float:
    """MSE/N of ``method`` on ``w``: the mean over the calls with ``seeds`` of
    sum_i (o_i - N w_i / sum w)^2 / N, where ``kw`` are the call's keyword
    arguments. On the GPU the offspring counts stay on the device and only
    the squared errors come back."""
    stats = OffspringStats(w)
    for seed in seeds:
        stats.add(pr.resample(w, method, seed=seed, backend=backend, **kw))
    return float(np.mean(stats.squared_errors)) / stats.n


def measure(w, method: str, args, ssd_table) -> dict:
    """One cell: B, time per call and MSE/N of ``method`` on the weights ``w``
    (a NumPy array on the CPU backend, a CuPy array on the GPU)."""
    m = REGISTRY[method]
    B, kw = default_call(w, m, args.segment_bytes, ssd_table)
    t = time_resample(
        w, method, seed=1, repeats=args.repeats, warmup=args.warmup, backend=args.backend, **kw
    )
    seeds = range(1, args.mse_calls + 1)
    return {
        "library": "pfresample",
        "method": method,
        "B": B,
        "segment_bytes": kw.get("segment_bytes"),
        "time_ms": t.median_ms,
        "time_stat": "median",
        "clock": "cuda-events" if args.backend == "cuda" else "host",
        "repeats": args.repeats,
        "first_call_ms": t.first_call_ms,
        "mse_per_n": mse_per_n_of_calls(w, method, seeds, args.backend, kw),
        "mse_calls": args.mse_calls,
    }


def peer_rows(args, n: int) -> list[dict]:
    """The Megopolis repository's rows at N = ``n``: its five methods on its
    own eq. 2.33 weights of our y, with the B our Metropolis family chooses
    on our float32 weights of that family."""
    from megopolis_repo import METHODS, SEGMENTED, peer_config, run_peer

    w = weights.generate(PEER_DISTRIBUTION, n, 0, seed=args.seed)
    B = pr.choose_B(w, "metropolis")
    y = weights.parse_distribution(PEER_DISTRIBUTION)[1]["y"]
    segment = args.segment_bytes // w.itemsize  # the peer's s-segment, in float32 weights
    with tempfile.TemporaryDirectory() as tmp:
        config = peer_config(n, B, y, args.repeats, 1, segment, args.seed, tmp + "/")
        found = run_peer(args.peer_binary.resolve(), config, Path(tmp), args.peer_timeout)
    rows = []
    for method in METHODS:
        r = found[method]
        rows.append(
            {
                "library": "megopolis-repo",
                "method": method,
                "distribution": PEER_DISTRIBUTION,
                "precision": "float32",
                "n": n,
                "B": "" if method == "systematic" else B,
                "segment_bytes": args.segment_bytes if method in SEGMENTED else None,
                "time_ms": r["mean_ms"],
                "time_stat": "mean",
                "clock": "host",  # its std::chrono around a launch and cudaDeviceSynchronize
                "repeats": args.repeats,
                "mse_per_n": r["mse_per_n"],
                "mse_calls": args.repeats,
            }
        )
    return rows


def show(row: dict) -> None:
    """One progress line a cell."""
    b = row.get("B")
    print(
        f"{row['library']:14} {row['method']:21} {row['distribution']:11} {row['precision']:7} "
        f"N=2^{int(np.log2(row['n'])):<3} B={'' if b in (None, '') else b:<5} "
        f"{row['time_ms']:10.4f} ms ({row['time_stat']}, {row['clock']})  "
        f"MSE/N {row['mse_per_n']:.4g}",
        flush=True,
    )


def run(args) -> list[dict]:
    xp = np
    if args.backend == "cuda":
        import cupy as xp
    info = run_info(args)
    rows = []

    def emit(row):
        row = {**info, **row}
        rows.append(row)
        show(row)

    for n in args.sizes:
        # The Uphill B table of N, once for every cell of this N, on the backend.
        table = None
        if any(REGISTRY[name].B_rule == "uphill" for name in args.methods):
            table = tuning.ssd_table(n, xp=xp)
        for dist in args.distributions:
            for precision in args.precisions:
                w = xp.asarray(weights.generate(dist, n, 0, seed=args.seed, dtype=precision))
                for method in args.methods:
                    cell = {"distribution": dist, "precision": precision, "n": n}
                    emit({**cell, **measure(w, method, args, table)})
                del w
                if xp is not np:
                    xp.get_default_memory_pool().free_all_blocks()
        if args.peer_binary is not None:
            for row in peer_rows(args, n):
                emit(row)
        # Every N's rows as soon as they exist: a run cut short keeps them.
        write_rows(args.csv, rows, FIELDS)
    return rows


def main(argv=None) -> int:
    run(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
