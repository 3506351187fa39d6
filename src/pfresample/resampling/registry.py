"""The one registry of resampling methods.

Figures, benchmarks, the pipeline and the public API iterate this registry;
nothing else lists methods. Each entry names its CPU reference kernel and its
CUDA launcher (``pfresample.cuda``; None for a method without one), its
adaptive kernel (``resample_adaptive``; None for most methods), the rule
that chooses its B, whether it takes an s-segment size, and the extra keyword
parameters it accepts.

Every CPU kernel of a method whose ``output`` is "ancestors" has the
signature ``kernel(w, keys, **kw) -> (K, N) int32``: ``w`` are validated
weights, ``keys`` the Philox keys of K seeds (``pfresample.rng.seed_keys``),
and row k the ancestors for seed k. A method whose ``output`` is
"particles" (D3) moves the particles instead of choosing ancestors: its
kernels take the particles and return new ones (``pfresample.resample_d3``),
and :func:`ancestor_methods` leaves it out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..cuda import butterfly as cuda_butterfly
from ..cuda import cellular as cuda_cellular
from ..cuda import cumulative as cuda_cumulative
from ..cuda import d3 as cuda_d3
from ..cuda import iterative as cuda_iterative
from ..cuda import rejection as cuda_rejection
from . import butterfly, cellular, cumulative, d3, metropolis, rejection, uphill


@dataclass(frozen=True)
class Method:
    name: str
    reference: str  # the algorithm box it implements
    cpu: Callable
    B_rule: str | None = None  # the rule that chooses B: "metropolis", "uphill" or None (no B)
    segmented: bool = False  # takes segment_bytes (s-segment size)
    comparison_based: bool = True  # weights only compared (the SIR filter hands them w~ as is)
    params: tuple[str, ...] = ()  # extra keyword parameters
    gpu: Callable | None = None
    adaptive: Callable | None = None  # the CPU kernel of resample_adaptive, where there is one
    adaptive_gpu: Callable | None = None  # and its CUDA launcher
    gated: bool = False  # its CUDA launcher takes cuda.butterfly.Gates (the adaptive GPU filter)
    output: str = "ancestors"  # or "particles": the method moves particles (D3)


_CUMULATIVE = {"comparison_based": False, "params": ("precision",)}
# Systematic, Stratified, Multinomial: also precision="log32" (resampling/log_scan.py) at a level.
_CUMULATIVE_LOG = {"comparison_based": False, "params": ("precision", "log_offset")}
_METROPOLIS = {"B_rule": "metropolis", "params": ("epsilon",)}
_UPHILL = {"B_rule": "uphill", "params": ("ssd_table",)}
_BUTTERFLY = {"comparison_based": False, "params": ("radix", "precision"), "gated": True}

REGISTRY: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "systematic",
            "Algorithms 3.1 and 3.2",
            cumulative.systematic,
            gpu=cuda_cumulative.systematic,
            **_CUMULATIVE_LOG,
        ),
        Method(
            "stratified",
            "Douc et al. 2005",
            cumulative.stratified,
            gpu=cuda_cumulative.stratified,
            gated=True,
            **_CUMULATIVE_LOG,
        ),
        Method(
            "multinomial",
            "Douc et al. 2005",
            cumulative.multinomial,
            gpu=cuda_cumulative.multinomial,
            gated=True,
            **_CUMULATIVE_LOG,
        ),
        Method(
            "residual",
            "Douc et al. 2005",
            cumulative.residual,
            gpu=cuda_cumulative.residual,
            **_CUMULATIVE,
        ),
        Method(
            "metropolis",
            "Algorithm 3.3",
            metropolis.metropolis,
            gpu=cuda_iterative.metropolis,
            **_METROPOLIS,
        ),
        Method(
            "metropolis-c1",
            "Algorithm 5.1",
            metropolis.metropolis_c1,
            segmented=True,
            gpu=cuda_iterative.metropolis_c1,
            **_METROPOLIS,
        ),
        Method(
            "metropolis-c2",
            "Algorithm 5.2",
            metropolis.metropolis_c2,
            segmented=True,
            gpu=cuda_iterative.metropolis_c2,
            **_METROPOLIS,
        ),
        Method(
            "megopolis",
            "Chesser et al. 2021 (arXiv 2109.13504)",
            metropolis.megopolis,
            gpu=cuda_iterative.megopolis,
            **_METROPOLIS,
        ),
        Method("rejection", "Algorithm 3.4", rejection.rejection, gpu=cuda_rejection.rejection),
        Method("uphill", "Algorithm 6.1", uphill.uphill, gpu=cuda_iterative.uphill, **_UPHILL),
        Method(
            "uphill-ca",
            "Algorithm 6.2",
            uphill.uphill_ca,
            segmented=True,
            gpu=cuda_iterative.uphill_ca,
            **_UPHILL,
        ),
        Method(
            "uphill-c1",
            "Algorithm 6.3",
            uphill.uphill_c1,
            segmented=True,
            gpu=cuda_iterative.uphill_c1,
            **_UPHILL,
        ),
        Method(
            "butterfly-multinomial",
            "Güldaş 2015, Fig 3.6",
            butterfly.butterfly_multinomial,
            gpu=cuda_butterfly.butterfly_multinomial,
            adaptive=butterfly.adaptive_multinomial,
            adaptive_gpu=partial(cuda_butterfly.adaptive, draw="multinomial"),
            **_BUTTERFLY,
        ),
        Method(
            "butterfly-stratified",
            "Güldaş 2015, end of §3.2",
            butterfly.butterfly_stratified,
            gpu=cuda_butterfly.butterfly_stratified,
            adaptive=butterfly.adaptive_stratified,
            adaptive_gpu=partial(cuda_butterfly.adaptive, draw="stratified"),
            **_BUTTERFLY,
        ),
        Method(
            "butterfly-systematic",
            "Güldaş 2015, end of §3.2",
            butterfly.butterfly_systematic,
            gpu=cuda_butterfly.butterfly_systematic,
            adaptive=butterfly.adaptive_systematic,
            adaptive_gpu=partial(cuda_butterfly.adaptive, draw="systematic"),
            **_BUTTERFLY,
        ),
        Method(
            "cellular",
            "Gelencsér-Horváth et al. 2013, Fig 6",
            cellular.cellular,
            comparison_based=False,
            params=("radius",),
            gpu=cuda_cellular.cellular,
        ),
        Method(
            "d3",
            "Das et al. 2014, Table 1 and eqs. 5-6",
            d3.d3,
            comparison_based=False,
            params=("noise", "cdf", "precision", "threads"),
            gpu=cuda_d3.d3,
            output="particles",
        ),
    )
}


def ancestor_methods() -> dict[str, Method]:
    """The entries of the registry that return ancestors (every method of
    ``pfresample.resample``): all but D3, which moves particles."""
    return {name: m for name, m in REGISTRY.items() if m.output == "ancestors"}


def method_record(method) -> Method:
    """The registry's record of ``method``: a name looked up
    (:func:`get_method`), a :class:`Method` taken as it is -- the filter
    engine looks its method up once a ``run_filter`` call and hands the
    record down to every resampling of the run."""
    return method if isinstance(method, Method) else get_method(method)


def get_method(name) -> Method:
    """The registry entry of ``name`` (case-insensitive)."""
    if not isinstance(name, str):
        raise TypeError(f"method must be a string, got {name!r}")
    try:
        return REGISTRY[name.lower()]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known methods: {', '.join(REGISTRY)}") from None
