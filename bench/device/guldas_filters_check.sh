#!/usr/bin/env bash
# On the device: the GPU tests of Güldaş's resamplers and filters
# (tests/gpu/test_gpu_guldas.py, the butterfly's parity tests, the SIR filter's
# GPU tests), then bench/guldas_filters_gpu.py, CSV into OUT_DIR.
# Usage: bash bench/device/guldas_filters_check.sh OUT_DIR [BENCH ARGS ...]
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/guldas_filters_check.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
log=$(python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gpu_guldas.py \
    tests/library/test_butterfly.py tests/gpu/test_gpu_filter.py 2>&1)
rc=$?
echo "$log" | grep -E "FAILED|Error|passed|failed" | tail -40
[ $rc -eq 0 ] || { echo "$log" | grep -B5 -A40 "^____" | head -150; exit 1; }
python3 bench/guldas_filters_gpu.py --csv "$out/guldas_filters_gpu.csv" "$@"
