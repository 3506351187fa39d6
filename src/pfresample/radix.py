"""Radix sequences of butterfly resampling (Güldaş 2015, §3.2, eq. 3.4).

A radix sequence ``(r_1, ..., r_m)`` has every ``r_k >= 2`` and product N: at
stage k the particles form blocks of r_k. N = 1 has the empty sequence (no
stage, nothing to resample).
"""

from __future__ import annotations

import math
import numbers

from .constants import BUTTERFLY_MAX_RADIX


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if n > 1:
        factors.append(n)
    return factors


def _balanced(factors: list[int], depth: int) -> tuple[int, ...]:
    """The prime ``factors`` in ``depth`` groups of products as equal as the
    greedy rule makes them (largest factor first, into the smallest group),
    non-increasing."""
    groups = [1] * depth
    for f in sorted(factors, reverse=True):
        groups[groups.index(min(groups))] *= f
    return tuple(sorted((g for g in groups if g > 1), reverse=True))


def default_radix(n: int, max_radix: int = BUTTERFLY_MAX_RADIX) -> tuple[int, ...]:
    """The thesis's rule (§4.2.1): the smallest depth m = ceil(log_1024 N),
    radices as equal as possible and non-increasing; N = 2^22 gives
    (2^8, 2^7, 2^7). For N = 2^e this is exact: e split into m parts that
    differ by at most one. For other N the prime factors are grouped greedily
    at the smallest depth whose radices all fit in 1024 (a prime factor above
    1024 is a radix of its own). ``max_radix`` (a power of two) replaces 1024,
    as §4.3.2 does with 256."""
    if max_radix < 2 or max_radix & (max_radix - 1):
        raise ValueError(f"max_radix must be a power of two >= 2, got {max_radix!r}")
    if n == 1:
        return ()
    if n & (n - 1) == 0:
        e = n.bit_length() - 1
        m = math.ceil(e / (max_radix.bit_length() - 1))  # log2(1024) = 10
        q, rest = divmod(e, m)
        return tuple(2 ** (q + 1) for _ in range(rest)) + tuple(2**q for _ in range(m - rest))
    factors = _prime_factors(n)
    start = max(1, math.ceil(math.log(n) / math.log(max_radix) - 1e-12))
    for depth in range(start, len(factors) + 1):
        radix = _balanced(factors, depth)
        if max(radix) <= max_radix:
            return radix
    return tuple(sorted(factors, reverse=True))


def check_radix(radix, n: int) -> tuple[int, ...]:
    """``radix`` as a tuple of ints, checked against N (a ``ValueError`` that
    names the problem); None gives :func:`default_radix`."""
    if radix is None:
        return default_radix(n)
    if isinstance(radix, (str, bytes)) or not hasattr(radix, "__iter__"):
        raise TypeError(f"radix must be a sequence of integers, got {radix!r}")
    values = list(radix)
    for r in values:
        if isinstance(r, bool) or not isinstance(r, numbers.Integral):
            raise TypeError(f"radix must be a sequence of integers, got {radix!r}")
        if r < 2:
            raise ValueError(f"every radix must be at least 2, got {int(r)} in {tuple(values)}")
    values = [int(r) for r in values]
    if math.prod(values) != n:
        raise ValueError(
            f"the radices {tuple(values)} multiply to {math.prod(values)}, not to N = {n}"
        )
    return tuple(values)


def sequences_of_depth(n: int, depth: int, max_radix: int = BUTTERFLY_MAX_RADIX) -> list:
    """Every radix sequence of ``depth`` stages for N, each radix in
    [2, ``max_radix``], in lexicographic order: the candidates of §4.1.4
    ("we run butterfly resampling algorithm for all possible radix sequences
    with depth m_N and report the results for the fastest one"; for N = 2^12
    they are (2^2, 2^10), (2^3, 2^9), ..., (2^10, 2^2))."""
    if depth == 0:
        return [()] if n == 1 else []
    out = []
    for r in range(2, min(n, max_radix) + 1):
        if n % r == 0:
            out += [(r, *rest) for rest in sequences_of_depth(n // r, depth - 1, max_radix)]
    return out


def shallowest_depth(n: int, max_radix: int = BUTTERFLY_MAX_RADIX) -> int:
    """m_N = ceil(log_{max_radix} N), the depth of §4.1.4 (exact integer
    arithmetic: the smallest m with max_radix^m >= N)."""
    m, reach = 0, 1
    while reach < n:
        m, reach = m + 1, reach * max_radix
    return m
