#!/usr/bin/env bash
# The pre-registered tests of cpf2013 and d3_2014 on one GPU (docs/cpf2013.md and
# docs/d3_2014.md, sections "Pre-registered": the grids, statistics, corrections and
# detectable effects are written there, before this run), about 5-6 minutes on one H100:
#   1. d3_2014, the TPB effect on our algorithm's step time: the spread section of the
#      pipeline's d3_2014_gpu_runs (pfresample_studies.d3_2014.gpu_runs) (TPB 160, 556, 736, 1024; 10 runs a TPB, each its own seed, the same seed at
#      every TPB) at N = 1,000 and N = 10,000 (spread_n1000.csv, spread_n10000.csv);
#   2. d3_2014, the regime difference at N = 50,000: the same rule's regime cells of the
#      systematic filter in both regimes over the whole 360 s, trajectories 0-15
#      (regimes/cells.csv);
#   3. cpf2013, Fig 10's U (bearings-only, N = 2,048 ... 16,384 x r = 32 ... 256, 3,000
#      trajectories) and Fig 9's N trend (growth, r = 256, N = 2,048 ... 65,536, 8,000
#      trajectories): pfresample_studies.cpf2013.preregistered gpu (experiments.cpf_cell,
#      the study's GPU path; cpf2013/runs.csv);
#   4. the families of all three (pipeline.multiplicity): OUT/tables/*.csv.
# Sizing from the committed H100 runs (evidence/2026-11-26-h100-804d6d3/): our D3 at
# N = 50,000 took about 0.7 s a 502-step run with its set-up (spread.log: 64 runs in 77 s,
# 32 of the paper's algorithm at 1.4-2.1 s each); at N <= 10,000 at most that, so
# 2 N x 4 TPB x 10 runs x 0.7 s = 56 s. A systematic regime run over 360 s at N = 50,000:
# 1.0 s (regimes/cells.csv's seconds), 16 trajectories x 2 regimes = 32 s plus the
# trajectories' simulation. A CPF run: 1.7 ms a BOT run and 2.0 ms a growth run at
# N <= 2^16 (run.log: 100 BOT runs a cell in 0.17 s, 1,000 growth runs in 2.0 s), so
# 16 x 3,000 x 1.7 ms = 82 s and 5 x 8,000 x 2.0 ms = 80 s. In all about 250 s of runs,
# plus the kernels' compiles and the imports: 5-6 minutes; each part has a deadline.
# Parts 1-2 run the rule's file results/d3_2014/gpu_runs/sources.csv in a working directory
# of their own; a section cut before its first row would be the committed run's, so each
# part checks sources.csv names its file "this run".
# Usage, from the repository root:  bash bench/device/preregistered.sh OUT_DIR
set -uo pipefail
OUT=${1:?usage: bash bench/device/preregistered.sh OUT_DIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}"
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
start=$(date +%s)
log() { echo "$* after $(($(date +%s) - start)) s" | tee -a "$OUT/run.log"; }
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    nproc
    git rev-parse --short HEAD 2>/dev/null || echo "no git"
} >"$OUT/device.txt" 2>&1

# d3_2014_gpu_runs alone, cut after $1 seconds, in working directory $2 with --config $3 ...
d3_runs() {
    local seconds=$1 dir=$2
    shift 2
    timeout "$seconds" python3 -m snakemake --snakefile "$PWD/Snakefile" --directory "$dir" \
        --cores 2 results/d3_2014/gpu_runs/sources.csv --config scale=thesis "$@"
}
measured() { grep -q "^$2,this run$" "$1/results/d3_2014/gpu_runs/sources.csv" 2>/dev/null; }

for n in 1000 10000; do
    d3_runs 75 "$OUT/d3_n$n" "d3_2014_gpu_runs_sections=[spread]" \
        "d3_2014_gpu_runs_algorithms=[ours]" d3_2014_gpu_runs_n="$n" \
        d3_2014_gpu_runs_spread_runs=10 d3_2014_gpu_runs_spread_deadline_s=40 \
        >"$OUT/d3_spread_n$n.log" 2>&1
    log "d3 spread N=$n rc=$?"
    measured "$OUT/d3_n$n" spread.csv &&
        cp "$OUT/d3_n$n/results/d3_2014/gpu_runs/spread.csv" "$OUT/spread_n$n.csv"
done

d3_runs 90 "$OUT/d3_regimes" "d3_2014_gpu_runs_sections=[regimes]" \
    "d3_2014_gpu_runs_filters=[systematic]" d3_2014_gpu_runs_trajectories=16 \
    d3_2014_gpu_runs_deadline_s=60 >"$OUT/d3_regimes.log" 2>&1
log "d3 regimes rc=$?"
REGIMES="$OUT/d3_regimes/results/d3_2014/gpu_runs/regimes"
measured "$OUT/d3_regimes" regimes/cells.csv || log "d3 regimes: no cell ran here"

timeout 200 python3 -m pfresample_studies.cpf2013.preregistered gpu --out "$OUT/cpf2013" \
    --u-trajectories 3000 --n-trajectories 8000 --deadline 170 >"$OUT/cpf2013.log" 2>&1
log "cpf2013 rc=$?"

mkdir -p "$OUT/tables"
python3 - "$OUT" <<'EOF' >"$OUT/tables.log" 2>&1
import sys
from pathlib import Path
import pandas as pd
out = Path(sys.argv[1])
frames = [pd.read_csv(p) for p in sorted(out.glob("spread_n*.csv"))]
if frames:
    pd.concat(frames).to_csv(out / "spread.csv", index=False)
EOF
python3 -m pfresample_studies.d3_2014.preregistered tables --spread "$OUT/spread.csv" \
    --cells "$REGIMES/cells.csv" --out "$OUT/tables" >>"$OUT/tables.log" 2>&1
log "d3 tables rc=$?"
python3 -m pfresample_studies.cpf2013.preregistered tables --runs "$OUT/cpf2013/runs.csv" \
    --out "$OUT/tables" >>"$OUT/tables.log" 2>&1
log "cpf2013 tables rc=$?"
rm -rf "$REGIMES/cells"
log done
