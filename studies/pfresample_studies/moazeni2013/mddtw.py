"""Moazeni (2013), chapter 7: multi-dimensional subsequence search (MD-DTW) and its
baseline (EDT), on the CPU in NumPy -- the reference of the GPU kernel to come.

* **Distances** (§7.4.1): DTW of one query dimension (length m) against every window
  of length m of one recording dimension, with the squared difference as the local
  cost and a Sakoe-Chiba band of ``band`` steps (the thesis's scaling factor SF is not
  defined beyond "smaller SF: higher precision, lower recall"; we read it as the band,
  SF x m, which has that effect), every window z-normalised with the query (ours: the
  thesis does not say; without it amplitude scaling, which Fig 58 plants, defeats
  both methods). The distance is the square root of the DTW's cumulative cost. Every
  window at once: the dynamic programme runs over the query and window positions with
  vectors over windows, O(m * band) vector steps.
* **Single-dimensional search** (Fig 55): for each pair (DB dimension i, query dimension
  j) with |i - j| < nr, the p best windows, non-overlapping (each kept window excludes
  the m / 2 around it: ours, the min-heap of the thesis would return neighbouring
  windows of one match), as (query dim, DB dim, t, d) tuples.
* **Multi-dimensional construction** (§7.4.2, Fig 57): the tuples within m of a time t
  form a bipartite graph (query dimensions x DB dimensions, one edge a tuple); its
  maximal sets of pairwise independent tuples (distinct query and DB dimensions) are
  the maximal matchings of that graph -- the thesis's "maximal independent edge sets";
  enumerated exactly (small k; each tuple's time must lie within m of the set's first).
* **Ranking** (§7.4.6): more matched dimensions first, then the smaller
  sum f(i, j) d with f = 1 on the same dimension and ``alpha`` otherwise.
* **EDT** (§7.5.1): sum over dimensions of the Euclidean distance of the same windows,
  the p best non-overlapping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CHUNK = 1 << 16  # windows a block of window_stats (bounds its memory, not its values)
# A window (or query) whose values span at most CONSTANT_ULPS units in the last place of
# its largest magnitude -- max - min <= CONSTANT_ULPS * eps * max|w| -- is constant: it
# normalises to zeros. Why not sd > 0: a window of equal values whose mean does not round
# to their value (0.1 three times: mean 0.10000000000000002) has a computed deviation of
# ~1e-17, and dividing by it makes it +-1 values. Why the range, not the deviation: min
# and max are exact, so the rule gives the same windows whatever computed the deviation
# (window_stats's two passes or running sums, whose rounding for a constant window is
# ~sqrt(eps) of its level, no multiple of eps); and a window's range bounds its deviation
# (sd <= range / 2). Why 16 ulps: values that differ by so little differ by the rounding
# of the arithmetic that made them (a sum, a scaling, a float32 reading converted), not by
# a shape, and z-normalising them would blow that rounding up to unit variance; 16 leaves
# room for a few such roundings and is ~4e-15 of the level, far below any signal's
# variation (a float32 sensor resolves 6e-8 of its level). The one place the rule lives:
# ``deviations``, which window_stats, running_stats and znorm call, so the NumPy, C and
# GPU distances (all three divide by these deviations) agree on it.
CONSTANT_ULPS = 16


def deviations(sd, lo, hi) -> np.ndarray:
    """The divisors of z-normalisation: ``sd`` (each window's standard deviation)
    where the window varies, +inf where it is constant by the rule above (its min
    ``lo`` and max ``hi`` within CONSTANT_ULPS * eps * max(|lo|, |hi|)), so that a
    constant window's (w - mean) / dev is exactly zero in every backend."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    peak = np.maximum(np.abs(lo), np.abs(hi))
    constant = (hi - lo) <= CONSTANT_ULPS * np.finfo(np.float64).eps * peak
    return np.where(constant, np.inf, sd)


def window_range(x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Each window's min and max, (n - m + 1,) each, in O(n) (exact)."""
    from scipy.ndimage import maximum_filter1d, minimum_filter1d

    x = np.asarray(x, dtype=np.float64)
    w = x.size - m + 1
    # origin -(m // 2): output t is the extreme of x[t : t + m]
    return (minimum_filter1d(x, m, origin=-(m // 2))[:w],
            maximum_filter1d(x, m, origin=-(m // 2))[:w])  # fmt: skip


def window_stats(x: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Each window's mean and divisor (``deviations``: the standard deviation, +inf
    for a constant window), (n - m + 1,) each: the values ``znorm_windows`` and the
    compiled and GPU searches use, computed a block of windows at a time (a row's
    mean and std do not depend on the block)."""
    w = np.lib.stride_tricks.sliding_window_view(np.asarray(x, dtype=np.float64), m)
    mu, sd = np.empty(w.shape[0]), np.empty(w.shape[0])
    for a in range(0, w.shape[0], CHUNK):
        mu[a : a + CHUNK] = w[a : a + CHUNK].mean(axis=1)
        sd[a : a + CHUNK] = w[a : a + CHUNK].std(axis=1)
    return mu, deviations(sd, *window_range(x, m))


def running_stats(x: np.ndarray, m: int, block: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """``window_stats`` from running sums, O(n) (the GPU's timing cells, whose long
    recordings make window_stats's O(n m) slow): equal to it to ~1e-12 relative, the
    same constant windows (``deviations``). The windows go ``block`` at a time; a
    block's sums run over its samples minus its first (so that a series far from
    zero, or a random walk's drift, does not swamp a window's variance), in long
    double (64-bit mantissas on x86); a window whose variance is not far above the
    sums' rounding (a nearly constant one) gets window_stats's two passes."""
    x = np.asarray(x, dtype=np.float64)
    ld, count = np.longdouble, x.size - m + 1
    blocks = -(-count // block)
    padded = np.concatenate([x, np.full(blocks * block + m - 1 - x.size, x[-1])])
    rows = np.lib.stride_tricks.sliding_window_view(padded, block + m - 1)[::block]
    first = rows[:, :1]
    d = rows.astype(ld) - first.astype(ld)
    zero = np.zeros((blocks, 1), dtype=ld)
    s1 = np.concatenate([zero, np.cumsum(d, axis=1)], axis=1)
    s2 = np.concatenate([zero, np.cumsum(d * d, axis=1)], axis=1)
    mean = (s1[:, m : m + block] - s1[:, :block]) / m
    var = (s2[:, m : m + block] - s2[:, :block]) / m - mean * mean
    # the prefix sums' differences err by ~eps of the prefix (a few times it, summed over
    # up to block + m terms): trust a variance 2**44 times that (its relative error ~1e-12)
    # and give the others window_stats's two passes
    rough = (var <= 2.0**44 * np.finfo(ld).eps * s2[:, m : m + block] / m).ravel()[:count]
    mu = (first + mean).astype(np.float64).ravel()[:count]
    sd = np.sqrt(np.maximum(var, 0)).astype(np.float64).ravel()[:count]
    redo = np.flatnonzero(rough)
    if redo.size:
        w = np.lib.stride_tricks.sliding_window_view(x, m)[redo]
        mu[redo], sd[redo] = w.mean(axis=1), w.std(axis=1)
    return mu, deviations(sd, *window_range(x, m))


def znorm_windows(x: np.ndarray, m: int) -> np.ndarray:
    """Every window of length m of a 1-D series, z-normalised: (n - m + 1, m)."""
    w = np.lib.stride_tricks.sliding_window_view(np.asarray(x, dtype=np.float64), m)
    mu, sd = window_stats(x, m)
    return (w - mu[:, None]) / sd[:, None]


def znorm(q: np.ndarray) -> np.ndarray:
    """The query z-normalised (zeros where it is constant: ``deviations``)."""
    q = np.asarray(q, dtype=np.float64)
    return (q - q.mean()) / deviations(q.std(), q.min(), q.max())


def dtw_windows(query: np.ndarray, series: np.ndarray, band: int,
                normalise: bool = True) -> np.ndarray:  # fmt: skip
    """DTW distance of the z-normalised query (m) to every z-normalised window
    of ``series``, Sakoe-Chiba band ``band`` (|i - j| <= band), squared-difference
    cost: (n - m + 1,) float64, the square root of the cumulative cost.
    ``normalise=False``: the query and windows as recorded (the GPU's ``raw``)."""
    query = np.asarray(query, dtype=np.float64)
    q = znorm(query) if normalise else query
    m = q.size
    if m < 1 or series.size < m:
        raise ValueError(f"need a query of length >= 1 within the series, got {m}, {series.size}")
    if band < 0:
        raise ValueError(f"band must be >= 0, got {band}")
    if normalise:
        w = znorm_windows(series, m)
    else:
        w = np.lib.stride_tricks.sliding_window_view(np.asarray(series, dtype=np.float64), m)
    # (m, W): a window position's values contiguous over windows, so that each vector
    # step reads one row (the same operations in the same order: the same bits)
    w = np.ascontiguousarray(w.T)
    inf = np.inf
    prev = np.full((m, w.shape[1]), inf)
    for i in range(m):
        cur = np.full_like(prev, inf)
        lo, hi = max(0, i - band), min(m - 1, i + band)
        for j in range(lo, hi + 1):
            cost = (q[i] - w[j]) ** 2
            if i == 0 and j == 0:
                best = 0.0
            else:
                best = prev[j] if i > 0 else np.full(w.shape[1], inf)
                if j > 0:
                    best = np.minimum(best, cur[j - 1])
                    if i > 0:
                        best = np.minimum(best, prev[j - 1])
            cur[j] = cost + best
        prev = cur
    return np.sqrt(prev[m - 1])


def dtw_pair(a: np.ndarray, b: np.ndarray, band: int) -> float:
    """Plain DTW of two equal-length sequences (already normalised), the
    textbook loop: the reference of ``dtw_windows``."""
    m = a.size
    d = np.full((m + 1, m + 1), np.inf)
    d[0, 0] = 0.0
    for i in range(1, m + 1):
        for j in range(max(1, i - band), min(m, i + band) + 1):
            d[i, j] = (a[i - 1] - b[j - 1]) ** 2 + min(d[i - 1, j], d[i, j - 1], d[i - 1, j - 1])
    return float(np.sqrt(d[m, m]))


def best_windows(dist: np.ndarray, p: int, exclusion: int) -> list[tuple[int, float]]:
    """The p smallest distances whose windows are at least ``exclusion`` apart."""
    order = np.argsort(dist, kind="stable")
    taken: list[tuple[int, float]] = []
    for t in order:
        if not np.isfinite(dist[t]):
            break
        if all(abs(int(t) - s) >= exclusion for s, _ in taken):
            taken.append((int(t), float(dist[t])))
            if len(taken) == p:
                break
    return taken


@dataclass(frozen=True)
class Match1D:
    """(query dimension, DB dimension, window start, distance): Fig 55's S_u."""

    q: int
    db: int
    t: int
    d: float


def single_dim_search(query: np.ndarray, db: np.ndarray, nr: int, p: int, band: int,
                      distances=None) -> list[Match1D]:  # fmt: skip
    """Fig 55: query (k, m), db (k, n); every |i - j| < nr pair, its p best
    (``distances``: NumpyDistances by default, ``mddtw_gpu.GpuDistances`` on the GPU)."""
    query = np.asarray(query, dtype=np.float64)
    pair_list = pairs(query.shape[0], np.shape(db)[0], nr)
    dist = (distances or NumpyDistances(db))(query, pair_list, band)
    return _tuples(dist, pair_list, p, query.shape[1])


def _segments(matches: list[Match1D], m: int):
    """For each tuple's time t, the tuples within m of it, each distinct set once
    (anchors near one another often see the same tuples)."""
    seen = set()
    times = np.array([s.t for s in matches])
    for anchor in matches:
        seg = [matches[i] for i in np.flatnonzero(np.abs(times - anchor.t) < m)]
        key = frozenset(seg)
        if key not in seen:
            seen.add(key)
            yield seg


def feasible_sets(matches: list[Match1D], m: int) -> list[tuple[Match1D, ...]]:
    """§7.4.2: for each tuple's time t, the tuples within m of it; their maximal
    sets of independent tuples (distinct query and DB dimensions: maximal
    matchings of the bipartite graph), each set once."""
    seen = set()
    out = []
    for seg in _segments(matches, m):
        for subset in _maximal_matchings(seg):
            key = frozenset(subset)
            if key not in seen:
                seen.add(key)
                out.append(tuple(sorted(subset, key=lambda s: (s.q, s.db, s.t))))
    return out


def best_sets(matches: list[Match1D], m: int, alpha: float) -> list[tuple[Match1D, ...]]:
    """§7.4.2 and §7.4.6 together, for search at scale: for each tuple's time t,
    the one feasible set of the tuples within m of t that ranking would put first
    -- the most tuples, then the least sum of f(i, j) d -- found as a minimum-cost
    maximum matching of the bipartite graph (an assignment problem), instead of
    enumerating every maximal matching (exponential in the dimensions: 99 for the
    shoe). The best set overall is the same as the enumeration's; further down
    the list a location's result can differ where the enumeration's runner-up
    set of a segment survives the one-a-location rule and its best does not."""
    from scipy.optimize import linear_sum_assignment

    seen = set()
    out = []
    for seg in _segments(matches, m):
        qs, dbs = sorted({e.q for e in seg}), sorted({e.db for e in seg})
        best: dict[tuple[int, int], tuple[float, Match1D]] = {}
        for e in seg:
            c = (1.0 if e.q == e.db else alpha) * e.d
            if (e.q, e.db) not in best or c < best[(e.q, e.db)][0]:
                best[(e.q, e.db)] = (c, e)
        big = 1.0 + sum(c for c, _ in best.values())  # one more tuple outweighs any distance
        cost = np.zeros((len(qs), len(dbs)))
        for (q, db), (c, _) in best.items():
            cost[qs.index(q), dbs.index(db)] = c - big
        rows, cols = linear_sum_assignment(cost)
        chosen = [best[(qs[r], dbs[c])][1] for r, c in zip(rows, cols, strict=True)
                  if (qs[r], dbs[c]) in best]  # fmt: skip
        chosen_key = frozenset(chosen)
        if chosen and chosen_key not in seen:
            seen.add(chosen_key)
            out.append(tuple(sorted(chosen, key=lambda s: (s.q, s.db, s.t))))
    return out


def _maximal_matchings(edges: list[Match1D]) -> list[list[Match1D]]:
    """Every maximal set of pairwise independent edges (exact enumeration; the
    graphs have at most 2k nodes, k the query's dimensions)."""
    result = []

    def extend(chosen, rest):
        free = [e for e in rest if all(e.q != c.q and e.db != c.db for c in chosen)]
        if not free:
            result.append(chosen)
            return
        first, others = free[0], free[1:]
        extend([*chosen, first], others)
        # sets without ``first``: only maximal if some chosen edge later blocks it
        without = [e for e in others if e.q == first.q or e.db == first.db]
        if without:
            extend(chosen, others)

    extend([], edges)
    out = []
    for s in result:  # keep the maximal ones (no edge of the segment can be added)
        if not any(all(e.q != c.q and e.db != c.db for c in s) for e in edges if e not in s):
            out.append(s)
    return out


def distance(match_set, alpha: float) -> float:
    """§7.4.6: sum of f(i, j) d, f = 1 on the same dimension and alpha otherwise."""
    return float(sum((1.0 if s.q == s.db else alpha) * s.d for s in match_set))


def rank(sets, alpha: float) -> list[tuple[int, float, tuple]]:
    """(start, distance, set) sorted: more matched dimensions first, then the
    smaller overall distance (the start: the earliest window of the set)."""
    ranked = [(min(s.t for s in ms), distance(ms, alpha), ms) for ms in sets]
    ranked.sort(key=lambda r: (-len(r[2]), r[1], r[0]))
    return ranked


def dedupe(ranked, m: int) -> list[tuple[int, float, tuple]]:
    """One result a location: drop results starting within m of a better one."""
    out = []
    for r in ranked:
        if all(abs(r[0] - o[0]) >= m for o in out):
            out.append(r)
    return out


def tuples_from_top(top_lists, pair_list) -> list[Match1D]:
    """Fig 55's tuples from each pair's p best (window, distance) list, in pair order
    (``best_windows``'s, ``native.dtw_best_search``'s or the GPU's ``mddtw_gpu.top_p``)."""
    return [Match1D(j, i, t, d) for (j, i), top in zip(pair_list, top_lists, strict=True)
            for t, d in top]  # fmt: skip


def combine(matches: list[Match1D], m: int, alpha: float) -> list[tuple[int, float, tuple]]:
    """Phases two and three (§7.4.2, §7.4.6) on Fig 55's tuples: each location's best
    feasible set, ranked, one result a location -- ``search`` without segmentation
    or exhausting, after its distances and selection."""
    return dedupe(rank(best_sets(matches, m, alpha), alpha), m)


def md_dtw(query, db, *, nr: int = 1, p: int = 10, band: int | None = None,
           alpha: float = 1.0) -> list[tuple[int, float, tuple]]:  # fmt: skip
    """MD-DTW end to end: the ranked, one-a-location results."""
    query, db = np.asarray(query, float), np.asarray(db, float)
    m = query.shape[1]
    band = max(1, m // 10) if band is None else band
    return dedupe(rank(feasible_sets(single_dim_search(query, db, nr, p, band), m), alpha), m)


def edt(query, db, p: int = 10, normalise: bool = True) -> list[tuple[int, float]]:
    """§7.5.1's baseline: sum over dimensions of the Euclidean distance between
    the z-normalised query dimension and window (``normalise=False``: as
    recorded); the p best non-overlapping."""
    query, db = np.asarray(query, float), np.asarray(db, float)
    m = query.shape[1]
    if normalise:
        total = sum(np.sqrt(((znorm_windows(db[i], m) - znorm(query[i])) ** 2).sum(axis=1))
                    for i in range(query.shape[0]))  # fmt: skip
    else:
        windows = np.lib.stride_tricks.sliding_window_view
        total = sum(np.sqrt(((windows(db[i], m) - query[i]) ** 2).sum(axis=1))
                    for i in range(query.shape[0]))  # fmt: skip
    return best_windows(total, p, max(1, m // 2))


def ndcg(relevant: list[bool], k: int, total: int) -> float:
    """§7.5.2's nDCG_k with binary relevance (gains 2^rel - 1 over log2(i + 1)): the
    DCG of the list's first k over DCG_IDEAL, "DCG_m for a perfect result (highest
    possible DCG)": the ranking with every one of the ``total`` relevant items of the
    collection first, min(k, total) gains of 1 at ranks 1, 2, ... -- not the returned
    list re-sorted, which would give a list holding one relevant item at rank 1 the
    score 1 however many relevant items it missed. A list with more relevant entries
    than ``total`` is an error (a repeat counted twice: ``total`` counts items)."""
    if k < 1 or total < 0:
        raise ValueError(f"need k >= 1 and total >= 0, got k = {k}, total = {total}")
    rel = np.asarray(relevant[:k], dtype=float)
    if rel.sum() > total:
        raise ValueError(f"{int(rel.sum())} relevant results in the first {k}, but only "
                         f"{total} relevant items exist")  # fmt: skip
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    best = discount[: min(k, total)].sum()
    return float(((2.0**rel - 1) * discount[: rel.size]).sum() / best) if best > 0 else 0.0


def planted(k: int, n: int, m: int, positions, rng, *, noise: float = 0.1,
            shifts=None, scales=None, swaps=None, missing=None):  # fmt: skip
    """Fig 58's synthetic case: a k-dimensional random-walk background of length n,
    a k-dimensional motif of length m planted at each of ``positions``, with per
    occurrence optional dimension shifts (lag, samples), amplitude scales,
    swapped neighbouring dimensions (pairs) and missing dimensions. Returns
    (db, motif)."""
    db = np.cumsum(rng.normal(0, 0.2, (k, n)), axis=1)
    base = np.sin(np.linspace(0, 4 * np.pi, m))[None, :] * (1 + np.arange(k)[:, None] % 3)
    motif = base + np.cumsum(rng.normal(0, 0.1, (k, m)), axis=1)
    for o, t in enumerate(positions):
        pattern = motif.copy()
        if scales is not None:
            pattern = pattern * scales[o]
        if swaps is not None and swaps[o] is not None:
            a, b = swaps[o]
            pattern[[a, b]] = pattern[[b, a]]
        for d in range(k):
            if missing is not None and d in (missing[o] or ()):
                continue
            lag = 0 if shifts is None else int(shifts[o][d])
            start = t + lag
            db[d, start : start + m] = db[d, start] + pattern[d] - pattern[d, 0]
    db += rng.normal(0, noise, db.shape)
    return db, motif


# -- the search as the pipeline runs it: a backend for the distances, query
# segmentation (§7.4.4) and search exhausting (§7.4.5) ------------------------------


@dataclass(frozen=True)
class Search:
    """One search's settings. ``band`` is the Sakoe-Chiba band (SF x m);
    ``segments`` > 1 adds query segmentation, ``exhaust_band`` search exhausting
    (None: off)."""

    nr: int = 1
    p: int = 10
    band: int = 3
    alpha: float = 1.0
    segments: int = 1
    exhaust_band: int | None = None


class NumpyDistances:
    """The distances of a (query rows, pairs, band) request, in NumPy (``raw``: no
    z-normalisation of the query or the windows, as ``mddtw_gpu.GpuDistances``)."""

    def __init__(self, db: np.ndarray, raw: bool = False):
        self.db = np.asarray(db, dtype=np.float64)
        self.raw = raw

    def __call__(self, rows: np.ndarray, pair_list, band: int) -> np.ndarray:
        return np.stack([dtw_windows(rows[j], self.db[i], band, normalise=not self.raw)
                         for j, i in pair_list])  # fmt: skip


class CachedDistances:
    """A distances backend that keeps each (query rows, pairs, band) request's
    result: the search's variants (alone, segmented, exhausted) ask for the same
    whole-query and segment distances of one query, computed once here."""

    def __init__(self, distances):
        self.distances = distances
        self.kept: dict = {}

    def __call__(self, rows: np.ndarray, pair_list, band: int) -> np.ndarray:
        rows = np.ascontiguousarray(rows, dtype=np.float64)
        key = (rows.shape, rows.tobytes(), tuple(map(tuple, pair_list)), int(band))
        if key not in self.kept:
            self.kept[key] = self.distances(rows, pair_list, band)
        return self.kept[key]


def pairs(k_query: int, k_db: int, nr: int) -> list[tuple[int, int]]:
    """(query dimension, recording dimension) with |i - j| < nr (Fig 55)."""
    return [(j, i) for i in range(k_db) for j in range(k_query) if abs(i - j) < nr]


def _tuples(dist, pair_list, p: int, m: int, offset: int = 0, scale: float = 1.0):
    if offset == 0 and scale == 1.0:
        return tuples_from_top([best_windows(row, p, max(1, m // 2)) for row in dist], pair_list)
    out = []
    for (j, i), row in zip(pair_list, dist, strict=True):
        for t, d in best_windows(row, p, max(1, m // 2)):
            if t - offset >= 0:
                out.append(Match1D(j, i, t - offset, d * scale))
    return out


def search(query, db, s: Search, distances=None) -> list[tuple[int, float, tuple]]:
    """MD-DTW end to end (Figs 55 and 57) with ``distances`` (NumpyDistances by
    default; ``mddtw_gpu.GpuDistances`` on the GPU): ranked, one result a location.

    * **Query segmentation** (§7.4.4, ours where the thesis is silent): each query
      dimension is cut into ``segments`` equal parts, each searched like the whole;
      a segment's match at t is a partial match of the whole query at t minus the
      segment's offset, its distance scaled by sqrt(m / segment length) (a DTW
      distance of z-normalised sequences grows as the root of their length).
    * **Search exhausting** (§7.4.5): for a feasible set that misses query
      dimensions, each missing one is searched again with the wider
      ``exhaust_band`` among the windows within m / 2 of the set's start, on the
      recording dimensions the set leaves free (|i - j| < nr); the best window
      joins the set if its distance is at most the largest distance that pair kept
      in the first pass (so that it is as good as a match already accepted:
      precision is not traded for it)."""
    query, db = np.asarray(query, float), np.asarray(db, float)
    k, m = query.shape
    distances = distances or NumpyDistances(db)
    pair_list = pairs(k, db.shape[0], s.nr)
    dist = distances(query, pair_list, s.band)
    matches = _tuples(dist, pair_list, s.p, m)
    if s.segments > 1:
        length = m // s.segments
        for seg in range(s.segments):
            rows = query[:, seg * length : (seg + 1) * length]
            seg_dist = distances(rows, pair_list, s.band)
            matches += _tuples(seg_dist, pair_list, s.p, length, seg * length,
                               np.sqrt(m / length))  # fmt: skip
    sets = best_sets(matches, m, s.alpha)
    if s.exhaust_band is not None:
        sets = _exhaust(sets, query, pair_list, dist, distances, s, m, k)
    return dedupe(rank(sets, s.alpha), m)


def _exhaust(sets, query, pair_list, dist, distances, s: Search, m: int, k: int):
    kept = {}  # (j, i) -> the largest distance among the pair's p kept windows
    for (j, i), row in zip(pair_list, dist, strict=True):
        best = best_windows(row, s.p, max(1, m // 2))
        kept[(j, i)] = max(d for _, d in best) if best else -np.inf
    wide = None
    out = []
    for ms in sets:
        if len(ms) == k:
            out.append(ms)
            continue
        if wide is None:
            wide = dict(zip(pair_list, distances(query, pair_list, s.exhaust_band), strict=True))
        start = min(x.t for x in ms)
        used_q, used_db = {x.q for x in ms}, {x.db for x in ms}
        added = list(ms)
        for j in sorted(set(range(k)) - used_q):
            options = []
            for (jj, i), row in wide.items():
                if jj != j or i in used_db:
                    continue
                lo, hi = max(0, start - m // 2), min(row.size, start + m // 2 + 1)
                t = lo + int(np.argmin(row[lo:hi]))
                if row[t] <= kept[(j, i)]:
                    options.append((float(row[t]), i, t))
            if options:
                d, i, t = min(options)
                added.append(Match1D(j, i, t, d))
                used_db.add(i)
        out.append(tuple(sorted(added, key=lambda x: (x.q, x.db, x.t))))
    return out
