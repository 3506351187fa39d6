"""Moazeni (2013) chapter 7 on the GPU (``kernels/mddtw.cu``, §7.4.3):
the single-dimensional search's DTW distances, one thread a window, every (query
dimension, recording dimension) pair with |i - j| < nr in one launch. The windows'
means and deviations come from ``mddtw.window_stats`` (or, with ``fast_stats``,
``mddtw.running_stats``) and the query from ``mddtw.znorm``, so the distances equal
``mddtw.dtw_windows``'s bit for bit (to rounding with ``fast_stats``), constant
windows included (``mddtw.deviations``). Launch
parameters: THREADS a block; queries up to MAXM samples.

``top_p`` and ``search_stages`` carry the search past the distances on the GPU's
side (Fig 63 timed end to end): each pair's p best windows selected from the device's
distances (a stable argsort on the device, the few candidates copied to the host, the
selection there in C), then the matching and ranking on the host (``mddtw.combine``)."""

from __future__ import annotations

from functools import cache

import numpy as np

from . import cuda_source, mddtw
from .mddtw import pairs  # noqa: F401 -- the GPU cells' pairs are Fig 55's

SOURCE = "mddtw.cu"
THREADS = 128
MAXM = 1024  # the kernel's row (local memory, doubles); the longest query


@cache
def _function():
    from pfresample.cuda import kernels

    options = (*kernels.COMPILE_OPTIONS, f"-DMAXM={MAXM}")
    return kernels.Module(cuda_source(SOURCE), (), options).get_function("dtw_windows")


class Recording:
    """A recording (k, n) on the GPU with each dimension's window statistics for
    queries of length m (computed once, reused by every query of that length)."""

    def __init__(self, db: np.ndarray, m: int, fast_stats: bool = False, raw: bool = False):
        import cupy

        db = np.asarray(db, dtype=np.float64)
        if db.ndim != 2 or db.shape[1] < m or not 1 <= m <= MAXM:
            raise ValueError(f"need a (k, n) recording with n >= m and 1 <= m <= {MAXM}, "
                             f"got {db.shape} and m = {m}")  # fmt: skip
        # fast_stats (the timing cells'): running sums, O(n) a dimension, equal to
        # window_stats to rounding and with the same constant windows (both through
        # mddtw.deviations); the distances then differ from the reference's in the
        # last bits, the work does not
        stats = [(mddtw.running_stats if fast_stats else mddtw.window_stats)(row, m)
                 for row in db]  # fmt: skip
        if raw:  # no z-normalisation (the choice's other side): mean 0, deviation 1
            stats = [(np.zeros_like(mu), np.ones_like(sd)) for mu, sd in stats]
        self.raw = raw
        self.m, self.k, self.n = m, db.shape[0], db.shape[1]
        self.series = cupy.asarray(db)
        self.mu = cupy.asarray(np.stack([s[0] for s in stats]))
        self.sd = cupy.asarray(np.stack([s[1] for s in stats]))

    def distances(self, query: np.ndarray, pair_list, band: int):
        """DTW distances (len(pair_list), W) on the GPU for a (k, m) query."""
        import cupy

        query = np.asarray(query, dtype=np.float64)
        if query.ndim != 2 or query.shape[1] != self.m:
            raise ValueError(f"the query must be (k, {self.m}), got {query.shape}")
        if band < 0:
            raise ValueError(f"band must be >= 0, got {band}")
        q = cupy.asarray(query if self.raw else np.stack([mddtw.znorm(row) for row in query]))
        pq = cupy.asarray(np.array([p[0] for p in pair_list], dtype=np.int32))
        pd = cupy.asarray(np.array([p[1] for p in pair_list], dtype=np.int32))
        W = self.n - self.m + 1
        out = cupy.empty((len(pair_list), W), dtype=cupy.float64)
        grid = (-(-W // THREADS), len(pair_list))
        _function()(grid, (THREADS,), (q, self.series, self.mu, self.sd, pq, pd, np.int32(self.m),
                                       np.int64(self.n), np.int32(band), out),
                    shared_mem=8 * self.m)  # fmt: skip
        return out


def single_dim_search(query, db, nr: int, p: int, band: int):
    """Fig 55 with the GPU's distances: the same tuples as ``mddtw.single_dim_search``."""
    return mddtw.single_dim_search(query, db, nr, p, band, GpuDistances(db))


class GpuDistances:
    """``mddtw.search``'s distances on the GPU: one Recording a query length (the
    window statistics computed once a length), every pair in one launch."""

    def __init__(self, db: np.ndarray, raw: bool = False):
        self.db = np.asarray(db, dtype=np.float64)
        self.raw = raw  # True: no z-normalisation of windows or query
        self.recordings: dict[int, Recording] = {}

    def __call__(self, rows: np.ndarray, pair_list, band: int) -> np.ndarray:
        m = rows.shape[1]
        if m not in self.recordings:
            self.recordings[m] = Recording(self.db, m, raw=self.raw)
        return self.recordings[m].distances(rows, pair_list, band).get()


def top_p(rec: Recording, query: np.ndarray, pair_list, band: int, p: int, exclusion: int):
    """Each pair's p windows of least distance at least ``exclusion`` apart
    (``mddtw.best_windows`` of every window's distance, bit for bit): the distances on
    the device, CuPy's stable argsort of each pair's row there, the p (2 exclusion - 1)
    smallest copied to the host (the selection takes its p among them: a window taken
    excludes at most 2 exclusion - 1 entries, itself included) and selected in C
    (``native.dtw_select_candidates``). Returns a [(t, d)] list a pair."""
    import cupy

    from . import native

    if p < 1 or exclusion < 1:
        raise ValueError(f"need p >= 1 and exclusion >= 1, got {p}, {exclusion}")
    D = rec.distances(query, pair_list, band)
    keep = min(D.shape[1], p * (2 * exclusion - 1))
    idx = cupy.argsort(D, axis=1)[:, :keep]
    near = cupy.take_along_axis(D, idx, axis=1)
    return native.dtw_select_candidates(idx.get(), near.get(), p, exclusion)


STAGES = ("distances_s", "top_p_s", "matching_s", "total_s")


def search_stages(rec: Recording, query: np.ndarray, pair_list, s: mddtw.Search):
    """MD-DTW end to end from the GPU's distances (``mddtw.search`` without
    segmentation or exhausting), timed a stage at a time: ``distances_s`` the kernel
    (CUDA events), ``top_p_s`` the device's sort, the copy and the host's selection
    (wall, after the kernel's end), ``matching_s`` the feasible sets, ranking and one
    result a location on the host (``mddtw.combine``, wall), ``total_s`` the wall time
    from the query on the host to the ranked list (the window statistics are the
    recording's, computed once in ``Recording``, outside). Returns (results, times)."""
    import time

    import cupy

    from . import native

    exclusion = max(1, rec.m // 2)
    cupy.cuda.get_current_stream().synchronize()
    begin = time.perf_counter()
    a, b = cupy.cuda.Event(), cupy.cuda.Event()
    a.record()
    D = rec.distances(query, pair_list, s.band)
    b.record()
    keep = min(D.shape[1], s.p * (2 * exclusion - 1))
    idx = cupy.argsort(D, axis=1)[:, :keep]
    near = cupy.take_along_axis(D, idx, axis=1)
    b.synchronize()
    top = native.dtw_select_candidates(idx.get(), near.get(), s.p, exclusion)
    selected = time.perf_counter()
    results = mddtw.combine(mddtw.tuples_from_top(top, pair_list), rec.m, s.alpha)
    done = time.perf_counter()
    kernel = cupy.cuda.get_elapsed_time(a, b) / 1e3
    # the sort runs after the kernel on the same stream: the selection's stage is the wall
    # time to its end less the kernel's (the query's upload and the launch, the sort, the
    # copy of the candidates, the host's selection)
    times = {"distances_s": kernel, "top_p_s": selected - begin - kernel,
             "matching_s": done - selected, "total_s": done - begin}  # fmt: skip
    return results, times
