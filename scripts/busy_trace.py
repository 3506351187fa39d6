"""Sample every GPU's utilisation and the host's memory in use while a run goes on.

    python scripts/busy_trace.py trace.csv [--every 2] [--until-pid PID]

Every ``--every`` seconds it appends one row per GPU to the CSV (columns of
pfresample_studies.pipeline.busy.TRACE_COLUMNS: epoch seconds, GPU index,
``nvidia-smi``'s utilization.gpu in %, GPU memory used in MB, host memory in
use in MB from /proc/meminfo), until it is stopped (SIGTERM, Ctrl-C) or
process ``--until-pid`` ends. ``scripts/run_report.py`` reads the trace.
"""

import argparse
import csv
import os
import signal
import subprocess
import time

from pfresample_studies.pipeline.busy import TRACE_COLUMNS

QUERY = [
    "nvidia-smi",
    "--query-gpu=index,utilization.gpu,memory.used",
    "--format=csv,noheader,nounits",
]


def host_used_mb() -> float:
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            info[key] = float(value.split()[0]) / 1024  # kB -> MB
    return info["MemTotal"] - info["MemAvailable"]


def alive(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between samples")
    parser.add_argument("--until-pid", type=int, help="stop when this process ends")
    args = parser.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(TRACE_COLUMNS)
        while not stop and alive(args.until_pid):
            now = time.time()
            lines = subprocess.run(QUERY, capture_output=True, text=True, check=True).stdout
            host = host_used_mb()
            for line in lines.strip().splitlines():
                index, util, mem = (v.strip() for v in line.split(","))
                writer.writerow([f"{now:.2f}", index, util, mem, f"{host:.0f}"])
            f.flush()
            time.sleep(max(0.0, args.every - (time.time() - now)))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
