#!/usr/bin/env bash
# guldas2015 on one GPU: SMC-EM (Fig 4.12) from the truth (0.975, 0.16) at the thesis's N,
# the start the GPU run of bench/device/guldas2015_gpu.sh left out (it ran the ML point
# only; the truth start was measured on the CPU at N = 2^9 alone).
# Writes into OUT_DIR:
#   run.log              the device, the commit and the bench's progress lines;
#   smcem_truth.tar.gz   bench/guldas_smcem_convergence.py smcem, N = 2^11, 2^13, ..., 2^21,
#                        10 sequences, 100 EM iterations from the truth, bootstrap filter
#                        (the adaptive SMC-EM filter has no GPU code), both schemes, on the
#                        committed CPU reference (exact EM from the truth):
#                        fig4_12.csv, mc_trace.csv, fig4_12.png and the cells (one a N, so
#                        a run stopped by the timeout keeps its finished N).
# Usage: bash bench/device/guldas2015_missing.sh OUT_DIR
#
# Sizing, from evidence/2026-11-26-h100-804d6d3/guldas2015/smcem_gpu/summary.csv (H100):
# the six N cost 69.4 ms an EM iteration for both schemes together, so 10 sequences x 100
# iterations take about 69 s; the ML-point run of the same size took 73 s with its graph
# captures. With imports and NVRTC compiles about 100 s; capped at 170 s.
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
timeout 170 python3 bench/guldas_smcem_convergence.py smcem --log2-n 11 13 15 17 19 21 \
    --starts truth --filters bootstrap --backend cuda --out "$work/smcem_truth" \
    --reference evidence/2026-11-26-xeon2-bc8d0b2/guldas2015/smcem_cpu/reference_smcem.npz \
    >> "$OUT_DIR/run.log" 2>&1
echo "SMC-EM from the truth rc=$?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/run.log"
tar -C "$work" -czf "$OUT_DIR/smcem_truth.tar.gz" smcem_truth
rm -rf "$work"
