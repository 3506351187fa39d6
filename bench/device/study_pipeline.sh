#!/usr/bin/env bash
# One study on the device at thesis scale: `snakemake --cores all $STUDY`, timed, then
# its tables, figures, logs and job benchmarks tarred into $OUT.
# Carry .whl (../shared/tools/device-wheels.sh .whl). A run cut by TIMEOUT_S resumes
# where it stopped when called again (the machine keeps results/ while it stays warm).
# Usage on the device: STUDY=cpf2013 bash bench/device/study_pipeline.sh [TIMEOUT_S] [snakemake args ...]
# STUDY (default guldas2015) names the study, TARGET (default $STUDY) the target, e.g.
# STUDY=guldas2015 TARGET=guldas2015_filters.
set -euo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
limit=${1:-560}
shift || true
start=$(date +%s.%N)
rc=0
study=${STUDY:-guldas2015}
timeout "$limit" python3 -m snakemake --cores all "${TARGET:-$study}" "$@" >"$OUT/snakemake.log" 2>&1 || rc=$?
end=$(date +%s.%N)
echo "snakemake rc=$rc wall_s=$(python3 -c "print(round($end - $start, 1))")" | tee "$OUT/wall.txt"
tail -5 "$OUT/snakemake.log"
tar czf "$OUT/results.tgz" "results/tables/$study" "results/figures/$study" \
    "results/logs/$study" "results/benchmarks/$study" 2>/dev/null || true
