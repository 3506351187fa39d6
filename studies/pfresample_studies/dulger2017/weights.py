"""Weight sequences for the resampling experiments (thesis §2.5).

Two families, each named so that the name can stand in a file path:

* ``gamma-k{shape}-s{scale}``: i.i.d. gamma weights (Fig 2.3), e.g. ``gamma-k1-s2``;
* ``eq233-y{y}``: eq. 2.33, ``w_i = exp(-(x_i - y)^2 / 2) / sqrt(2 pi)`` with
  ``x_i ~ N(0, 1)``; the relative variance of the weights grows with ``y``.

A sequence is a deterministic function of (distribution, N, sequence index,
seed): its generator is NumPy's Philox seeded by a ``SeedSequence`` of those
four values, so sequence 3 of ``eq233-y4`` at N = 2^20 is the same on every
machine and in every run, whatever else was generated before it.
"""

from __future__ import annotations

import math
import re
import zlib

import numpy as np

from pfresample.validation import check_int

# The five gamma weight distributions of Fig 2.3 as (shape, scale): the thesis
# shows them only as histograms, so these are our documented choice (docs/dulger2017.md).
GAMMA_SHAPE_SCALE = ((1.0, 2.0), (2.0, 2.0), (3.0, 2.0), (5.0, 1.0), (9.0, 0.5))

# Eq. 2.33 with y = 0..4 (Figs 5.7-5.14, 6.2-6.4) and y = 3.5..4.5 step 0.1 (Fig 6.5).
EQ233_Y = (0.0, 1.0, 2.0, 3.0, 4.0)
EQ233_Y_SWEEP = tuple(round(3.5 + 0.1 * k, 1) for k in range(11))

_GAMMA = re.compile(r"^gamma-k(?P<shape>\d+(?:\.\d+)?)-s(?P<scale>\d+(?:\.\d+)?)$")
_EQ233 = re.compile(r"^eq233-y(?P<y>-?\d+(?:\.\d+)?)$")


def _fmt(x: float) -> str:
    return f"{x:g}"


def gamma_name(shape: float, scale: float) -> str:
    return f"gamma-k{_fmt(shape)}-s{_fmt(scale)}"


def eq233_name(y: float) -> str:
    return f"eq233-y{_fmt(y)}"


GAMMA_DISTRIBUTIONS = tuple(gamma_name(k, s) for k, s in GAMMA_SHAPE_SCALE)
EQ233_DISTRIBUTIONS = tuple(eq233_name(y) for y in EQ233_Y)
EQ233_SWEEP_DISTRIBUTIONS = tuple(eq233_name(y) for y in EQ233_Y_SWEEP)


def parse_distribution(name: str) -> tuple[str, dict]:
    """``"gamma-k2-s2"`` -> ``("gamma", {"shape": 2.0, "scale": 2.0})``;
    ``"eq233-y4"`` -> ``("eq233", {"y": 4.0})``."""
    if not isinstance(name, str):
        raise TypeError(f"distribution must be a string, got {name!r}")
    if m := _GAMMA.match(name):
        shape, scale = float(m["shape"]), float(m["scale"])
        if shape <= 0 or scale <= 0:
            raise ValueError(f"distribution {name!r}: gamma shape and scale must be > 0")
        return "gamma", {"shape": shape, "scale": scale}
    if m := _EQ233.match(name):
        return "eq233", {"y": float(m["y"])}
    raise ValueError(
        f"unknown weight distribution {name!r}: expected 'gamma-k<shape>-s<scale>' "
        f"(e.g. 'gamma-k1-s2') or 'eq233-y<y>' (e.g. 'eq233-y4')"
    )


def generator(name: str, n: int, sequence: int, seed: int) -> np.random.Generator:
    """The NumPy generator of one weight sequence."""
    code = zlib.crc32(name.encode())  # a stable number per distribution name
    entropy = [
        check_int(seed, "seed"),
        code,
        check_int(n, "N", minimum=1),
        check_int(sequence, "sequence"),
    ]
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(entropy)))


def generate(name: str, n: int, sequence: int = 0, seed: int = 0, dtype=np.float32) -> np.ndarray:
    """Weight sequence ``sequence`` of distribution ``name`` with ``n`` particles
    (unnormalised, float32 unless ``dtype`` says otherwise)."""
    family, params = parse_distribution(name)
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    rng = generator(name, n, sequence, seed)
    if family == "gamma":
        w = rng.gamma(params["shape"], params["scale"], size=n)
    else:
        x = rng.standard_normal(n)
        w = np.exp(-0.5 * (x - params["y"]) ** 2) / math.sqrt(2.0 * math.pi)
    return w.astype(dtype)
