#!/usr/bin/env bash
# Moazeni (2013) Fig 63 timed end to end on one GPU host (about 2 minutes): chapter 7's
# GPU tests (the new end-to-end path against the best CPU code's, bit for bit), then
# bench/moazeni2013_fig63.py: MD-DTW from the query to the ranked list, the GPU's
# distances, top-p selection and matching stage by stage beside native/dtw_best.c on
# every core and the same matching.
#
#   PFRESAMPLE_COMMIT=<7hex> bash bench/device/moazeni2013_fig63.sh OUT_DIR
#
# Writes OUT_DIR/pytest.log, bench.log, fig63_end_to_end.csv and fig63_ratios.csv. Needs
# CuPy, NumPy, SciPy and a C compiler with OpenMP; installs the checkout (no dependencies)
# first. PFRESAMPLE_COMMIT names the commit in every row where the copy has no .git.
set -uo pipefail
OUT="${1:?usage: bash bench/device/moazeni2013_fig63.sh OUT_DIR}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies > "$OUT/install.log" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/pytest.log"
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_moazeni2013_mddtw.py \
    >> "$OUT/pytest.log" 2>&1
echo "pytest rc=$?" >> "$OUT/pytest.log"
timeout 170 python3 bench/moazeni2013_fig63.py --out "$OUT" --deadline 120 > "$OUT/bench.log" 2>&1
echo "bench rc=$?" >> "$OUT/bench.log"
