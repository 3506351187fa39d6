"""Why the Rejection filter is slower than Metropolis at N = 2^16-2^18 (Table 6.2), measured.

For the growth model (eqs. 2.34-2.35, T = 100) on the GPU filter, with stage times:

1. per step k of the first runs: w~'s M_k = max / mean = N / sum(w~) (the
   maximum is 1), Metropolis's B_k, and each method's stage-4 time;
2. Rejection's stage 4 with the lane group forced to 1 (the queued kernel)
   or 4, or the launcher's own choice (``auto``), each with the tail pass's
   cap factor forced to 0 (no tail pass), 1, 2, 4, or the launcher's own
   choice (``auto``), against Metropolis. Neither changes the ancestors
   (tests/test_gpu.py), only the time.

Writes $OUT/rejection_steps.csv and $OUT/rejection_groups.csv and prints a summary.
Usage on the device: python bench/device/rejection_filter_probe.py [log2 N ...]
"""

from __future__ import annotations

import csv
import os
import sys
import time
from pathlib import Path

import numpy as np

from pfresample.constants import EPSILON_FILTER
from pfresample.cuda import geometry, workspace
from pfresample.filters import sir_gpu
from pfresample.models.growth import GrowthModel
from pfresample.resampling.registry import get_method
from pfresample.studies.dulger2017.filter_experiments import run_seed
from pfresample.studies.dulger2017.trajectories import growth_trajectories
from pfresample.validation import check_params, kernel_arguments

SEED, STEPS, TRAJECTORIES, RUNS = 2017, 100, 4, 5
GROUPS = ("auto", 1, 4)
FACTORS = (0.0, 1.0, 2.0, 4.0)  # the tail pass's cap factor (geometry.tail_factor); 0: none
GROUP_COLUMNS = (
    "log2n", "group", "tail_factor", "auto_group", "auto_tail_factor",
    "rejection_stage4_ms", "metropolis_stage4_ms", "metropolis_over_rejection",
)  # fmt: skip
OUT = Path(os.environ.get("OUT", "."))


def graph(method: str, n: int):
    m = get_method(method)
    params = check_params(m, {"epsilon": EPSILON_FILTER} if m.B_rule == "metropolis" else {})
    kw = kernel_arguments(m, n, 4, None, None, params)
    sir_gpu._GRAPHS.clear()  # a forced group is not part of the cache key
    return sir_gpu.filter_graph(GrowthModel(), m, n, STEPS, kw, params, timed=True)


def runs(g, y, n):
    """Stage-4 seconds (T,) of each run, M_k and B_k (T,) of each run."""
    out = []
    for j in range(TRAJECTORIES):
        for r in range(RUNS):
            res = g.run(y[j], run_seed(SEED, "growth", n, j, r))
            sums = g.stats[:, workspace.STAT_SUM].get()
            out.append((res.stage_seconds[:, 3], n / sums, res.B, res.total_seconds))
    return out


def main(log2ns) -> None:
    y = growth_trajectories(TRAJECTORIES, STEPS, SEED)["y"]
    original, original_tail = geometry.lane_group, geometry.tail_factor
    steps_rows, group_rows = [], []
    for log2n in log2ns:
        n = 2**log2n
        met = runs(graph("metropolis", n), y, n)
        t_met = np.median([s.sum() for s, *_ in met])
        for group in GROUPS:
            for factor in ("auto", *FACTORS):
                if group != "auto":
                    geometry.lane_group = lambda lanes, block, capacity, g=group: g
                if factor != "auto":
                    geometry.tail_factor = lambda lanes, capacity, group, f=factor: f
                start = time.perf_counter()
                rej = runs(graph("rejection", n), y, n)
                geometry.lane_group, geometry.tail_factor = original, original_tail
                t_rej = np.median([s.sum() for s, *_ in rej])
                block = geometry.block_size(n)
                capacity = geometry.resident_threads(
                    "rejection.cu", "rejection_grouped<float>", block
                )
                g_auto = original(n, block, capacity)
                chosen = (g_auto, original_tail(n, capacity, g_auto))
                group_rows.append(
                    (log2n, group, factor, *chosen, 1e3 * t_rej, 1e3 * t_met, t_met / t_rej)
                )
                print(
                    f"2^{log2n} group {group!s:4s} factor {factor!s:4s} (auto = {chosen}): "
                    f"stage 4 {1e3 * t_rej:8.3f} ms a run, Metropolis {1e3 * t_met:8.3f} ms "
                    f"({time.perf_counter() - start:.1f} s)",
                    flush=True,
                )
                if group == "auto" and factor == "auto":
                    for (s_r, m_k, _, _), (s_m, _, b_k, _) in zip(rej[:2], met[:2], strict=True):
                        for k in range(STEPS):
                            steps_rows.append(
                                (log2n, k, m_k[k], b_k[k], 1e6 * s_r[k], 1e6 * s_m[k])
                            )
    with open(OUT / "rejection_groups.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(GROUP_COLUMNS)
        w.writerows(group_rows)
    with open(OUT / "rejection_steps.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["log2n", "step", "M", "metropolis_B", "rejection_stage4_us", "metropolis_stage4_us"]
        )
        w.writerows(steps_rows)
    steps = np.array(steps_rows)
    for log2n in log2ns:
        s = steps[steps[:, 0] == log2n]
        corr_r = np.corrcoef(s[:, 2], s[:, 4])[0, 1]
        corr_m = np.corrcoef(s[:, 2], s[:, 5])[0, 1]
        print(f"2^{log2n}: M median {np.median(s[:, 2]):.1f}, max {s[:, 2].max():.1f}; corr(M, t) "
              f"rejection {corr_r:.2f}, metropolis {corr_m:.2f}; step us median rej "
              f"{np.median(s[:, 4]):.1f} met {np.median(s[:, 5]):.1f}; max rej {s[:, 4].max():.1f} "
              f"met {s[:, 5].max():.1f}")  # fmt: skip


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [14, 16, 18, 20, 22])
