#!/usr/bin/env bash
# On a CUDA host: the fused filter run's tests, the GPU filter's
# tests, then bench/fused_filter.py (fused against the graph, and its grid).
# Extra arguments go to the benchmark.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/fused_check.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
echo "== pytest fused + filter"
python3 -m pytest -m gpu -q -p no:cacheprovider -x tests/gpu/test_gpu_fused_filter.py \
    tests/gpu/test_gpu_filter.py 2>&1 | tail -6
echo "== bench/fused_filter.py"
mkdir -p "$out/results"
python3 bench/fused_filter.py \
    --csv "$out/results/fused_filter.csv" "$@"
