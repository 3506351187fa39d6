#!/usr/bin/env bash
# On the device: the GPU tests of cellular resampling and the cellular
# particle filter (tests/gpu/test_gpu_cellular.py, the registry-wide parity and
# property tests restricted to "cellular"), then bench/cpf_gpu.py, CSV into OUT_DIR.
# Usage: bash bench/device/cpf_check.sh OUT_DIR [BENCH ARGS ...]
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/cpf_check.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
log=$(python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gpu_cellular.py \
    tests/library/test_weight_properties.py tests/gpu/test_gpu.py -k "cellular" 2>&1)
rc=$?
echo "$log" | grep -E "FAILED|Error|passed|failed" | tail -40
[ $rc -eq 0 ] || { echo "$log" | grep -B5 -A40 "^____" | head -150; }
python3 bench/cpf_gpu.py --csv "$out/cpf_gpu.csv" "$@"
for cfg in 16384:256 16384:32; do
    ncu --kernel-name regex:cpf_growth_step --launch-skip 20 --launch-count 5 \
        --metrics gpu__time_duration.sum python3 bench/device/cpf_profile.py "$cfg" 2>&1 |
        grep "gpu__time_duration" | sed "s/^/$cfg /"
done
