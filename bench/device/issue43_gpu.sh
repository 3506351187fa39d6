#!/usr/bin/env bash
# Issue 43 on one GPU: what the issue changed on the device side, checked.
#   1. the GPU tests of the launch settings (pfresample.cuda.settings.launch_settings: the
#      profiler's block size and build of the global loads as arguments, not the environment;
#      kernels.kernel() resolving the build before its cache): the profiler's parity test,
#      the block-size and lane-group parity tests of tests/gpu/test_gpu.py, and the fused
#      filter run against the graph (every kernel lookup goes through kernel());
#   2. the dulger2017_profiler target on a reduced grid (Tables 5.3-5.5 at N = 2^10, 2^14;
#      Figs 6.24-6.26 at 2^5, 2^10, 2^14; one launch a cell) under Nsight Compute, then each
#      measured row checked against the same row of the committed run
#      (evidence/2026-11-25-h100-8b42d82/dulger2017_profiler/profiler.csv): the block size ncu
#      saw must be the same, and an "L1 off" row must show no L1 hits.
#
#   bash bench/device/issue43_gpu.sh OUT_DIR
#
# Writes three files into OUT_DIR: pytest.log, profiler.tar.gz (plan.json, ncu's raw CSVs,
# profiler.csv/.md), check.txt (the row-by-row comparison; its last line says PASS or FAIL).
# Needs CuPy, NumPy, pandas, PyYAML, jsonschema, pytest (PYTHONPATH may hold them), and
# ncu on PATH for part 2 (skipped, saying so, without it); runs the checkout's src/
# (PYTHONPATH=$PWD/src) and gpu_kernels/ (PFRESAMPLE_KERNEL_DIR), no install.
# Sized for 5 minutes on one H100: the committed profiler run measured 410 cells in 133 s
# (evidence/2026-11-25-h100-8b42d82/MANIFEST.md); this grid has about a fifth of them, so
# about 30 s of cells plus three NVRTC builds; the GPU suite of 818 tests took 317 s on an
# H200 (docs/performance.md, "Test suites"), and these are about 60 of them. Each part has
# its own timeout (150 s and 130 s).
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/issue43_gpu.sh OUT_DIR}")
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH=$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export PFRESAMPLE_KERNEL_DIR=$PWD/gpu_kernels  # src/ on PYTHONPATH has no package data
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/pytest.log"

echo "== 1. GPU tests" | tee -a "$out/pytest.log"
timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider \
    tests/studies/dulger2017/test_dulger2017_profiler.py \
    tests/gpu/test_gpu.py tests/gpu/test_gpu_fused_filter.py \
    -k "launch_settings or warps_are_not_shared or lane_group or repeated_calls or fused" \
    2>&1 | tail -40 | tee -a "$out/pytest.log"
echo "pytest rc=${PIPESTATUS[0]} at $((SECONDS - start)) s" | tee -a "$out/pytest.log"

echo "== 2. the profiler target, reduced grid"
if ! command -v ncu >/dev/null; then
    echo "ncu not on PATH: part 2 skipped" | tee "$out/check.txt"
    exit 0
fi
prof=$(mktemp -d)/profiler
LIMIT=130 bash bench/device/profiler.sh "$prof" "profiler_table5_log2_n=[10, 14]" \
    "profiler_fig6_log2_n=[5, 10, 14]" 2>&1 | tail -15
tar czf "$out/profiler.tar.gz" -C "$(dirname "$prof")" profiler
python3 - "$prof/profiler.csv" evidence/2026-11-25-h100-8b42d82/dulger2017_profiler/profiler.csv \
    >"$out/check.txt" 2>&1 <<'EOF'
import sys

import pandas as pd

new, old = (pd.read_csv(p) for p in sys.argv[1:3])
key = ["label", "config", "n", "table"]
new = new[new.source == "measured"]
old = old[old.source == "measured"]
both = new.merge(old, on=key, suffixes=("", "_committed"))
print(f"{len(new)} measured rows, {len(both)} of them in the committed run")
bad = []
fig = both[both.block_size.notna()]
for r in fig.itertuples():
    same = r.block_size == r.block_size_committed
    print(f"{r.table} {r.label} {r.config} N={r.n}: block {r.block_size:.0f} "
          f"(committed {r.block_size_committed:.0f}) {'ok' if same else 'DIFFERS'}")
    bad += [] if same else [r]
off = both[both.config.str.startswith("L1 off") & both.l1_hit_pct.notna()]
for r in off.itertuples():
    print(f"{r.table} {r.label} N={r.n}: L1 hit {r.l1_hit_pct}% (committed {r.l1_hit_pct_committed}%)")
    bad += [] if r.l1_hit_pct == 0 else [r]
on = both[both.config.str.startswith("L1 on") & both.l1_hit_pct.notna()]
print(f"L1 on rows: hit % from {on.l1_hit_pct.min()} to {on.l1_hit_pct.max()}")
ok = len(fig) > 0 and len(off) > 0 and not bad
print("PASS" if ok else f"FAIL: {len(bad)} rows differ, {len(fig)} block rows, {len(off)} L1-off rows")
EOF
tail -3 "$out/check.txt"
echo "done in $((SECONDS - start)) s"
