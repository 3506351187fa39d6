"""Moazeni (2013) chapter 5 (pfresample_studies.moazeni2013.sharedmem): live ranges,
the interference graph and its colouring on Fig 42's example and on the study's two
kernels, every colouring checked proper, and the errors for a read before a write."""

from __future__ import annotations

import pytest

from pfresample_studies.moazeni2013 import sharedmem as sm


def _proper(kernel, slots):
    graph = sm.interference(kernel)
    return all(slots[a] != slots[b] for a in graph for b in graph[a])


def test_fig42_a_and_c_share():
    """Fig 42: sA is dead before sC is born, sB lives throughout: two partitions."""
    k = sm.Kernel(
        "fig42",
        {"sA": 64, "sB": 64, "sC": 64},
        (
            sm.Stage("1", defines=("sA", "sB")),
            sm.Stage("2", uses=("sA",)),
            sm.Stage("3", defines=("sC",), uses=("sB",)),
            sm.Stage("4", uses=("sC", "sB")),
        ),
    )
    plan = sm.plan(k)
    assert plan.slots["sA"] == plan.slots["sC"] != plan.slots["sB"]
    assert (plan.bytes_before, plan.bytes_after) == (192, 128)


@pytest.mark.parametrize("tile", [8, 16])
def test_the_study_kernels(tile):
    k3, k2 = sm.curvature3d(tile), sm.curvature2d(tile)
    live = sm.live_ranges(k3)
    # carried around the march: the plane in hand from S5 to S1, the slow-axis normal always
    assert live["u_cur"] == {5, 0, 1} and live["n0_prev"] == set(range(6))
    for kernel, colours in ((k3, 9), (k2, 5)):
        plan = sm.plan(kernel)
        assert _proper(kernel, plan.slots) and len(plan.sizes) == colours
        # the most arrays alive at one stage: no colouring can use fewer
        clique = max(sum(s in r for r in sm.live_ranges(kernel).values()) for s in range(6))
        assert clique == colours
    # negative control: the identity plan is proper, and merging two live arrays is not
    plan = sm.plan(k3)
    assert _proper(k3, sm.identity(k3).slots)
    assert not _proper(k3, {**plan.slots, "g0": plan.slots["g1"]})


def test_bad_kernels_are_refused():
    with pytest.raises(ValueError, match="undeclared"):
        sm.Kernel("k", {"a": 4}, (sm.Stage("1", uses=("b",)),))
    k = sm.Kernel("k", {"a": 4}, (sm.Stage("1", uses=("a",)), sm.Stage("2", defines=("a",))))
    with pytest.raises(ValueError, match="before any stage writes"):
        sm.live_ranges(k)
    with pytest.raises(ValueError, match="no stage writes"):
        sm.live_ranges(sm.Kernel("k", {"a": 4}, (sm.Stage("1", uses=("a",)),), cyclic=True))


def test_registration_as_described_saves_nothing_and_reordered_saves_half():
    """Table 7's registration row (0 %) follows from §5.3.1's text: both displacements
    are read by both updates, so they interfere; split into load-update pairs they do not."""
    described = sm.registration()
    plan = sm.plan(described)
    assert sm.interference(described) == {"u": {"v"}, "v": {"u"}}
    assert plan.saving == 0 and plan.bytes_before == 2 * 4 * 20 * 28
    reordered = sm.plan(sm.registration(reordered=True))
    assert reordered.saving == 0.5 and len(reordered.sizes) == 1
    # negative control: the reordered kernel with its last update also reading u keeps
    # u alive to the end, and the two interfere again
    stages = (sm.Stage("S0", defines=("u",)), sm.Stage("S1", uses=("u",)),
              sm.Stage("S2", defines=("v",)), sm.Stage("S3", uses=("u", "v")))  # fmt: skip
    assert sm.plan(sm.Kernel("r", {"u": 4, "v": 4}, stages)).saving == 0
