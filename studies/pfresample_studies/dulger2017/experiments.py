"""Resampling-quality and timing experiments of Dülger (2017), chapters 5-6.

A *cell* is one method variant (a registry method with its s-segment size and
its rule for B) on one weight distribution, swept over the N grid. For every N
and every weight sequence it draws K offspring sequences (thesis §2.5, §6.5)
and keeps only summaries:

* the K squared errors SE(o_l) (eq. 2.29), whose mean is the MSE (eq. 2.30);
* Var = sum_i Var(o^i) and ||Bias||^2 = sum_i (mean o^i - N w_i / sum w)^2
  (eq. 2.32), so MSE = Var + ||Bias||^2 (eq. 2.31);
* the per-particle offspring mean and variance, for small N only;
* the B used and the median time of one resampling call (§6.5).

K x N ancestors are never held at once: draws are taken in chunks of seeds.
Everything here works on NumPy arrays and, when the CUDA backend runs the
method, on CuPy arrays: only the summaries are moved to the host.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pfresample.api import choose_B, resample_each_B, resample_many, time_resample
from pfresample.backend import resolve_backend
from pfresample.expectation import unbiased
from pfresample.metrics import OffspringStats
from pfresample.resampling.registry import get_method

log = logging.getLogger("pfresample.experiments")

# Seed-sequence word that separates resampling draws from weight generation,
# whose SeedSequence entropy is (seed, distribution, N, sequence) alone.
_DRAW_DOMAIN = 1


# --- method variants ---------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One resampling configuration of the experiments.

    ``B_of``: use the B that another registry method would choose on the same
    weights (Figs 6.6, 6.10: Metropolis with Uphill's B). ``B_scale``: use
    round(scale x the method's own B) (Figs 5.11-5.14: Metropolis with B
    reduced). Neither: the method's own B rule (``choose_B``).
    """

    name: str
    method: str
    segment_bytes: int | None = None
    B_of: str | None = None
    B_scale: float | None = None
    group: str | None = None  # the configuration entry it was expanded from
    ladder: str | None = None  # B-scaled variants: the rungs of one ladder share this name

    @property
    def own_B(self) -> bool:
        """True when B comes from the method's own rule, chosen inside the
        timed call as in thesis §6.5; derived B values are given explicitly,
        so their computation is not timed (as in §5.3)."""
        return self.B_of is None and self.B_scale is None

    @property
    def label(self) -> str:
        """Legend text, e.g. ``metropolis-c1 (SS = 128 B)`` or ``metropolis (B of uphill)``."""
        parts = []
        if self.segment_bytes is not None:
            parts.append(f"SS = {self.segment_bytes} B")
        if self.B_of is not None:
            parts.append(f"B of {self.B_of}")
        if self.B_scale is not None:
            parts.append(f"B x {self.B_scale:g}")
        return f"{self.method} ({', '.join(parts)})" if parts else self.method

    def needs_ssd_table(self) -> bool:
        """Whether choosing B needs the Uphill SSD table (thesis §6.4)."""
        if get_method(self.method).B_rule is None:
            return False
        return get_method(self.B_of or self.method).B_rule == "uphill"

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "method": self.method,
            "segment_bytes": self.segment_bytes,
            "B_of": self.B_of,
            "B_scale": self.B_scale,
            "group": self.group,
            "ladder": self.ladder,
        }


def expand_variants(spec: Mapping[str, Mapping], segment_bytes) -> dict[str, Variant]:
    """The variants of the configuration's ``variants`` mapping, by name.

    An entry for a segmented method (C1, C2, UCA, UC1) becomes one variant per
    s-segment size, named ``<name>-ss<SS>``; an entry with a list of
    ``B_scale`` values becomes one variant per value, named ``<name>-bx<scale>``,
    the rungs of one ladder (``Variant.ladder``), which one job runs together
    (:func:`run_ladder`).
    """
    out: dict[str, Variant] = {}
    for name, entry in spec.items():
        m = get_method(entry["method"])  # an unknown name raises, listing the known ones
        if entry.get("B_of") is not None or entry.get("B_scale") is not None:
            if m.B_rule is None:
                raise ValueError(f"{name}: method {m.name!r} has no B to derive")
            if entry.get("B_of") is not None and entry.get("B_scale") is not None:
                raise ValueError(f"{name}: give B_of or B_scale, not both")
        if entry.get("B_of") is not None:
            get_method(entry["B_of"])
        sizes = (
            [(f"{name}-ss{ss}", int(ss)) for ss in segment_bytes] if m.segmented else [(name, None)]
        )
        scales = entry.get("B_scale")
        for sized, ss in sizes:
            if scales is None:
                out[sized] = Variant(sized, m.name, ss, entry.get("B_of"), group=name)
                continue
            for s in scales:
                scaled = f"{sized}-bx{s:g}"
                out[scaled] = Variant(scaled, m.name, ss, None, float(s), group=name, ladder=sized)
    return out


def draw_seeds(seed: int, dist: str, n: int, sequence: int, k: int) -> list[int]:
    """The K seeds (< 2^64) of the offspring draws from one weight sequence.

    They depend only on (seed, distribution, N, sequence), not on the method,
    so every method resamples with the same seeds and a rerun redraws exactly.
    """
    entropy = [seed, zlib.crc32(dist.encode()), n, sequence, _DRAW_DOMAIN]
    state = np.random.SeedSequence(entropy).generate_state(k, np.uint64)
    return [int(s) for s in state]


def variant_Bs(w, variants, ssd_table=None) -> list[int | None]:
    """The B each variant uses on weights ``w`` (None for methods without B),
    each B rule applied once: the rungs of a reduced-B ladder scale one B."""
    chosen: dict[str, int] = {}

    def rule_B(name: str) -> int:
        if name not in chosen:
            params = {"ssd_table": ssd_table} if get_method(name).B_rule == "uphill" else {}
            chosen[name] = choose_B(w, name, **params)  # on a CuPy array the device computes it
        return chosen[name]

    out = []
    for v in variants:
        if get_method(v.method).B_rule is None:
            out.append(None)
            continue
        B = rule_B(get_method(v.B_of or v.method).name)
        out.append(B if v.B_scale is None else round(v.B_scale * B))
    return out


# --- drawing -----------------------------------------------------------------------


def seed_chunks(seeds, n: int, chunk_elements: int):
    """Split ``seeds`` so that one chunk of ancestors holds at most
    ``chunk_elements`` entries (at least one seed per chunk). This bounds the
    memory of a cell: about 20 bytes per entry (int32 ancestors, int64 counts,
    float64 differences)."""
    size = max(1, chunk_elements // n)
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]


def draw_summaries(w, variants, seeds, Bs, backend: str, chunk_elements: int):
    """Draw ``len(seeds)`` offspring sequences of each variant from ``w``
    (``Bs``: each variant's B, None for methods without B) and summarise
    them, one :class:`pfresample.metrics.OffspringStats` per variant. Several variants must
    share method and s-segment size and differ in B only (a reduced-B
    ladder): they are drawn together by ``resample_each_B``."""
    target = unbiased(w)  # on w's device
    first = variants[0]
    accumulators = [OffspringStats(target=target) for _ in variants]
    for part in seed_chunks(seeds, w.shape[0], chunk_elements):
        if len(variants) == 1:
            draws = [
                resample_many(
                    w,
                    first.method,
                    seeds=part,
                    B=Bs[0],
                    segment_bytes=first.segment_bytes,
                    backend=backend,
                )
            ]
        else:
            draws = resample_each_B(
                w,
                first.method,
                seeds=part,
                Bs=Bs,
                segment_bytes=first.segment_bytes,
                backend=backend,
            )
        for acc, ancestors in zip(accumulators, draws, strict=True):
            acc.add(ancestors)
    return accumulators


# --- one cell ----------------------------------------------------------------------


@dataclass(frozen=True)
class CellSettings:
    """Grid and measurement settings shared by every cell of a run."""

    draws: int  # K
    seed: int
    backend: str = "auto"  # "auto", "cpu" or "cuda"
    timing_repeats: int = 3
    timing_warmup: int = 1
    chunk_elements: int = 1 << 24
    particle_summaries_max_n: int = 1024


def uses_cuda(variant: Variant, backend: str) -> bool:
    """Whether the cell's draws run on the CUDA backend (the library's own
    choice: ``backend.resolve_backend``)."""
    return resolve_backend(backend, get_method(variant.method).gpu is not None) == "cuda"


def _timing_kwargs(variant: Variant, B, ssd_table) -> dict:
    kw = {"segment_bytes": variant.segment_bytes}
    if variant.own_B:
        # The method chooses its B inside the timed call (§6.5 times the B kernels too).
        if get_method(variant.method).B_rule == "uphill":
            kw["ssd_table"] = ssd_table
    else:
        kw["B"] = B
    return kw


def check_ladder(variants) -> None:
    """Variants drawn together must differ in B only (:func:`draw_summaries`)."""
    if not variants:
        raise ValueError("a cell needs at least one variant")
    kinds = {(v.method, v.segment_bytes) for v in variants}
    if len(variants) > 1 and (len(kinds) > 1 or get_method(variants[0].method).B_rule is None):
        names = ", ".join(v.name for v in variants)
        raise ValueError(f"variants {names} differ in more than B: run them as separate cells")


def run_ladder(
    variants: list[Variant],
    dist: str,
    weights_by_n: Mapping[int, np.ndarray],
    settings: CellSettings,
    ssd_tables: Mapping[int, np.ndarray] | None = None,
) -> list[tuple[dict, dict]]:
    """One cell per variant: every N of ``weights_by_n`` (N -> (S, N) float32
    host array), every sequence, K draws each. Several variants must differ in
    B only (the rungs of a reduced-B ladder, Figs 5.11-5.14): they are drawn
    together, so that on the GPU the ladder costs what its largest B costs.
    One ``(arrays, metadata)`` per variant, in order, each equal to what the
    variant alone gives, for :func:`pfresample_studies.pipeline.artifacts.save_npz`.

    Arrays: ``n`` (G,), ``squared_errors`` (G, S, K), ``variance``, ``bias2``,
    ``B`` (-1 for methods without B), ``time_ms``, ``first_call_ms`` (G, S),
    and ``mean_offspring_<N>``, ``offspring_variance_<N>`` (S, N) for
    N <= ``particle_summaries_max_n``.
    """
    check_ladder(variants)
    ns = sorted(weights_by_n)
    S = weights_by_n[ns[0]].shape[0]  # weights_by_n may read from disk: each N once below
    G, K = len(ns), settings.draws
    on_device = uses_cuda(variants[0], settings.backend)
    backend = "cuda" if on_device else "cpu"
    results = [
        {
            "n": np.asarray(ns, dtype=np.int64),
            "squared_errors": np.zeros((G, S, K)),
            "variance": np.zeros((G, S)),
            "bias2": np.zeros((G, S)),
            "B": np.full((G, S), -1, dtype=np.int64),
            "time_ms": np.zeros((G, S)),
            "first_call_ms": np.zeros((G, S)),
        }
        for _ in variants
    ]
    device = None
    for g, n in enumerate(ns):
        table = (ssd_tables or {}).get(n)
        sequences = weights_by_n[n]
        if sequences.shape[0] != S:
            raise ValueError(
                f"{dist}: every N needs the same number of sequences, "
                f"got {S} at N = {ns[0]} and {sequences.shape[0]} at N = {n}"
            )
        for s in range(S):
            w = _on_backend(sequences[s], on_device)
            Bs = variant_Bs(w, variants, table)
            seeds = draw_seeds(settings.seed, dist, n, s, K)
            summaries = draw_summaries(w, variants, seeds, Bs, backend, settings.chunk_elements)
            for variant, arrays, B, summary in zip(variants, results, Bs, summaries, strict=True):
                timing = time_resample(
                    w,
                    variant.method,
                    seed=seeds[0],
                    repeats=settings.timing_repeats,
                    warmup=settings.timing_warmup,
                    backend=backend,
                    **_timing_kwargs(variant, B, table),
                )
                device = timing.device
                _store(arrays, g, s, n, B, summary, timing, settings)
        for variant, arrays in zip(variants, results, strict=True):
            log.info(
                "%s %s N = %d: MSE/N %.4g, B %s, %.3g ms",
                variant.name,
                dist,
                n,
                arrays["squared_errors"][g].mean() / n,
                sorted(set(arrays["B"][g].tolist())),
                float(np.median(arrays["time_ms"][g])),
            )
    return [
        (arrays, _cell_metadata(variant, dist, S, backend, device, settings))
        for variant, arrays in zip(variants, results, strict=True)
    ]


def _store(arrays, g, s, n, B, summary, timing, settings) -> None:
    arrays["squared_errors"][g, s] = summary.squared_errors
    arrays["variance"][g, s] = summary.variance
    arrays["bias2"][g, s] = summary.bias2
    arrays["B"][g, s] = -1 if B is None else B
    arrays["time_ms"][g, s] = timing.median_ms
    arrays["first_call_ms"][g, s] = timing.first_call_ms
    if n <= settings.particle_summaries_max_n:
        S = arrays["variance"].shape[1]
        arrays.setdefault(f"mean_offspring_{n}", np.zeros((S, n)))[s] = summary.mean_offspring
        arrays.setdefault(f"offspring_variance_{n}", np.zeros((S, n)))[s] = (
            summary.offspring_variance
        )


def _cell_metadata(variant, dist, S, backend, device, settings) -> dict:
    return {
        "what": "resampling cell",
        "variant": variant.as_dict(),
        "distribution": dist,
        "sequences": S,
        "draws": settings.draws,
        "seed": settings.seed,
        "backend": backend,
        "device": device,
        "timing_repeats": settings.timing_repeats,
        "timing_warmup": settings.timing_warmup,
        "timing_includes_B": variant.own_B,
    }


def _on_backend(w: np.ndarray, on_device: bool):
    if not on_device:
        return w
    import cupy

    return cupy.asarray(w)
