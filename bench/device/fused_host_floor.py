#!/usr/bin/env python3
"""The host's share of one fused filter call (growth model, Systematic,
T = 100), step by step, and its floor: medians over 200 calls, µs.

* ``run_sir``: the whole call; ``FusedRun.run``: without run_sir's dispatch;
* the run's own steps, each timed alone: ``graph_inputs``, the inputs'
  upload, the barrier's memset and the cooperative launch (host return),
  the wait, the estimates' copy back;
* ``floor``: the same upload, memset, a launch of an empty kernel, wait and
  copy back: what any call that brings T steps' inputs in and estimates
  out pays on this host, whatever its kernel does; ``floor, pinned``: the
  same from and to page-locked host buffers.

    python bench/device/fused_host_floor.py 16384 1048576
"""

import statistics
import sys
import time

import cupy
import cupyx
import numpy as np

from pfresample.filters import SIR_OPTIONS, run_filter
from pfresample.filters.common import graph_inputs
from pfresample.filters.sir_fused import fused_run
from pfresample.models import GrowthModel

CALLS, STEPS = 200, 100
model = GrowthModel()
_, y = model.simulate(STEPS, np.random.default_rng(1))
nop = cupy.RawKernel('extern "C" __global__ void nop() {}', "nop")


def median_us(f):
    times = []
    for s in range(CALLS):
        start = time.perf_counter()
        f(s)
        times.append(time.perf_counter() - start)
    return f"{1e6 * statistics.median(times):8.1f}"


def report(n: int) -> None:
    fr = fused_run(model, n, STEPS)
    for s in range(3):
        run_filter(
            model, y, n, "systematic", seed=s, backend="cuda", stage_times=False, **SIR_OPTIONS
        )
    host = graph_inputs(y, 0, STEPS)
    pinned_in = cupyx.empty_pinned(host.shape, host.dtype)
    pinned_in[...] = host
    pinned_out = cupyx.empty_pinned(fr.out.shape, fr.out.dtype)
    st = fr.stream

    def launch(_):
        cupy.cuda.runtime.memsetAsync(fr.bar.data.ptr, 0, fr.bar.nbytes, st.ptr)
        fr._launch()

    def floor(_, src=host, dst=None):
        fr.inputs.set(src, stream=st)
        cupy.cuda.runtime.memsetAsync(fr.bar.data.ptr, 0, fr.bar.nbytes, st.ptr)
        nop((1,), (1,), (), stream=st)
        st.synchronize()
        fr.out.get(stream=st, out=dst)

    rows = {
        "run_sir": lambda s: run_filter(
            model, y, n, "systematic", seed=s, backend="cuda", stage_times=False, **SIR_OPTIONS
        ),
        "FusedRun.run": lambda s: fr.run(y, s),
        "graph_inputs": lambda s: graph_inputs(y, s, STEPS),
        "upload": lambda s: fr.inputs.set(host, stream=st) or st.synchronize(),
        "memset + launch": launch,
        "wait": None,
        "copy back": lambda s: fr.out.get(stream=st),
        "floor": floor,
        "floor, pinned": lambda s: floor(s, pinned_in, pinned_out),
    }
    print(f"N = {n}")
    for name, f in rows.items():
        if name == "wait":
            waits = []
            for s in range(CALLS):
                launch(s)
                start = time.perf_counter()
                st.synchronize()
                waits.append(time.perf_counter() - start)
            print(f"  {name:>16}: {1e6 * statistics.median(waits):8.1f} µs (the kernel inside)")
            continue
        print(f"  {name:>16}: {median_us(f)} µs")
        st.synchronize()


for n in [int(a) for a in sys.argv[1:]] or [2**14]:
    report(n)
