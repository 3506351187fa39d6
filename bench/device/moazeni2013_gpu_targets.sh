#!/usr/bin/env bash
# Moazeni (2013)'s one-host GPU targets (moazeni2013_ch3_real, moazeni2013_ch7_fig63,
# moazeni2013_ch4_peers) on one GPU, cut short, so that one run of a few minutes checks that
# each rule runs its experiment on the GPU, draws what it did not run from the committed run,
# labels both (sources.csv, gpu_source) and derives its tables. Then d3_2014_gpu_tables on
# the deadline-cut d3_2014 run committed in evidence/2026-11-28-h200-5a52142/gpu_targets/
# (its tables rule had failed there on the cells the deadline cut).
#
#   python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies
#   PFRESAMPLE_COMMIT=<7hex> bash bench/device/moazeni2013_gpu_targets.sh OUT_DIR
#
# Writes OUT_DIR/<target>.log (Snakemake's), OUT_DIR/<experiment>_sources.csv, device.txt and
# OUT_DIR/moazeni2013_gpu_targets.tar.gz (results/moazeni2013/gpu_runs/,
# results/tables/moazeni2013/{ch3_real,ch7_fig63,ch4_peers}/, results/tables/d3_2014/gpu/,
# the jobs' logs). Expected: ch3_real about 1 min (the 8,192-gon and the chain at s = 32, 64,
# 128, the CPU code 3 times each on every core, Fig 12, the GPU cell from n = 64, as
# evidence/2026-11-28-h200-5a52142/ch3 in 41 s); ch7_fig63 about 40 s (the cases that start
# within 20 s; the rest are absent from this run's files: fig63 is drawn whole only where no
# case ran); ch4_peers seconds without the peers' drivers (peers/ not carried: the committed
# run's, a warning in its log), at most 200 s with them (cells to 120 s); d3_2014's tables about 20 s. In all
# about 3 minutes without the peers, at most 9 min 20 s (timeouts 150, 120, 200, 90 s).
set -uo pipefail
OUT=${1:?usage: bash bench/device/moazeni2013_gpu_targets.sh OUT_DIR}
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1 OMP_WAIT_POLICY=PASSIVE
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
start=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc;
  echo "commit ${PFRESAMPLE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"; } | tee "$OUT/device.txt"
target() {  # target() EXPERIMENT SECONDS CONFIG...: the experiment's target, fresh
    local experiment=$1 seconds=$2
    shift 2
    rm -rf "results/moazeni2013/gpu_runs/$experiment" "results/tables/moazeni2013/$experiment"
    timeout "$seconds" python3 -m snakemake --cores all "moazeni2013_$experiment" \
        --config scale=thesis "$@" >"$OUT/moazeni2013_$experiment.log" 2>&1
    echo "moazeni2013_$experiment rc=$? after $(($(date +%s) - start)) s" | tee -a "$OUT/device.txt"
    cp "results/moazeni2013/gpu_runs/$experiment/sources.csv" "$OUT/${experiment}_sources.csv" 2>/dev/null
}
target ch3_real 150
target ch7_fig63 120 moazeni2013_ch7_fig63_deadline_s=20
target ch4_peers 200 moazeni2013_ch4_peers_deadline_s=120
# d3_2014's tables from the committed deadline-cut run (no GPU work: its files as the runs
# rule left them, the tables rule alone)
rm -rf results/d3_2014/gpu_runs results/tables/d3_2014/gpu
mkdir -p results/d3_2014
cp -r evidence/2026-11-28-h200-5a52142/gpu_targets/d3_2014/gpu_runs results/d3_2014/gpu_runs
timeout 90 python3 -m snakemake --cores 1 results/tables/d3_2014/gpu/table6_summary.csv \
    --allowed-rules d3_2014_gpu_tables --config scale=thesis >"$OUT/d3_2014_tables.log" 2>&1
echo "d3_2014_gpu_tables rc=$? after $(($(date +%s) - start)) s" | tee -a "$OUT/device.txt"
tar czf "$OUT/moazeni2013_gpu_targets.tar.gz" results/moazeni2013/gpu_runs \
    results/tables/moazeni2013/{ch3_real,ch7_fig63,ch4_peers} results/tables/d3_2014/gpu \
    results/logs 2>/dev/null
echo "done after $(($(date +%s) - start)) s" | tee -a "$OUT/device.txt"
