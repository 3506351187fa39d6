#!/usr/bin/env bash
# On the lent GPU machine: Nsight Compute's speed-of-light, occupancy and
# warp-state sections of the fused filter kernel at each N given (default
# 2^14 and 2^16), the second run of bench/device/fused_ncu.py.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
for n in "${@:-16384 65536}"; do
    echo "== ncu, N = $n"
    ncu --launch-skip 1 --launch-count 1 -k regex:growth_systematic_run \
        --section SpeedOfLight --section Occupancy --section WarpStateStats \
        python3 bench/device/fused_ncu.py "$n" 2>&1 | grep -v "^==PROF==" | \
        grep -E "Duration|Throughput|Occupancy|Warp Cycles|Stall|Issued|Active Warps|Block Limit|Grid Size|Registers|N=" | head -40
done
