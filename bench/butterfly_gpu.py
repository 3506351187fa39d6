#!/usr/bin/env python3
"""Butterfly resampling on the GPU next to its peers, in one run on one device
(issue "Güldaş 2015, part 1", Speed; thesis §4.1.4).

For N = 2^16 ... 2^24 and float32 and float64 weights of the thesis's
Gaussian case (x ~ U[-sigma, sigma], g(x) = exp(-x^2 / 2 sigma^2), sigma = 10),
times with CUDA events (``pfresample.api.time_resample``: the method's kernels,
``--warmup`` untimed calls, median of ``--repeats``):

* ``butterfly-multinomial``, ``butterfly-systematic``, ``butterfly-stratified``
  with the default radix sequence (the thesis's rule, ``pfresample.radix``);
* our ``multinomial`` and ``systematic`` in the same precision;
* CuPy's ``cumsum`` + ``searchsorted`` (systematic positions) in the same
  precision (``gpu_resamplers.cupy_systematic``).

Prints each time and, per N and precision, butterfly multinomial's speed-up
over our multinomial; writes the rows to ``--csv``.

    python bench/butterfly_gpu.py --sizes 2^22 2^24 --repeats 20
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from pfresample.api import time_resample
from pfresample.radix import default_radix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cuda_device_info, parse_size, write_rows  # noqa: E402 -- sibling module
from gpu_resamplers import cupy_systematic, event_median_ms  # noqa: E402

METHODS = (
    "butterfly-multinomial",
    "butterfly-systematic",
    "butterfly-stratified",
    "multinomial",
    "systematic",
)
SIGMA = 10.0
FIELDS = ["date", "device", "cuda", "cupy", "library", "method", "precision", "n", "radix",
          "median_ms", "repeats"]  # fmt: skip


def gaussian_weights(n: int, dtype, seed: int = 0) -> np.ndarray:
    """§4.1.4 (a): x ~ U[-sigma, sigma], w = exp(-x^2 / 2 sigma^2)."""
    x = np.random.default_rng(seed).uniform(-SIGMA, SIGMA, n)
    return np.exp(-(x**2) / (2 * SIGMA**2)).astype(dtype)


def main(argv=None) -> None:
    import cupy

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", nargs="+", type=parse_size, default=[2**k for k in range(16, 25, 2)])
    p.add_argument("--precisions", nargs="+", default=["float32", "float64"])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--csv", type=Path, default=Path("results/bench/butterfly_gpu.csv"))
    args = p.parse_args(argv)
    info = cuda_device_info()
    rows = []
    for precision in args.precisions:
        for n in args.sizes:
            w = cupy.asarray(gaussian_weights(n, precision))
            times = {}
            for name in METHODS:
                t = time_resample(w, name, seed=1, repeats=args.repeats, warmup=args.warmup)
                times[name] = t.median_ms
            times["cupy.cumsum+searchsorted"] = event_median_ms(
                lambda w=w: cupy_systematic(w, 0.5), args.repeats, args.warmup
            )
            for name, ms in times.items():
                library, method = (
                    ("cupy", name) if name.startswith("cupy") else ("pfresample", name)
                )
                radix = "x".join(map(str, default_radix(n))) if "butterfly" in name else ""
                row = {"library": library, "method": method, "precision": precision, "n": n}
                rows.append(
                    {**info, **row, "radix": radix, "median_ms": ms, "repeats": args.repeats}
                )
                print(f"{precision:8} N=2^{n.bit_length() - 1:<3} {name:26} {ms:9.4f} ms {radix}")
            speedup = times["multinomial"] / times["butterfly-multinomial"]
            print(f"{precision:8} N=2^{n.bit_length() - 1:<3} butterfly-multinomial is "
                  f"{speedup:.2f}x our multinomial", flush=True)  # fmt: skip
    write_rows(args.csv, rows, FIELDS)


if __name__ == "__main__":
    main()
