#!/usr/bin/env python3
"""A call of Systematic, Stratified and Multinomial on device weights, two
ways, by the host's clock (median of 50 calls after 5, device synchronised
after each; eq. 2.33 y = 4 float32 weights):

  one sync:  pfresample.resample, which enqueues the statistics and the
             method's kernels back to back and checks the weights at the end
             (cuda.run.CHECKED_AFTER);
  two syncs: the statistics read back before the kernels are enqueued
             (cuda.stats.enqueue_checked_inputs, then the launcher), as every
             call did before.

Usage: python bench/device/checked_after.py [N ...]   (default 2^20 2^22 2^24)"""

import statistics
import sys
import time

import cupy

import pfresample as pr
from pfresample.cuda.stats import enqueue_checked_inputs
from pfresample.cuda.workspace import make_call
from pfresample.resampling.registry import REGISTRY
from pfresample.studies.dulger2017.weights import generate


def median_ms(call, calls=50, warmup=5) -> float:
    times = []
    for i in range(warmup + calls):
        start = time.perf_counter()
        call(i)
        cupy.cuda.Device().synchronize()
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times[warmup:])


def two_syncs(method, w):
    m = REGISTRY[method]

    def call(seed):
        c = make_call(w, [seed])
        enqueue_checked_inputs(m, c, {}, {})
        m.gpu(c)
        return c.out

    return call


sizes = [int(a) for a in sys.argv[1:]] or [2**20, 2**22, 2**24]
for n in sizes:
    w = cupy.asarray(generate("eq233-y4", n, 0, 1234))
    for method in ("systematic", "stratified", "multinomial"):
        old = two_syncs(method, w)
        same = bool((old(7) == pr.resample(w, method, seed=7)).all())
        one = median_ms(lambda s, method=method, w=w: pr.resample(w, method, seed=s))
        two = median_ms(old)
        print(f"{method:<12} N=2^{n.bit_length() - 1}: one sync {one:.4f} ms, two syncs "
              f"{two:.4f} ms ({two / one:.2f}x); same ancestors: {same}", flush=True)  # fmt: skip
