#!/usr/bin/env python3
"""The Megopolis repository's ``resample_test`` beside our kernels, in one run
on one device.

The peer is the code of Chesser, Nguyen and Ranasinghe, "The Megopolis
Resampler: Memory Coalesced Resampling on GPUs" (Digital Signal Processing
2021; github.com/AdelaideAuto-IDLab/Megopolis, MIT). We vendor none of it:
build your own checkout and give the binary with ``--binary``::

    git clone https://github.com/AdelaideAuto-IDLab/Megopolis && cd Megopolis
    mkdir -p include target && cp -R /path/to/rapidjson/include/rapidjson include/
    nvcc -std=c++17 -O3 -use_fast_math -arch=sm_90 -o target/resample_test \\
        src/benchmarks/resample_testing.cu
    python bench/peers/megopolis_repo.py --binary Megopolis/target/resample_test

For each N both sides run Megopolis, Metropolis, Metropolis-C1 and -C2 (s-segments
of ``--segment`` weights) and Systematic on thesis eq. 2.33 weights with the same
y (the peer draws its own weights of that family, its ``RelativeVar``; ours are
``weights.generate``), the same B for every method (Murray et al.'s rule with
epsilon = 1/100 on our weights, given to the peer as its ``Constant`` iterations),
``--runs`` resamplings of each of ``--sequences`` weight sequences. Times are the
host's clock around one call with the device synchronised after it (the peer's
``std::chrono`` around its launch and ``cudaDeviceSynchronize``, its offsets drawn
on the host included; ours around ``pfresample.resample`` and a synchronize):
the peer reports the mean, we report the median and the mean. MSE/N is the
peer's ``mse`` column; ours is the same quantity, sum_i (o_i - N w_i / sum w)^2 / N
averaged over the calls.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import parse_size, write_rows  # noqa: E402 -- the bench folder's module

# Our registry name -> the peer's method type; C1 and C2 take a segment size.
METHODS = {
    "megopolis": "Megopolis",
    "metropolis": "Metropolis",
    "metropolis-c1": "MetropolisC1",
    "metropolis-c2": "MetropolisC2",
    "systematic": "Systematic",
}
SEGMENTED = ("metropolis-c1", "metropolis-c2")
FIELDS = ["date", "device", "library", "method", "n", "y", "B", "segment", "calls",
          "median_ms", "mean_ms", "mse_per_n"]  # fmt: skip


def peer_config(n: int, B: int, y: float, runs: int, sequences: int, segment: int,
                seed: int, prefix: str, only=None) -> dict:  # fmt: skip
    """The peer's JSON configuration (configs/resample_config.json's fields)
    for one N: every method of METHODS (or those of ``only``, our names) with
    B constant iterations."""
    methods = []
    for ours, theirs in METHODS.items():
        if only is not None and ours not in only:
            continue
        m = {"type": theirs}
        if ours != "systematic":
            m.update(mode="Constant", iters=int(B))
        if ours in SEGMENTED:
            m["segment_size"] = int(segment)
        methods.append(m)
    return {
        "resample_methods": methods,
        "weight_params": [{"method": "RelativeVar", "y": float(y)}],
        "particle_values": [[int(n), int(n)]],
        "iters": int(runs),
        "weight_sequences": int(sequences),
        "epsilon": 0.01,
        "output_prefix": prefix,
        "output_suffix": ".csv",
        "seed": int(seed),
    }


def read_peer_csv(path: Path) -> list[dict]:
    """Rows of one of the peer's output files (one per method): N, the mean
    MSE/N over its sequences, and the mean time of a call in ms (the file
    gives seconds)."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not r.get("particles"):
                continue
            rows.append(
                {
                    "n": int(r["particles"]),
                    "mse_per_n": float(r["mse"]),
                    "mean_ms": 1e3 * float(r["time"]),
                }
            )
    return rows


def peer_file(folder: Path, theirs: str) -> Path:
    """The peer's output file of a method type: named by its type, then
    ``_<iters>`` and ``_<segment>`` where they apply."""
    found = sorted(p for p in folder.glob(f"{theirs}*.csv") if p.stem.split("_")[0] == theirs)
    if len(found) != 1:
        raise FileNotFoundError(f"expected one output file of {theirs} in {folder}, got {found}")
    return found[0]


def run_peer(binary: Path, config: dict, folder: Path, timeout: float) -> dict[str, dict]:
    """Run the peer on ``config``; its rows by our method name."""
    path = folder / "config.json"
    path.write_text(json.dumps(config, indent=1))
    done = subprocess.run(
        [str(binary), str(path)], capture_output=True, text=True, timeout=timeout, cwd=folder
    )
    if done.returncode != 0:
        raise RuntimeError(f"{binary} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return {ours: read_peer_csv(peer_file(folder, t))[0] for ours, t in METHODS.items()}


def mse_per_n(ancestors: np.ndarray, w: np.ndarray) -> float:
    """sum_i (o_i - N w_i / sum w)^2 / N for one resampling."""
    n = w.size
    o = np.bincount(ancestors, minlength=n)
    return float(np.sum((o - n * w.astype(np.float64) / w.sum(dtype=np.float64)) ** 2) / n)


def run_ours(method: str, weights: list, B: int, runs: int, segment: int) -> dict:
    """Our side of one cell, as the peer times its own: ``runs`` calls on
    each weight sequence of ``weights`` (host arrays)."""
    import cupy

    import pfresample as pr

    kw = {} if method == "systematic" else {"B": B}
    if method in SEGMENTED:
        kw["segment_bytes"] = 4 * segment
    times, errors = [], []
    for w in weights:
        wd = cupy.asarray(w)
        pr.resample(wd, method, seed=0, **kw)  # compile or load, allocate
        cupy.cuda.Device().synchronize()
        # The calls back to back, as the peer's loop (whose MSE runs on the
        # device between calls): with the MSE on the host between them, the
        # GPU idle meanwhile, each of our calls took about 0.3 ms more.
        out = []
        for r in range(runs):
            start = time.perf_counter()
            out.append(pr.resample(wd, method, seed=1 + r, **kw))
            cupy.cuda.Device().synchronize()
            times.append(1e3 * (time.perf_counter() - start))
        errors += [mse_per_n(a.get(), w) for a in out]
    return {
        "median_ms": statistics.median(times),
        "mean_ms": statistics.mean(times),
        "mse_per_n": statistics.mean(errors),
        "calls": len(times),
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", type=Path, required=True, help="the peer's resample_test")
    p.add_argument("--sizes", type=parse_size, nargs="+", default=[2**22, 2**24])
    p.add_argument("--y", type=float, default=4.0)
    p.add_argument("--runs", type=int, default=8, help="resamplings of each weight sequence")
    p.add_argument("--sequences", type=int, default=2)
    p.add_argument("--segment", type=int, default=32, help="C1/C2 s-segment, in weights")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds for one peer run")
    p.add_argument("--csv", type=Path, default=Path("results/bench/peers/megopolis_repo.csv"))
    args = p.parse_args(argv)
    if not args.binary.is_file():
        p.error(f"--binary {args.binary} is not a file: build the peer first (see --help)")

    import cupy

    import pfresample as pr
    from pfresample_studies.dulger2017.weights import generate

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    info = {"date": datetime.date.today().isoformat(),
            "device": name.decode() if isinstance(name, bytes) else str(name),
            "y": args.y, "segment": args.segment}  # fmt: skip
    rows = []
    for n in args.sizes:
        family = f"eq233-y{args.y:g}"
        weights = [generate(family, n, s, args.seed) for s in range(args.sequences)]
        B = pr.choose_B(weights[0], "metropolis")
        print(f"N = {n}: B = {B}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            config = peer_config(n, B, args.y, args.runs, args.sequences, args.segment,
                                 args.seed, str(folder) + "/")  # fmt: skip
            peer = run_peer(args.binary.resolve(), config, folder, args.timeout)
            args.csv.parent.mkdir(parents=True, exist_ok=True)
            for f in folder.glob("*.*"):  # the peer's own files, beside ours
                shutil.copy(f, args.csv.parent / f"{args.csv.stem}_raw_n{n}_{f.name}")
        for method in METHODS:
            b = "" if method == "systematic" else B
            ours = run_ours(method, weights, B, args.runs, args.segment)
            theirs = peer[method]
            for library, r in (("pfresample", ours), ("megopolis-repo", theirs)):
                rows.append({**info, "library": library, "method": method, "n": n, "B": b,
                             "calls": r.get("calls", args.runs * args.sequences),
                             "median_ms": f"{r['median_ms']:.4g}" if "median_ms" in r else "",
                             "mean_ms": f"{r['mean_ms']:.4g}",
                             "mse_per_n": f"{r['mse_per_n']:.4g}"})  # fmt: skip
            print(
                f"  {method:<14} ours {ours['mean_ms']:8.3f} ms (median {ours['median_ms']:.3f}),"
                f" peer {theirs['mean_ms']:8.3f} ms: ours faster by "
                f"{theirs['mean_ms'] / ours['mean_ms']:.2f}x; MSE/N ours "
                f"{ours['mse_per_n']:.3f}, peer {theirs['mse_per_n']:.3f}",
                flush=True,
            )
    write_rows(args.csv, rows, FIELDS)


if __name__ == "__main__":
    main()
