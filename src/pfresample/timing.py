"""Run-time measurement primitives (DESIGN.md, "Timing"); the timed
resampling call itself is ``pfresample.api.time_resample``.

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
from dataclasses import dataclass, field


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
