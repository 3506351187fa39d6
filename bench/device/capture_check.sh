#!/usr/bin/env bash
# On a CUDA host, in about a minute: the captured loop (filters/capture.py,
# run_filter(..., capture=True)) checked and timed.
# 1. Its GPU tests, tests/gpu/test_gpu_capture.py (timeout 150 s).
# 2. bench/device/capture_speed.py: the linear-Gaussian model a step,
#    captured against the CuPy loop, beside the growth model's SIR graph, at
#    N = 2^14 and 2^20 (timeout 120 s).
#   bash bench/device/capture_check.sh OUT_DIR
# Writes OUT_DIR/device.txt, pytest.txt, junit.xml, capture_speed.csv and speed.log.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/capture_check.sh OUT_DIR}")
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies >/dev/null 2>&1 || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/device.txt" 2>&1 || true
git rev-parse --short HEAD >>"$out/device.txt" 2>/dev/null || true
PYTHONPATH=src:studies timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/gpu/test_gpu_capture.py --junitxml="$out/junit.xml" >"$out/pytest.txt" 2>&1
echo "pytest exit $?" >>"$out/pytest.txt"
tail -8 "$out/pytest.txt"
PYTHONPATH=src:studies timeout 120 python3 bench/device/capture_speed.py --n 2^14 2^20 \
    --csv "$out/capture_speed.csv" 2>&1 | tee "$out/speed.log"
