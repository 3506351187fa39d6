#!/usr/bin/env bash
# d3_2014 on one GPU: the GPU tests of D3, then the measurements of
# bench/d3_2014_gpu_runs.py, in at most 5 minutes of wall time on one H100.
#
#   bash bench/device/d3_2014_gpu.sh OUT_DIR
#
# Writes three files into OUT_DIR: pytest.log (the GPU tests), bench.log (what the
# measurements printed) and d3_2014_gpu.tar.gz (timing.csv and regimes/: the CSVs and
# cells; unpack into a new evidence/<date>-<device>-<commit>/d3_2014/, as the committed run
# evidence/2026-11-26-h100-804d6d3/d3_2014/ was).
# Needs CuPy, NumPy, pandas, PyYAML (PYTHONPATH may hold them: /tmp/site); runs the
# checkout's src/ (PYTHONPATH=$PWD/src) and gpu_kernels/ (PFRESAMPLE_KERNEL_DIR), no install.
# Measured (evidence/2026-11-26-h100-804d6d3/d3_2014/, one H100, 2026-11-26): 269 s in all; the
# tests 56 s, the timing 107 s (all 450 runs), the regimes 100 s for 33 of their 40 runs:
# the deadline stopped them before d3-fig9's trajectories 1-3 in the paper's regime and all
# of d3-fig9 in ours (its one run took 8.3 s: regimes/cells.csv, seconds).
#
# How it is sized (docs/performance.md and evidence/2026-11-25-h200-8314417/d3_gpu.csv, H200, commit
# 8314417): the GPU D3 filter with the prefix stride takes 0.029-0.096 ms a step for
# N = 500 ... 50,000 (0.43 ms summed over Table 6's nine N); with the paper's O(N^2)
# local search 0.05-2.85 ms (about 6 ms summed over the nine N). The printed thresholds
# halve the mean search (u_i ~ i / 2N), so the paper's algorithm should take about half
# that: ~3 ms a step summed over N. The timing grid is 2 algorithms x 9 N x 25 TPB
# (160 ... 1024 step 36), each one run of 502 steps of which 500 are timed (5 windows of
# 100 steps) plus a graph capture: ours ~25 x 0.43 ms x 502 = 5 s, the paper's ~25 x 3 ms
# x 502 = 38 s on the H200, x1.5 for an H100 and the per-run set-up (graph capture,
# buffers: ~0.05 s a run x 450): ~80-100 s. The full-length runs of Tables 6-7 (36,000
# steps: 102 s a run for the paper's search at N = 50,000) stay in the pipeline
# (snakemake d3_2014 --config scale=thesis). The regime runs at N = 50,000 over 360 s take
# 1.05 s (systematic), 3.5 s (D3 eq. 5) and 2 s (D3 between) a run on the H200, ~6.5 s a
# trajectory and regime: 4 trajectories x 2 regimes ~ 52 s (H200), ~75 s (H100). The GPU
# tests (two files, less the N = 50,000 cases of the all-options sweep) should take
# ~40-90 s (NVRTC compiles every kernel first) and are cut at 130 s. Deadlines inside the benchmark
# keep the whole under 300 s: it starts no new timing run after TIMING_END and no new
# regime run after END seconds of the script, and writes what it has.
set -uo pipefail
OUT="${1:?usage: bash bench/device/d3_2014_gpu.sh OUT_DIR}"
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
USED=$(( $(date +%s) - START ))
# What is left of 300 s, less 15 s for the last runs to end and the packing: the timing
# gets 55 % of it, the regimes the rest.
LEFT=$(( 285 - USED ))
TIMING_END=$(( LEFT * 55 / 100 ))
WORK="$OUT/work"
mkdir -p "$WORK"
timeout $(( LEFT + 10 )) python3 bench/d3_2014_gpu_runs.py --out "$WORK" \
    --timing-deadline "$TIMING_END" --deadline "$(( LEFT - 25 ))" > "$OUT/bench.log" 2>&1
echo "bench rc=$? after $(( $(date +%s) - START )) s (tests took $USED s)" >> "$OUT/bench.log"
tar -C "$WORK" -czf "$OUT/d3_2014_gpu.tar.gz" .
rm -rf "$WORK"
echo "done after $(( $(date +%s) - START )) s" >> "$OUT/bench.log"
