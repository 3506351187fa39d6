#!/usr/bin/env bash
# Moazeni (2013) chapter 3 on one GPU host: the GPU tests of the kernels, then
# bench/moazeni2013_ch3_gpu.py (GPU bottom-up at n = 1,024 ... 8,192, blocks 16 ... 256,
# beside the compiled CPU baseline), at most ~8 minutes.
#
#   bash bench/device/moazeni2013_ch3_gpu.sh OUT_DIR
#
# Writes OUT_DIR/pytest.log, bench.log, gpu.csv, cpu.csv. Needs CuPy, NumPy, a C compiler
# with OpenMP; runs the checkout's src/ and gpu_kernels/.
# Sizing: the C baseline runs (n^3 - n)/6 min-plus operations at ~0.7 G/s a thread (2-core
# Xeon, tests): n = 4,096 takes ~16 s on one thread, 8,192 ~2 min on one (skipped: the
# all-core run only). The GPU cells are unmeasured (first run); the deadline stops
# starting new n after 400 s.
set -uo pipefail
OUT="${1:?usage: bash bench/device/moazeni2013_ch3_gpu.sh OUT_DIR}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/pytest.log"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_moazeni2013.py \
    tests/studies/moazeni2013 >> "$OUT/pytest.log" 2>&1
echo "pytest rc=$?" >> "$OUT/pytest.log"
timeout 480 python3 bench/moazeni2013_ch3_gpu.py --out "$OUT" --deadline 400 > "$OUT/bench.log" 2>&1
echo "bench rc=$?" >> "$OUT/bench.log"
