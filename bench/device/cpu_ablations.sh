#!/usr/bin/env bash
# The CPU-only ablations of bench/dulger_ablations.py (C1 segment rules, stage-4 weights,
# float32 states), one process a variant at nice 19 on the device's spare cores, then
# one summary per ablation; tarred into $OUT/cpu_ablations.tgz.
# Usage on the device: LOG2N=14 RUNS=10 bash bench/device/cpu_ablations.sh
set -uo pipefail
dir=$(mktemp -d)
export PFRESAMPLE_THREADS=1 PYTHONPATH=${PYTHONPATH:-}:$PWD/src
variants() {  # the variant labels of ablation $1
    python3 -c "import sys; sys.path.insert(0, 'bench'); import dulger_ablations as d; print(' '.join(d.ABLATIONS['$1']['variants']))"
}
for ablation in ${ABLATIONS:-uc1_segments stage4 precision}; do
    for v in $(variants "$ablation"); do
        nice -n 19 python3 bench/dulger_ablations.py "$ablation" --variants "$v" \
            --log2n ${LOG2N:-14} --runs "${RUNS:-10}" --out "$dir/$ablation" >"$dir/$ablation.$v.log" 2>&1 &
    done
done
wait
for ablation in ${ABLATIONS:-uc1_segments stage4 precision}; do
    python3 bench/dulger_ablations.py "$ablation" --summarise "$dir/$ablation"/*_runs.csv | tail -20
done
tar czf "$OUT/cpu_ablations.tgz" -C "$dir" .
