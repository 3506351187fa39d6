#!/usr/bin/env bash
# Issue 42 on one GPU (bare CUDA host with CuPy, NumPy, PyTorch; Snakemake and
# the rest in PYTHONPATH=/tmp/site as the lead installs them):
#
#   bash bench/device/issue42_gpu.sh OUT_DIR
#
# 1. the GPU tests of run_filter and of every GPU filter it chooses
#    (tests/gpu/test_gpu_engine.py: every registry method and d3 CPU against GPU
#    through run_filter; the GPU filter files the graph-runner refactor
#    touched) -> OUT_DIR/tests.log
# 2. the design map's GPU half (bench/design_map.py --backend cuda, growth /
#    bot / lg, N = 2^10 2^14 2^18 2^22, 8 seeds) -> OUT_DIR/design_map_gpu.tar.gz
#    (runs.csv, summary.csv, design_map.png, log.txt, machine.txt)
# 3. the speed check against the code before the engine: needs that tree in
#    build/base42 (src/ and gpu_kernels/ of f2a6848, made on the host with
#    `mkdir -p build/base42 && git archive f2a6848 src gpu_kernels | tar -x -C build/base42`
#    and carried); rounds 0 (warm-up, dropped) ... 2, the trees alternating,
#    bench/device/issue42_filter_timing.py each (100 s in all) -> OUT_DIR/timing.tar.gz
#    (base_R.csv, head_R.csv, summary.csv: head/base per configuration)
#
# Sizing (one H100, measured at a6b5be7): the six test files ran to their end in
# about 200 s (TEST_LIMIT 300; TESTS picks other files). The map: growth, bot and lg
# took 50+, 50+ and 32 s with 2^22 cut short; at 2^22 d3 runs the engine's CuPy loop,
# 0.09 s a step on growth (T = 100) and 0.77 s on bot (T = 24), so 8 runs of it take
# 73 s and 148 s: the limits are 150, 240 and 60 s (runs-<model>.csv keep what was
# done when one is cut), then --replot summarises what is there. The speed check: two
# rounds of 6 configurations in its 100 s. Every step is bounded by `timeout`: 300 +
# 450 + 20 + 100 s = 870 s at the very worst, over one call's 10 minutes, so start it
# with setsid nohup and follow it.
set -uo pipefail
OUT_DIR=${1:?usage: issue42_gpu.sh OUT_DIR}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH=$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}  # src/ on PYTHONPATH has no package data
work=$(mktemp -d)
start=$(date +%s)
{
    echo "date $(date -u +%FT%TZ)"
    git rev-parse --short HEAD 2>/dev/null | sed 's/^/commit /' || true
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
} | tee "$OUT_DIR/tests.log"

echo "== 1. GPU tests" | tee -a "$OUT_DIR/tests.log"
timeout ${TEST_LIMIT:-300} python3 -m pytest -m gpu -q -p no:cacheprovider --durations=10 \
    ${TESTS:-tests/gpu/test_gpu_engine.py tests/gpu/test_gpu_filter.py tests/gpu/test_gpu_fused_filter.py \
    tests/gpu/test_gpu_cellular.py tests/gpu/test_gpu_d3_filter.py tests/gpu/test_gpu_guldas.py} \
    >>"$OUT_DIR/tests.log" 2>&1
echo "pytest exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/tests.log"

echo "== 2. design map, GPU half" | tee -a "$OUT_DIR/tests.log"
map=$work/design_map_gpu
mkdir -p "$map"
declare -A limit=([growth]=150 [bot]=240 [lg]=60)  # d3's CuPy loop at 2^22: 9 s (growth) and 18 s (bot) a run
for model in growth bot lg; do
    OPENBLAS_NUM_THREADS=1 timeout ${limit[$model]} python3 bench/design_map.py "$map/$model" \
        --backend cuda --runs 8 --jobs 1 --models "$model" --sizes 2^10 2^14 2^18 2^22 \
        >>"$map/log.txt" 2>&1
    echo "map $model exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/tests.log"
done
# one runs.csv of every model (runs-<model>.csv of a model cut short, or its runs.csv)
python3 - "$map" <<'EOF'
import csv, sys
from pathlib import Path
root = Path(sys.argv[1])
rows, fields = [], None
for model in ("growth", "bot", "lg"):
    for name in ("runs.csv", f"runs-{model}.csv"):
        p = root / model / name
        if p.exists():
            with open(p, newline="") as f:
                reader = csv.DictReader(f)
                fields = fields or reader.fieldnames
                rows += list(reader)
            break
if rows:
    with open(root / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
print(f"{len(rows)} runs")
EOF
timeout 20 python3 bench/design_map.py "$map" --replot >>"$map/log.txt" 2>&1
cat "$map"/*/machine.txt >"$map/machine.txt" 2>/dev/null || true
rm -f "$map"/runs-*.csv
tar -czf "$OUT_DIR/design_map_gpu.tar.gz" -C "$work" design_map_gpu
echo "map done after $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/tests.log"

echo "== 3. speed check against build/base42" | tee -a "$OUT_DIR/tests.log"
timing=$work/timing
mkdir -p "$timing"
if [ -d build/base42/src ]; then
    base=$(cd build/base42 && pwd)
    deadline=$(( $(date +%s) + 100 ))
    for r in 0 1 2; do
        for tree in base head; do
            if [ "$tree" = base ]; then src=$base/src kdir=$base/gpu_kernels; else src=$PWD/src kdir=$PWD/gpu_kernels; fi
            left=$(( deadline - $(date +%s) ))
            [ "$left" -gt 5 ] || break 2
            # one kernel cache for both trees (content-keyed, and gpu_kernels/ is the
            # same in both: the tests of step 1 compiled everything)
            PYTHONPATH=$src${PYTHONPATH#$PWD/src} PFRESAMPLE_KERNEL_DIR=$kdir \
                timeout "$left" python3 bench/device/issue42_filter_timing.py "$tree" \
                "$timing/${tree}_$r.csv" >>"$timing/log.txt" 2>&1
            echo "timing $tree round $r exit $?" | tee -a "$OUT_DIR/tests.log"
        done
    done
    python3 bench/device/issue42_compare.py "$timing" >"$timing/summary.csv" 2>>"$timing/log.txt"
    cat "$timing/summary.csv" | tee -a "$OUT_DIR/tests.log"
else
    echo "no build/base42: the speed check needs the pre-change tree (see the header)" \
        | tee -a "$OUT_DIR/tests.log"
fi
tar -czf "$OUT_DIR/timing.tar.gz" -C "$work" timing
echo "all done after $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/tests.log"
