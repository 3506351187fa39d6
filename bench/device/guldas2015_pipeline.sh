#!/usr/bin/env bash
# The Güldaş (2015) study on the device at thesis scale: `snakemake --cores all guldas2015`,
# timed, then its tables, figures, logs and job benchmarks tarred into $OUT.
# Carry .whl (../shared/tools/device-wheels.sh .whl). A run cut by TIMEOUT_S resumes
# where it stopped when called again (the machine keeps results/ while it stays warm).
# Usage on the device: bash bench/device/guldas2015_pipeline.sh [TIMEOUT_S] [snakemake args ...]
# TARGET (default guldas2015) picks the target, e.g. TARGET=guldas2015_filters.
set -euo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
limit=${1:-560}
shift || true
start=$(date +%s.%N)
rc=0
timeout "$limit" python3 -m snakemake --cores all "${TARGET:-guldas2015}" "$@" >"$OUT/snakemake.log" 2>&1 || rc=$?
end=$(date +%s.%N)
echo "snakemake rc=$rc wall_s=$(python3 -c "print(round($end - $start, 1))")" | tee "$OUT/wall.txt"
tail -5 "$OUT/snakemake.log"
tar czf "$OUT/results.tgz" results/tables/guldas2015 results/figures/guldas2015 \
    results/logs/guldas2015 results/benchmarks/guldas2015 2>/dev/null || true
