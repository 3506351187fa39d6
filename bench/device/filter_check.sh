#!/usr/bin/env bash
# Issue 21's GPU experiments on the Dülger filter, in one device call:
# 1. bench/device/rejection_filter_probe.py: Rejection's stage 4 against Metropolis's,
#    step by step and by lane group (growth model);
# 2. bench/dulger_ablations.py b_rule on the GPU: epsilon and fixed B against Systematic,
#    paired (the pipeline's trajectories and run seeds).
# Usage on the device: bash bench/device/filter_check.sh   (SKIP="probe ablation")
set -euo pipefail
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
git rev-parse --short HEAD > "$OUT/commit.txt" 2>/dev/null || true
skip=" ${SKIP:-} "
if [[ $skip != *" probe "* ]]; then
    python3 bench/device/rejection_filter_probe.py ${PROBE_LOG2N:-14 16 18 20 22} 2>&1 | tee "$OUT/probe.log"
fi
if [[ $skip != *" ablation "* ]]; then
    for spec in ${ABLATION_CELLS:-14:10 18:10 20:10}; do
        python3 bench/dulger_ablations.py b_rule --backend cuda --log2n "${spec%%:*}" \
            --runs "${spec##*:}" --out "$OUT/ablations_${spec%%:*}" 2>&1 | tail -3
    done
    tar czf "$OUT/ablations.tgz" -C "$OUT" $(cd "$OUT" && ls -d ablations_*)
    rm -rf "$OUT"/ablations_*
fi
