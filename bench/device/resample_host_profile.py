#!/usr/bin/env python3
"""Where the host's time of one pfresample.resample call on device weights
goes (method and N on the command line; systematic at 2^22 by default):
the call's median with a synchronize against its CUDA-event time, then
cProfile over 30 calls, the top entries by own time."""

import statistics
import sys
import time

import cupy
from _timing import print_profile

import pfresample as pr
from pfresample.studies.dulger2017.weights import generate

method = sys.argv[1] if len(sys.argv) > 1 else "systematic"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2**22
kw = {} if method == "systematic" else {"B": 354}
w = cupy.asarray(generate("eq233-y4", n, 0, 1234))
for s in range(3):
    pr.resample(w, method, seed=s, **kw)
cupy.cuda.Device().synchronize()
host, device = [], []
a, b = cupy.cuda.Event(), cupy.cuda.Event()
for s in range(30):
    start = time.perf_counter()
    a.record()
    pr.resample(w, method, seed=s, **kw)
    b.record()
    cupy.cuda.Device().synchronize()
    host.append(1e3 * (time.perf_counter() - start))
    device.append(cupy.cuda.get_elapsed_time(a, b))
print(
    f"{method} N={n}: host {statistics.median(host):.3f} ms, "
    f"events {statistics.median(device):.3f} ms (medians of 30)"
)


def call(seed):
    pr.resample(w, method, seed=seed, **kw)
    cupy.cuda.Device().synchronize()


print_profile(call, 30, 14)
