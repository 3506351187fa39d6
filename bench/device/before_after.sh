#!/usr/bin/env bash
# On the lent GPU machine: the resampler benchmark (bench/gpu_resamplers.py)
# at N = 2^22 and 2^24 for the checkout ("after") and for an older tree
# ("before", e.g. `git archive BASE src gpu_kernels | tar -x -C build/base`,
# carried), alternating, ROUNDS times each, in one run on one device; then
# the per-method ratio after/before of the medians (bench/compare_timings.py).
#   bash bench/device/before_after.sh build/base [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
base=${1:?usage: before_after.sh BASE_TREE [ROUNDS]}
rounds=${2:-2}
out=${OUT:-/tmp/before_after}
mkdir -p "$out"
for r in $(seq "$rounds"); do
    for side in before after; do
        tree=$PWD; [ "$side" = before ] && tree=$(cd "$base" && pwd)
        echo "== round $r: $side ($tree)"
        PYTHONPATH=$tree/src PFRESAMPLE_KERNEL_DIR=$tree/gpu_kernels \
            python3 bench/gpu_resamplers.py --sizes 2^22 2^24 --csv "$out/${side}_$r.csv" | tail -3
    done
done
python3 bench/compare_timings.py "$out"/before_*.csv --after "$out"/after_*.csv
