#!/usr/bin/env python3
"""How the host waits for the fused run, against the host's share of a call
(growth model, Systematic, T = 100): each mode in fresh processes (the share
changes from process to process), 200 run_sir calls at each N, the median
call minus the median kernel clock, in ms.

Modes: the CUDA driver's default (``auto``); ``poll``: the run's stream
replaced by one whose synchronize polls ``done`` from Python. (CuPy 14 has no
``setDeviceFlags``, so the context's scheduling flag cannot be tried here.)

    python bench/device/fused_sync_modes.py            # the table
    python bench/device/fused_sync_modes.py MODE N...  # one process
"""

import subprocess
import sys

MODES = ["auto", "poll"]
PROCESSES = 3
SIZES = ["16384", "1048576"]


def one_process(mode: str, sizes: list[int]) -> None:
    import cupy
    from _timing import growth_inputs, host_share

    from pfresample.filters.sir_fused import fused_run

    class PollStream(cupy.cuda.Stream):
        def synchronize(self):
            while not self.done:
                pass

    model, y = growth_inputs()
    out = []
    for n in sizes:
        if mode == "poll":
            fused_run(model, n, 100).stream = PollStream(non_blocking=True)
        call, kernel = host_share(model, y, n)
        out.append(f"{1e3 * (call - kernel):.3f}")
    cpu = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[36]
    print(" ".join(out) + f" (cpu {cpu})")


if len(sys.argv) > 1:
    one_process(sys.argv[1], [int(a) for a in sys.argv[2:]])
else:
    print("host share, ms, per process; columns: N = " + ", ".join(SIZES))
    for mode in MODES:
        runs = []
        for _ in range(PROCESSES):
            cmd = [sys.executable, __file__, mode, *SIZES]
            done = subprocess.run(cmd, capture_output=True, text=True)
            error = (done.stderr.strip().splitlines() or ["failed"])[-1]
            runs.append(done.stdout if done.returncode == 0 else error)
        print(f"{mode:>9}: " + " | ".join(r.strip() for r in runs), flush=True)
