#!/usr/bin/env bash
# The three studies' GPU targets (cpf2013_gpu, d3_2014_gpu, guldas2015_gpu) on one GPU at
# the paper's scale, each cut short by its deadlines, so that one run of a few minutes checks
# that each rule runs its experiment on the GPU, draws what it did not run from the committed
# run, labels both (sources.csv, gpu_source) and derives its tables. No GPU tests (the
# per-study scripts bench/device/<study>_gpu.sh run them).
#
#   python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies
#   bash bench/device/gpu_targets.sh OUT_DIR
#
# Writes OUT_DIR/<study>.log (Snakemake's), OUT_DIR/<study>_sources.csv and
# OUT_DIR/gpu_targets.tar.gz (results/<study>/gpu_runs/ without cpf2013's cell cache,
# results/tables/<study>/gpu/, results/figures/cpf2013/gpu/, the jobs' logs).
# Expected, with sizes from the committed H100 runs (evidence/2026-11-26-h100-804d6d3/):
# d3_2014 about 2 min (timing to 30 s, spread to 45 s, the regimes of systematic and D3 to
# 75 s; Table 7 over 360 s starts after its deadline, so it is the committed run's);
# guldas2015 about 1.5 min (log32 at 2^16 and 2^22 on 100 sets, SMC-EM at 2^11 ... 2^17);
# cpf2013 about 2.5 min (target cpf2013's cells at the paper's scale, no extras, and the CPU
# reference); with the start and NVRTC compiles about 7 minutes in all, at most 9 min 20 s
# (each target is cut by a timeout: 180, 140 and 240 s).
set -uo pipefail
OUT=${1:?usage: bash bench/device/gpu_targets.sh OUT_DIR}
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
git rev-parse --short HEAD 2>/dev/null | tee -a "$OUT/device.txt"
target() {  # target() STUDY SECONDS CONFIG...: the study's GPU target, fresh, then its sources
    local study=$1 seconds=$2
    shift 2
    rm -rf "results/$study/gpu_runs" "results/tables/$study/gpu" "results/figures/$study/gpu"
    timeout "$seconds" python3 -m snakemake --cores 4 "${study}_gpu" --config scale=thesis "$@" \
        >"$OUT/$study.log" 2>&1
    echo "$study rc=$? after $(($(date +%s) - start)) s" | tee -a "$OUT/device.txt"
    cp "results/$study/gpu_runs/sources.csv" "$OUT/${study}_sources.csv" 2>/dev/null
}
target d3_2014 180 d3_2014_gpu_runs_timing_deadline_s=30 d3_2014_gpu_runs_spread_deadline_s=45 \
    d3_2014_gpu_runs_deadline_s=75 "d3_2014_gpu_runs_filters=[systematic,d3]"
target guldas2015 140 "guldas2015_gpu_log32_log2_n=[16,22]" guldas2015_gpu_log32_replicates=100 \
    "guldas2015_gpu_smcem_log2_n=[11,13,15,17]"
target cpf2013 240 cpf2013_gpu_runs_deadline_s=1
tar czf "$OUT/gpu_targets.tar.gz" --exclude=results/cpf2013/gpu_runs/cache \
    results/{d3_2014,guldas2015,cpf2013}/gpu_runs results/tables/{d3_2014,guldas2015,cpf2013}/gpu \
    results/figures/cpf2013/gpu results/logs 2>/dev/null
echo "done after $(($(date +%s) - start)) s" | tee -a "$OUT/device.txt"
