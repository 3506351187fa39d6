"""Run-time measurement of one resampling call (DESIGN.md, "Timing").

* CPU: ``time.perf_counter`` around the whole call.
* CUDA: CUDA events around the kernels the thesis counts (§6.5: the
  resampling kernel plus the kernels that compute B, w_max or the prefix
  sum); the first call (NVRTC compile or cache load) is reported separately
  as ``first_call_ms`` and is never part of the median.

Both take ``warmup`` untimed calls, then ``repeats`` timed ones, and report
the median in milliseconds with the device it ran on.
"""

from __future__ import annotations

import platform
import statistics
import time
from dataclasses import dataclass, field

from .backend import is_device_array, select_backend
from .resampling.registry import get_method


@dataclass(frozen=True)
class Timing:
    median_ms: float
    times_ms: tuple[float, ...]
    backend: str  # "cpu" or "cuda"
    device: str  # CPU model or GPU name
    first_call_ms: float  # the first call, with any compile / cache load
    extra: dict = field(default_factory=dict)


def cpu_name() -> str:
    """The CPU model as /proc/cpuinfo names it (or the platform's guess)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def time_resample(
    weights, method, *, seed=0, repeats=5, warmup=1, backend="auto", **resample_kwargs
) -> Timing:
    """Median time of ``resample(weights, method, seed=seed, **resample_kwargs)``.

    On the CUDA backend ``weights`` must be a CuPy array (host-to-device
    copies are not part of the thesis's times)."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got {repeats} and {warmup}")
    m = get_method(method)
    where = select_backend(backend, weights, m.gpu is not None)
    if where == "cuda":
        if not is_device_array(weights):
            raise TypeError("timing on the CUDA backend needs a CuPy array of weights")
        from .resampling import gpu

        return gpu.time_resample(weights, m, seed, repeats, warmup, **resample_kwargs)
    from .api import resample

    def call():
        start = time.perf_counter()
        resample(weights, method, seed=seed, backend="cpu", **resample_kwargs)
        return (time.perf_counter() - start) * 1e3

    first = call()
    for _ in range(max(warmup - 1, 0)):
        call()
    times = tuple(call() for _ in range(repeats))
    return Timing(statistics.median(times), times, "cpu", cpu_name(), first)


def cuda_event_times(fn, repeats: int, warmup: int = 0) -> list[float]:
    """Milliseconds of each of ``repeats`` calls of ``fn()`` (which enqueues
    work on the current CUDA stream) between two CUDA events, after
    ``warmup`` untimed calls."""
    import cupy

    for _ in range(warmup):
        fn()
    begin, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeats):
        begin.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(begin, end))
    return times
