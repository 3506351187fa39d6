#!/usr/bin/env bash
# On the lent GPU machine: build the Megopolis repository's resample_test from
# a checkout carried in peers/Megopolis (git-ignored; rapidjson's headers in its
# include/, as its README says), then run bench/peers/megopolis_repo.py with
# the extra arguments. The binary and the CSV go to $OUT.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
peer=peers/Megopolis
mkdir -p "$peer/target" "${OUT:-/tmp}/results"
nvcc --version | tail -1
( cd "$peer" && nvcc -std=c++17 -O3 -use_fast_math -arch=sm_90 -w -o target/resample_test \
    src/benchmarks/resample_testing.cu )
python3 bench/peers/megopolis_repo.py --binary "$peer/target/resample_test" \
    --csv "${OUT:-/tmp}/results/megopolis_repo.csv" "$@"
