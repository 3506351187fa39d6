"""The family statistics of the pre-registered tests: Holm's adjusted p against a hand
computation, and a planted effect resolved where a null one beside it is not."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample_studies.pipeline.multiplicity import holm, paired_family


def test_holm_matches_the_step_down_by_hand():
    # sorted 0.01, 0.02, 0.04 times 3, 2, 1 -> 0.03, 0.04, 0.04 (made monotone)
    assert np.allclose(holm([0.04, 0.01, 0.02]), [0.04, 0.03, 0.04])
    assert np.allclose(holm([0.5, 0.9]), [1.0, 1.0])
    with pytest.raises(ValueError):
        holm([0.2, 1.5])


def test_a_planted_effect_resolves_and_a_null_does_not():
    rng = np.random.default_rng(7)
    family = paired_family(
        {"effect": 0.5 + rng.normal(size=400), "null": rng.normal(size=400)}, level=0.99
    )
    effect, null = family.iloc[0], family.iloc[1]
    assert effect["resolved"] and effect["ci_low"] > 0
    assert not null["resolved"] and null["ci_low"] < 0 < null["ci_high"]
    # the simultaneous interval of two is wider than one comparison's own at 99 %
    alone = paired_family({"null": rng.normal(size=400)}, level=0.99).iloc[0]
    assert (null["ci_high"] - null["ci_low"]) > (alone["ci_high"] - alone["ci_low"])
    assert effect["mde"] < 0.5
    with pytest.raises(ValueError):
        paired_family({"short": np.array([1.0, 2.0])})
