#!/usr/bin/env bash
# On the lent GPU machine: Metropolis-C1 at 2^22 (B = 354, 32-weight segments)
# under Nsight Compute, ours and the Megopolis repository's kernel: duration,
# issue activity, instructions, the busiest pipe. peers/Megopolis carried.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
[ -x peers/Megopolis/target/resample_test ] || bash bench/device/megopolis_build.sh >/dev/null
M=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,launch__registers_per_thread
echo "== ours"
ncu --clock-control none -k 'regex:^metropolis' -c 1 --metrics $M python3 -c "
import cupy, pfresample as pr
from pfresample.studies.dulger2017.weights import generate
w = cupy.asarray(generate('eq233-y4', 1 << 22, 0, 1234))
pr.resample(w, 'metropolis-c1', seed=1, B=354, segment_bytes=128)
cupy.cuda.Device().synchronize()" 2>&1 | grep -E "metropolis<|\.sum|pct|registers"
echo "== the Megopolis repository's"
tmp=$(mktemp -d)
python3 bench/device/peer_config.py 4194304 metropolis-c1 1 "$tmp"
(cd "$tmp" && ncu --clock-control none -k 'regex:metropolis_c1' -c 1 --metrics $M \
    "$OLDPWD/peers/Megopolis/target/resample_test" config.json 2>&1 | grep -E "metropolis_c1|\.sum|pct|registers")
