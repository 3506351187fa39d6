#!/usr/bin/env bash
# guldas2015 on one GPU: SMC-EM (Fig 4.12) from the truth (0.975, 0.16) at the thesis's N,
# the start the GPU run of bench/device/guldas2015_gpu.sh left out (it ran the ML point
# only; the truth start was measured on the CPU at N = 2^9 alone).
# Writes into OUT_DIR:
#   run.log              the device, the commit and the bench's progress lines;
#   smcem_truth.tar.gz   the smcem section of the pipeline's guldas2015_gpu_runs from the truth
#                        (guldas2015_gpu_smcem_starts=[truth]), N = 2^11, 2^13, ..., 2^21,
#                        10 sequences, 100 EM iterations from the truth, bootstrap filter
#                        (the adaptive SMC-EM filter has no GPU code), both schemes, on the
#                        committed CPU reference (exact EM from the truth):
#                        fig4_12.csv, mc_trace.csv and the cells, sources.csv (an N the
#                        deadline left out is the committed ML run's, and says so).
# Usage: bash bench/device/guldas2015_missing.sh OUT_DIR
#
# Sizing, from evidence/2026-11-26-h100-804d6d3/guldas2015/smcem_gpu/summary.csv (H100):
# the six N cost 69.4 ms an EM iteration for both schemes together, so 10 sequences x 100
# iterations take about 69 s; the ML-point run of the same size took 73 s with its graph
# captures. With imports and NVRTC compiles about 100 s; no new N after 140 s, capped at 170 s.
set -uo pipefail
OUT_DIR=${1:?usage: guldas2015_missing.sh OUT_DIR}
mkdir -p "$OUT_DIR"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
# the kernels' folder: package data (pfresample.gpu_kernels) exists only once installed
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT_DIR/run.log"
git rev-parse --short HEAD 2>/dev/null | sed 's/^/commit /' | tee -a "$OUT_DIR/run.log"

start=$(date +%s)
work=$(mktemp -d)
timeout 170 python3 -m snakemake --snakefile "$PWD/Snakefile" --directory "$work" --cores 2 \
    results/guldas2015/gpu_runs/sources.csv --config scale=thesis \
    "guldas2015_gpu_runs_sections=[smcem]" "guldas2015_gpu_smcem_starts=[truth]" \
    guldas2015_gpu_runs_deadline_s=140 >> "$OUT_DIR/run.log" 2>&1
echo "SMC-EM from the truth rc=$?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/run.log"
runs="$work/results/guldas2015/gpu_runs"
mkdir -p "$work/smcem_truth"
cp "$runs"/smcem_gpu/* "$runs/sources.csv" "$work/smcem_truth/" 2>/dev/null
tar -C "$work" -czf "$OUT_DIR/smcem_truth.tar.gz" smcem_truth
rm -rf "$work"
