"""The scan's divisor (``workspace.Call.divisor``): which methods' GPU
resampling takes it, and the launchers that read the weights outside the
linear scan refuse it before they enqueue anything (no GPU needed)."""

import types

import numpy as np
import pytest

from pfresample.cuda import cumulative
from pfresample.cuda.workspace import Call
from pfresample.resampling.registry import get_method


@pytest.mark.parametrize(
    "name, precision, divides",
    [
        ("systematic", None, True),
        ("stratified", None, True),
        ("multinomial", None, True),
        ("systematic", "log32", False),
        ("multinomial", "log32", False),
        ("residual", None, False),
        ("metropolis", None, False),
        ("butterfly-systematic", None, False),
    ],
)
def test_the_linear_scan_methods_divide_as_they_load(name, precision, divides):
    kw = {} if precision is None else {"precision": precision}
    assert cumulative.divides_as_it_loads(get_method(name), kw) is divides


def _call(divisor):
    ws = types.SimpleNamespace(max=None, scan=lambda dtype: types.SimpleNamespace(dtype=dtype))
    w = np.ones(8, dtype=np.float32)
    return Call(w, 0, None, np.uint32(0), np.uint32(0), ws, np.zeros((1, 8), np.int32), divisor)


@pytest.mark.parametrize(
    "launch, match",
    [
        (lambda c: cumulative.residual(c), "Residual"),
        (lambda c: cumulative.systematic(c, precision="log32"), "log-domain"),
        (lambda c: cumulative.stratified(c, precision="log32"), "log-domain"),
        (lambda c: cumulative.multinomial(c, gates=object()), "adaptive filter's gate"),
    ],
)
def test_a_divisor_is_refused_where_the_weights_are_read_as_they_are(launch, match):
    with pytest.raises(NotImplementedError, match=match):
        launch(_call(divisor=object()))
    cumulative._undivided(_call(divisor=None), "anything")  # control: no divisor, no refusal
