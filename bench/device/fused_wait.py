#!/usr/bin/env python3
"""Where a fused call's time beyond its kernel goes, per call (growth model,
Systematic, T = 100; N given, 2^14 by default; 300 calls each way, the two
ways interleaved in blocks of 20):

* ``sync``: FusedRun.run as it is (stream.synchronize after the launch);
* ``poll``: the same, the host polling stream.done instead of blocking.

For each: the median and 90th percentile of the whole call, of the CUDA
events' time around the launch (the kernel with its launch latency on the
device), and of the kernel's own clock (first to last phase mark)."""

import sys
import time

import cupy
import numpy as np

from pfresample.filters.common import graph_inputs
from pfresample.filters.sir_fused import fused_run
from pfresample.models import GrowthModel

STEPS = 100
model = GrowthModel()
_, y = model.simulate(STEPS, np.random.default_rng(1))


def one(fr, seed: int, poll: bool, ev) -> tuple[float, float, float]:
    start = time.perf_counter()
    host = graph_inputs(y, seed, STEPS)
    st = fr.stream
    fr.inputs.set(host, stream=st)
    cupy.cuda.runtime.memsetAsync(fr.bar.data.ptr, 0, fr.bar.nbytes, st.ptr)
    ev[0].record(st)
    fr._launch()
    ev[1].record(st)
    if poll:
        while not st.done:
            pass
    else:
        st.synchronize()
    out = fr.out.get(stream=st)
    call = time.perf_counter() - start
    marks = out[STEPS:].astype(np.int64)
    return call, 1e-3 * cupy.cuda.get_elapsed_time(ev[0], ev[1]), 1e-9 * (marks[-1] - marks[0])


def report(n: int) -> None:
    fr = fused_run(model, n, STEPS)
    ev = (cupy.cuda.Event(), cupy.cuda.Event())
    got = {False: [], True: []}
    for s in range(5):
        one(fr, s, False, ev)
    for block in range(30):
        poll = block % 2 == 1
        for s in range(20):
            got[poll].append(one(fr, 20 * block + s, poll, ev))
    print(f"N = {n}")
    for poll, rows in got.items():
        cols = np.array(rows) * 1e3
        q = lambda c: f"{np.median(c):.3f} / {np.quantile(c, 0.9):.3f}"  # noqa: E731
        print(
            f"  {'poll' if poll else 'sync'}: call {q(cols[:, 0])}, events {q(cols[:, 1])}, "
            f"kernel clock {q(cols[:, 2])} ms (median / p90)"
        )


for n in [int(a) for a in sys.argv[1:]] or [2**14]:
    report(n)
