"""One run's seed words without NumPy's per-call objects.

``common.derive_seeds(seed, steps)`` spawns two children of
``SeedSequence(seed)``: the noise child seeds ``default_rng`` (PCG64), whose
``integers(0, 2**32, size=2, dtype=np.uint64)`` is a GPU run's noise key, and
the draws child's ``generate_state(steps, np.uint64)`` is its resampling
keys. Building those objects costs tens of microseconds a run; this module
computes the same words from NumPy's published algorithms
(numpy/random/bit_generator.pyx: SeedSequence; numpy/random/src/pcg64:
PCG64's XSL-RR 128/64 generator; numpy/random/src/distributions:
``random_bounded_uint64_fill``), so the words are bit for bit NumPy's, as
tests/library/test_seed_words.py checks against the NumPy calls.
``common.run_words`` uses it for every GPU run (``graph_inputs``,
``CapturedFilter.host_inputs``).
"""

from __future__ import annotations

import numpy as np

# SeedSequence's constants (bit_generator.pyx).
INIT_A, MULT_A = 0x43B0D7E5, 0x931E8875  # mix_entropy's hashmix
INIT_B, MULT_B = 0x8B51F9DD, 0x58F38DED  # generate_state's hash
MIX_MULT_L, MIX_MULT_R = 0xCA01F9DD, 0x4973F715  # mix
XSHIFT = 16
POOL_SIZE = 4  # SeedSequence's default pool_size, which derive_seeds uses
M32 = 0xFFFFFFFF
# PCG64's 128-bit LCG multiplier (pcg64.h: PCG_DEFAULT_MULTIPLIER_128).
PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645
M64, M128 = (1 << 64) - 1, (1 << 128) - 1


def _hash_a(k: int) -> int:
    """mix_entropy's k-th hash constant: its hashmix xors a word with the
    k-th and multiplies by the (k + 1)-th, the constant advancing at each
    hashmix of a SeedSequence's mixing, whatever the words."""
    return INIT_A * pow(MULT_A, k, 1 << 32) & M32


def _hashmixes(word: int, first: int, count: int = POOL_SIZE) -> tuple[int, ...]:
    """``hashmix(word)`` at ``count`` successive hash constants from the
    ``first``-th: ((word ^ c_k) * c_(k+1) mod 2**32), xor itself >> 16."""
    out = []
    for k in range(first, first + count):
        v = (word ^ _hash_a(k)) * _hash_a(k + 1) & M32
        out.append(v ^ v >> XSHIFT)
    return tuple(out)


def _mix_in(pool: list[int], hashes) -> list[int]:
    """mix_entropy's ``mix(pool[d], hashes[d])`` for each pool word d:
    (MIX_MULT_L * x - MIX_MULT_R * y) mod 2**32, xor itself >> 16."""
    return [
        (r := (MIX_MULT_L * x - MIX_MULT_R * y) & M32) ^ r >> XSHIFT
        for x, y in zip(pool, hashes, strict=True)
    ]


# mix_entropy's fixed order for a pool of 4: the first 4 words hashed into
# the pool (constants 0-4), then each ordered pair of distinct pool words
# (source s, destination d; constants 4-16), then each further word against
# the 4 pool words (constants 16-20 for the first). The constants depend only
# on their position, so they are tabulated.
_FIRST = tuple((_hash_a(i), _hash_a(i + 1)) for i in range(POOL_SIZE))
_PAIRS = tuple(
    (s, d, _hash_a(4 + j), _hash_a(5 + j))
    for j, (s, d) in enumerate((s, d) for s in range(4) for d in range(4) if s != d)
)
_SPAWN_HASHES = tuple(_hashmixes(key, 16) for key in (0, 1))  # spawn keys (0,), (1,)
_hash_b = np.empty((2, 0, POOL_SIZE), np.uint32)  # _hash_constants's tables


def _hash_constants(rows: int) -> tuple[np.ndarray, np.ndarray]:
    """generate_state's hash constants INIT_B * MULT_B**i mod 2**32 for
    words i < 4 * ``rows`` (it xors word i with the i-th and multiplies by
    the (i + 1)-th), as two (rows, 4) arrays: the i-th and the (i + 1)-th.
    The sequence depends on nothing else, so it is computed once and kept,
    grown when a run asks for more."""
    global _hash_b
    if _hash_b.shape[1] < rows:
        size = POOL_SIZE * max(rows, 2 * _hash_b.shape[1], 16) + 1
        powers = np.cumprod(np.full(size - 1, MULT_B, np.uint32), dtype=np.uint32)
        h = np.concatenate([[1], powers]).astype(np.uint32) * np.uint32(INIT_B)
        _hash_b = np.stack([h[:-1], h[1:]]).reshape(2, -1, POOL_SIZE)
    return _hash_b[0, :rows], _hash_b[1, :rows]


_HASH_B = tuple(INIT_B * pow(MULT_B, i, 1 << 32) & M32 for i in range(9))  # PCG64's 8 words


def spawned_pools(seed: int) -> tuple[list[int], list[int]]:
    """The entropy pools of ``SeedSequence(seed).spawn(2)``'s two children
    (spawn keys (0,) and (1,)), as SeedSequence's ``get_assembled_entropy``
    and ``mix_entropy`` make them: the seed's uint32 words (low first; 0 is
    one word), zero-padded to the pool size because a spawn key follows,
    then the spawn key. The children differ only in that last word, so
    everything before it is mixed once."""
    words = []
    while True:
        words.append(seed & M32)
        seed >>= 32
        if not seed:
            break
    words += [0] * (POOL_SIZE - len(words))
    pool = []
    for w, (a, b) in zip(words[:POOL_SIZE], _FIRST, strict=True):  # hashmix into the pool
        v = (w ^ a) * b & M32
        pool.append(v ^ v >> XSHIFT)
    for s, d, a, b in _PAIRS:  # every pool word mixed into every other
        v = (pool[s] ^ a) * b & M32
        r = (MIX_MULT_L * pool[d] - MIX_MULT_R * (v ^ v >> XSHIFT)) & M32
        pool[d] = r ^ r >> XSHIFT
    if len(words) == POOL_SIZE:
        return _mix_in(pool, _SPAWN_HASHES[0]), _mix_in(pool, _SPAWN_HASHES[1])
    first = 16  # a seed of more than 128 bits: its further words, then the spawn key
    for w in words[POOL_SIZE:]:
        pool = _mix_in(pool, _hashmixes(w, first))
        first += POOL_SIZE
    return _mix_in(pool, _hashmixes(0, first)), _mix_in(pool, _hashmixes(1, first))


def generate_state(pool: list[int], words: int) -> np.ndarray:
    """SeedSequence's ``generate_state`` of ``words`` uint32 words from
    ``pool``: word i is ``pool[i % 4]`` xor the i-th hash constant, times
    the (i + 1)-th, xor itself shifted right 16, all mod 2**32.
    ``generate_state(n, np.uint64)`` is these 2n words read little-endian in
    pairs, so its native uint64 array viewed as ``<u4`` is this array."""
    xor, mult = _hash_constants(-(-words // POOL_SIZE))
    x = xor ^ np.array(pool, np.uint32)
    x *= mult
    x ^= x >> XSHIFT
    return x.reshape(-1)[:words]


def noise_key(pool: list[int]) -> tuple[int, int]:
    """``default_rng(child).integers(0, 2**32, size=2, dtype=np.uint64)`` for
    the child SeedSequence of entropy pool ``pool``. PCG64 seeds itself from
    ``generate_state(4, np.uint64)`` (state = words 0, 1 as high, low uint64;
    increment = words 2, 3) through ``pcg64_set_seed``: inc = 2 * increment
    + 1, state = (inc + state) * MULT + inc, mod 2**128. ``integers`` with
    this range (``random_bounded_uint64_fill``, rng = 0xFFFFFFFF) takes
    ``next_uint32`` twice: PCG64's next 64-bit output (step the LCG, then
    XSL-RR: rotate the xor of the halves right by the state's top 6 bits),
    low half first, then the buffered high half."""
    b = _HASH_B  # generate_state(4, np.uint64) as 8 uint32 words
    u32 = [(v := (pool[i % 4] ^ b[i]) * b[i + 1] & M32) ^ v >> XSHIFT for i in range(8)]
    u64 = [u32[2 * j] | u32[2 * j + 1] << 32 for j in range(4)]
    inc = ((u64[2] << 64 | u64[3]) << 1 | 1) & M128
    state = ((inc + (u64[0] << 64 | u64[1])) * PCG_MULT + inc) & M128
    state = (state * PCG_MULT + inc) & M128
    xored = ((state >> 64) ^ state) & M64
    rot = state >> 122
    out = (xored >> rot | xored << (64 - rot)) & M64
    return out & M32, out >> 32
