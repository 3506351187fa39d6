"""The program Nsight Compute profiles for the target dulger2017_profiler: the
cells of one build of the plan (plan.json, written by scripts/dulger2017/profiler.py),
one resampling call each, in plan order, so that the i-th launch ncu profiles
is the i-th cell (pfresample_studies.dulger2017.profiler does the work).

    python scripts/dulger2017/profile_cell.py --plan plan.json --loads l2 \\
        --distribution eq233-y4 --seed 2017
"""

import argparse
import json
import sys

from pfresample_studies.dulger2017 import profiler

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--plan", required=True, help="plan.json of the profiler target")
parser.add_argument("--loads", required=True, help="the build: nc, l1 or l2")
parser.add_argument("--distribution", required=True, help="weight distribution, e.g. eq233-y4")
parser.add_argument("--seed", type=int, required=True)
args = parser.parse_args()

with open(args.plan) as f:
    cells = profiler.cells_of(profiler.cells_from_json(json.load(f)["cells"]), args.loads)
profiler.run_cells(cells, args.distribution, args.seed, log=lambda m: print(m, file=sys.stderr))
