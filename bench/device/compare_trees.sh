#!/usr/bin/env bash
# On a CUDA host: the resampler benchmark (bench/gpu_resamplers.py)
# at N = 2^22 and 2^24 for several source trees, alternating, ROUNDS times
# after one dropped warm-up round, in one run on one device; then each
# tree's per-method ratio to the first (bench/compare_timings.py), and with
# NCU=1 ncu's launch, occupancy, warp-state and instruction sections of the
# cumulative kernels of bench/device/systematic_calls.py for every tree. A
# tree is NAME=PATH, PATH a folder with src/ and gpu_kernels/ (`.` for the
# checkout; older commits via
# `git archive COMMIT src gpu_kernels | tar -x -C build/NAME`, carried).
# METHODS: the methods to time (default: every method with a kernel).
#   METHODS="systematic stratified" bash bench/device/compare_trees.sh OUT_DIR 3 base=build/base head=.
# Everything lands in OUT_DIR: summary.txt, and the CSVs in runs.tar.gz.
set -euo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/compare_trees.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rounds=${1:?usage: compare_trees.sh ROUNDS NAME=PATH ...}
shift
work=$(mktemp -d)
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
names=()
declare -A tree
for spec in "$@"; do
    name=${spec%%=*}
    tree[$name]=$(cd "${spec#*=}" && pwd)
    names+=("$name")
done
methods=(${METHODS:+--methods $METHODS})
for r in $(seq 0 "$rounds"); do  # round 0 warms the device up and is dropped
    for v in "${names[@]}"; do
        t=${tree[$v]}
        PYTHONPATH=$t/src PFRESAMPLE_KERNEL_DIR=$t/gpu_kernels PFRESAMPLE_KERNEL_CACHE=$work/kc_$v \
            python3 bench/gpu_resamplers.py --sizes 2^22 2^24 --repeats 30 \
            "${methods[@]}" --csv "$work/${v}_$r.csv" >/dev/null
    done
    echo "== round $r done"
done
rm -f "$work"/*_0.csv
first=${names[0]}
for v in "${names[@]:1}"; do
    echo "== $v / $first" | tee -a "$summary"
    python3 bench/compare_timings.py "$work/${first}"_*.csv --after "$work/${v}"_*.csv | tee -a "$summary"
done
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
    for v in "${names[@]}"; do
        t=${tree[$v]}
        echo "== ncu: $v" >>"$summary"
        PYTHONPATH=$t/src PFRESAMPLE_KERNEL_DIR=$t/gpu_kernels PFRESAMPLE_KERNEL_CACHE=$work/kc_$v \
            ncu -k regex:'scan_tiles|systematic' --launch-skip 4 --launch-count 2 \
            --section SpeedOfLight --section LaunchStats --section Occupancy \
            --section WarpStateStats --section InstructionStats \
            python3 bench/device/systematic_calls.py 2>&1 | grep -v '^==PROF==' >"$work/ncu_$v.txt" || true
        grep -E '^  [a-z_]+<|Duration|Registers Per|Executed Instructions  |Achieved Occupancy|Warp Cycles Per Issued|Compute \(SM\)' \
            "$work/ncu_$v.txt" >>"$summary" || true
    done
fi
tar -czf "$out/runs.tar.gz" -C "$work" $(cd "$work" && ls *.csv ncu_*.txt 2>/dev/null)
cat "$summary" | tail -40
