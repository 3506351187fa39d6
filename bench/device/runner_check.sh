#!/usr/bin/env bash
# On a CUDA host, in at most four minutes: the GPU tests of every filter the
# graph runner (filters/graph.py) drives, and of the loop and the paths beside
# it -- the SIR graph, Güldaş's graphs and SMC-EM's E-step, the D3 graph in
# chunks, the captured loop, the engine (the CuPy loop over filters/loop.py),
# the batch, the fused run and the CPF -- in that order, the CPF's many cells
# last, so that a run cut short has covered the rest first. pytest gets SIGINT
# at 225 s, on which it stops, prints its summary and still writes junit.xml
# (bench/device/engine_check.sh runs the same files with more time).
#   bash bench/device/runner_check.sh OUT_DIR
# Writes OUT_DIR/device.txt, pytest.txt (the 25 slowest tests at its end) and junit.xml.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/runner_check.sh OUT_DIR}")
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies >/dev/null 2>&1 || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/device.txt" 2>&1 || true
git rev-parse --short HEAD >>"$out/device.txt" 2>/dev/null || true
PYTHONPATH=src:studies timeout -s INT -k 15 225 python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/gpu/test_gpu_filter.py tests/gpu/test_gpu_guldas.py tests/gpu/test_gpu_d3_filter.py \
    tests/gpu/test_gpu_capture.py tests/gpu/test_gpu_engine.py tests/gpu/test_gpu_sir_batch.py \
    tests/gpu/test_gpu_fused_filter.py tests/gpu/test_gpu_cellular.py \
    --durations=25 --junitxml="$out/junit.xml" >"$out/pytest.txt" 2>&1
echo "pytest exit $?" >>"$out/pytest.txt"
tail -8 "$out/pytest.txt"
