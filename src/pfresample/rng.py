"""Counter-based random numbers: Philox4x32-10 in vectorised NumPy.

This module and ``gpu_kernels/philox.cuh`` implement one contract, so that the
CPU reference and the CUDA kernels draw the *same* numbers for the same seed
(docs/DESIGN.md, "Random numbers"). The contract, word for word:

* **Generator.** Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
  as 1, 2, 3", SC'11), as published with Random123: multipliers 0xD2511F53 and
  0xCD9E8D57, Weyl key increments 0x9E3779B9 and 0xBB67AE85, ten rounds.
* **Key.** ``(seed mod 2^32, seed >> 32)`` for a seed in ``[0, 2^64)``.
* **Address of a draw.** A 32-bit draw is addressed by ``(seed, domain, stream,
  counter)``. Counters are grouped four to a Philox block, so one block
  evaluation serves four consecutive counters::

      block  = counter >> 2
      ctr    = (block mod 2^32, block >> 32, stream, domain)
      draw   = philox4x32_10(ctr, key)[counter & 3]

  ``stream`` is the particle index for per-particle draws (``DOMAIN_PARTICLE``),
  the warp index for draws a whole warp shares (``DOMAIN_WARP``), and 0 for
  the few draws a whole call shares (``DOMAIN_GLOBAL``). Giving each its own
  domain keeps particle 3's stream apart from warp 3's.
* **Uniform float in [0, 1)** (inverse-CDF methods: Systematic, Stratified,
  Multinomial, Residual): ``(draw >> 8) * 2^-24`` as float32.
* **Uniform float in (0, 1]** (acceptance tests ``u <= ratio`` of Metropolis
  and Rejection): ``((draw >> 8) + 1) * 2^-24`` as float32. With this side open
  a ratio of 0 is never accepted and a ratio of 1 always is.
  Both floats carry 24 random bits and every value is exactly representable,
  so the two backends agree to the bit.
* **Uniform float in [0, 1), 23 bits** (the Metropolis family's acceptance
  tests ``u * w_t < w_j``): ``(draw >> 9) * 2^-23`` as float32. The device
  builds it from the bits (1.f - 1) without an integer-to-float conversion;
  the draw's low 9 bits stay free for a candidate offset.
* **Uniform integer in [0, n).** ``(draw * n) >> 32`` (the high word of a
  32x32-bit product), for ``1 <= n < 2^32``. Exact when ``n`` is a power of
  two (it is then the top ``log2 n`` bits); otherwise each value's probability
  is off from ``1/n`` by less than ``n / 2^32`` relative.

Each resampler documents which counters it uses for what (its "draw layout").
"""

from __future__ import annotations

import numpy as np

# Random123's Philox4x32 constants (philox.h); the CUDA header repeats them.
PHILOX_M0 = np.uint64(0xD2511F53)
PHILOX_M1 = np.uint64(0xCD9E8D57)
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10

DOMAIN_PARTICLE = 0
DOMAIN_WARP = 1
DOMAIN_GLOBAL = 2

_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)
_W0 = np.uint64(PHILOX_W0)
_W1 = np.uint64(PHILOX_W1)
_FLOAT_SCALE = np.float32(2.0**-24)

__all__ = [
    "DOMAIN_GLOBAL",
    "DOMAIN_PARTICLE",
    "DOMAIN_WARP",
    "draws",
    "philox4x32_10",
    "philox_block",
    "StreamBlocks",
    "seed_keys",
    "split_seed",
    "uniform_accept",
    "uniform_float",
    "uniform_float23",
    "uniform_int",
]


def split_seed(seed) -> tuple[int, int]:
    """Return the Philox key ``(k0, k1)`` of a seed in ``[0, 2^64)``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer, got {type(seed).__name__}")
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    return seed & 0xFFFFFFFF, seed >> 32


def philox4x32_10(ctr, key) -> tuple[np.ndarray, ...]:
    """Philox4x32-10 on arrays (Random123, Salmon et al. 2011).

    ``ctr`` is four 32-bit words and ``key`` two, each a scalar or an array;
    all broadcast together. Returns the four output words as uint64 arrays
    holding 32-bit values. Products are taken in uint64 so that the high and
    low words of each 32x32-bit multiplication are exact.
    """
    words = [np.asarray(c, dtype=np.uint64) for c in ctr]
    # 0-d keys become NumPy scalars: in-place ops with a scalar are much
    # faster than with a 0-d array.
    k0, k1 = (np.asarray(k, dtype=np.uint64) for k in key)
    shape = np.broadcast_shapes(*(x.shape for x in words), k0.shape, k1.shape)
    k0, k1 = (k[()] if k.ndim == 0 else k for k in (k0, k1))
    # The rounds run in place on six buffers: allocation, not arithmetic,
    # dominated the cost of the plain expression form (measured 3x slower).
    c = [np.array(np.broadcast_to(x, shape)) for x in words]
    return philox_rounds(c, (k0, k1), 0)


def philox_rounds(c: list, key, start: int) -> tuple[np.ndarray, ...]:
    """Rounds ``start .. 9`` of Philox4x32-10, in place on the uint64 arrays
    ``c``; ``key`` is the key of round 0 (it is bumped to round ``start``)."""
    c0, c1, c2, c3 = c
    k0, k1 = key
    if start:
        k0 = (k0 + np.uint64(PHILOX_W0 * start)) & _MASK32
        k1 = (k1 + np.uint64(PHILOX_W1 * start)) & _MASK32
    p0 = np.empty_like(c0)
    p1 = np.empty_like(c0)
    for r in range(start, PHILOX_ROUNDS):
        if r > start:
            k0 = (k0 + _W0) & _MASK32
            k1 = (k1 + _W1) & _MASK32
        np.multiply(c0, PHILOX_M0, out=p0)
        np.multiply(c2, PHILOX_M1, out=p1)
        np.right_shift(p1, _SHIFT32, out=c0)  # c0 = hi(p1) ^ c1 ^ k0
        c0 ^= c1
        c0 ^= k0
        np.bitwise_and(p1, _MASK32, out=c1)  # c1 = lo(p1)
        np.right_shift(p0, _SHIFT32, out=c2)  # c2 = hi(p0) ^ c3 ^ k1
        c2 ^= c3
        c2 ^= k1
        np.bitwise_and(p0, _MASK32, out=c3)  # c3 = lo(p0)
    return c0, c1, c2, c3


class StreamBlocks:
    """Philox blocks of fixed ``(key, streams, domain)`` for any block number:
    ``StreamBlocks(key, streams, domain)(b) == philox_block(key, streams, b, domain)``.

    With a scalar key and a block number below 2^32, the array parts of
    rounds 0 and 1 do not depend on the block (it enters them only through
    scalar words), so they are computed once here and each block costs eight
    array rounds instead of ten (measured 10-20% faster Metropolis on the
    CPU). tests/library/test_reference_loops.py checks the output against single draws.
    """

    def __init__(self, key, streams, domain: int):
        self.key, self.streams, self.domain = key, streams, domain
        self.fast = np.ndim(key[0]) == 0 and np.ndim(key[1]) == 0
        if self.fast:
            p1 = np.asarray(streams, dtype=np.uint64) * PHILOX_M1  # round 0: stream * M1
            self._lo1 = p1 & _MASK32  # round 0 output c1
            p0 = ((p1 >> _SHIFT32) ^ np.uint64(key[0])) * PHILOX_M0  # round 1: c0 * M0
            self._hi0, self._lo0 = p0 >> _SHIFT32, p0 & _MASK32

    def __call__(self, block: int) -> tuple[np.ndarray, ...]:
        block = int(block)
        if not self.fast or block >= 1 << 32:
            return philox_block(self.key, self.streams, block, self.domain)
        k0, k1 = int(self.key[0]), int(self.key[1])
        q = block * int(PHILOX_M0)  # round 0 on the scalar words (block, domain)
        x2 = (q >> 32) ^ self.domain ^ k1
        x3 = q & 0xFFFFFFFF
        q = x2 * int(PHILOX_M1)  # round 1, with the key bumped once
        c0 = self._lo1 ^ np.uint64((q >> 32) ^ ((k0 + PHILOX_W0) & 0xFFFFFFFF))
        c1 = np.full_like(c0, q & 0xFFFFFFFF)
        c2 = self._hi0 ^ np.uint64(x3 ^ ((k1 + PHILOX_W1) & 0xFFFFFFFF))
        return philox_rounds([c0, c1, c2, self._lo0.copy()], (np.uint64(k0), np.uint64(k1)), 2)


def seed_keys(seeds) -> tuple[np.ndarray, np.ndarray]:
    """Philox keys ``(k0, k1)`` of an array of seeds in ``[0, 2^64)``."""
    if isinstance(seeds, np.ndarray) and seeds.dtype == np.uint64:  # in range by type
        flat = seeds.ravel()
        return flat & np.uint64(0xFFFFFFFF), flat >> np.uint64(32)
    # dtype=object keeps Python ints exact (NumPy would turn a list mixing
    # seeds below and above 2^63 into float64).
    flat = np.asarray(seeds, dtype=object).ravel()
    seeds = np.asarray([split_seed(s) for s in flat], dtype=np.uint64).reshape(-1, 2)
    return seeds[:, 0], seeds[:, 1]


def philox_block(key, streams, block: int, domain: int) -> tuple[np.ndarray, ...]:
    """The four draws of Philox block ``block`` (counters ``4*block`` to
    ``4*block+3``) for each stream; ``key`` is a pair of scalars or of arrays
    broadcast against ``streams``."""
    block = int(block)
    return philox4x32_10(
        (block & 0xFFFFFFFF, block >> 32, np.asarray(streams, dtype=np.uint64), domain), key
    )


def draws(seed, streams, counters, domain: int) -> np.ndarray:
    """Single 32-bit draws at ``(seed, domain, streams, counters)`` (broadcast
    together), as uint64 values. Slow but direct: the resamplers use
    :func:`philox_block` to share one block between four counters."""
    for name, value, top in (("streams", streams, 2**32), ("counters", counters, 2**64)):
        v = np.asarray(value)
        if v.size and (v.dtype.kind not in "iu" or v.min() < 0 or int(v.max()) >= top):
            raise ValueError(f"{name} must be integers in [0, {top})")
    if not 0 <= int(domain) < 2**32:
        raise ValueError(f"domain must be in [0, 2**32), got {domain}")
    counters = np.asarray(counters, dtype=np.uint64)
    block = counters >> np.uint64(2)
    words = philox4x32_10(
        (block & _MASK32, block >> _SHIFT32, np.asarray(streams, dtype=np.uint64), domain),
        split_seed(seed),
    )
    lane = (counters & np.uint64(3)).astype(np.intp)
    return np.choose(lane, words)


def uniform_float(draw) -> np.ndarray:
    """Uniform float32 in [0, 1) from 32-bit draws: ``(draw >> 8) * 2^-24``."""
    return (np.asarray(draw, dtype=np.uint64) >> np.uint64(8)).astype(np.float32) * _FLOAT_SCALE


def uniform_accept(draw) -> np.ndarray:
    """Uniform float32 in (0, 1] from 32-bit draws: ``((draw >> 8) + 1) * 2^-24``."""
    bits = (np.asarray(draw, dtype=np.uint64) >> np.uint64(8)) + np.uint64(1)
    return bits.astype(np.float32) * _FLOAT_SCALE


def uniform_float23(draw) -> np.ndarray:
    """Uniform float32 in [0, 1) from the high 23 bits of 32-bit draws:
    ``(draw >> 9) * 2^-23``."""
    bits = np.asarray(draw, dtype=np.uint64) >> np.uint64(9)
    return bits.astype(np.float32) * np.float32(2.0**-23)


def uniform_int(draw, n) -> np.ndarray:
    """Uniform integer in [0, n) from 32-bit draws: ``(draw * n) >> 32``."""
    return (np.asarray(draw, dtype=np.uint64) * np.uint64(n)) >> _SHIFT32
