"""Moazeni (2013) chapter 7: the runs behind its tables and figures, on data with
known answers (the thesis's recordings are private). Cells return ``(arrays,
metadata)`` packed as ``<table>/<column>`` (``tv_experiments.pack``).

* ``planted_cell``: Fig 58's scenarios (exact, lagged dimensions, scaled, switched
  neighbouring dimensions, a missing dimension, strong noise) planted at known
  positions in random-walk recordings of 4 dimensions (Fig 58's), 9 (the activity
  monitor's 3 x 3) and 99 (the shoe's); the rank of every occurrence for MD-DTW
  (with and without segmentation and exhausting) and EDT, over seeds;
* ``activity_cell``: BasicMotions (a smart watch's 3-axis accelerometer and
  gyroscope, 80 labelled 10-s episodes of standing, walking, running and badminton)
  laid end to end into one recording; every episode's interior as a query, the
  other episodes of its class the relevant answers: nDCG@20 and recall (Tables 11
  and 12) and the precision and recall of a rare class (Table 13), with
  z-normalisation on and off; Table 14's walking queries on the accelerometer alone,
  each episode as recorded, its axes permuted or rotated (orientation varied);
* ``timing_cell``: the GPU's and the compiled CPU's DTW of every dimension pair,
  against recording length, query length and width (Figs 60, 62-64).

The data come from the installed ``aeon`` package's files (an extra; never the
network); without it the activity tables are empty and say so. aeon's Daphnet
S06R02E0 excerpt holds no freeze-of-gait episode (7,040 rows, every label 0; aeon
1.6 deprecates it for that reason), so it serves as a real 9-dimensional recording
for timing only."""

from __future__ import annotations

import importlib.util
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pfresample.backend import cuda_device

from . import mddtw
from .tv_experiments import pack

LOG = logging.getLogger(__name__)
SCENARIOS = ("exact", "lag", "scale", "switch", "missing", "noise")
TOP = 20  # nDCG@20 and the results judged (§7.5.4)


def aeon_data() -> Path | None:
    """aeon's data folder, found without importing aeon (whose imports are heavy)."""
    spec = importlib.util.find_spec("aeon")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data"


def load_basicmotions() -> tuple[np.ndarray, np.ndarray] | None:
    """BasicMotions' 80 episodes (80, 6, 100) and their labels, or None without aeon."""
    folder = aeon_data()
    if folder is None or not (folder / "BasicMotions").is_dir():
        return None
    episodes, labels = [], []
    for split in ("TRAIN", "TEST"):
        data = False
        for line in (folder / "BasicMotions" / f"BasicMotions_{split}.ts").read_text().splitlines():
            if line.lower().startswith("@data"):
                data = True
                continue
            if data and line.strip():
                *dims, label = line.strip().split(":")
                episodes.append([[float(v) for v in d.split(",")] for d in dims])
                labels.append(label)
    return np.array(episodes), np.array(labels)


def load_daphnet() -> np.ndarray | None:
    """Daphnet S06R02E0's excerpt (9, 7040): ankle, thigh and trunk, 3 axes each."""
    folder = aeon_data()
    path = None if folder is None else folder / "Daphnet_S06R02E0" / "S06R02E0.csv"
    if path is None or not path.is_file():
        return None
    rows = np.loadtxt(path, delimiter=",", skiprows=1, usecols=range(1, 10))
    return rows.T.copy()


def _distances(db, backend: str, raw: bool = False):
    """The search's distances backend (``raw``: no z-normalisation)."""
    if backend == "gpu":
        from . import mddtw_gpu

        return mddtw_gpu.GpuDistances(db, raw=raw)
    return mddtw.NumpyDistances(db, raw=raw)


def _variants(s: mddtw.Search, segments: int, exhaust_band: int) -> dict[str, mddtw.Search]:
    """MD-DTW alone, with query segmentation, and with both (Table 12's columns)."""
    both = mddtw.Search(s.nr, s.p, s.band, s.alpha, segments, exhaust_band)
    return {"md_dtw": s, "segmentation": mddtw.Search(s.nr, s.p, s.band, s.alpha, segments),
            "exhausting": both}  # fmt: skip


def planted_case(k: int, n: int, m: int, seed: int):
    """A recording of k dimensions with one occurrence of each scenario (in a seeded
    order) at known, well separated positions; returns (db, motif, positions,
    scenarios)."""
    rng = np.random.default_rng([seed, k, n, m])
    order = rng.permutation(SCENARIOS)
    gap = n // (len(order) + 1)
    positions = [gap * (o + 1) - m // 2 for o in range(len(order))]
    shifts, scales, swaps, missing = [], [], [], []
    for name in order:
        shifts.append(rng.integers(-m // 8, m // 8 + 1, k) if name == "lag" else np.zeros(k))
        scales.append(1.8 if name == "scale" else 1.0)
        pair = int(rng.integers(0, k - 1))
        swaps.append((pair, pair + 1) if name == "switch" else None)
        missing.append((int(rng.integers(0, k)),) if name == "missing" else None)
    db, motif = mddtw.planted(k, n, m, positions, rng, noise=0.1, shifts=shifts, scales=scales,
                              swaps=swaps, missing=missing)  # fmt: skip
    noisy = positions[list(order).index("noise")]
    db[:, noisy : noisy + m] += rng.normal(0, 0.6, (k, m))
    return db, motif, positions, list(order)


def _rank_of(starts: Sequence[int], position: int, tolerance: int) -> int:
    """The 1-based rank of the first result within ``tolerance`` of ``position`` (0: none)."""
    for r, t in enumerate(starts, 1):
        if abs(t - position) <= tolerance:
            return r
    return 0


def planted_cell(widths: Sequence[int], n: int, m: int, seeds: int, search: dict, *,
                 segments: int, exhaust_band: int, backend: str = "cpu", log=LOG):  # fmt: skip
    """Every occurrence's rank for each method, width and seed (Fig 58, recall)."""
    rows, fig58 = [], {}
    for k in widths:
        s = mddtw.Search(**{**search, "nr": min(search["nr"], k)})
        for seed in range(seeds):
            db, motif, positions, order = planted_case(k, n, m, seed)
            distances = mddtw.CachedDistances(_distances(db, backend))  # the variants share
            results = {name: [r[0] for r in mddtw.search(motif, db, v, distances)][:TOP]
                       for name, v in _variants(s, segments, exhaust_band).items()}  # fmt: skip
            results["edt"] = [t for t, _ in mddtw.edt(motif, db, TOP)]
            for name, starts in results.items():
                for position, scenario in zip(positions, order, strict=True):
                    rows.append({"k": k, "seed": seed, "method": name, "scenario": scenario,
                                 "position": position,
                                 "rank": _rank_of(starts, position, m // 2)})  # fmt: skip
            if k == widths[0] and seed == 0:
                fig58 = {"db": db, "motif": motif, "results": results, "positions": positions,
                         "order": order}  # fmt: skip
            log.info("planted k=%d seed %d: %s", k, seed, {
                name: sum(_rank_of(st, p, m // 2) > 0 for p in positions)
                for name, st in results.items()})  # fmt: skip
    arrays = pack({"planted": rows})
    if fig58:
        arrays["fig58/db"], arrays["fig58/motif"] = fig58["db"], fig58["motif"]
        arrays["fig58/positions"] = np.array(fig58["positions"])
        arrays["fig58/order"] = np.array(fig58["order"])
        for name, starts in fig58["results"].items():
            arrays[f"fig58/{name}"] = np.array(starts[:10], dtype=np.int64)
    return arrays, {"study": "moazeni2013", "experiment": "ch7_planted", "backend": backend,
                    "device": cuda_device() if backend == "gpu" else "CPU"}  # fmt: skip


ACCELEROMETER = (0, 1, 2)  # BasicMotions' first three dimensions: the 3-axis accelerometer
# Table 14's counterpart: each episode's accelerometer as recorded, turned by a seeded signed
# permutation of its axes (the sensor worn turned by quarter turns: each motion on another
# axis, which nr > 1 is for) or by a seeded uniformly random rotation (axes mixed)
ORIENTATIONS = ("recorded", "permuted", "rotated")


def _orientation(how: str, rng) -> np.ndarray:
    """A 3 x 3 rotation for one episode: identity, a signed axis permutation, or a
    uniformly random rotation (QR of a normal matrix, signs fixed, determinant 1)."""
    if how == "recorded":
        return np.eye(3)
    if how == "permuted":
        r = np.eye(3)[rng.permutation(3)] * rng.choice([-1.0, 1.0], 3)[:, None]
    elif how == "rotated":
        qm, tri = np.linalg.qr(rng.normal(size=(3, 3)))
        r = qm * np.sign(np.diag(tri))
    else:
        raise ValueError(f"orientation is one of {ORIENTATIONS}, got {how!r}")
    if np.linalg.det(r) < 0:  # a rotation, not a reflection: a sensor can be turned, not mirrored
        r[:, 0] = -r[:, 0]
    return r


def activity_recording(seed: int, rare: str | None = None, rare_count: int = 0,
                       dims: Sequence[int] | None = None,
                       orientation: str = "recorded"):  # fmt: skip
    """BasicMotions' episodes end to end in a seeded order (each dimension of each
    episode as recorded), with ``rare``'s episodes cut to ``rare_count``; ``dims``
    keeps those dimensions, and ``orientation`` (with the accelerometer's three)
    turns each episode by its own seeded rotation (``_orientation``); returns
    (db (k, n), episode starts, labels, episode length) or None without aeon."""
    loaded = load_basicmotions()
    if loaded is None:
        return None
    episodes, labels = loaded
    rng = np.random.default_rng(seed)
    keep = np.arange(len(labels))
    if rare is not None:
        rare_idx = np.flatnonzero(labels == rare)
        keep = np.concatenate([np.flatnonzero(labels != rare),
                               rng.choice(rare_idx, rare_count, replace=False)])  # fmt: skip
    order = rng.permutation(keep)
    length = episodes.shape[2]
    if dims is not None:
        episodes = episodes[:, list(dims)]
    if orientation != "recorded":
        if episodes.shape[1] != 3:
            raise ValueError(f"an orientation turns 3 axes, got {episodes.shape[1]} dimensions")
        turn = np.random.default_rng([seed, 14])
        episodes = np.stack([_orientation(orientation, turn) @ ep for ep in episodes])
    db = np.concatenate([episodes[i] for i in order], axis=1)
    return db, np.arange(len(order)) * length, labels[order], length


def _episode(t: int, m: int, length: int, count: int) -> int:
    """The episode holding most of the window starting at t."""
    return min(int((t + m // 2) // length), count - 1)


def _score(starts, query_at: int, m: int, labels, length: int, e: int) -> dict:
    """One query's ranked starts judged against the episodes' labels: a result lies
    in the episode holding most of its window, and is correct if that is another
    episode of the query's label (the query's own window left out). The relevant
    items are those other episodes: nDCG@20 gains 1 at a result that finds one first
    (a second result in an episode already found repeats it), over the ideal of
    min(20, their count) gains first (``mddtw.ndcg``, §7.5.2); recall in the top 20
    and precision and recall in the top 10 count distinct episodes too, precision
    every correct result."""
    results = [t for t in starts if abs(t - query_at) > m // 2][:TOP]
    found = [_episode(t, m, length, len(labels)) for t in results]
    correct = [bool(labels[f] == labels[e] and f != e) for f in found]
    first, seen = [], set()
    for f, c in zip(found, correct, strict=True):
        first.append(c and f not in seen)
        if c:
            seen.add(f)
    relevant = int((labels == labels[e]).sum()) - 1
    others = max(1, relevant)
    return {"ndcg": mddtw.ndcg(first, TOP, relevant), "recall": len(seen) / others,
            "precision_at_10": sum(correct[:10]) / max(1, min(10, len(results))),
            "recall_at_10": len({f for f, c in zip(found[:10], correct[:10], strict=True) if c})
            / others}  # fmt: skip


def _recordings(seed: int, rare: str, rare_count: int, orientations: Sequence[str]):
    """Tables 11-13's recordings (every class; the rare class cut) and Table 14's
    (the accelerometer in each orientation): (recording, orientation, made)."""
    yield "all", "recorded", activity_recording(seed)
    yield "rare", "recorded", activity_recording(seed, rare, rare_count)
    for how in orientations:
        yield "orientation", how, activity_recording(seed, dims=ACCELEROMETER, orientation=how)


def activity_cell(m: int, search: dict, *, segments: int, exhaust_band: int, seed: int,
                  rare: str, rare_count: int, queries_per_label: int | None = None,
                  normalise: Sequence[bool] = (True,), orientations: Sequence[str] = (),
                  orientation_label: str = "Walking", orientation_queries: int = 5,
                  backend: str = "cpu", log=LOG):  # fmt: skip
    """nDCG@20, recall and precision of each episode's query (the first
    ``queries_per_label`` episodes of each label in the recording's order; None:
    every episode) with z-normalisation on and off (``normalise``), on every class
    (Tables 11 and 12), on the rare class's recording (Table 13), and of the first
    ``orientation_queries`` episodes of ``orientation_label`` on the accelerometer
    in each of ``orientations`` (Table 14)."""
    meta = {"study": "moazeni2013", "experiment": "ch7_activity", "backend": backend,
            "device": cuda_device() if backend == "gpu" else "CPU"}  # fmt: skip
    rows = []
    for kind, how, made in _recordings(seed, rare, rare_count, orientations):
        if made is None:
            log.warning("aeon is not installed: BasicMotions' tables are empty")
            meta["aeon"] = None
            return pack({"activity": []}), meta
        db, starts, labels, length = made
        s = mddtw.Search(**{**search, "nr": min(search["nr"], db.shape[0])})
        offset = (length - m) // 2  # the query: an episode's interior
        asked: dict[str, int] = {}
        queries = []
        for e, label in enumerate(labels):
            wanted = {"rare": rare, "orientation": orientation_label}.get(kind, label)
            if label != wanted:
                continue
            asked[label] = asked.get(label, 0) + 1
            limit = orientation_queries if kind == "orientation" else queries_per_label
            if limit is None or asked[label] <= limit:
                queries.append(e)
        for norm in normalise:
            base = _distances(db, backend, raw=not norm)
            for e in queries:
                query = db[:, starts[e] + offset : starts[e] + offset + m]
                distances = mddtw.CachedDistances(base)  # one query's requests, shared
                found = {name: [r[0] for r in mddtw.search(query, db, v, distances)]
                         for name, v in _variants(s, segments, exhaust_band).items()}  # fmt: skip
                found["edt"] = [t for t, _ in mddtw.edt(query, db, 3 * TOP, normalise=norm)]
                for name, results in found.items():
                    rows.append(
                        {
                            "recording": kind,
                            "orientation": how,
                            "normalise": bool(norm),
                            "label": labels[e],
                            "episode": e,
                            "method": name,
                            **_score(results, starts[e] + offset, m, labels, length, e),
                        }
                    )
            log.info("activity (%s, %s, normalise %s): %d queries", kind, how, norm, len(queries))
    meta["aeon"] = str(aeon_data())
    return pack({"activity": rows}), meta


def _peer_time(q, x, m: int, band: int, exact, pairs_timed: int, pairs: int) -> dict:
    """dtaidistance's compiled DTW (one thread, its window band + 1 being our band)
    over the same z-normalised windows: seconds scaled to every pair, and its
    largest difference from our distances (empty without dtaidistance)."""
    try:
        from dtaidistance import dtw
    except ImportError:
        return {}
    windows = list(mddtw.znorm_windows(x, m))
    block = ((0, 1), (1, len(windows) + 1))
    begin = time.perf_counter()
    for _ in range(pairs_timed):
        d = dtw.distance_matrix_fast([q, *windows], window=band + 1, block=block,
                                     parallel=False, compact=True)  # fmt: skip
    seconds = (time.perf_counter() - begin) / pairs_timed
    return {"peer_s": seconds * pairs, "peer_max_diff": float(np.abs(np.asarray(d) - exact).max())}


def _gpu_seconds(rec, query, pair_list, band: int) -> float:
    """Device seconds of one call of the distances of every pair (CUDA events)."""
    import cupy

    a, b = cupy.cuda.Event(), cupy.cuda.Event()
    a.record()
    rec.distances(query, pair_list, band)
    b.record()
    b.synchronize()
    return cupy.cuda.get_elapsed_time(a, b) / 1e3


def timing_cell(widths: Sequence[int], lengths: Sequence[int], queries: Sequence[int],
                band_fraction: float, nr: int, cpu_pairs: int, cpu_max_length: int,
                repeats: int, *, seed: int, p: int = 10, log=LOG):  # fmt: skip
    """Seconds of the single-dimensional search's DTW for every pair (GPU, CUDA
    events) and of the compiled single-thread DTW for ``cpu_pairs`` pairs (its time
    a pair is the same for every pair: scaled to all of them, said so in the
    table) where the recording is at most ``cpu_max_length``, and of the pruned
    CPU search of the same pairs' p best windows (``native.dtw_top_pruned``: lower
    bounds and early abandoning, the stronger baseline); plus the Daphnet excerpt
    (real, 9 dimensions) at each query length. The timed query is a window of the
    recording with noise (a search that finds something, so that bounds prune as
    they would)."""
    import cupy

    from . import mddtw_gpu, native

    rows = []
    native.dtw_library()  # built (or loaded) before the first timed call
    recordings = [(f"random walk, {k} dims", k, n, None) for k in widths for n in lengths]
    daphnet = load_daphnet()
    if daphnet is not None:
        recordings.append(("Daphnet S06R02E0", daphnet.shape[0], daphnet.shape[1], daphnet))
    for name, k, n, data in recordings:
        rng = np.random.default_rng([seed, k, n])
        db = np.cumsum(rng.normal(size=(k, n)), axis=1) if data is None else data
        for m in queries:
            if m > n:
                continue
            band = max(1, int(round(band_fraction * m)))
            start = int(rng.integers(0, n - m + 1))
            query = db[:, start : start + m] + rng.normal(0, 0.3, (k, m))
            pair_list = mddtw_gpu.pairs(k, k, nr)
            rec = mddtw_gpu.Recording(db, m, fast_stats=True)
            rec.distances(query, pair_list, band)  # warm-up
            times = [_gpu_seconds(rec, query, pair_list, band) for _ in range(repeats)]
            row = {"recording": name, "k": k, "n": n, "m": m, "band": band, "nr": nr,
                   "pairs": len(pair_list), "gpu_s": float(np.median(times)),
                   "gpu_s_min": min(times), "gpu_s_max": max(times)}  # fmt: skip
            if n <= cpu_max_length:
                mu, sd = mddtw.window_stats(db[0], m)
                q = mddtw.znorm(query[0])
                per_pair, exact = dtw_c_per_pair(q, db[0], mu, sd, band, cpu_pairs)
                row.update(_peer_time(q, db[0], m, band, exact, cpu_pairs, len(pair_list)))
                row.update(cpu_s=per_pair * len(pair_list), cpu_pairs_timed=cpu_pairs)
                begin = time.perf_counter()  # the pruned search of the same pairs' p best
                for _ in range(cpu_pairs):
                    _, gone = native.dtw_top_pruned(q, db[0], mu, sd, band, p, max(1, m // 2))
                row.update(cpu_pruned_s=(time.perf_counter() - begin) / cpu_pairs
                           * len(pair_list), pruned_windows=gone)  # fmt: skip
            rows.append(row)
            log.info("%s n=%d m=%d: GPU %.4f s%s", name, n, m, row["gpu_s"],
                     f", C {row['cpu_s']:.2f} s" if "cpu_s" in row else "")  # fmt: skip
        cupy.get_default_memory_pool().free_all_blocks()
    for k in widths:  # Fig 64: nr fixed against nr = k (every pair)
        n, m = lengths[0], queries[0]
        rng = np.random.default_rng([seed, k])
        db, query = np.cumsum(rng.normal(size=(k, n)), axis=1), rng.normal(size=(k, m))
        band = max(1, int(round(band_fraction * m)))
        rec = mddtw_gpu.Recording(db, m, fast_stats=True)
        for label, r in (("fixed", nr), ("all", k)):
            pair_list = mddtw_gpu.pairs(k, k, r)
            rec.distances(query, pair_list, band)  # warm-up
            rows.append({"recording": f"fig64 nr {label}", "k": k, "n": n, "m": m, "band": band,
                         "nr": r, "pairs": len(pair_list),
                         "gpu_s": _gpu_seconds(rec, query, pair_list, band)})  # fmt: skip
    return pack({"timing": rows}), {"study": "moazeni2013", "experiment": "ch7_timing",
                                    "backend": "cuda", "device": cuda_device(),
                                    **_host()}  # fmt: skip


def _host() -> dict:
    """The machine a cell ran on (``experiments.host``): its name, CPU model and CPUs."""
    from .experiments import host

    return host()


def dtw_c_per_pair(q, x, mu, sd, band: int, cpu_pairs: int):
    """The document's kind of baseline as the timing cell times it: ``native/dtw.c``'s
    exact DTW of every window of ``x`` on one thread, ``cpu_pairs`` times (a pair's time
    is every pair's: the brute force computes every cell of every window); returns
    (seconds a pair, the distances)."""
    from . import native

    begin = time.perf_counter()
    for _ in range(cpu_pairs):
        exact = native.dtw_windows(q, x, mu, sd, band)
    return (time.perf_counter() - begin) / cpu_pairs, exact


def timing_inputs(k: int, n: int, m: int, queries: Sequence[int], seed: int):
    """The timing cell's random-walk recording and noisy query for (k, n, m): the same
    draws in the same order (its loop draws a start and noise for each query length of
    ``queries`` up to m)."""
    rng = np.random.default_rng([seed, k, n])
    db = np.cumsum(rng.normal(size=(k, n)), axis=1)
    for mm in queries if m in queries else (m,):
        if mm > n:
            continue
        start = int(rng.integers(0, n - mm + 1))
        query = db[:, start : start + mm] + rng.normal(0, 0.3, (k, mm))
        if mm == m:
            return db, query
    raise ValueError(f"query length {m} is longer than the recording ({n})")


def parse_cases(cases: Sequence[str]) -> list[tuple[int, int, int]]:
    """``"K:N:M"`` strings (recording dimensions, length, query length) -> tuples."""
    out = []
    for spec in cases:
        parts = str(spec).split(":")
        if len(parts) != 3 or not all(v.isdigit() and int(v) > 0 for v in parts):
            raise ValueError(f"a case is K:N:M with positive integers, got {spec!r}")
        k, n, m = (int(v) for v in parts)
        if m > n:
            raise ValueError(f"a case's query length M must be at most N, got {spec!r}")
        out.append((k, n, m))
    return out


BEST_CPU_CODES = ("dtw_best_search", "dtw_best_all")  # native/dtw_best.c


def _search_input(db, query, m: int, pair_list):
    from . import native

    stats = [mddtw.running_stats(row, m) for row in db]
    mu, sd = np.stack([st[0] for st in stats]), np.stack([st[1] for st in stats])
    qz = np.stack([mddtw.znorm(row) for row in query])
    return native.DtwSearchInput(qz, db, mu, sd, pair_list), qz, mu, sd


def best_cpu_cell(cases: Sequence[str], queries: Sequence[int], band_fraction: float, nr: int,
                  p: int, cpu_pairs: int, repeats: int, *, seed: int, threads: int | None = None,
                  log=LOG):  # fmt: skip
    """Chapter 7's best CPU code (native/dtw_best.c on ``threads``, default every CPU) and
    the document's kind of baseline (``dtw_c_per_pair``: dtw.c on one thread, the timing
    cell's method) at each case ``"K:N:M"``, on the timing cell's inputs
    (``timing_inputs``): the task of bench/moazeni2013_ch7_best_cpu.py, every pair's p
    windows of least distance at least m / 2 apart. ``dtw_best_search`` (the pruned exact
    search) and ``dtw_best_all`` (every window's distance, SIMD), each the median of
    ``repeats`` runs after a small untimed call (the library's load, OpenMP's threads);
    the best CPU time is the faster, as the bench's headline. The two selections are
    checked equal bit for bit. The window statistics are an input, outside the clocks."""
    import os

    from . import native

    threads = int(threads or os.cpu_count() or 1)
    meta = {"study": "moazeni2013", "experiment": "ch7_best_cpu", "backend": "cpu",
            "device": "CPU", **_host(), "threads": threads, "seed": int(seed),
            "repeats": int(repeats), "code": "dtw_best.c"}  # fmt: skip
    rows = []
    for k, n, m in parse_cases(cases):
        band, exclusion = max(1, int(round(band_fraction * m))), max(1, m // 2)
        pair_list = mddtw.pairs(k, k, nr)
        db, query = timing_inputs(k, n, m, queries, seed)
        data, qz, mu, sd = _search_input(db, query, m, pair_list)
        small = _search_input(db[:, : 4 * m], query, m, pair_list[:1])[0]
        row = {"k": k, "n": n, "m": m, "band": band, "pairs": len(pair_list), "threads": threads,
               "repeats": repeats}  # fmt: skip
        results = {}
        for code in BEST_CPU_CODES:
            fn = getattr(native, code)
            fn(small, band, p, exclusion, threads)  # the warm-up, untimed
            times = []
            for _ in range(repeats):
                begin = time.perf_counter()
                out = fn(data, band, p, exclusion, threads)
                times.append(time.perf_counter() - begin)
            results[code] = out[0] if code == "dtw_best_search" else out
            row[f"{code}_s"], row[f"{code}_s_min"] = float(np.median(times)), min(times)
        if results["dtw_best_search"] != results["dtw_best_all"]:
            raise AssertionError(f"ch7 {k}:{n}:{m}: dtw_best_search and dtw_best_all differ")
        fastest = min(BEST_CPU_CODES, key=lambda c: row[f"{c}_s"])
        row.update(best_cpu_s=row[f"{fastest}_s"], best_cpu_code=fastest)
        j, i = pair_list[0]  # the first pair's distances checked against dtw.c's too
        per_pair, exact = dtw_c_per_pair(qz[j], db[i], mu[i], sd[i], band, cpu_pairs)
        row.update(doc_cpu_s=per_pair * len(pair_list), doc_pairs_timed=cpu_pairs)
        want = native.dtw_select_rows(exact[None, :], p, exclusion, 1)[0]
        if want != results["dtw_best_all"][0]:  # the first pair against dtw.c's selection
            raise AssertionError(f"ch7 {k}:{n}:{m}: dtw_best.c's selection differs from dtw.c's")
        rows.append(row)
        log.info("ch7 %d:%d:%d on %d threads: dtw_best_search %.4f s, dtw_best_all %.4f s; "
                 "dtw.c one thread %.3f s (%d of %d pairs timed)", k, n, m, threads,
                 row["dtw_best_search_s"], row["dtw_best_all_s"], row["doc_cpu_s"], cpu_pairs,
                 len(pair_list))  # fmt: skip
    return pack({"best_cpu": rows}), meta


def choices_cell(m: int, search: dict, choices: dict, queries_per_label: int, *, seed: int,
                 log=LOG):  # fmt: skip
    """The effect of each choice the thesis leaves open, one at a time from ours, on
    BasicMotions (GPU): nDCG@20 and recall of MD-DTW over the first
    ``queries_per_label`` episodes of each class. ``choices`` maps "m", "p", "sf" and
    "normalise" to the values tried; the band is SF x m."""
    from . import mddtw_gpu

    meta = {"study": "moazeni2013", "experiment": "ch7_choices", "backend": "cuda",
            "device": cuda_device()}  # fmt: skip
    made = activity_recording(seed)
    if made is None:
        log.warning("aeon is not installed: the choices' table is empty")
        return pack({"choices": []}), meta
    db, starts, labels, length = made
    sf = search["band"] / m
    runs = [("ours", {})]
    runs += [("m", {"m": v}) for v in choices["m"] if v != m]
    runs += [("p", {"p": v}) for v in choices["p"] if v != search["p"]]
    runs += [("sf", {"sf": v}) for v in choices["sf"] if v != sf]
    runs += [("normalise", {"normalise": v}) for v in choices["normalise"] if not v]
    gpu = {True: mddtw_gpu.GpuDistances(db), False: mddtw_gpu.GpuDistances(db, raw=True)}
    rows = []
    for choice, change in runs:
        mm = int(change.get("m", m))
        s = mddtw.Search(nr=search["nr"], p=int(change.get("p", search["p"])),
                         band=max(0, round(float(change.get("sf", sf)) * mm)),
                         alpha=search["alpha"])  # fmt: skip
        distances = gpu[bool(change.get("normalise", True))]
        asked: dict[str, int] = {}
        for e, label in enumerate(labels):
            asked[label] = asked.get(label, 0) + 1
            if asked[label] > queries_per_label:
                continue
            offset = (length - mm) // 2
            query = db[:, starts[e] + offset : starts[e] + offset + mm]
            results = [r[0] for r in mddtw.search(query, db, s, distances)]
            score = _score(results, starts[e] + offset, mm, labels, length, e)
            rows.append(
                {
                    "choice": choice,
                    "value": str(change.get(choice, "ours")),
                    "m": mm,
                    "p": s.p,
                    "band": s.band,
                    "normalise": bool(change.get("normalise", True)),
                    "label": label,
                    "episode": e,
                    "ndcg": score["ndcg"],
                    "recall": score["recall"],
                }
            )
        mean = np.mean([r["ndcg"] for r in rows if r["choice"] == choice])
        log.info("choice %s %s: nDCG %.3f", choice, change, mean)
    return pack({"choices": rows}), meta
