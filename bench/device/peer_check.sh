#!/usr/bin/env bash
# On the lent GPU machine, issue 20 in one call: the Metropolis family's GPU
# tests (CPU<->GPU parity), Metropolis-C1 with and without its segment in
# registers (kernel_variants.sh, the sed turns the register path off), the
# host's share of a Systematic call, Nsight Compute on the cumulative kernels
# at 2^22 and 2^24, and the Megopolis repository side by side
# (megopolis_peer.sh; needs the checkout in peers/Megopolis, carried).
# Everything lands in $OUT: log.txt, the CSVs, ncu_systematic.txt.
# TESTS: the tests' -k expression; SKIP: steps left out, of "tests variants
# host ncu" (SKIP="variants host ncu" gives the tests and the side by side).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp/peer_check}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
want() { [[ " ${SKIP:-} " != *" $1 "* ]]; }
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if want tests; then
    echo "== GPU tests (${SECONDS} s)"
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py tests/test_philox_cuda.py \
        tests/test_weight_properties.py tests/test_interop.py \
        -k "${TESTS:-metropolis or megopolis or philox or repeated_calls}" 2>&1 | tail -4
fi
if want variants; then
    echo "== C1 variants (${SECONDS} s)"
    OUT=$out bash bench/device/kernel_variants.sh "metropolis-c1 metropolis-c2 megopolis" \
        "2^22 2^24" c1-from-memory metropolis.cu 's/cand.packed \&\& dc <= WARP_SIZE/false/'
fi
if want host; then
    echo "== Systematic's host share (${SECONDS} s)"
    python3 bench/device/resample_host_profile.py systematic 4194304 2>&1 | head -30
fi
if want ncu && command -v ncu >/dev/null; then
    echo "== ncu, cumulative kernels (${SECONDS} s)"
    for n in 4194304 16777216; do
        ncu --clock-control none -k 'regex:scan_tiles|systematic' -c 4 \
            --metrics gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warp_latency_per_inst_issued.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum \
            python3 bench/device/systematic_calls.py $n >"$out/ncu_systematic_$n.txt" 2>&1
        grep -E "scan_tiles|systematic<|duration|bytes|throughput|warps_active|inst_executed|stalled|latency|issue_active" \
            "$out/ncu_systematic_$n.txt" | tail -24
    done
fi
echo "== the Megopolis repository side by side (${SECONDS} s)"
OUT=$out bash bench/device/megopolis_peer.sh --sizes 4194304 16777216 ${PEER_ARGS:-}
# The peer's own files in one archive: $OUT returns at most 8 files.
(cd "$out/results" && tar czf ../peer_raw.tar.gz ./*_raw_* && rm -f ./*_raw_*)
echo "== done (${SECONDS} s)"
