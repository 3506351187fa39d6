#!/usr/bin/env bash
# Moazeni (2013) on one GPU host, chapter 3 or 4: the chapter's GPU tests, then its
# benchmark, at most ~10 minutes.
#
#   bash bench/device/moazeni2013_gpu.sh 3 OUT_DIR   # non-serial polyadic DP
#   bash bench/device/moazeni2013_gpu.sh 4 OUT_DIR   # the lock-free hash table
#
# Writes OUT_DIR/pytest.log, bench.log and the benchmark's CSVs. Needs CuPy, NumPy, a C/C++
# compiler with OpenMP and threads; runs the checkout's src/ and gpu_kernels/.
# Chapter 3 (bench/moazeni2013_ch3_gpu.py: the GPU bottom-up order at n = 1,024 ... 8,192,
# blocks 16 ... 256, beside the compiled CPU baseline; gpu.csv, cpu.csv): the C baseline runs
# (n^3 - n)/6 min-plus operations at ~0.7 G/s a thread, so n = 4,096 takes ~16 s on one
# thread and 8,192 runs on every core only. Chapter 4 (bench/moazeni2013_ch4.py on the GPU
# and on 1 and all host threads, normal keys, DEK, batches 2^12 ... 2^18, PH 1 ... 320 and
# GPU_BIG; ch4.csv): one table (PH = 1) of 1,024 buckets walks ~1,900 nodes an operation on
# normal keys, ~13 s a 2^18 batch a CPU thread. Each benchmark stops starting cells at 400 s.
set -uo pipefail
CHAPTER="${1:?usage: bash bench/device/moazeni2013_gpu.sh 3|4 OUT_DIR}"
OUT="${2:?usage: bash bench/device/moazeni2013_gpu.sh 3|4 OUT_DIR}"
case "$CHAPTER" in
    3) tests=(tests/gpu/test_gpu_moazeni2013.py tests/studies/moazeni2013)
       bench=(bench/moazeni2013_ch3_gpu.py) ;;
    4) tests=(tests/gpu/test_gpu_moazeni2013_hashtable.py
              tests/studies/moazeni2013/test_moazeni2013_hashtable.py)
       bench=(bench/moazeni2013_ch4.py --gpu --big --distributions normal) ;;
    *) echo "chapter must be 3 or 4, got $CHAPTER" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/pytest.log"
timeout 120 python3 -m pytest -q -p no:cacheprovider "${tests[@]}" >> "$OUT/pytest.log" 2>&1
echo "pytest rc=$?" >> "$OUT/pytest.log"
timeout 480 python3 "${bench[@]}" --out "$OUT" --deadline 400 > "$OUT/bench.log" 2>&1
echo "bench rc=$?" >> "$OUT/bench.log"
