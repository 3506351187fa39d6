"""The public API: registry, shapes, determinism, bad input."""

import numpy as np
import pytest

import pfresample as pr
from pfresample.resampling.registry import REGISTRY, get_method
from pfresample_studies.dulger2017.weights import generate

N = 256


@pytest.fixture(scope="module")
def w():
    return generate("gamma-k1-s2", N, 0, 0)


def test_registry_lists_every_method():
    assert pr.methods() == (
        "systematic",
        "stratified",
        "multinomial",
        "residual",
        "metropolis",
        "metropolis-c1",
        "metropolis-c2",
        "megopolis",
        "rejection",
        "uphill",
        "uphill-ca",
        "uphill-c1",
        "butterfly-multinomial",
        "butterfly-stratified",
        "butterfly-systematic",
        "cellular",
    )
    assert pr.methods("particles") == ("d3",)
    for name, m in REGISTRY.items():
        assert m.name == name and m.reference
        assert get_method(name.upper()) is m


@pytest.mark.parametrize("method", pr.methods())
def test_ancestors_are_int32_in_range_and_deterministic(w, method):
    a = pr.resample(w, method, seed=7)
    assert a.dtype == np.int32 and a.shape == (N,)
    assert a.min() >= 0 and a.max() < N
    np.testing.assert_array_equal(a, pr.resample(w, method, seed=7))
    assert not np.array_equal(a, pr.resample(w, method, seed=8))
    assert pr.offspring(a, N).sum() == N


@pytest.mark.parametrize("method", pr.methods())
def test_resample_many_rows_equal_single_calls(w, method):
    seeds = [3, 2**40 + 1, 2**64 - 1]
    many = pr.resample_many(w, method, seeds=seeds)
    assert many.shape == (3, N)
    for row, seed in zip(many, seeds, strict=True):
        np.testing.assert_array_equal(row, pr.resample(w, method, seed=seed))


@pytest.mark.parametrize("method", pr.methods())
def test_float64_weights_are_accepted(w, method):
    a = pr.resample(w.astype(np.float64), method, seed=1)
    assert a.dtype == np.int32 and pr.offspring(a, N).sum() == N


@pytest.mark.parametrize(
    "parent, child",
    [
        ("metropolis", "metropolis-c1"),
        ("metropolis", "metropolis-c2"),
        ("uphill", "uphill-ca"),
        ("uphill", "uphill-c1"),
    ],
)
@pytest.mark.parametrize("n", [64, 1000])
def test_whole_array_segment_gives_the_parent(parent, child, n):
    """SS = 4N (and anything larger, clamped): one s-segment, so C1, C2 behave
    as Metropolis and UCA, UC1 as Uphill -- the same ancestors, seed for seed."""
    w = generate("eq233-y2", n, 1, 0)
    expected = pr.resample(w, parent, seed=11, B=25)
    for ss in (4 * n, 1 << 30):
        np.testing.assert_array_equal(
            pr.resample(w, child, seed=11, B=25, segment_bytes=ss), expected
        )


def test_equal_weights():
    w = np.full(128, 0.5, dtype=np.float32)
    identity = np.arange(128)
    for method in ("metropolis", "metropolis-c1", "uphill", "uphill-ca", "uphill-c1"):
        assert pr.choose_B(w, method) == 0  # beta = 1, SSD = 0
        np.testing.assert_array_equal(pr.resample(w, method, seed=1), identity)
    # every rejection test accepts (ratio 1), so each particle keeps itself
    np.testing.assert_array_equal(pr.resample(w, "rejection", seed=1), identity)
    for method in ("systematic", "residual"):
        np.testing.assert_array_equal(pr.resample(w, method, seed=1), identity)


@pytest.mark.parametrize(
    "method", ["systematic", "stratified", "multinomial", "residual", "rejection"]
)
def test_single_positive_weight_takes_everything(method):
    w = np.zeros(100, dtype=np.float32)
    w[37] = 2.5
    np.testing.assert_array_equal(pr.resample(w, method, seed=3), np.full(100, 37))


@pytest.mark.parametrize(
    "method", ["systematic", "stratified", "multinomial", "residual", "rejection"]
)
def test_zero_weights_are_never_chosen(method):
    w = generate("gamma-k1-s2", 512, 0, 0)
    w[::3] = 0
    many = pr.resample_many(w, method, seeds=range(50))
    assert not np.isin(many, np.flatnonzero(w == 0)).any()


def test_single_particle():
    for method in pr.methods():
        np.testing.assert_array_equal(pr.resample(np.array([3.0]), method, seed=0), [0])


def test_offspring():
    np.testing.assert_array_equal(pr.offspring(np.array([0, 0, 2]), 4), [2, 0, 1, 0])
    np.testing.assert_array_equal(pr.offspring(np.array([[0, 1], [1, 1]]), 2), [[1, 1], [0, 2]])
    with pytest.raises(ValueError, match="outside"):
        pr.offspring(np.array([0, 4]), 4)
    with pytest.raises(TypeError, match="integers"):
        pr.offspring(np.array([0.0, 1.0]), 4)


def test_cpu_is_the_default_without_a_gpu(w, caplog):
    from pfresample.backend import cuda_device

    if cuda_device() is not None:
        pytest.skip("a CUDA device is visible")
    from pfresample import backend

    backend._log_choice.cache_clear()  # the choice is logged once per process
    caplog.set_level("INFO", logger="pfresample")
    pr.resample(w, "systematic", seed=0, backend="auto")
    assert "backend 'auto' -> cpu (no CUDA device found)" in caplog.text
    with pytest.raises(RuntimeError, match="no CUDA device"):
        pr.resample(w, "systematic", seed=0, backend="cuda")


# ---- bad input: every case a ValueError or TypeError naming the problem ----

BAD_WEIGHTS = [
    (np.array([1.0, np.nan, 2.0]), ValueError, r"weights\[1\] is NaN"),
    (np.array([1.0, 2.0, np.inf]), ValueError, r"weights\[2\] is infinite"),
    (np.array([1.0, -0.5, 2.0], dtype=np.float32), ValueError, r"weights\[1\] is negative"),
    (np.zeros(5), ValueError, "all weights are zero"),
    (np.array([], dtype=np.float32), ValueError, "empty"),
    (np.ones((2, 3)), ValueError, "1-D"),
    (np.array(["a", "b"]), TypeError, "real numbers"),
    (np.array([1 + 2j]), TypeError, "real numbers"),
]


@pytest.mark.parametrize("method", ["systematic", "metropolis", "uphill-ca", "rejection"])
@pytest.mark.parametrize("weights, error, message", BAD_WEIGHTS)
def test_bad_weights(method, weights, error, message):
    with pytest.raises(error, match=message):
        pr.resample(weights, method, seed=0)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"method": "nope"}, ValueError, "unknown method 'nope'; known methods: systematic"),
        ({"method": 3}, TypeError, "method must be a string"),
        ({"method": "uphill", "B": -1}, ValueError, "B must be >= 0"),
        ({"method": "uphill", "B": 2.5}, TypeError, "B must be an integer"),
        ({"method": "systematic", "B": 3}, TypeError, "takes no B"),
        ({"method": "metropolis", "segment_bytes": 128}, TypeError, "takes no segment_bytes"),
        ({"method": "uphill-c1", "segment_bytes": 0}, ValueError, "segment_bytes must be >= 1"),
        ({"method": "uphill-c1", "segment_bytes": 130}, ValueError, "multiple of the weight size"),
        ({"method": "metropolis-c2", "segment_bytes": 96}, ValueError, "not compatible with"),
        ({"method": "uphill", "tolerance": 3}, TypeError, "unknown parameter.*tolerance"),
        ({"method": "metropolis", "epsilon": 1.5}, ValueError, "epsilon must be"),
        ({"method": "systematic", "precision": "float16"}, ValueError, "precision must be"),
        ({"method": "uphill", "seed": -3}, ValueError, "seed must be in"),
        ({"method": "uphill", "seed": 1.0}, TypeError, "seed must be an integer"),
        ({"method": "uphill", "backend": "tpu"}, ValueError, "backend must be one of"),
    ],
)
def test_bad_arguments(w, kwargs, error, message):
    kwargs = {"seed": 0, **kwargs}
    with pytest.raises(error, match=message):
        pr.resample(w[:200], **kwargs)


def test_n_not_compatible_with_segment():
    w = generate("gamma-k1-s2", 100, 0, 0)  # 100 is not a multiple of 32 weights
    with pytest.raises(ValueError, match="N=100 is not compatible with segment_bytes=128"):
        pr.resample(w, "uphill-ca", seed=0, segment_bytes=128)


def test_empty_seeds(w):
    with pytest.raises(ValueError, match="seeds is empty"):
        pr.resample_many(w, "uphill", seeds=[])
