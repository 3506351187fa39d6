#!/usr/bin/env bash
# On a CUDA host, in about 4 minutes (at most 9: every step has a timeout):
# the GPU SIR filter's lead over a PyTorch CUDA-graph filter, its bound, and
# the map's linear-Gaussian panel, this tree against the base tree
# build/base, in one run.
# 1. The fused run's GPU tests (bit for bit against the graph, every grid)
#    and the engine's GPU paths (timeout 60 s).
# 2. bench/fused_bound.py: a grid barrier's cost at the fused run's grid for
#    N = 2^14 ... 2^20 and a sweep of grids, the L2 and atomic round trips,
#    the run's skeleton (its structure without its arithmetic) against its
#    own phases, the host's part of a run at 2^14 split; under Nsight Compute
#    (ncu_2p22.csv) the bytes a step of the graph at 2^22 moves.
# 3. bench/gpu_filter_peers.py (systematic through run_filter, growth model,
#    100 steps, median of 9) at N = 2^14, 2^16, 2^18, 2^22 against the
#    PyTorch CUDA-graph filter, for build/base (made by `git archive BASE src
#    gpu_kernels | tar -x -C build/base`, carried) and the checkout,
#    base/head then head/base; then bound/summary.csv with the head's leads.
# 4. bench/design_map.py's linear-Gaussian panel on the GPU at N = 2^10, 2^14,
#    2^18, 2^22, every resampler: the checkout with the user loop captured
#    (--capture auto), the base with its CuPy loop, 2 rounds of 2 seeds each
#    (seeds 0-1 then 2-3, base/head then head/base), joined and redrawn.
#   bash bench/device/speed_bound.sh OUT_DIR
# Writes OUT_DIR/device.txt, pytest.txt, junit.xml, bound/ (bound.csv,
# summary.csv, bound.log), ncu_2p22.csv, peers_{base,head}_{1,2}.csv,
# speed.log, map_{base,head}/ (runs.csv, summary.csv, design_map.png) and
# map.log.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/speed_bound.sh OUT_DIR}")
mkdir -p "$out/bound"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies >/dev/null 2>&1 || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/device.txt" 2>&1 || true
git rev-parse --short HEAD >>"$out/device.txt" 2>/dev/null || true
export PYTHONPATH=$PWD/src:$PWD/studies
PFRESAMPLE_KERNEL_DIR=$PWD/gpu_kernels timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/gpu/test_gpu_fused_filter.py tests/gpu/test_gpu_engine.py \
    -k "fused or grid or barrier or log_likelihood or auto or plan" \
    --junitxml="$out/junit.xml" >"$out/pytest.txt" 2>&1
echo "pytest exit $?" >>"$out/pytest.txt"
tail -4 "$out/pytest.txt"
work=$(mktemp -d)
if command -v ncu >/dev/null; then
    timeout 50 ncu --csv --log-file "$out/ncu_2p22.csv" --print-units base --cache-control none \
        --graph-profiling node --kernel-name-base demangled \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum \
        python3 bench/fused_bound.py --ncu-run >"$out/ncu.log" 2>&1
    echo "ncu exit $?" | tee -a "$out/ncu.log"
fi
declare -A tree=([head]=$(pwd))
if [ -d build/base/src ]; then tree[base]=$(cd build/base && pwd); else echo "no build/base: head only"; fi
for r in 1 2; do
    order="base head"; [ "$r" = 2 ] && order="head base"
    for v in $order; do
        [ -n "${tree[$v]:-}" ] || continue
        t=${tree[$v]}
        PYTHONPATH=$t/src PFRESAMPLE_KERNEL_DIR=$t/gpu_kernels PFRESAMPLE_KERNEL_CACHE=$work/kc_$v \
            timeout 40 python3 bench/gpu_filter_peers.py --n 2^14 2^16 2^18 2^22 --ours systematic \
            --peers torch-graph --repeats 9 --warmup 2 --csv "$out/peers_${v}_$r.csv" \
            >>"$out/speed.log" 2>&1 || echo "bench failed: $v round $r" | tee -a "$out/speed.log"
    done
    echo "== peers round $r done"
done
PFRESAMPLE_KERNEL_DIR=$PWD/gpu_kernels timeout 60 python3 bench/fused_bound.py --out "$out/bound" \
    --peers "$out"/peers_head_*.csv --ncu-csv "$out/ncu_2p22.csv" >"$out/bound/bound.log" 2>&1
echo "bound exit $?" | tee -a "$out/bound/bound.log"
cat "$out/bound/summary.csv" 2>/dev/null
for r in 1 2; do
    order="base head"; [ "$r" = 2 ] && order="head base"
    for v in $order; do
        [ -n "${tree[$v]:-}" ] || continue
        t=${tree[$v]}
        capture=(); [ "$v" = head ] && capture=(--capture auto)
        PYTHONPATH=$t/src:$PWD/studies PFRESAMPLE_KERNEL_DIR=$t/gpu_kernels \
            PFRESAMPLE_KERNEL_CACHE=$work/kc_$v timeout 40 python3 bench/design_map.py \
            "$out/map_${v}_$r" --backend cuda --models lg --sizes 2^10 2^14 2^18 2^22 --runs 2 \
            --first-seed $((2 * (r - 1))) --jobs 1 ${capture[@]+"${capture[@]}"} >>"$out/map.log" 2>&1 \
            || echo "map failed: $v round $r" | tee -a "$out/map.log"
    done
    echo "== map round $r done"
done
for v in base head; do  # the rounds' runs joined (runs-*.csv of a round cut short too), redrawn
    mkdir -p "$out/map_$v"
    python3 - "$out/map_$v" "$out"/map_${v}_[12] <<'PY'
import csv, pathlib, sys
rows, fields = [], None
for d in sys.argv[2:]:
    for path in sorted(pathlib.Path(d).glob("runs*.csv")):
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields = fields or reader.fieldnames
            rows.extend(reader)
if rows:
    with open(pathlib.Path(sys.argv[1]) / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
print(sys.argv[1], len(rows), "runs")
PY
    [ -f "$out/map_$v/runs.csv" ] && python3 bench/design_map.py "$out/map_$v" --replot >>"$out/map.log" 2>&1
done
grep -h "systematic,\|torch-graph" "$out"/peers_*.csv | cut -d, -f6-10 | head -40
