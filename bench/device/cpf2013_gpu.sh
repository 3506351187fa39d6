#!/usr/bin/env bash
# cpf2013 on one GPU, at most 5 minutes of wall time on one H100:
#   1. the GPU tests of the cellular filter: tests/gpu/test_gpu_cellular.py (the float32
#      kernels and the paper's quotients against the CPU's float32 reference and against the
#      float64 kernel on the same seeds, the weighted estimate exactly, the paper's start in
#      the CPF and the SIR filter), the fused SIR run against the graph bit for bit and the SIR
#      filter's prior;
#   2. the pipeline's target cpf2013_gpu at the paper's scale (pfresample_studies.cpf2013
#      .gpu_runs): target cpf2013's cells in one process on the GPU (Figs 7-12's tables, Table
#      1, the baselines; Fig 9 also at the large N; Figs 11-12's timing cells at N = 2^11 ...
#      2^22, both kernels, default and --use_fast_math taking turns), then while
#      cpf2013_gpu_runs_deadline_s allows the extras (the former start at every configuration;
#      the paper's kernel and fast math at three configurations of each model; the N trend at
#      r = 256 with 10,000 trajectories) and the paired tables of all of them; the CPU filter
#      alone on the host at N = 4,096 (Table "164x"); the derived tables and the figures.
#
#   bash bench/device/cpf2013_gpu.sh OUT_DIR [snakemake --config values ...]
#
# Needs the pipeline's packages (pip install -e . -e ./studies) and CuPy. Writes
# OUT_DIR/pytest.log, OUT_DIR/snakemake.log and OUT_DIR/cpf2013_gpu.tar.gz
# (results/cpf2013/gpu_runs/ without its cell cache: tables/, study.json, sources.csv;
# results/tables/cpf2013/gpu/ and results/figures/cpf2013/gpu/; the jobs' logs). Unpack
# gpu_runs/ into a new evidence/<date>-<device>-<commit>/cpf2013/, as the committed run
# evidence/2026-11-26-h100-804d6d3/cpf2013/ was.
#
# Sizing (evidence/2026-11-26-h100-804d6d3/cpf2013/study.json, H100): the paper-scale cells
# and the timing cells took about 120 s there, the extras ran to the deadline (180 s), the
# CPU reference about 10 s; the tests with the kernels' first compiles 60-90 s. The deadline
# here, 150 s, leaves room for the Snakemake start and the figures.
set -uo pipefail
OUT=${1:?usage: bash bench/device/cpf2013_gpu.sh OUT_DIR [KEY=VALUE ...]}
shift
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
# The CUDA sources are package data (pfresample.gpu_kernels) only once installed; from a
# checkout with PYTHONPATH=src the kernels are found through PFRESAMPLE_KERNEL_DIR.
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/pytest.log"
timeout 130 python3 -m pytest -q -p no:cacheprovider -m gpu --durations=8 \
    tests/gpu/test_gpu_cellular.py \
    "tests/gpu/test_gpu_fused_filter.py::test_fused_run_equals_the_graph_bit_for_bit" \
    "tests/gpu/test_gpu_filter.py::test_initial_particles_follow_the_prior" \
    "tests/gpu/test_gpu_filter.py::test_growth_prediction_matches_eq_2_34_without_noise" \
    >>"$OUT/pytest.log" 2>&1
echo "pytest rc=$? after $(elapsed) s" | tee -a "$OUT/pytest.log"

rm -rf results/cpf2013/gpu_runs results/tables/cpf2013/gpu results/figures/cpf2013/gpu
timeout $((290 - $(elapsed))) python3 -m snakemake --cores 4 cpf2013_gpu --config scale=thesis \
    cpf2013_gpu_runs_deadline_s=150 "$@" >"$OUT/snakemake.log" 2>&1
echo "snakemake rc=$? after $(elapsed) s" | tee -a "$OUT/snakemake.log"
tar czf "$OUT/cpf2013_gpu.tar.gz" --exclude=results/cpf2013/gpu_runs/cache \
    results/cpf2013/gpu_runs results/tables/cpf2013/gpu results/figures/cpf2013/gpu \
    results/logs/cpf2013/gpu_runs.log results/logs/tables/cpf2013/gpu.log 2>/dev/null
cat results/cpf2013/gpu_runs/sources.csv 2>/dev/null | tee -a "$OUT/snakemake.log"
tail -3 "$OUT/pytest.log"
