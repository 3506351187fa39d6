#!/usr/bin/env bash
# d3_2014, the runs the first GPU run (d3_2014_gpu.sh) left: on one GPU host,
# about 25 minutes, so start it detached and collect WORK_DIR when bench.log says "done".
#
#   setsid nohup bash bench/device/d3_2014_gpu_rest.sh WORK_DIR > /dev/null 2>&1 &
#
# 1. spread (alone on the GPU): 8 runs a cell of both algorithms at N = 50,000 and TPB
#    160, 556, 736, 1024 over the timing window (bench/d3_2014_gpu_runs.py, spread.csv);
# 2. then, beside each other: on the GPU the regime runs the first run did not reach
#    (d3-fig9 trajectories 1-3 in the paper's regime and 0-3 in ours, d3-paper 0-3 in both;
#    the committed cells are kept and not rerun) and Table 7 over the whole 360 s
#    (table7_360s.csv); on the host's CPU cores the pipeline's d3_2014_regimes at N = 1,000 with
#    8 trajectories for every filter (in the pipeline: all rerun), per-component D3 among
#    them (the GPU filter runs the joint D3 only).
# Needs CuPy, NumPy, pandas, PyYAML, matplotlib; runs the checkout's src/ and gpu_kernels/.
set -uo pipefail
WORK="${1:?usage: bash bench/device/d3_2014_gpu_rest.sh WORK_DIR}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
GPU_RESULTS=evidence/2026-11-26-h100-804d6d3/d3_2014
START=$(date +%s)
log() { echo "$* after $(( $(date +%s) - START )) s" >> "$WORK/bench.log"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > "$WORK/device.txt"
mkdir -p "$WORK/gpu/regimes"
cp -r "$GPU_RESULTS/regimes/cells" "$WORK/gpu/regimes/"
python3 bench/d3_2014_gpu_runs.py --out "$WORK/gpu" --skip timing regimes table7 \
    > "$WORK/spread.log" 2>&1
log "spread rc=$?"
WORKERS=$(( $(nproc) > 4 ? $(nproc) - 4 : 1 ))
python3 -m snakemake --snakefile "$PWD/Snakefile" --directory "$WORK/regimes_n1000" \
    --cores "$WORKERS" d3_2014_regimes --config scale=thesis backend=cpu \
    > "$WORK/regimes_n1000.log" 2>&1 &
CPU=$!
python3 bench/d3_2014_gpu_runs.py --out "$WORK/gpu" --skip timing spread --deadline 1500 \
    > "$WORK/gpu.log" 2>&1
log "gpu rc=$?"
wait "$CPU"
log "cpu rc=$?"
log done
