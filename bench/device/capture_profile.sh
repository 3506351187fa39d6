#!/usr/bin/env bash
# On a CUDA host, in about a minute: every kernel node of a captured user
# model's replay (bench/device/capture_profile.py, the linear-Gaussian model,
# Systematic, 3 steps) with its device time from ncu, at N = 2^14 and 2^20.
#   bash bench/device/capture_profile.sh OUT_DIR
# Writes OUT_DIR/kernels_<log2 N>.csv (ncu's CSV) and profile.log.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/capture_profile.sh OUT_DIR}")
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
for e in 14 20; do
    PYTHONPATH=src:studies timeout 120 ncu --profile-from-start off --graph-profiling node \
        --csv --metrics gpu__time_duration.sum \
        python3 bench/device/capture_profile.py --n "2^$e" >"$out/kernels_$e.csv" 2>>"$out/profile.log"
    echo "N=2^$e ncu rc=$? kernels $(grep -c gpu__time_duration "$out/kernels_$e.csv")" | tee -a "$out/profile.log"
done
