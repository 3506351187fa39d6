#!/usr/bin/env bash
# On a CUDA host: the filter engine's GPU half checked and timed in one run.
# 1. The GPU tests of the filters (pytest -m gpu): the engine's parity and
#    log-likelihood tests, the SIR graph, the fused run, the D3 and Güldaş
#    graphs, the batch, the CPF, the kernels' sources.
# 2. bench/gpu_filter_peers.py (systematic, growth model, 100 steps, median of
#    REPEATS runs) at N = 2^14, 2^16, 2^18, 2^22, ours against the PyTorch
#    CUDA-graph filter, for each tree NAME=PATH (PATH a folder with src/ and
#    gpu_kernels/; `.` the checkout; a commit as
#    `git archive COMMIT src gpu_kernels | tar -x -C build/NAME`, carried),
#    alternating the trees ROUNDS times after one dropped warm-up round.
#   bash bench/device/engine_check.sh OUT_DIR 3 base=build/base head=.
# Writes OUT_DIR/pytest.txt, OUT_DIR/junit.xml and OUT_DIR/peers_NAME_ROUND.csv.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/engine_check.sh OUT_DIR ROUNDS NAME=PATH ...}")
rounds=${2:-3}
shift 2 || shift $#
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies >/dev/null 2>&1 || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/device.txt" 2>&1 || true
git rev-parse --short HEAD >>"$out/device.txt" 2>/dev/null || true
PYTHONPATH=src:studies timeout 420 python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/gpu/test_gpu_engine.py tests/gpu/test_gpu_fused_filter.py tests/gpu/test_gpu_filter.py \
    tests/gpu/test_gpu_d3_filter.py tests/gpu/test_gpu_guldas.py tests/gpu/test_gpu_sir_batch.py \
    tests/gpu/test_gpu_cellular.py tests/gpu/test_kernel_sources.py \
    --junitxml="$out/junit.xml" >"$out/pytest.txt" 2>&1
echo "pytest exit $?" >>"$out/pytest.txt"
tail -15 "$out/pytest.txt"
[ $# -gt 0 ] || exit 0
work=$(mktemp -d)
names=()
declare -A tree
for spec in "$@"; do
    tree[${spec%%=*}]=$(cd "${spec#*=}" && pwd)
    names+=("${spec%%=*}")
done
for r in $(seq 0 "$rounds"); do  # round 0 warms the device up and is dropped
    for v in "${names[@]}"; do
        t=${tree[$v]}
        PYTHONPATH=$t/src PFRESAMPLE_KERNEL_DIR=$t/gpu_kernels PFRESAMPLE_KERNEL_CACHE=$work/kc_$v \
            python3 bench/gpu_filter_peers.py --n 2^14 2^16 2^18 2^22 --ours systematic \
            --peers torch-graph --repeats 9 --warmup 2 --csv "$out/peers_${v}_$r.csv" >/dev/null 2>&1 \
            || echo "bench failed: $v round $r"
    done
    echo "== round $r done"
done
rm -f "$out"/peers_*_0.csv
