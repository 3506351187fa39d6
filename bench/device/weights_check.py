"""On the GPU machine: every method on the weight classes of the weight
contract (docs/library.md), CPU against GPU, printing one line per case:
whether the ancestors are equal and whether a zero weight was chosen.

    python3 bench/device/weights_check.py [--n N]
"""

from __future__ import annotations

import argparse

import cupy
import numpy as np

import pfresample as pr
from pfresample.resampling.registry import ancestor_methods

CHAINS = {"metropolis", "metropolis-c1", "metropolis-c2", "uphill", "uphill-ca", "uphill-c1"}


def cases(n: int, rng) -> dict:
    gamma = rng.gamma(1.0, 2.0, n)
    half_zero = np.where(rng.uniform(size=n) < 0.5, 0.0, gamma)
    runs = gamma.copy()
    runs[: n // 8] = 0
    runs[n // 2 : n // 2 + n // 8] = 0
    runs[-n // 8 :] = 0
    return {
        "huge32": rng.uniform(1.5e38, 3e38, n).astype(np.float32),
        "subnormal32": (rng.uniform(0, 1, n) * 1e-39).astype(np.float32),
        "zeros32": half_zero.astype(np.float32),
        "runs32": runs.astype(np.float32),
        "gamma32": gamma.astype(np.float32),
        "wide64": np.r_[1e6, np.full(n - 1, 1e-6)],
        "huge64": rng.uniform(1e307, 1.7e308, n),
        "tiny64": rng.uniform(0, 1, n) * 1e-310,
        "zeros64": half_zero,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=3 * 2**18)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    failures = 0
    for name, w in cases(args.n, rng).items():
        for method, m in ancestor_methods().items():
            if method == "rejection" and name == "wide64":
                continue  # about N * max / sum = N tries a particle
            kw = {"B": 16} if m.B_rule else {}
            for log in (False, True):
                with np.errstate(divide="ignore"):
                    lw = np.log(w) if log else w
                try:
                    cpu = pr.resample(lw, method, seed=5, backend="cpu", log=log, **kw)
                    gpu = pr.resample(cupy.asarray(lw), method, seed=5, log=log, **kw).get()
                except Exception as error:  # noqa: BLE001 - report every case
                    failures += 1
                    print(f"{name:12s} {method:14s} log={log!s:5s} ERROR {error}")
                    continue
                same = bool((cpu == gpu).all())
                zero = (w[gpu] == 0) & ((gpu != np.arange(w.size)) if method in CHAINS else True)
                failures += (not same) + bool(zero.any())
                print(
                    f"{name:12s} {method:14s} log={log!s:5s} same={same} "
                    f"differ={int((cpu != gpu).sum())} zero_chosen={int(zero.sum())}"
                )
    print(f"== weights_check: {failures} failing cases")


if __name__ == "__main__":
    main()
