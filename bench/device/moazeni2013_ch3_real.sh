#!/usr/bin/env bash
# Moazeni (2013) chapter 3 on one GPU host (16 cores), in under 4 minutes: the real
# instances' GPU tests, then bench/moazeni2013_ch3_real.py -- the least-perimeter
# triangulation of a convex 8,192-gon (float32) and the matrix-chain order of 8,191
# matrices (int32), the recurrence with its w(i, k, j) term, on the GPU (block sizes 32,
# 64, 128) and on the best CPU code on every core (native/dp_weighted.c), each GPU matrix
# checked equal to the CPU's -- and chapter 3's GPU cell from n = 64 and Fig 12 behind
# delay_ns (--chapter-cells).
#
#   PFRESAMPLE_COMMIT=<the commit sent> bash bench/device/moazeni2013_ch3_real.sh OUT_DIR
#
# Writes OUT_DIR/real.csv, gpu_cell.csv, fig12.csv, pytest.log, bench.log, device.txt,
# commit.txt. The copied tree's .git may be stale: the rows record $PFRESAMPLE_COMMIT.
set -uo pipefail
OUT="${1:?usage: bash bench/device/moazeni2013_ch3_real.sh OUT_DIR}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH=$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}
export OMP_WAIT_POLICY=PASSIVE
if [ -z "${PFRESAMPLE_COMMIT:-}" ]; then
    echo "warning: PFRESAMPLE_COMMIT unset; rows record git's HEAD, which may be stale" >&2
fi
echo "${PFRESAMPLE_COMMIT:-unset (git HEAD $(git rev-parse HEAD 2>/dev/null || echo none))}" >"$OUT/commit.txt"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; lscpu | grep "Model name"; } \
    | tee "$OUT/device.txt"
start=$(date +%s)
timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_gpu_moazeni2013_weighted.py \
    >"$OUT/pytest.log" 2>&1
echo "pytest rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$OUT/pytest.log"
tail -3 "$OUT/pytest.log"
timeout 170 python3 bench/moazeni2013_ch3_real.py --out "$OUT" --chapter-cells 2>&1 | tee "$OUT/bench.log"
echo "bench rc=${PIPESTATUS[0]} (all $(( $(date +%s) - start )) s)" | tee -a "$OUT/bench.log"
