#!/usr/bin/env bash
# On the lent GPU machine: the fused filter run's tests, the GPU filter's
# tests, then bench/fused_filter.py (fused against the graph, and its grid).
# Extra arguments go to the benchmark.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
echo "== pytest fused + filter"
python3 -m pytest -m gpu -q -p no:cacheprovider -x tests/test_gpu_fused_filter.py \
    tests/test_gpu_filter.py 2>&1 | tail -6
echo "== bench/fused_filter.py"
mkdir -p "${OUT:-/tmp}/results"
python3 bench/fused_filter.py \
    --csv "${OUT:-/tmp}/results/fused_filter.csv" "$@"
