#!/usr/bin/env bash
# The whole Dülger (2017) study at thesis scale on a multi-GPU host, run in the background
# so that it outlives one device call, with the GPUs' utilisation sampled
# throughout (scripts/busy_trace.py) and a report of where the idle time went
# (scripts/run_report.py).
#
#   bash bench/device/thesis_scale.sh start RUN_DIR [snakemake args ...]
#   bash bench/device/thesis_scale.sh watch RUN_DIR SECONDS   # progress until done or the run is SECONDS old
#                                   (or WATCH_TARGETS="t1 t2" are complete)
#   bash bench/device/thesis_scale.sh stop RUN_DIR OUT_DIR    # stop if running, report, pack
#
# RUN_DIR (outside the checkout) keeps the run's plan, trace, log and times. `start`
# needs the pipeline's packages importable (pip install . ./studies, or PYTHONPATH holding
# them); it runs the checkout's src/ (PYTHONPATH=$PWD/src).
# The command is exactly a user's: `snakemake dulger2017 --cores all --resources gpu=G
# --config scale=thesis`, G the number of GPUs nvidia-smi lists.
set -euo pipefail
cmd=${1:?usage: thesis_scale.sh start|watch|stop RUN_DIR ...}
run=${2:?RUN_DIR}
shift 2
export PYTHONPATH=$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1

running() { [ -f "$run/pid" ] && kill -0 "$(cat "$run/pid")" 2>/dev/null; }

case $cmd in
start)
    mkdir -p "$run"
    gpus=$(nvidia-smi -L | wc -l)
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader \
        >"$run/device.txt"
    { nproc; grep -m1 "model name" /proc/cpuinfo; free -g | sed -n 2p; } >>"$run/device.txt"
    git rev-parse HEAD >"$run/commit.txt" 2>/dev/null || true
    args=(dulger2017 --cores all --resources "gpu=$gpus" --keep-going --config scale=thesis "$@")
    echo "snakemake ${args[*]}" >"$run/command.txt"
    printf '%s\n' "$@" >"$run/extra_args"
    python3 -m snakemake -n "${args[@]}" >"$run/plan.txt" 2>&1
    grep -A30 "^Job stats" "$run/plan.txt" | sed -n '1,25p'
    date +%s.%N >"$run/start"
    setsid nohup bash -c "python3 -m snakemake ${args[*]} >'$run/snakemake.log' 2>&1;
        echo \$? >'$run/rc'; date +%s.%N >'$run/end'" >/dev/null 2>&1 &
    echo $! >"$run/pid"
    setsid nohup python3 scripts/busy_trace.py "$run/trace.csv" --every 2 \
        --until-pid "$(cat "$run/pid")" >"$run/trace.log" 2>&1 &
    echo "started: ${args[*]} (pid $(cat "$run/pid"), $gpus GPUs)"
    ;;
watch)
    limit=${1:?SECONDS}
    age() { python3 -c "import time; print(int(time.time() - $(cat "$run/start")))"; }
    # WATCH_TARGETS: stop watching once these targets are complete (a dry run has nothing to do).
    complete() {
        [ -n "${WATCH_TARGETS:-}" ] || return 1
        mapfile -t extra <"$run/extra_args"
        python3 -m snakemake -n --nolock $WATCH_TARGETS --config scale=thesis "${extra[@]}" 2>&1 |
            grep -q "Nothing to be done"
    }
    while running && (($(age) < limit)); do
        if complete; then
            echo "$(date +%T) +$(age) s: $WATCH_TARGETS complete"
            break
        fi
        sleep "$(python3 -c "print(max(1, min(${WATCH_EVERY:-30}, $limit - $(age))))")"
        steps=$(grep -o "[0-9]* of [0-9]* steps ([0-9.]*%) done" "$run/snakemake.log" | tail -1)
        util=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits | paste -sd' ')
        echo "$(date +%T) +$(age) s: $steps; GPU % $util"
    done
    running && echo "still running" || echo "snakemake ended: rc $(cat "$run/rc" 2>/dev/null)"
    ;;
stop)
    out=${1:?OUT_DIR}
    mkdir -p "$out"
    if running; then
        date +%s.%N >"$run/end"
        echo "stopped" >"$run/rc"
        kill -TERM -- -"$(cat "$run/pid")" 2>/dev/null || kill -TERM "$(cat "$run/pid")"
        for _ in $(seq 60); do running || break; sleep 1; done
    fi
    start=$(cat "$run/start") end=$(cat "$run/end")
    mkdir -p "$run/report"
    python3 scripts/run_report.py results --trace "$run/trace.csv" --start "$start" \
        --end "$end" --out "$run/report" | tee "$run/report/summary.txt"
    cp "$run"/{device.txt,commit.txt,command.txt,plan.txt,start,end,rc,trace.csv} "$run/report/" || true
    tail -50 "$run/snakemake.log" >"$run/report/snakemake_tail.log"
    tar czf "$out/report.tgz" -C "$run" report
    tar czf "$out/results.tgz" results/tables/dulger2017 results/figures/dulger2017 \
        results/logs results/benchmarks 2>/dev/null || true
    ls -la "$out"
    ;;
*)
    echo "unknown command $cmd: start, watch or stop" >&2
    exit 2
    ;;
esac
