#!/usr/bin/env bash
# Moazeni (2013) chapter 6 under Nsight Compute on one CUDA host: one iteration of each
# solver (GlobalSync's five kernels, ThreadSync's and UnSync's one) at 128^3 (Table 10's
# size), 8 x 8 and 16 x 16 tiles: achieved occupancy, the limits on blocks an SM, the
# DRAM traffic and the time of every launch (Table 10's "from the profiler" columns).
#
#   bash bench/device/moazeni2013_ch6_ncu.sh OUT_DIR
#
# Writes OUT_DIR/ncu_<variant>_<tile>.csv (ncu's raw CSV, base units). ncu's defaults stay
# (caches flushed before each replay, clocks locked to base): its times are not the
# pipeline's free-running ones.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/moazeni2013_ch6_ncu.sh OUT_DIR}")
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH=$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
metrics=gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__occupancy_limit_warps,launch__registers_per_thread,launch__shared_mem_per_block_static,dram__bytes_read.sum,dram__bytes_write.sum
for variant in global_sync thread_sync unsync; do
    for tile in 8 16; do
        ncu --csv --log-file "$out/ncu_${variant}_${tile}.csv" --print-units base \
            --kernel-name "regex:^tv_(llt|norm|reduce|p|solver|threadsync|unsync)$" \
            --metrics "$metrics" python3 - "$variant" "$tile" > "$out/run_${variant}_${tile}.log" 2>&1 <<'PY'
import sys
from pfresample_studies.moazeni2013 import tv_experiments as te, tv_gpu
case = te.make_case(128, 2017, 12, 0.05)
s = tv_gpu.Solver(case.L0, case.d_hat, sys.argv[1], int(sys.argv[2]), lam=3.0, eps=0.01, step=0.003)
s.iterate(1)
PY
        echo "$variant $tile rc=$?"
    done
done
