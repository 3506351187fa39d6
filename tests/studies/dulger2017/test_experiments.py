"""Resampling cells and their tables (studies/dulger2017: experiments, tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pfresample import resample_many
from pfresample.metrics import OffspringStats
from pfresample.tuning import ssd_table
from pfresample_studies.dulger2017 import experiments as ex
from pfresample_studies.dulger2017 import tables
from pfresample_studies.dulger2017.weights import generate

SPEC = {
    "metropolis": {"method": "metropolis"},
    "uphill-ca": {"method": "uphill-ca"},
    "reduced": {"method": "metropolis", "B_scale": [0.5, 0.25]},
    "m-of-u": {"method": "metropolis", "B_of": "uphill"},
}


def weights(dist="eq233-y4", ns=(16, 64), sequences=2):
    return {n: np.stack([generate(dist, n, s, 7) for s in range(sequences)]) for n in ns}


def test_variants_expand_per_segment_size_and_B_scale():
    v = ex.expand_variants(SPEC, [128, 2048])
    assert list(v) == [
        "metropolis",
        "uphill-ca-ss128",
        "uphill-ca-ss2048",
        "reduced-bx0.5",
        "reduced-bx0.25",
        "m-of-u",
    ]
    assert (
        v["uphill-ca-ss2048"].segment_bytes == 2048 and v["uphill-ca-ss2048"].group == "uphill-ca"
    )
    assert v["reduced-bx0.25"].B_scale == 0.25 and not v["reduced-bx0.25"].own_B
    assert v["m-of-u"].needs_ssd_table() and not v["metropolis"].needs_ssd_table()
    with pytest.raises(ValueError, match="unknown method 'metropolis-c9'"):
        ex.expand_variants({"x": {"method": "metropolis-c9"}}, [128])
    with pytest.raises(ValueError, match="'systematic' has no B to derive"):
        ex.expand_variants({"x": {"method": "systematic", "B_of": "uphill"}}, [128])
    with pytest.raises(ValueError, match="not both"):
        ex.expand_variants({"x": {"method": "uphill", "B_of": "metropolis", "B_scale": [1]}}, [])


def test_variant_B_follows_its_rule():
    w = generate("eq233-y3", 256, 0, 1)
    table = ssd_table(256)
    v = ex.expand_variants(SPEC, [128])
    from pfresample import choose_B

    own = choose_B(w, "metropolis")
    assert ex.variant_Bs(w, [v["metropolis"]])[0] == own
    assert ex.variant_Bs(w, [v["reduced-bx0.25"]])[0] == round(0.25 * own)
    assert ex.variant_Bs(w, [v["m-of-u"]], table)[0] == choose_B(w, "uphill", ssd_table=table)


def test_offspring_stats_equal_the_direct_formulas_in_any_chunking():
    """OffspringStats, fed chunks of draws, gives eqs. 2.29-2.32 as computed
    directly from the K x N offspring counts, whatever the chunk size."""
    n = 128
    w = generate("gamma-k1-s2", n, 0, 3)
    seeds = ex.draw_seeds(3, "gamma-k1-s2", n, 0, 40)
    anc = resample_many(w, "metropolis", seeds=seeds)
    counts = np.stack([np.bincount(a, minlength=n) for a in anc]).astype(np.float64)
    target = n * w.astype(np.float64) / w.astype(np.float64).sum()
    d = counts - target
    se = (d * d).sum(axis=1)
    mean = counts.mean(axis=0)
    for size in (1, 7, 40):
        stats = OffspringStats(w)
        for i in range(0, 40, size):
            stats.add(anc[i : i + size])
        np.testing.assert_allclose(stats.squared_errors, se, rtol=1e-12)
        assert stats.variance == pytest.approx(counts.var(axis=0).sum(), rel=1e-12)
        assert stats.bias2 == pytest.approx(((mean - target) ** 2).sum(), rel=1e-9)
        np.testing.assert_allclose(stats.mean_offspring, mean, atol=1e-12)
        np.testing.assert_allclose(stats.offspring_variance, counts.var(axis=0), atol=1e-12)
        assert se.mean() == pytest.approx(stats.variance + stats.bias2)  # eq. 2.31


def test_seed_chunks_bound_the_ancestors_held():
    seeds = list(range(256))
    chunks = ex.seed_chunks(seeds, 2**22, 1 << 24)
    assert [len(c) for c in chunks] == [4] * 64  # 4 x 2^22 ancestors: 320 MiB of temporaries
    assert ex.seed_chunks(seeds, 2**30, 1 << 24) == [[s] for s in seeds]  # at least one seed
    assert sum(ex.seed_chunks(seeds, 16, 1 << 24), []) == seeds


def test_draw_seeds_depend_on_the_sequence_not_the_method():
    a = ex.draw_seeds(2017, "eq233-y4", 64, 1, 8)
    assert a == ex.draw_seeds(2017, "eq233-y4", 64, 1, 8)
    assert a != ex.draw_seeds(2017, "eq233-y4", 64, 2, 8)
    assert all(0 <= s < 2**64 for s in a) and len(set(a)) == 8


def test_run_cell_is_deterministic_and_independent_of_chunking():
    v = ex.expand_variants(SPEC, [128])["uphill-ca-ss128"]
    w = weights()
    tables_ = {n: ssd_table(n) for n in w}
    big = ex.CellSettings(draws=16, seed=5, timing_repeats=1, timing_warmup=0)
    small = ex.CellSettings(
        draws=16, seed=5, timing_repeats=1, timing_warmup=0, chunk_elements=50,
        particle_summaries_max_n=16,
    )  # fmt: skip
    a, meta = ex.run_ladder([v], "eq233-y4", w, big, tables_)[0]
    b, _ = ex.run_ladder([v], "eq233-y4", w, small, tables_)[0]
    assert a["squared_errors"].shape == (2, 2, 16)
    for key in ("squared_errors", "B"):  # per draw: exactly equal
        np.testing.assert_array_equal(a[key], b[key])
    for key in ("variance", "bias2"):  # sums over chunks: equal up to summation order
        np.testing.assert_allclose(a[key], b[key], rtol=1e-12)
    assert "mean_offspring_64" in a and "mean_offspring_64" not in b
    np.testing.assert_allclose(a["mean_offspring_16"].sum(axis=1), 16)  # offspring sum to N
    assert meta["backend"] == "cpu" and meta["timing_includes_B"]
    assert (a["time_ms"] > 0).all()


def _summary(rows):
    base = {"method": "m", "segment_bytes": None, "B_of": None, "B_scale": None}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_match_ladder_picks_the_closest_rung():
    s = _summary(
        [
            {"variant": "c1", "distribution": "d", "n": 16, "mse_per_n": 1.0, "time_ms": 1.0},
            {"variant": "m", "distribution": "d", "n": 16, "mse_per_n": 0.5, "time_ms": 4.0},
            {"variant": "m-x0.5", "distribution": "d", "n": 16, "mse_per_n": 0.9, "time_ms": 2.0},
            {"variant": "m-x0.25", "distribution": "d", "n": 16, "mse_per_n": 2.0, "time_ms": 1.1},
        ]
    )
    by_mse = tables.match_ladder(s, ["m", "m-x0.5", "m-x0.25"], "c1", "mse_per_n", "M matched")
    assert by_mse.set_index("variant").loc["M matched", "matched_variant"] == "m-x0.5"
    by_time = tables.match_ladder(s, ["m", "m-x0.5", "m-x0.25"], "c1", "time_ms", "M matched")
    assert by_time.set_index("variant").loc["M matched", "matched_variant"] == "m-x0.25"


def test_speedup_and_time_ratio():
    s = _summary(
        [
            {"variant": "u", "distribution": "d", "n": 16, "time_ms": 2.0},
            {"variant": "u", "distribution": "d", "n": 32, "time_ms": 6.0},
            {"variant": "ca", "distribution": "d", "n": 16, "time_ms": 1.0},
            {"variant": "ca", "distribution": "d", "n": 32, "time_ms": 2.0},
        ]
    )
    sp = tables.add_speedup(s, "u").set_index(["variant", "n"])["speedup"]
    assert sp[("ca", 16)] == 2.0 and sp[("ca", 32)] == 3.0 and sp[("u", 32)] == 1.0
    tr = tables.add_time_ratio(s).set_index(["variant", "n"])["time_ratio"]
    assert np.isnan(tr[("u", 16)]) and tr[("u", 32)] == 3.0 and tr[("ca", 32)] == 2.0


def test_a_ladder_cell_gives_each_rung_its_own_cell():
    """run_ladder draws the rungs of a reduced-B ladder together; each rung's
    arrays are those run_cell gives it alone (same seeds, same B)."""
    v = ex.expand_variants(SPEC, [128])
    rungs = [v["reduced-bx0.5"], v["reduced-bx0.25"]]
    assert {r.ladder for r in rungs} == {"reduced"} and v["metropolis"].ladder is None
    w = weights()
    settings = ex.CellSettings(draws=16, seed=5, timing_repeats=1, timing_warmup=0)
    together = ex.run_ladder(rungs, "eq233-y4", w, settings)
    for rung, (arrays, meta) in zip(rungs, together, strict=True):
        alone, _ = ex.run_ladder([rung], "eq233-y4", w, settings)[0]
        assert meta["variant"]["name"] == rung.name
        for key in ("squared_errors", "B", "variance", "bias2", "mean_offspring_16"):
            np.testing.assert_array_equal(arrays[key], alone[key])
    half, quarter = together[0][0]["B"], together[1][0]["B"]
    assert (half >= quarter).all() and (half > quarter).any()


def test_a_ladder_holds_variants_that_differ_in_B_only():
    v = ex.expand_variants(SPEC, [128])
    with pytest.raises(ValueError, match="differ in more than B"):
        ex.check_ladder([v["metropolis"], v["uphill-ca-ss128"]])
    with pytest.raises(ValueError, match="at least one variant"):
        ex.check_ladder([])
