#!/usr/bin/env bash
# On the device: the GPU tests of D3 resampling and the D3 filter
# (tests/gpu/test_gpu_d3.py, tests/gpu/test_gpu_d3_filter.py, and whatever other test
# files PYTEST_FILES names), then bench/d3_gpu.py with its CSV into OUT_DIR.
# Usage: PYTEST_FILES="tests/gpu/test_gpu.py" bash bench/device/d3_check.sh OUT_DIR [BENCH ARGS ...]
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/d3_check.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# shellcheck disable=SC2086 # PYTEST_FILES is a list of paths
python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gpu_d3.py tests/gpu/test_gpu_d3_filter.py \
    ${PYTEST_FILES:-} 2>&1 | tee "$out/pytest.log" | grep -E "FAILED|Error|passed|failed" | tail -30
python3 bench/d3_gpu.py --csv "$out/d3_gpu.csv" "$@" 2>&1 | tee "$out/bench.log"
