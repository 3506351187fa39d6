#!/usr/bin/env bash
# guldas2015 on one GPU: the GPU tests of the float32 log-domain scan (precision "log32") and
# of Güldaş's filters and SMC-EM, then the pipeline's target guldas2015_gpu at the thesis's N
# (pfresample_studies.guldas2015.gpu_runs: log32 beside float32/float64 and butterfly
# multinomial at N = 2^16 ... 2^22, 300 particle-weight sets a point; Fig 4.12's SMC-EM with
# the bootstrap filter at N = 2^11, 2^13, ..., 2^21 on the committed CPU reference cell) and
# its derived tables.
#
#   bash bench/device/guldas2015_gpu.sh OUT_DIR [snakemake --config values ...]
#
# Writes into OUT_DIR: tests.log (the pytest summary and the first failures, if any),
# snakemake.log, guldas2015_gpu.tar.gz (results/guldas2015/gpu_runs/: log32_gpu/runs.csv,
# smcem_gpu/ with its cells, sources.csv; results/tables/guldas2015/gpu/: the derived tables
# and their Markdown, each with its gpu_source; the jobs' logs). Unpack gpu_runs/ into a new
# evidence/<date>-<device>-<commit>/guldas2015/, as the committed run
# evidence/2026-11-26-h100-804d6d3/guldas2015/ was.
# Needs the pipeline's packages (pip install -e . -e ./studies) and CuPy.
#
# Sizing for 5 minutes on one H100, from the committed run: the tests with NVRTC compiles
# about 70 s (capped at 100 s); log32 2 targets x 6 N x 7 arms x (21 timed + 300) calls,
# each below 1 ms, ~30 s; SMC-EM 2 schemes x 10 sequences x 100 iterations at 1.4-21 ms an
# iteration, ~60 s with a graph capture per (N, scheme). guldas2015_gpu_runs_deadline_s=150
# starts no new N after 150 s of the experiment (an N not run is the committed run's, and
# sources.csv says so).
set -uo pipefail
OUT_DIR=${1:?usage: bash bench/device/guldas2015_gpu.sh OUT_DIR [KEY=VALUE ...]}
shift
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
# the kernels' folder: package data (pfresample.gpu_kernels) exists only once installed
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT_DIR/tests.log"
git rev-parse --short HEAD 2>/dev/null | sed 's/^/commit /' | tee -a "$OUT_DIR/tests.log"

start=$(date +%s)
timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_gpu_log_scan.py \
    tests/gpu/test_gpu_guldas.py -k "log32 or smcem or e_step" > "$OUT_DIR/pytest.out" 2>&1
rc=$?
grep -E "passed|failed|error" "$OUT_DIR/pytest.out" | tail -3 >> "$OUT_DIR/tests.log"
[ $rc -eq 0 ] || grep -B5 -A40 "^____" "$OUT_DIR/pytest.out" | head -200 >> "$OUT_DIR/tests.log"
rm -f "$OUT_DIR/pytest.out"
echo "tests rc=$rc, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/tests.log"

start=$(date +%s)
rm -rf results/guldas2015/gpu_runs results/tables/guldas2015/gpu
timeout 190 python3 -m snakemake --cores 4 guldas2015_gpu --config scale=thesis \
    guldas2015_gpu_runs_deadline_s=150 "$@" > "$OUT_DIR/snakemake.log" 2>&1
echo "snakemake rc=$?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/tests.log"
tar -czf "$OUT_DIR/guldas2015_gpu.tar.gz" results/guldas2015/gpu_runs results/tables/guldas2015/gpu \
    results/logs/guldas2015/gpu_runs.log results/logs/tables/guldas2015/gpu.log 2>/dev/null
cat results/guldas2015/gpu_runs/sources.csv 2>/dev/null | tee -a "$OUT_DIR/tests.log"
