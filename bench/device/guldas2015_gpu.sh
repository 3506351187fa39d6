#!/usr/bin/env bash
# guldas2015 on one GPU: the GPU tests of the float32 log-domain scan
# (precision "log32") and of Güldaş's filters and SMC-EM, then two measurements.
# Writes three files into OUT_DIR:
#   tests.log                 the pytest summary (and the first failures, if any);
#   log32_gpu.csv             bench/device/guldas2015_log32_gpu.py: standard multinomial and
#                             systematic on the log-domain scan beside float32/float64
#                             and butterfly multinomial, LMSE with paired differences and
#                             times, N = 2^16, 2^18 ... 2^22, 300 particle sets a point;
#   smcem_gpu.tar.gz          bench/guldas_smcem_convergence.py smcem at thesis scale
#                             (N = 2^11, 2^13, ..., 2^21, 10 sequences, 100 EM iterations
#                             from each sequence's ML point, bootstrap filter: the adaptive
#                             SMC-EM filter has no GPU code), on the committed CPU reference
#                             (evidence/2026-11-26-xeon2-bc8d0b2/guldas2015/smcem_cpu/reference_smcem.npz:
#                             ML points and exact EM): fig4_12.csv, mc_trace.csv, fig4_12.png,
#                             the cells (a cell is saved per N, so a run stopped by the
#                             timeout keeps its finished N; rerun the same command on a CPU
#                             to make the table from them).
# Usage: bash bench/device/guldas2015_gpu.sh OUT_DIR   (PYTHONPATH: src/ and the lead's site)
#
# Sizing for 5 minutes on one H100, from timings in the repo:
# * tests: tests/gpu/test_gpu_log_scan.py (about 40 resampling calls up to 2^22 + 4097, the
#   CPU reference's log scan about 2 us a weight on one core: ~30 s) and the SMC-EM tests
#   of tests/gpu/test_gpu_guldas.py (40 CPU iterations at N = 2,048, ~0.14 s each); with
#   NVRTC compiles about 70 s; capped at 100 s.
# * log32 bench: 2 targets x 6 N x 7 arms x (21 timed + 300) calls, each below 1 ms on
#   the GPU (docs/guldas2015.md: multinomial 0.40 ms at 2^22), ~30 s with set generation.
# * SMC-EM: the reference comes from the repo (no host time); per N 2 schemes x 10
#   sequences x 100 iterations at 1.4-21 ms an iteration (docs/guldas2015.md, H200: the
#   six N sum to about 59 ms an iteration for both schemes): ~60 s, plus one graph
#   capture per (N, scheme).
# Total ~190 s; each part is capped by `timeout` so that the files come back.
set -uo pipefail
OUT_DIR=${1:?usage: guldas2015_gpu.sh OUT_DIR}
mkdir -p "$OUT_DIR"
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
timeout 50 python3 bench/device/guldas2015_log32_gpu.py "$OUT_DIR/log32_gpu.csv" \
    >> "$OUT_DIR/tests.log" 2>&1
echo "log32 bench rc=$?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/tests.log"

start=$(date +%s)
work=$(mktemp -d)
timeout 130 python3 bench/guldas_smcem_convergence.py smcem --log2-n 11 13 15 17 19 21 \
    --starts ml --filters bootstrap --backend cuda --out "$work/smcem_gpu" \
    --reference evidence/2026-11-26-xeon2-bc8d0b2/guldas2015/smcem_cpu/reference_smcem.npz \
    >> "$OUT_DIR/tests.log" 2>&1
echo "SMC-EM rc=$?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/tests.log"
tar -C "$work" -czf "$OUT_DIR/smcem_gpu.tar.gz" smcem_gpu
rm -rf "$work"
