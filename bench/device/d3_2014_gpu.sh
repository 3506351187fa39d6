#!/usr/bin/env bash
# d3_2014 on one GPU: the GPU tests of D3, then the pipeline's target d3_2014_gpu (the GPU
# experiment, pfresample_studies.d3_2014.gpu_runs, and its derived tables) at the paper's
# scale, in at most 5 minutes of wall time on one H100.
#
#   bash bench/device/d3_2014_gpu.sh OUT_DIR [snakemake --config values ...]
#
# Writes into OUT_DIR: pytest.log (the GPU tests), snakemake.log, and d3_2014_gpu.tar.gz
# (results/d3_2014/gpu_runs/: timing.csv, spread.csv, table7_360s.csv, regimes/ with its cells,
# sources.csv; results/tables/d3_2014/gpu/: the derived tables, each with its gpu_source;
# the job's log). Unpack gpu_runs/ into a new evidence/<date>-<device>-<commit>/d3_2014/, as
# the committed run evidence/2026-11-26-h100-804d6d3/d3_2014/ was.
# Needs the pipeline's packages (pip install -e . -e ./studies) and CuPy; runs the
# checkout's src/ and gpu_kernels/ (PFRESAMPLE_KERNEL_DIR).
#
# The deadlines (config d3_2014_gpu_runs_*_deadline_s) keep the whole under 300 s: the timing
# starts no new run after 90 s of the experiment (it runs Table 5's 160 TPB, the paper's
# choices and the ends at every N first), the spread none after 120 s, the regimes and Table
# 7 none after 150 s; a section cut before its first row is the committed run's, and
# sources.csv says so file by file. The committed run's sizes (evidence/2026-11-26-h100-804d6d3/
# d3_2014/, one H100): the tests 56 s; all 450 timing runs 107 s; a regime run at N = 50,000
# over 360 s 1-8 s; Table 7 over 360 s about 100 s a run of the paper's search. The whole
# experiment with no deadline (snakemake d3_2014_gpu --config scale=thesis, the defaults) took
# about 30 minutes there, in two runs.
set -uo pipefail
OUT="${1:?usage: bash bench/device/d3_2014_gpu.sh OUT_DIR [KEY=VALUE ...]}"
shift
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
# The CUDA sources: installed, they are package data (pfresample.gpu_kernels); run from a
# checkout with PYTHONPATH=src they are only in gpu_kernels/.
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
START=$(date +%s)
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    git rev-parse --short HEAD 2>/dev/null || true
    # Both GPU test files, less the N = 50,000 cases of the all-options parity sweep (its
    # 2,400 CPU reference calls there alone would take most of the budget; the paper's
    # search is still checked at N = 50,000 at every block size, and the sweep at N <= 1,000).
    timeout 130 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gpu_d3.py \
        tests/gpu/test_gpu_d3_filter.py \
        -k "not (test_particles_equal_the_cpu_reference and 50000)" 2>&1 | tail -40
    echo "pytest rc=${PIPESTATUS[0]} after $(( $(date +%s) - START )) s"
} > "$OUT/pytest.log" 2>&1
rm -rf results/d3_2014/gpu_runs results/tables/d3_2014/gpu
timeout 200 python3 -m snakemake --cores 4 d3_2014_gpu --config scale=thesis \
    d3_2014_gpu_runs_timing_deadline_s=90 d3_2014_gpu_runs_spread_deadline_s=120 \
    d3_2014_gpu_runs_deadline_s=150 "$@" > "$OUT/snakemake.log" 2>&1
echo "snakemake rc=$? after $(( $(date +%s) - START )) s" >> "$OUT/snakemake.log"
tar -czf "$OUT/d3_2014_gpu.tar.gz" results/d3_2014/gpu_runs results/tables/d3_2014/gpu \
    results/logs/d3_2014/gpu_runs.log results/logs/tables/d3_2014/gpu.log 2>/dev/null
cat results/d3_2014/gpu_runs/sources.csv 2>/dev/null | tee -a "$OUT/snakemake.log"
echo "done after $(( $(date +%s) - START )) s" >> "$OUT/snakemake.log"
