#!/usr/bin/env bash
# On the device: the butterfly's GPU parity tests, then bench/butterfly_gpu.py
# (the butterfly against our multinomial, systematic and CuPy), CSV into OUT_DIR.
# Usage: bash bench/device/butterfly_check.sh OUT_DIR [SIZES ...]   (default 2^20 2^22 2^24)
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/butterfly_check.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
log=$(python3 -m pytest -m gpu -q -x -p no:cacheprovider tests/library/test_butterfly.py 2>&1) || {
    echo "$log" | tail -60
    exit 1
}
echo "$log" | tail -1
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2^20 2^22 2^24)
python3 bench/butterfly_gpu.py --sizes "${sizes[@]}" --repeats 20 --csv "$out/butterfly_gpu.csv" \
    | grep -E "multinomial|systematic  "
