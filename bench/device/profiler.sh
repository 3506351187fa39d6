#!/usr/bin/env bash
# On a CUDA host: the target dulger2017_profiler without Snakemake
# (Dülger 2017 Tables 5.3-5.5, Figs 6.24-6.26 under Nsight Compute), through
# scripts/dulger2017/profiler.py. Writes into OUT_DIR: plan.json, ncu_{l2,l1,nc}.csv
# (ncu's raw reports), profiler.csv, profiler.md and fig6_24_26.png (the figure
# only where matplotlib and seaborn are installed; else rebuild it here with
# `python scripts/dulger2017/profiler.py --out DIR --from-raw`).
# Usage: bash bench/device/profiler.sh OUT_DIR [key=value ...]   (config overrides;
# default profiler_sequences=1, one launch per cell, to stay within ~8 minutes)
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/profiler.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
command -v ncu && ncu --version | tail -1
figure=()
python3 -c "import matplotlib, seaborn" 2>/dev/null || figure=(--no-figure)
start=$(date +%s)
timeout "${LIMIT:-540}" python3 scripts/dulger2017/profiler.py --out "$out" "${figure[@]}" \
    --config profiler_sequences=1 "$@" 2>&1 | grep -v "^cell " | tail -40
echo "rc=${PIPESTATUS[0]} wall_s=$(( $(date +%s) - start ))"
ls -la "$out"
