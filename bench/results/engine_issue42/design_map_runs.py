"""36 runs of the design map (TREE/bench/design_map.py's one_run: growth, bot,
lg; N = 2^10; seeds 0, 1; six resamplers) with TREE's pfresample, as CSV on
stdout (floats as repr), so that two trees' outputs compare with diff.

    OPENBLAS_NUM_THREADS=1 python design_map_runs.py TREE > TREE.csv
"""

import csv
import sys
from pathlib import Path

TREE = Path(sys.argv[1]).resolve()
sys.path[:0] = [str(TREE / "bench"), str(TREE / "src")]
import design_map as dm  # noqa: E402

METHODS = ("systematic", "metropolis", "uphill", "butterfly-systematic", "cellular", "d3")
writer = csv.writer(sys.stdout)
writer.writerow(["model", "method", "seed", "rmse", "rmse_exact", "log_likelihood", "ess_mean"])
for name in dm.MODELS:
    model, truth, y, means, exact = dm.trajectory(name)
    for seed in (0, 1):
        for method in METHODS:
            r = dm.one_run(name, model, truth, y, means, exact, 1024, method, seed)
            writer.writerow([name, method, seed, repr(r["rmse"]), repr(r["rmse_exact"]),
                             repr(r["log_likelihood"]), repr(r["ess_mean"])])  # fmt: skip
