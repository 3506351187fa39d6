#!/usr/bin/env bash
# Dülger filter tables on the GPU at 16 trajectories x RUNS runs (default 10), then the
# `methods` ablation of bench/dulger_ablations.py with many trajectories (issue 21).
# Carry .whl (../shared/tools/device-wheels.sh .whl).
# Usage on the device:
#   TABLES="5_1 5_2 6_2 6_3 7_2 7_3" METHODS="growth:18:128:10" bash bench/device/filter_tables.sh [TIMEOUT_S]
# METHODS: model:log2N:trajectories:runs cells of the ablation, run after the tables.
set -euo pipefail
tables=(${TABLES:-5_1 5_2 6_2 6_3 7_2 7_3 7_5 7_6})
targets=()
for t in "${tables[@]}"; do
    targets+=("results/tables/dulger2017/table$t.csv" "results/tables/dulger2017/table$t.md")
done
STUDY=dulger2017 TARGET="${targets[0]}" bash bench/device/study_pipeline.sh "${1:-480}" \
    "${targets[@]:1}" --resources gpu=1 --config scale=thesis "filter_runs=${RUNS:-10}"
export PYTHONPATH=/tmp/site
for cell in ${METHODS:-}; do
    IFS=: read -r model log2n count runs <<<"$cell"
    python3 bench/dulger_ablations.py methods --backend cuda --model "$model" --log2n "$log2n" \
        --trajectories "$count" --runs "$runs" --out "$OUT/methods_${model}_$log2n" | tail -9
done
if compgen -G "$OUT/methods_*" >/dev/null; then
    tar czf "$OUT/methods.tgz" -C "$OUT" $(cd "$OUT" && ls -d methods_*)
    rm -rf "$OUT"/methods_*
fi
