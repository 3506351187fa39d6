"""The one registry of resampling methods.

Figures, benchmarks, the pipeline and the public API iterate this registry;
nothing else lists methods. Each entry names its CPU reference kernel and its
CUDA launcher (``gpu.py``; None where there is none yet), how its B is chosen, whether it takes an
s-segment size, and the extra keyword parameters it accepts.

Every CPU kernel has the signature ``kernel(w, keys, **kw) -> (K, N) int32``:
``w`` are validated weights, ``keys`` the Philox keys of K seeds
(``pfresample.rng.seed_keys``), and row k the ancestors for seed k.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import cumulative, gpu, metropolis, rejection, uphill


@dataclass(frozen=True)
class Method:
    name: str
    reference: str  # the algorithm box it implements
    cpu: Callable
    uses_B: str | None = None  # how B is chosen: "metropolis", "uphill" or None
    segmented: bool = False  # takes segment_bytes (s-segment size)
    comparison_based: bool = True  # weights only compared: CPU and GPU ancestors equal
    params: tuple[str, ...] = ()  # extra keyword parameters
    gpu: Callable | None = None


_CUMULATIVE = {"comparison_based": False, "params": ("precision",)}
_METROPOLIS = {"uses_B": "metropolis", "params": ("epsilon",)}
_UPHILL = {"uses_B": "uphill", "params": ("ssd_table",)}

REGISTRY: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "systematic",
            "Algorithms 3.1 and 3.2",
            cumulative.systematic,
            gpu=gpu.systematic,
            **_CUMULATIVE,
        ),
        Method(
            "stratified",
            "Douc et al. 2005",
            cumulative.stratified,
            gpu=gpu.stratified,
            **_CUMULATIVE,
        ),
        Method(
            "multinomial",
            "Douc et al. 2005",
            cumulative.multinomial,
            gpu=gpu.multinomial,
            **_CUMULATIVE,
        ),
        Method(
            "residual", "Douc et al. 2005", cumulative.residual, gpu=gpu.residual, **_CUMULATIVE
        ),
        Method(
            "metropolis",
            "Algorithm 3.3",
            metropolis.metropolis,
            gpu=gpu.metropolis,
            **_METROPOLIS,
        ),
        Method(
            "metropolis-c1",
            "Algorithm 5.1",
            metropolis.metropolis_c1,
            segmented=True,
            gpu=gpu.metropolis_c1,
            **_METROPOLIS,
        ),
        Method(
            "metropolis-c2",
            "Algorithm 5.2",
            metropolis.metropolis_c2,
            segmented=True,
            gpu=gpu.metropolis_c2,
            **_METROPOLIS,
        ),
        Method("rejection", "Algorithm 3.4", rejection.rejection, gpu=gpu.rejection),
        Method("uphill", "Algorithm 6.1", uphill.uphill, gpu=gpu.uphill, **_UPHILL),
        Method(
            "uphill-ca",
            "Algorithm 6.2",
            uphill.uphill_ca,
            segmented=True,
            gpu=gpu.uphill_ca,
            **_UPHILL,
        ),
        Method(
            "uphill-c1",
            "Algorithm 6.3",
            uphill.uphill_c1,
            segmented=True,
            gpu=gpu.uphill_c1,
            **_UPHILL,
        ),
    )
}


def get_method(name) -> Method:
    """The registry entry of ``name`` (case-insensitive)."""
    if not isinstance(name, str):
        raise TypeError(f"method must be a string, got {name!r}")
    try:
        return REGISTRY[name.lower()]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known methods: {', '.join(REGISTRY)}") from None
