#!/usr/bin/env bash
# On the lent GPU machine: where the issue-20 methods' time goes, with Nsight
# Compute (clocks and caches left alone, so each kernel runs as in a call):
#   1. the device time of one call, ours and the Megopolis repository's
#      (peers/Megopolis, built by megopolis_build.sh), kernel by kernel, for
#      Systematic and Metropolis at 2^22 and 2^24 (kernel_summary.py);
#   2. Systematic's kernels at 2^24: instruction mix (SASS opcodes), issue
#      and memory throughput; Metropolis at 2^24: DRAM and L2 throughput.
# Everything lands in $OUT: bound.txt, ncu_csv.tar.gz.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp/bound_check}
raw=$(mktemp -d)
mkdir -p "$out"
exec > >(tee "$out/bound.txt") 2>&1
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
[ -x peers/Megopolis/target/resample_test ] || bash bench/device/megopolis_build.sh
NCU=(ncu --clock-control none --cache-control none --csv --page raw)
calls=4
for n in 4194304 16777216; do
    for pair in systematic:Systematic metropolis:Metropolis; do
        ours=${pair%%:*} theirs=${pair#*:}
        echo "== $ours, N = $n, $calls calls (${SECONDS} s)"
        "${NCU[@]}" --metrics gpu__time_duration.sum python3 - "$ours" "$n" "$calls" \
            >"$raw/ncu_ours_${ours}_$n.csv" <<'PY'
import sys
import cupy
import pfresample as pr
from pfresample.studies.dulger2017.weights import generate
method, n, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w = cupy.asarray(generate("eq233-y4", n, 0, 1234))
kw = {} if method == "systematic" else {"B": 354}
for seed in range(calls):
    pr.resample(w, method, seed=seed, **kw)
cupy.cuda.Device().synchronize()
PY
        python3 bench/device/kernel_summary.py "$raw/ncu_ours_${ours}_$n.csv" --calls $calls
        echo "-- the Megopolis repository's $theirs, $calls calls"
        tmp=$(mktemp -d)
        python3 bench/device/peer_config.py "$n" "$ours" "$calls" "$tmp"
        (cd "$tmp" && "${NCU[@]}" --metrics gpu__time_duration.sum \
            "$OLDPWD/peers/Megopolis/target/resample_test" config.json) >"$raw/ncu_peer_${theirs}_$n.csv"
        python3 bench/device/kernel_summary.py "$raw/ncu_peer_${theirs}_$n.csv" --calls $calls
    done
done
echo "== Systematic's kernels at 2^24: instruction mix (${SECONDS} s)"
ncu --clock-control none -k 'regex:scan_tiles|systematic' -c 2 \
    --metrics sass__inst_executed_per_opcode,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem \
    --print-metric-instances details python3 bench/device/systematic_calls.py 16777216 2>&1 |
    grep -vE "^==PROF==" | tail -30
echo "== Metropolis at 2^24, one call, B = 354: memory (${SECONDS} s)"
ncu --clock-control none -k 'regex:metropolis' -c 1 \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
    python3 -c "
import cupy, pfresample as pr
from pfresample.studies.dulger2017.weights import generate
w = cupy.asarray(generate('eq233-y4', 1 << 24, 0, 1234))
pr.resample(w, 'metropolis', seed=1, B=354)
cupy.cuda.Device().synchronize()" 2>&1 | grep -vE "^==PROF==" | tail -14
tar czf "$out/ncu_csv.tar.gz" -C "$raw" .
echo "== done (${SECONDS} s)"
