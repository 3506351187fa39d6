"""pfresample.interop: arrays of other libraries in and out without copies.

On the CPU a fake array library (``fakearraylib``, installed in
``sys.modules``) speaks DLPack the way PyTorch and JAX do on the host; the
``gpu`` tests take real PyTorch and JAX arrays, on the device and the host.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types

import numpy as np
import pytest

import pfresample as pr
from pfresample.interop import restore_each, to_native


class FakeArray:
    """A host array of another library: DLPack only, through NumPy's own export."""

    __module__ = "fakearraylib"

    def __init__(self, a):
        self.a = np.asarray(a)

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)


class GradArray(FakeArray):
    """Refuses DLPack while it requires grad, as a PyTorch tensor does."""

    __module__ = "fakearraylib"

    def __init__(self, a, requires_grad=True):
        super().__init__(a)
        self.requires_grad = requires_grad

    def __dlpack__(self, **kwargs):
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient")
        return super().__dlpack__(**kwargs)

    def detach(self):
        return GradArray(self.a, requires_grad=False)


class ContiguousOnly(FakeArray):
    """Refuses to export a strided view, but has a contiguous copy."""

    __module__ = "fakearraylib"

    def __dlpack__(self, **kwargs):
        if not self.a.flags.c_contiguous:
            raise BufferError("strided export not supported")
        return super().__dlpack__(**kwargs)

    def contiguous(self):
        return ContiguousOnly(np.ascontiguousarray(self.a))


class FakeCupyArray:
    """Stands for a CuPy result (``backend.is_device_array`` reads the module)."""

    __module__ = "cupy.fake"

    def __init__(self, a):
        self.a = a

    def get(self):
        return self.a


@pytest.fixture
def fakearraylib(monkeypatch):
    module = types.ModuleType("fakearraylib")
    module.from_dlpack = lambda x: FakeArray(np.from_dlpack(x))
    monkeypatch.setitem(sys.modules, "fakearraylib", module)
    return module


def gamma_weights(n=1000, dtype=np.float32):
    return np.random.default_rng(7).gamma(1.0, size=n).astype(dtype)


def test_numpy_lists_and_scalars_pass_through():
    w = gamma_weights()
    array, restore = to_native(w)
    assert array is w
    out = np.arange(3, dtype=np.int32)
    assert restore(out) is out
    for x in ([0.5, 1.0, 2.0], (1.0, 2.0), 3.0):
        array, restore = to_native(x)
        assert array is x and restore(out) is out
    assert restore_each([out, out], restore) == [out, out]


def test_a_host_dlpack_array_becomes_numpy_without_a_copy_and_comes_back(fakearraylib):
    w = gamma_weights()
    array, restore = to_native(FakeArray(w))
    assert type(array) is np.ndarray and array.dtype == np.float32
    assert np.shares_memory(array, w)
    np.testing.assert_array_equal(array, w)
    out = np.arange(5, dtype=np.int32)
    back = restore(out)
    assert isinstance(back, FakeArray) and back.a.dtype == np.int32
    assert np.shares_memory(back.a, out)
    np.testing.assert_array_equal(back.a, out)
    both = restore_each([out, out + 1], restore)
    assert [type(b) for b in both] == [FakeArray, FakeArray]
    np.testing.assert_array_equal(both[1].a, out + 1)


def test_a_strided_view_works(fakearraylib):
    w = gamma_weights()
    array, _ = to_native(FakeArray(w[::2]))
    assert np.shares_memory(array, w)
    np.testing.assert_array_equal(array, w[::2])
    copied, _ = to_native(ContiguousOnly(w[::2]))  # the library's contiguous copy
    assert copied.flags.c_contiguous
    np.testing.assert_array_equal(copied, w[::2])


def test_a_tensor_that_requires_grad_is_detached(fakearraylib):
    w = gamma_weights()
    array, _ = to_native(GradArray(w))
    assert np.shares_memory(array, w)


def test_resample_through_interop_gives_the_same_ancestors(fakearraylib):
    w = gamma_weights(dtype=np.float64)
    array, restore = to_native(FakeArray(w))
    ancestors = restore(pr.resample(array, "systematic", seed=3, backend="cpu"))
    assert isinstance(ancestors, FakeArray)
    expected = pr.resample(w, "systematic", seed=3, backend="cpu")
    np.testing.assert_array_equal(ancestors.a, expected)
    runs = pr.resample_each_B(array, "metropolis", seeds=[1, 2], Bs=[4, 8], backend="cpu")
    assert all(isinstance(r, FakeArray) for r in restore_each(runs, restore))


def test_a_cupy_result_goes_to_the_host_for_a_host_input(fakearraylib):
    _, restore = to_native(FakeArray(gamma_weights()))
    out = np.arange(4, dtype=np.int32)
    back = restore(FakeCupyArray(out))
    assert isinstance(back, FakeArray)
    np.testing.assert_array_equal(back.a, out)


def test_without_from_dlpack_the_numpy_result_is_returned(monkeypatch):
    monkeypatch.setitem(sys.modules, "fakearraylib", types.ModuleType("fakearraylib"))
    _, restore = to_native(FakeArray(gamma_weights()))
    out = np.arange(4, dtype=np.int32)
    assert restore(out) is out


def test_other_devices_are_refused():
    class OnRocm(FakeArray):
        __module__ = "fakearraylib"

        def __dlpack_device__(self):
            return (10, 0)

    with pytest.raises(TypeError, match="device type 10"):
        to_native(OnRocm(gamma_weights()))


def test_importing_interop_imports_no_array_library():
    code = (
        "import sys, pfresample.interop; print(sorted({'torch', 'jax', 'cupy'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.gpu
def test_torch_cuda_tensor_round_trip_without_copies():
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    t = torch.from_numpy(gamma_weights()).cuda()
    array, restore = to_native(t)
    assert isinstance(array, cupy.ndarray) and array.dtype == np.float32
    assert array.data.ptr == t.data_ptr()
    np.testing.assert_array_equal(array.get(), t.cpu().numpy())
    out = cupy.arange(1000, dtype=cupy.int32)
    back = restore(out)
    assert isinstance(back, torch.Tensor) and back.dtype == torch.int32
    assert back.device == t.device and back.data_ptr() == out.data.ptr
    strided, _ = to_native(t[::2])
    np.testing.assert_array_equal(strided.get(), t[::2].cpu().numpy())
    grad, _ = to_native(t.clone().requires_grad_(True))
    assert isinstance(grad, cupy.ndarray)
    ancestors = restore(pr.resample(array, "systematic", seed=1))
    assert ancestors.is_cuda and ancestors.shape == (1000,)


@pytest.mark.gpu
def test_torch_cpu_tensor_comes_back_as_a_cpu_tensor():
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(gamma_weights())
    array, restore = to_native(t)
    assert type(array) is np.ndarray and array.ctypes.data == t.data_ptr()
    for out in (np.arange(8, dtype=np.int32), cupy.arange(8, dtype=cupy.int32)):
        back = restore(out)
        assert isinstance(back, torch.Tensor) and back.device.type == "cpu"
        np.testing.assert_array_equal(back.numpy(), np.arange(8))
    ancestors = restore(pr.resample(array, "systematic", seed=1))
    assert isinstance(ancestors, torch.Tensor) and ancestors.device.type == "cpu"


@pytest.mark.gpu
def test_jax_array_round_trip(monkeypatch):
    # JAX would otherwise take most of the GPU memory that CuPy needs here.
    if "XLA_PYTHON_CLIENT_PREALLOCATE" not in os.environ:
        monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    cupy = pytest.importorskip("cupy")
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    on_gpu = jax.devices()[0].platform == "gpu"
    x = jnp.asarray(gamma_weights())
    array, restore = to_native(x)
    if on_gpu:
        assert isinstance(array, cupy.ndarray)
        assert array.data.ptr == x.unsafe_buffer_pointer()
        out = cupy.arange(8, dtype=cupy.int32)
    else:
        assert type(array) is np.ndarray
        out = np.arange(8, dtype=np.int32)
    np.testing.assert_array_equal(cupy.asnumpy(array), np.asarray(x))
    back = restore(out)
    assert isinstance(back, jax.Array) and back.devices() == x.devices()
    np.testing.assert_array_equal(np.asarray(back), np.arange(8))
