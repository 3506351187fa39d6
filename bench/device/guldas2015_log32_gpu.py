"""Issue 40 on a GPU: standard multinomial and systematic on the float32
log-domain scan of Güldaş (2015) Appendix A (precision "log32") beside our
float32 and float64 scans and float32 butterfly multinomial (default radix),
on Figs 4.5-4.8's particle-weight sets: LMSE (eq. 4.6) over T sets with its
99 % interval, the paired difference to float64 on the same sets, and the
median time of a call (CUDA events, 21 calls after a warm-up).

    PYTHONPATH=src python bench/device/guldas2015_log32_gpu.py OUT.csv [--replicates 300]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from pfresample.metrics import confidence_interval
from pfresample_studies.guldas2015 import catalog, experiments

SEED = 2017
CONFIG = {"guldas2015_sigma": 10, "guldas2015_poisson_lambda": 100}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--replicates", type=int, default=300)
    parser.add_argument("--log2-n", type=int, nargs="+", default=[16, 18, 19, 20, 21, 22])
    parser.add_argument("--backend", default="cuda", help="cuda, or cpu for a smoke test")
    args = parser.parse_args()
    targets = catalog.targets(CONFIG)
    rows = []
    for name in ("gaussian", "poisson"):
        target = targets[name]
        for e in args.log2_n:
            n, started = 2**e, time.perf_counter()
            arms = [experiments.Arm(m, p) for m in ("multinomial", "systematic")
                    for p in ("float32", experiments.LOG32, "float64")]  # fmt: skip
            arms.append(experiments.Arm("butterfly-multinomial", "float32", None))
            stream = experiments.stream_of(f"log32-{name}", n)
            w = experiments.timing_weights(target, n, "float32", seed=SEED, stream=stream,
                                           backend=args.backend)  # fmt: skip
            times = [experiments.time_arm(w, arm, seed=SEED, backend=args.backend, repeats=21)
                     for arm in arms]  # fmt: skip
            _, local = experiments.replicate_errors(
                target, n, arms, replicates=args.replicates, seed=SEED, stream=stream,
                backend=args.backend,
            )  # fmt: skip
            base = {a.method: local[k] for k, a in enumerate(arms) if a.precision == "float64"}
            for k, arm in enumerate(arms):
                lmse, half = confidence_interval(local[k] ** 2)
                row = {"target": name, "n": n, "particle_sets": args.replicates,
                       "method": arm.method, "precision": arm.precision, "lmse": lmse,
                       "lmse_ci": half, "time_ms": times[k],
                       "device": experiments.device_name(args.backend)}  # fmt: skip
                if arm.method in base:
                    d, dh = confidence_interval(local[k] ** 2 - base[arm.method] ** 2)
                    row |= {"diff_vs_float64": d, "diff_vs_float64_ci": dh}
                rows.append(row)
            print(f"{name} 2^{e}: {time.perf_counter() - started:.1f} s", flush=True)
            pd.DataFrame(rows).to_csv(args.out, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
