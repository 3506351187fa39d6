#!/usr/bin/env bash
# One study on the device at thesis scale: `snakemake --cores all $STUDY`, timed, then
# its tables, figures, logs and job benchmarks tarred into OUT_DIR.
# Needs the pipeline's packages importable (pip install . ./studies, or PYTHONPATH holding
# them) and runs the checkout's src/ (PYTHONPATH=$PWD/src). A run cut by TIMEOUT_S resumes
# where it stopped when called again (the machine keeps results/ while it stays warm).
# Usage on the device: PFRESAMPLE_COMMIT=<the commit sent> STUDY=cpf2013 bash bench/device/study_pipeline.sh OUT_DIR [TIMEOUT_S] [snakemake args ...]
# STUDY (default guldas2015) names the study, TARGET (default $STUDY) the target, e.g.
# STUDY=guldas2015 TARGET=guldas2015_filters.
set -euo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/study_pipeline.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH=$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
# The copied tree's .git may be stale: every cell records $PFRESAMPLE_COMMIT as its
# git_revision (pipeline.jobs.git_revision), so the caller names the commit it sent.
if [ -z "${PFRESAMPLE_COMMIT:-}" ]; then
    echo "warning: PFRESAMPLE_COMMIT unset; cells record git's HEAD, which may be stale" >&2
fi
echo "${PFRESAMPLE_COMMIT:-unset (git HEAD $(git rev-parse HEAD 2>/dev/null || echo none))}" >"$out/commit.txt"
limit=${1:-560}
shift || true
start=$(date +%s.%N)
rc=0
study=${STUDY:-guldas2015}
timeout "$limit" python3 -m snakemake --cores all "${TARGET:-$study}" "$@" >"$out/snakemake.log" 2>&1 || rc=$?
end=$(date +%s.%N)
echo "snakemake rc=$rc wall_s=$(python3 -c "print(round($end - $start, 1))")" | tee "$out/wall.txt"
tail -5 "$out/snakemake.log"
tar czf "$out/results.tgz" "results/tables/$study" "results/figures/$study" \
    "results/logs/$study" "results/benchmarks/$study" 2>/dev/null || true
