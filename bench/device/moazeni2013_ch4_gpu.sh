#!/usr/bin/env bash
# Moazeni (2013) chapter 4 on one GPU host: the GPU tests of the hash table, then
# bench/moazeni2013_ch4.py on the GPU and on the host's CPU threads (1 and all), the
# normal keys, DEK, batches 2^12 ... 2^18, PH 1 ... 320 and GPU_BIG, ~8 minutes.
#
#   bash bench/device/moazeni2013_ch4_gpu.sh OUT_DIR
#
# Writes OUT_DIR/pytest.log, bench.log, ch4.csv. Sizing: one table (PH = 1) of 1,024
# buckets walks ~1,900 nodes an operation on normal keys (CPU, 2-core Xeon: 0.02 Mops/s a
# thread), so a 2^18 batch takes ~13 s a thread there; the deadline stops new cells at 400 s.
set -uo pipefail
OUT="${1:?usage: bash bench/device/moazeni2013_ch4_gpu.sh OUT_DIR}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/pytest.log"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_moazeni2013_hashtable.py \
    tests/studies/moazeni2013/test_moazeni2013_hashtable.py >> "$OUT/pytest.log" 2>&1
echo "pytest rc=$?" >> "$OUT/pytest.log"
timeout 480 python3 bench/moazeni2013_ch4.py --out "$OUT" --gpu --big --distributions normal \
    --deadline 400 > "$OUT/bench.log" 2>&1
echo "bench rc=$?" >> "$OUT/bench.log"
