"""Launch settings a caller chooses for the kernels launched inside a block
of code, as arguments of :func:`launch_settings` rather than through the
process's environment: the threads per block (``geometry.block_size``) and
the build of the global loads (:data:`GLOBAL_LOADS`). The profiler of the
Dülger study sweeps both (Tables 5.3-5.5, Fig 6.26); a setting left None is
the library's own choice.

    with launch_settings(block=256, loads="l2"):
        pr.resample(w_gpu, "metropolis-c1", seed=1)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# How a build's global loads go through the SM's L1 (Dülger 2017 §5.5 times
# the Metropolis family with L1 caching of global loads on and off). The
# kernels read their inputs through ``const T* __restrict__``, which NVRTC
# compiles to ld.global.nc (SASS LDG.E.CONSTANT), and ptxas's -dlcm does not
# touch that path; so the two variants also drop __restrict__, which turns
# the loads into plain ld.global and leaves the SASS otherwise the same
# (sm_90, NVRTC 13.0: cuobjdump -sass differs in the load modifiers only).
#   "nc": the library's build (read-only path, cached in L1);
#   "l1": ld.global, cached in L1 (ptxas's default -dlcm on sm_70 and later);
#   "l2": ld.global.cg (SASS LDG.E.STRONG.GPU), cached in L2 only.
# Both profiler builds also define PFR_C1_FROM_MEMORY: Metropolis-C1 then
# reads its candidates from memory, as the thesis's Algorithm 5.1 does,
# instead of from the registers of its warp (metropolis.cu, c1_in_registers).
# The options reach ptxas only when NVRTC emits a cubin, as CuPy asks
# (-arch=sm_XX) unless CUPY_COMPILE_WITH_PTX is set.
GLOBAL_LOADS = {
    "nc": (),
    "l1": ("-D__restrict__=", "-DPFR_C1_FROM_MEMORY"),
    "l2": ("-D__restrict__=", "-DPFR_C1_FROM_MEMORY", "--ptxas-options=-dlcm=cg"),
}

_BLOCK: ContextVar[int | None] = ContextVar("pfresample_block", default=None)
_LOADS: ContextVar[str | None] = ContextVar("pfresample_loads", default=None)


@contextmanager
def launch_settings(*, block: int | None = None, loads: str | None = None) -> Iterator[None]:
    """Inside the ``with`` block, kernels launch with ``block`` threads a
    block (an integer in 1..1024) and are compiled with the global loads
    ``loads`` (a key of :data:`GLOBAL_LOADS`); None keeps the setting
    around it. The settings are restored on leaving the block."""
    if block is not None and (
        isinstance(block, bool) or not isinstance(block, int) or not 1 <= block <= 1024
    ):
        raise ValueError(f"block must be an integer in 1..1024, got {block!r}")
    if loads is not None and loads not in GLOBAL_LOADS:
        raise ValueError(f"loads must be one of {', '.join(GLOBAL_LOADS)}, got {loads!r}")
    tokens = [(var, var.set(value)) for var, value in ((_BLOCK, block), (_LOADS, loads)) if value]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def block() -> int | None:
    """The threads per block that :func:`launch_settings` set, or None."""
    return _BLOCK.get()


def loads() -> str | None:
    """The global loads that :func:`launch_settings` set, or None."""
    return _LOADS.get()
