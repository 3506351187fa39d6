"""Moazeni (2013) chapter 3 on real instances (dp_weighted: the recurrence with
w(i, k, j), matrix-chain order and least-perimeter triangulation): the NumPy reference
and the best CPU code (native/dp_weighted.c) equal the textbook three loops bit for bit,
with ties and zero weights; textbook answers by hand; planted flaws caught."""

from __future__ import annotations

import numpy as np
import pytest

from pfresample_studies.moazeni2013 import dp_weighted as w

INSTANCES = {
    "chain": lambda n, s: w.random_chain(n, s),
    "chain_zeros": lambda n, s: w.random_chain(n, s, zeros=True),
    "perimeter": lambda n, s: w.random_polygon(n, s),
    "perimeter_regular": lambda n, s: w.random_polygon(n, s, regular=True),
    "perimeter_repeats": lambda n, s: w.random_polygon(n, s, repeats=True),
}


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()


def test_textbook_answers_by_hand():
    # CLRS's and the usual examples: 10x30x5x60 takes 4,500 multiplications, 40x20x30x10x30 26,000
    assert int(w.answer(w.solve_textbook(w.chain([10, 30, 5, 60])))) == 4500
    assert int(w.answer(w.solve_textbook(w.chain([40, 20, 30, 10, 30])))) == 26000
    # the unit square: two triangles of perimeter 2 + sqrt(2)
    square = w.polygon([[0, 0], [1, 0], [1, 1], [0, 1]])
    assert float(w.answer(w.solve_textbook(square))) == pytest.approx(4 + 2 * np.sqrt(2), rel=1e-6)
    # zero dimensions: every product through a 0 is free
    assert int(w.answer(w.solve_textbook(w.chain([5, 0, 7, 3])))) == 0


@pytest.mark.parametrize("kind", sorted(INSTANCES))
@pytest.mark.parametrize("n", [2, 3, 4, 17, 45])
def test_numpy_reference_equals_the_textbook(kind, n):
    inst = INSTANCES[kind](n, 7)
    assert same_bits(w.solve_diagonals(inst), w.solve_textbook(inst))


def test_the_weight_matters_negative_control():
    for kind in ("chain", "perimeter"):
        inst = INSTANCES[kind](30, 1)
        assert not np.array_equal(w.solve_diagonals(inst, drop_weight=True), w.solve_textbook(inst))


def test_bad_instances_are_refused():
    with pytest.raises(ValueError, match="integers"):
        w.chain([1.5, 2.0, 3.0])
    with pytest.raises(ValueError, match=">= 0"):
        w.chain([3, -1, 2])
    with pytest.raises(ValueError, match="below"):
        w.chain(np.full(100, 2000))
    with pytest.raises(ValueError, match="at least 2"):
        w.chain([3])
    with pytest.raises(ValueError, match="finite"):
        w.polygon([[0, 0], [np.nan, 1]])
    with pytest.raises(ValueError, match="n x 2"):
        w.polygon([[0, 0, 0], [1, 1, 1]])


@pytest.mark.usefixtures("native_build")
@pytest.mark.parametrize("kind", sorted(INSTANCES))
@pytest.mark.parametrize("n", [2, 5, 63, 64, 65, 130, 200])
def test_best_cpu_code_equals_the_reference(kind, n):
    from pfresample_studies.moazeni2013 import native

    inst = INSTANCES[kind](n, 11)
    reference = w.solve_textbook(inst) if n <= 65 else w.solve_diagonals(inst)
    for threads in (1, 2):
        assert same_bits(native.solve_weighted(inst, threads), reference), (kind, n, threads)


@pytest.mark.usefixtures("native_build")
@pytest.mark.parametrize("flaw", ["drop_last_product", "drop_eq5_down", "drop_eq5_left",
                                  "drop_weight"])  # fmt: skip
@pytest.mark.parametrize("kind", ["chain", "perimeter"])
def test_best_cpu_code_planted_flaws_are_caught(kind, flaw):
    from pfresample_studies.moazeni2013 import native

    inst = INSTANCES[kind](200, 3)
    assert not np.array_equal(native.solve_weighted(inst, 2, flaw=flaw), w.solve_diagonals(inst))
