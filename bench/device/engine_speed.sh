#!/usr/bin/env bash
# On a CUDA host, in about 3 minutes: the filter engine's GPU half after the
# plan cache and the captured loop, checked and timed in one run.
# 1. A focused subset of the filters' GPU tests (timeout 90 s): the captured
#    loop, the engine's GPU paths and log-likelihoods, the fused run.
# 2. bench/gpu_filter_peers.py (systematic through run_filter, growth model,
#    100 steps, median of 9) at N = 2^14, 2^16, 2^18, 2^22 against the
#    PyTorch CUDA-graph filter, for the base tree build/base (made here by
#    `git archive BASE src gpu_kernels | tar -x -C build/base`, carried) and
#    the checkout, alternating base/head then head/base in 2 rounds.
# 3. bench/device/capture_speed.py: the linear-Gaussian model a step,
#    captured against the CuPy loop, beside the growth model's SIR graph, at
#    N = 2^14 and 2^20.
#   bash bench/device/engine_speed.sh OUT_DIR
# Writes OUT_DIR/device.txt, pytest.txt, junit.xml, peers_{base,head}_{1,2}.csv,
# capture_speed.csv and speed.log.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/engine_speed.sh OUT_DIR}")
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies >/dev/null 2>&1 || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/device.txt" 2>&1 || true
git rev-parse --short HEAD >>"$out/device.txt" 2>/dev/null || true
PYTHONPATH=src:studies timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/gpu/test_gpu_capture.py tests/gpu/test_gpu_fused_filter.py \
    tests/gpu/test_gpu_engine.py -k "capture or fused or log_likelihood or auto or users or documents" \
    --junitxml="$out/junit.xml" >"$out/pytest.txt" 2>&1
echo "pytest exit $?" >>"$out/pytest.txt"
tail -8 "$out/pytest.txt"
work=$(mktemp -d)
declare -A tree=([head]=$(pwd))
if [ -d build/base/src ]; then tree[base]=$(cd build/base && pwd); else echo "no build/base: head only"; fi
for r in 1 2; do
    order="base head"; [ "$r" = 2 ] && order="head base"
    for v in $order; do
        [ -n "${tree[$v]:-}" ] || continue
        t=${tree[$v]}
        PYTHONPATH=$t/src PFRESAMPLE_KERNEL_DIR=$t/gpu_kernels PFRESAMPLE_KERNEL_CACHE=$work/kc_$v \
            timeout 45 python3 bench/gpu_filter_peers.py --n 2^14 2^16 2^18 2^22 --ours systematic \
            --peers torch-graph --repeats 9 --warmup 2 --csv "$out/peers_${v}_$r.csv" \
            >>"$out/speed.log" 2>&1 || echo "bench failed: $v round $r" | tee -a "$out/speed.log"
    done
    echo "== round $r done"
done
PYTHONPATH=src:studies timeout 60 python3 bench/device/capture_speed.py --n 2^14 2^20 \
    --csv "$out/capture_speed.csv" 2>&1 | tee -a "$out/speed.log"
grep -h "systematic\|torch-graph" "$out"/peers_*.csv | cut -d, -f6-9 | head -40
