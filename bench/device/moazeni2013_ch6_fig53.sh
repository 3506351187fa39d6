#!/usr/bin/env bash
# Moazeni (2013) chapter 6, Fig 53 on one CUDA host: the split of each solver's
# iteration between function P and the rest. GlobalSync's five kernels are timed one by
# one (Solver.profile); ThreadSync and UnSync are one kernel each, so each is timed
# whole and beside its function P alone (tv.cu built with P_ONLY: the TV norms and the
# curvature, no LLT, fidelity term, step or store), every launch behind the delay
# kernel, 11 runs, at 32^3-256^3 and tiles 8 and 16. The GPU tests of the P-only
# kernels run first.
#
#   bash bench/device/moazeni2013_ch6_fig53.sh OUT_DIR
#
# Writes OUT_DIR/fig53_gpu.csv (tv_breakdown's columns: seconds a phase, median, least,
# most; each phase's share from the least times), fig53_gpu.png, run.log, pytest.log and
# commit.txt (the commit it ran). About 1-2 minutes on an H100 after the install.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/moazeni2013_ch6_fig53.sh OUT_DIR}")
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
git rev-parse HEAD > "$out/commit.txt" 2>/dev/null || echo "unknown (no git)" > "$out/commit.txt"
export PYTHONPATH=$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
python3 -m pytest -q -m gpu tests/gpu/test_gpu_moazeni2013_tv.py -k "p_only or fig53" > "$out/pytest.log" 2>&1
echo "pytest rc=$?"
python3 -m pfresample_studies.moazeni2013.tv_breakdown --out "$out" \
    --gpu-sizes 32 64 128 256 --tiles 8 16 --repeats 11 > "$out/run.log" 2>&1
echo "fig53 rc=$?"
tail -20 "$out/run.log"
