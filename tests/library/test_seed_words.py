"""filters/seed_words.py: a GPU run's seed words, computed without NumPy's
SeedSequence and Generator objects, are NumPy's words bit for bit; the
comparison catches a wrong constant, swapped spawn keys or swapped halves
of the noise key; graph_inputs and CapturedFilter.host_inputs give what
the NumPy route gives."""

from __future__ import annotations

import types

import numpy as np
import pytest

from pfresample.filters import seed_words
from pfresample.filters.capture import CapturedFilter
from pfresample.filters.common import graph_inputs, run_words

NAMED_SEEDS = (0, 1, 2, 12345, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1, 2**64,
               2**96 + 5, 2**128 - 1, 2**128, 2**200 + 3, 2**300 + 2**160 + 7)  # fmt: skip
STEPS = (0, 1, 2, 3, 100, 1000, 36000)
RANDOM_SEEDS = [int(s) for s in np.random.default_rng(20240611).integers(0, 2**63, 150)] + [
    int.from_bytes(np.random.default_rng(k).bytes(20), "little") for k in range(20)
]  # 160-bit seeds: more words than the pool


def numpy_words(seed, steps: int, tail: np.ndarray) -> np.ndarray:
    """The NumPy route, spelled out from NumPy's own calls (derive_seeds's
    spawn, default_rng, integers, generate_state; graph_inputs's layout)."""
    noise, draws = np.random.SeedSequence(seed).spawn(2)
    key = np.random.default_rng(noise).integers(0, 2**32, size=2, dtype=np.uint64)
    keys = draws.generate_state(steps, np.uint64).astype("<u8").view("<u4")
    return np.concatenate([key.astype(np.uint32), keys.astype(np.uint32), tail])


TAIL = np.arange(7, dtype=np.uint32)


def mismatches(seeds, steps=(1, 2, 100)) -> list:
    """The (seed, steps) whose fast words differ from NumPy's."""
    return [
        (seed, t)
        for seed in seeds
        for t in steps
        if not np.array_equal(run_words(seed, t, TAIL), numpy_words(seed, t, TAIL))
    ]


@pytest.mark.parametrize("steps", STEPS)
def test_named_seeds_give_numpys_words(steps):
    """Edge seeds (0, word boundaries, one to five and ten uint32 words) at
    step counts from none to 36000 (the hash-constant table's growth)."""
    for seed in NAMED_SEEDS:
        got = run_words(seed, steps, TAIL)
        assert got.dtype == np.uint32
        np.testing.assert_array_equal(got, numpy_words(seed, steps, TAIL), err_msg=str(seed))


def test_random_seeds_give_numpys_words():
    assert mismatches(RANDOM_SEEDS) == []


def test_numpy_integer_seeds_and_steps_give_numpys_words():
    for seed in (np.int64(5), np.uint32(2**32 - 1), np.uint64(2**64 - 1), True):
        got = run_words(seed, np.int32(10), TAIL)
        np.testing.assert_array_equal(got, numpy_words(seed, 10, TAIL))


def test_other_seeds_take_the_numpy_route():
    """A sequence seed goes through NumPy and gives its words; a negative seed
    or a float step count gives NumPy's errors."""
    np.testing.assert_array_equal(run_words([3, 2**40], 5, TAIL), numpy_words([3, 2**40], 5, TAIL))
    with pytest.raises(ValueError):
        run_words(-1, 5, TAIL)
    with pytest.raises(TypeError):
        run_words(1, 2.5, TAIL)


SOME_SEEDS = (0, 1, 2**32 - 1, 2**32, 2**200 + 3, *RANDOM_SEEDS[:5])
SHORT_SEEDS = {s for s in SOME_SEEDS if s < 2**128}  # those whose spawn hashes are tabulated


@pytest.mark.parametrize(
    ("name", "value", "caught"),
    [
        # mix_entropy's last pair constant wrong
        ("_PAIRS", seed_words._PAIRS[:-1] + ((*seed_words._PAIRS[-1][:3], 1),), set(SOME_SEEDS)),
        # the children's spawn keys swapped (the noise key from the draws' pool),
        # in the table of the seeds of at most 4 words
        ("_SPAWN_HASHES", seed_words._SPAWN_HASHES[::-1], SHORT_SEEDS),
        # generate_state's ninth constant (the eighth word's multiplier) one bit off
        ("_HASH_B", seed_words._HASH_B[:8] + (seed_words._HASH_B[8] ^ 1,), set(SOME_SEEDS)),
        # the noise key's halves swapped (high word first)
        ("noise_key", lambda pool, f=seed_words.noise_key: f(pool)[::-1], set(SOME_SEEDS)),
    ],
)
def test_a_wrong_variant_is_caught(monkeypatch, name, value, caught):
    """Negative control: each deliberate error makes the comparison fail, at
    every step count, for every seed whose words it touches."""
    assert mismatches(SOME_SEEDS) == []
    monkeypatch.setattr(seed_words, name, value)
    wrong = mismatches(SOME_SEEDS)
    assert {seed for seed, _ in wrong} == caught
    assert len(wrong) == 3 * len(caught)


def test_a_wrong_draws_constant_is_caught(monkeypatch):
    """Negative control for the resampling keys alone: one constant of
    generate_state's table off changes one key word, which the test sees."""
    xor, mult = seed_words._hash_constants(4)
    broken = np.stack([xor.copy(), mult.copy()])
    broken[1, 3, 2] ^= 1  # the multiplier of word 14: the eighth step's low key word
    monkeypatch.setattr(seed_words, "_hash_b", broken)
    got = run_words(7, 8, TAIL)
    want = numpy_words(7, 8, TAIL)
    assert np.flatnonzero(got != want).tolist() == [2 + 14]


def old_graph_inputs(y, seed, steps, dtype=np.float32):
    """graph_inputs (and CapturedFilter.host_inputs, dtype float64) as it was
    before the fast path: derive_seeds's Generator and generate_state."""
    noise, draws = np.random.SeedSequence(seed).spawn(2)
    rng, draw_seeds = np.random.default_rng(noise), draws.generate_state(steps, np.uint64)
    key = rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)
    keys = draw_seeds.astype("<u8", copy=False).view("<u4").astype(np.uint32, copy=False)
    z = np.ascontiguousarray(y, dtype=dtype).reshape(-1).view(np.uint32)
    return np.concatenate([key, keys, z])


@pytest.mark.parametrize("seed", [0, 3, 2**32 - 1, 2**40 + 9])
@pytest.mark.parametrize("steps", [1, 100, 1001])
def test_graph_inputs_and_host_inputs_are_unchanged(seed, steps):
    """Both callers: float32 words after the keys (graph_inputs, also for the
    D3 filter's (T, 2) measurements) and float64 (the captured loop)."""
    y = np.random.default_rng(steps).standard_normal(steps)
    np.testing.assert_array_equal(graph_inputs(y, seed, steps), old_graph_inputs(y, seed, steps))
    y2 = np.random.default_rng(steps).standard_normal((steps, 2))
    np.testing.assert_array_equal(graph_inputs(y2, seed, steps), old_graph_inputs(y2, seed, steps))
    captured = types.SimpleNamespace(steps=steps)  # host_inputs reads only the step count
    np.testing.assert_array_equal(
        CapturedFilter.host_inputs(captured, y, seed), old_graph_inputs(y, seed, steps, np.float64)
    )
