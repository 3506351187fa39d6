#!/usr/bin/env bash
# The best CPU codes against the GPU and the documents' baselines, one study after another on
# one idle GPU host (issue "honest speed-ups": three ratios from one run on one machine).
#
#   setsid nohup bash bench/device/best_cpu.sh WORK [STEP ...] > /dev/null 2>&1 &
#
# STEP: ch4 ch7 cpf2013 d3_2014 dulger2017 (default: all, in that order). Each step writes
# WORK/<step>/ (its CSVs and log.txt); WORK/done appears when the last step ends, and
# WORK/progress.txt says which step runs. The benches run one at a time, so that the CPU
# sides have the host's cores to themselves. Needs CuPy, NumPy, a C compiler with OpenMP,
# the two packages installed (pip install --no-deps -e . -e ./studies); dtaidistance and
# numba where present (ch7's peer, d3_2014's Table 1 loop).
set -uo pipefail
WORK="${1:?usage: bash bench/device/best_cpu.sh WORK [STEP ...]}"
shift
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(ch4 ch7 cpf2013 d3_2014 dulger2017)
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1 PFRESAMPLE_NATIVE_CACHE="$WORK/native"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name";
  nproc; date -u; } > "$WORK/host.txt" 2>&1
for step in "${steps[@]}"; do
    out="$WORK/$step"
    mkdir -p "$out"
    echo "$step $(date -u +%T)" >> "$WORK/progress.txt"
    case "$step" in
        ch4) cmd=(python3 bench/moazeni2013_ch4_best_cpu.py --out "$out" --deadline 200) ;;
        ch7) cmd=(python3 bench/moazeni2013_ch7_best_cpu.py --out "$out" --ch7-cases 99:65536:64 3:262144:64 --wait-policy PASSIVE) ;;
        cpf2013) cmd=(python3 bench/cpf2013_best_cpu.py --out "$out") ;;
        d3_2014) cmd=(python3 bench/d3_best_cpu.py --out "$out") ;;
        dulger2017) cmd=(python3 bench/dulger2017_best_cpu.py --out "$out" --wait-policy PASSIVE) ;;
        *) echo "unknown step $step" >> "$WORK/progress.txt"; continue ;;
    esac
    timeout 330 "${cmd[@]}" > "$out/log.txt" 2>&1
    echo "$step rc=$? $(date -u +%T)" >> "$WORK/progress.txt"
done
touch "$WORK/done"
